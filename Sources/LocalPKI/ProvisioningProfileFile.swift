import Crypto
import Foundation
import SwiftASN1
import Utilities
@_spi(CMS) import X509
import APNsWire

/// Makes an `embedded.mobileprovision` as Apple does: an XML plist (app ID, team, entitlements
/// with `aps-environment`) inside a CMS SignedData envelope (DER), signed here with the local
/// server certificate. What the SDK (and `authsim doctor`) read is the plist inside.
package enum ProvisioningProfileFile {
    /// - Parameters:
    ///   - apsEnvironment: `development` or `production`; nil for a profile without push entitlement.
    package static func make(apsEnvironment: String?, bundleID: String, teamID: String, name: String? = nil,
                            credentials: LocalCredentials, now: Date = Date()) throws -> Data {
        var entitlements: [String: Any] = [
            "application-identifier": "\(teamID).\(bundleID)",
            "com.apple.developer.team-identifier": teamID,
            "get-task-allow": apsEnvironment.flatMap(APNsEnvironment.init(apsEnvironment:)) == .sandbox,
            "keychain-access-groups": ["\(teamID).*"],
        ]
        if let apsEnvironment { entitlements["aps-environment"] = apsEnvironment }
        let plist: [String: Any] = [
            "AppIDName": "authsim \(bundleID)",
            "ApplicationIdentifierPrefix": [teamID],
            "CreationDate": now,
            "Entitlements": entitlements,
            "ExpirationDate": now.addingTimeInterval(365 * 86_400),
            "Name": name ?? "authsim \(apsEnvironment ?? "no push") \(bundleID)",
            "Platform": ["iOS"],
            "TeamIdentifier": [teamID],
            "TeamName": "authsim",
            "TimeToLive": 365,
            "UUID": UUID().uuidString,
            "Version": 1,
        ]
        let xml = try PropertyListWriter.data(plist, format: .xml)
        let certificate = try Certificate(pemEncoded: credentials.serverCertificatePEM)
        let key = try Certificate.PrivateKey(P256.Signing.PrivateKey(pemRepresentation: credentials.serverKeyPEM))
        let signed = try CMS.sign(xml, certificate: certificate, privateKey: key, signingTime: now, detached: false)
        return Data(signed)
    }
}
