import Crypto
import Foundation
import X509
#if canImport(Glibc)
import Glibc
#endif

/// Everything the local channel needs to run: CA, server certificate and APNs auth key.
package struct LocalCredentials: Sendable {
    /// The CA clients trust (PEM), and its file.
    package let caCertificatePEM: String
    package let caCertificateFile: URL
    /// The receiver's certificate (PEM) and its private key (PEM), and their files.
    package let serverCertificatePEM: String
    package let serverKeyPEM: String
    package let serverCertificateFile: URL
    package let serverKeyFile: URL
    /// The APNs auth key the sender signs with and the receiver trusts.
    package let authKey: APNsAuthKey
}

/// The `Certs/` folder: made on first use, never committed.
///
/// | file | what |
/// |---|---|
/// | `ca.pem`, `ca-key.pem` | the local CA |
/// | `server.pem`, `server-key.pem` | the receiver's certificate, for localhost and Apple's APNs hosts |
/// | `AuthKey_<KEYID>.p8` | the APNs auth key (P-256, PKCS#8 PEM) |
/// | `apns-key.json` | `{"keyID", "teamID", "p8"}`: the key's IDs, recorded beside it |
///
/// Files already there are reused; a certificate that expires within a day is made anew. Private
/// keys are written with mode 0600. Processes that start at once on a new folder take turns (an
/// exclusive `flock` on `.lock` in it), so one makes the material and the others load it: without
/// the turn, each wrote its own keys over the others' and a receiver could load another's key for
/// its certificate.
package struct CertsDirectory: Sendable {
    package let url: URL

    package init(_ url: URL) { self.url = url }

    package var caCertificateFile: URL { url.appendingPathComponent("ca.pem") }
    package var caKeyFile: URL { url.appendingPathComponent("ca-key.pem") }
    package var serverCertificateFile: URL { url.appendingPathComponent("server.pem") }
    package var serverKeyFile: URL { url.appendingPathComponent("server-key.pem") }
    package var keyInfoFile: URL { url.appendingPathComponent("apns-key.json") }

    /// The recorded IDs of the folder's auth key.
    package struct KeyInfo: Codable, Sendable {
        package var keyID: String
        package var teamID: String
        package var p8: String
    }

    /// Loads the folder's material, generating whatever is missing or about to expire.
    package func ensure(now: Date = Date()) throws(PKIError) -> LocalCredentials {
        try createFolder()
        return try exclusively { () throws(PKIError) in
            let (ca, caKey) = try ensureCA(now: now)
            let serverPEM = try ensureServerCertificate(ca: ca, caKey: caKey, now: now)
            let authKey = try folderAuthKey()
            return try credentials(serverPEM: serverPEM, authKey: authKey)
        }
    }

    private func credentials(serverPEM: String, authKey: APNsAuthKey) throws(PKIError) -> LocalCredentials {
        return LocalCredentials(
            caCertificatePEM: try read(caCertificateFile),
            caCertificateFile: caCertificateFile,
            serverCertificatePEM: serverPEM,
            serverKeyPEM: try read(serverKeyFile),
            serverCertificateFile: serverCertificateFile,
            serverKeyFile: serverKeyFile,
            authKey: authKey)
    }

    /// The auth key recorded in `apns-key.json`, generating one (with random key and team IDs) if none is.
    package func ensureAuthKey() throws(PKIError) -> APNsAuthKey {
        try createFolder()
        return try exclusively { () throws(PKIError) in try folderAuthKey() }
    }

    /// Runs `body` while this process holds the folder's lock (other processes wait for it). A
    /// folder this process cannot write (a read-only mount of material made elsewhere, as a
    /// Kubernetes Secret) has no lock file to take: `body` then only reads, and runs at once (had it
    /// to write, the write would fail and say so).
    private func exclusively<T>(_ body: () throws(PKIError) -> T) throws(PKIError) -> T {
        let lockFile = url.appendingPathComponent(".lock").path
        let descriptor = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return try body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw PKIError(.cannotWrite, "cannot lock \(lockFile): \(String(cString: strerror(errno)))") }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private func folderAuthKey() throws(PKIError) -> APNsAuthKey {
        if FileManager.default.fileExists(atPath: keyInfoFile.path) {
            let info: KeyInfo
            do { info = try JSONDecoder().decode(KeyInfo.self, from: Data(contentsOf: keyInfoFile)) } catch {
                throw PKIError(.unreadable, "\(keyInfoFile.path) is not {\"keyID\",\"teamID\",\"p8\"}: \(error)")
            }
            return try APNsAuthKey.load(p8: url.appendingPathComponent(info.p8), keyID: info.keyID, teamID: info.teamID)
        }
        try createFolder()
        let key = APNsAuthKey.generate()
        try write(key.p8PEM, to: url.appendingPathComponent(key.fileName), secret: true)
        let info = KeyInfo(keyID: key.keyID, teamID: key.teamID, p8: key.fileName)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding three strings cannot fail.
        try write(String(decoding: try! encoder.encode(info), as: UTF8.self) + "\n", to: keyInfoFile, secret: false)
        return try APNsAuthKey(keyID: key.keyID, teamID: key.teamID, privateKey: key.privateKey,
                               file: url.appendingPathComponent(key.fileName))
    }

    private func createFolder() throws(PKIError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw PKIError(.cannotWrite, "cannot create \(url.path): \(error.localizedDescription)")
        }
    }

    private func ensureCA(now: Date) throws(PKIError) -> (Certificate, P256.Signing.PrivateKey) {
        if let existing = try? loadPair(certificate: caCertificateFile, key: caKeyFile),
           existing.0.notValidAfter > now.addingTimeInterval(86_400) {
            return existing
        }
        let key = P256.Signing.PrivateKey()
        let ca: Certificate
        do { ca = try CertificateFactory.makeCA(key: key, commonName: "authsim local CA", now: now) } catch {
            throw PKIError(.badCertificate, "cannot make the local CA: \(error)")
        }
        try write(key.pemRepresentation, to: caKeyFile, secret: true)
        try write(try pem(ca), to: caCertificateFile, secret: false)
        // A new CA invalidates the old server certificate.
        try? FileManager.default.removeItem(at: serverCertificateFile)
        return (ca, key)
    }

    private func ensureServerCertificate(ca: Certificate, caKey: P256.Signing.PrivateKey, now: Date) throws(PKIError) -> String {
        if let existing = try? loadPair(certificate: serverCertificateFile, key: serverKeyFile),
           existing.0.notValidAfter > now.addingTimeInterval(86_400), existing.0.issuer == ca.subject,
           (try? existing.0.extensions.authorityKeyIdentifier?.keyIdentifier) == (try? ca.extensions.subjectKeyIdentifier?.keyIdentifier) {
            return try read(serverCertificateFile)
        }
        let key = P256.Signing.PrivateKey()
        let certificate: Certificate
        do { certificate = try CertificateFactory.makeServerCertificate(key: key, ca: ca, caKey: caKey, now: now) } catch {
            throw PKIError(.badCertificate, "cannot make the server certificate: \(error)")
        }
        let text = try pem(certificate)
        try write(key.pemRepresentation, to: serverKeyFile, secret: true)
        try write(text, to: serverCertificateFile, secret: false)
        return text
    }

    private func loadPair(certificate: URL, key: URL) throws -> (Certificate, P256.Signing.PrivateKey) {
        let cert = try Certificate(pemEncoded: String(contentsOf: certificate, encoding: .utf8))
        let privateKey = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: key, encoding: .utf8))
        guard cert.publicKey == Certificate.PublicKey(privateKey.publicKey) else {
            throw PKIError(.badKey, "\(key.lastPathComponent) does not match \(certificate.lastPathComponent)")
        }
        return (cert, privateKey)
    }

    private func pem(_ certificate: Certificate) throws(PKIError) -> String {
        do { return try certificate.serializeAsPEM().pemString + "\n" } catch {
            throw PKIError(.badCertificate, "cannot serialise a certificate: \(error)")
        }
    }

    private func read(_ file: URL) throws(PKIError) -> String {
        do { return try String(contentsOf: file, encoding: .utf8) } catch {
            throw PKIError(.unreadable, "cannot read \(file.path): \(error.localizedDescription)")
        }
    }

    private func write(_ text: String, to file: URL, secret: Bool) throws(PKIError) {
        let manager = FileManager.default
        let attributes: [FileAttributeKey: Any]? = secret ? [.posixPermissions: 0o600] : nil
        try? manager.removeItem(at: file)
        guard manager.createFile(atPath: file.path, contents: Data(text.utf8), attributes: attributes) else {
            throw PKIError(.cannotWrite, "cannot write \(file.path)")
        }
    }
}
