import APNsWire
import Utilities
import Crypto
import Foundation

/// An APNs auth key as Apple issues it: `AuthKey_<KEYID>.p8` (P-256, PKCS#8 PEM `PRIVATE KEY`),
/// with its 10-character key ID and the 10-character ID of the team it belongs to.
package struct APNsAuthKey: Sendable {
    package let keyID: String
    package let teamID: String
    package let privateKey: P256.Signing.PrivateKey
    /// Where the `.p8` lives, when it came from a file.
    package let file: URL?

    package init(keyID: String, teamID: String, privateKey: P256.Signing.PrivateKey, file: URL? = nil) throws(PKIError) {
        guard AppleIdentifier.isValid(keyID) else {
            throw PKIError(.badIdentifier, "key ID \"\(keyID)\" must be 10 uppercase letters or digits, as Apple shows it")
        }
        guard AppleIdentifier.isValid(teamID) else {
            throw PKIError(.badIdentifier, "team ID \"\(teamID)\" must be 10 uppercase letters or digits, as Apple shows it")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.privateKey = privateKey
        self.file = file
    }

    /// A new key with random key and team IDs.
    package static func generate(keyID: String = AppleIdentifier.random(), teamID: String = AppleIdentifier.random()) -> APNsAuthKey {
        // Random identifiers are valid by construction.
        try! APNsAuthKey(keyID: keyID, teamID: teamID, privateKey: P256.Signing.PrivateKey())
    }

    /// Loads a `.p8`. The key ID defaults to the one in an `AuthKey_<KEYID>.p8` file name.
    ///
    /// - Throws: ``PKIError`` when the file is unreadable, is not a PKCS#8 P-256 key (Apple's keys
    ///   are), or the key ID can't be known.
    package static func load(p8 url: URL, keyID: String? = nil, teamID: String) throws(PKIError) -> APNsAuthKey {
        let pem: String
        do { pem = try String(contentsOf: url, encoding: .utf8) } catch {
            throw PKIError(.unreadable, "cannot read \(url.path): \(error.localizedDescription)")
        }
        guard pem.contains("-----BEGIN PRIVATE KEY-----") else {
            let hint = pem.contains("BEGIN EC PRIVATE KEY")
                ? " (this is a SEC1 \"EC PRIVATE KEY\"; Apple's .p8 files are PKCS#8: `openssl pkcs8 -topk8 -nocrypt` converts it)"
                : ""
            throw PKIError(.badKey, "\(url.lastPathComponent) is not a PKCS#8 PEM private key\(hint)")
        }
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw PKIError(.badKey, "\(url.lastPathComponent) does not hold a P-256 private key (APNs keys are P-256 / ES256)")
        }
        let resolvedKeyID: String
        if let keyID {
            resolvedKeyID = keyID
        } else if let fromName = keyIDFromFileName(url.lastPathComponent) {
            resolvedKeyID = fromName
        } else {
            throw PKIError(.badIdentifier, "\(url.lastPathComponent) is not named AuthKey_<KEYID>.p8: give the key ID")
        }
        return try APNsAuthKey(keyID: resolvedKeyID, teamID: teamID, privateKey: key, file: url)
    }

    /// `ABC123DEFG` from `AuthKey_ABC123DEFG.p8`.
    package static func keyIDFromFileName(_ name: String) -> String? {
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        let id = String(name.dropFirst("AuthKey_".count).dropLast(".p8".count))
        return AppleIdentifier.isValid(id) ? id : nil
    }

    /// The file name Apple gives this key.
    package var fileName: String { "AuthKey_\(keyID).p8" }

    /// The PKCS#8 PEM text, as in Apple's `.p8` files.
    package var p8PEM: String { privateKey.pemRepresentation }

    /// A signer for provider tokens.
    package var signer: ProviderTokenSigner {
        // Identifiers were validated on construction.
        try! ProviderTokenSigner(key: privateKey, keyID: keyID, teamID: teamID)
    }

    /// What the receiver needs to trust this key.
    package func trusted(environments: Set<APNsEnvironment>? = nil, topics: Set<String>? = nil) -> TrustedProviderKey {
        TrustedProviderKey(keyID: keyID, teamID: teamID, publicKey: privateKey.publicKey,
                           environments: environments, topics: topics)
    }
}

/// A key-management failure: a file that can't be read or doesn't hold what it should.
package struct PKIError: CodedError {
    package enum Code: String, Sendable, Hashable { case unreadable, badKey, badCertificate, badIdentifier, cannotWrite }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
