import Utilities
import Foundation

/// `AuthAPNSTokenType`: which APNs environment issued the token.
public enum AuthAPNSTokenType: Int, Sendable, Hashable {
    case unknown = 0
    case sandbox = 1
    case prod = 2
}

/// The device's APNs token and its (resolved) type.
package struct AuthAPNSToken: Sendable, Hashable {
    package let data: Data
    package let type: AuthAPNSTokenType
    /// Uppercase hex, as the SDK sends it to verifyClient.
    package var string: String { Hex.encode(data, uppercase: true) }
}

/// Reads `aps-environment` from an `embedded.mobileprovision`, as the SDK does: the file is a CMS
/// envelope around an XML plist; the plist is found between `<plist` and `</plist>`.
package enum ProvisioningProfile {
    /// `Entitlements["aps-environment"]` (`development` or `production`), or `nil` when the file is
    /// missing, unreadable, or has none.
    package static func apsEnvironment(at url: URL) -> String? {
        guard let entitlements = plist(at: url)?["Entitlements"] as? [String: Any] else { return nil }
        return entitlements["aps-environment"] as? String
    }

    /// The whole plist inside the profile's envelope, or nil when there is none.
    package static func plist(at url: URL) -> [String: Any]? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return plist(in: data)
    }

    /// The plist inside a profile's bytes.
    package static func plist(in data: Data) -> [String: Any]? {
        guard let start = data.range(of: Data("<?xml".utf8)) ?? data.range(of: Data("<plist".utf8)),
              let end = data.range(of: Data("</plist>".utf8), in: start.lowerBound..<data.endIndex)
        else { return nil }
        return try? PropertyListSerialization.propertyList(from: Data(data[start.lowerBound..<end.upperBound]), format: nil) as? [String: Any]
    }

    /// The token type `.unknown` resolves to: simulator → prod; `aps-environment` development →
    /// sandbox; anything else, missing or unreadable → prod.
    package static func resolve(isSimulator: Bool, profile: URL?) -> AuthAPNSTokenType {
        if isSimulator { return .prod }
        guard let profile, apsEnvironment(at: profile) == "development" else { return .prod }
        return .sandbox
    }
}
