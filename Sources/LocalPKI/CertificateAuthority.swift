import Crypto
import Foundation
import SwiftASN1
import X509

/// Makes the local CA and the server certificate the receiver presents.
///
/// Every key is P-256; the CA signs with ECDSA-SHA256. The server certificate names `localhost`,
/// `127.0.0.1`, `::1` and Apple's APNs hosts, so a client that sends SNI for Apple's hosts can be
/// pointed at the local receiver and still verify it against our CA.
package enum CertificateFactory {
    /// The names every server certificate covers.
    package static let serverDNSNames = [
        "localhost", "api.push.apple.com", "api.sandbox.push.apple.com", "api.development.push.apple.com",
    ]
    package static let serverIPAddresses: [[UInt8]] = [
        [127, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    ]

    /// A self-signed CA certificate.
    package static func makeCA(key: P256.Signing.PrivateKey, commonName: String, now: Date = Date(),
                              validity: TimeInterval = 365 * 86_400) throws -> Certificate {
        let name = try DistinguishedName {
            OrganizationName("authsim")
            CommonName(commonName)
        }
        let publicKey = Certificate.PublicKey(key.publicKey)
        return try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: now.addingTimeInterval(validity),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: .init(key)
        )
    }

    /// A server certificate for ``serverDNSNames`` and ``serverIPAddresses`` (plus `extraDNSNames`),
    /// signed by the CA.
    package static func makeServerCertificate(
        key: P256.Signing.PrivateKey, ca: Certificate, caKey: P256.Signing.PrivateKey,
        extraDNSNames: [String] = [], now: Date = Date(), validity: TimeInterval = 180 * 86_400
    ) throws -> Certificate {
        let subject = try DistinguishedName {
            OrganizationName("authsim")
            CommonName("authsim push-receiver")
        }
        var names: [GeneralName] = (serverDNSNames + extraDNSNames).map { .dnsName($0) }
        names += serverIPAddresses.map { .ipAddress(ASN1OctetString(contentBytes: $0[...])) }
        let caSKI = try ca.extensions.subjectKeyIdentifier?.keyIdentifier
        return try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: now.addingTimeInterval(validity),
            issuer: ca.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
                AuthorityKeyIdentifier(keyIdentifier: caSKI)
            },
            issuerPrivateKey: .init(caKey)
        )
    }
}
