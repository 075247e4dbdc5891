import Crypto
import Foundation
import LocalPKI
import Synchronization
import TestSupport
import Testing
import X509


@Suite("Certs/: the local CA, server certificate and APNs auth key")
struct CertsDirectoryTests {
    @Test("first use makes everything; the second reuses it")
    func generateOnce() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try CertsDirectory(folder).ensure()
        let second = try CertsDirectory(folder).ensure()
        #expect(first.authKey.keyID == second.authKey.keyID)
        #expect(first.authKey.teamID == second.authKey.teamID)
        #expect(first.serverCertificatePEM == second.serverCertificatePEM)
        #expect(first.authKey.keyID != first.authKey.teamID)

        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == [".lock", "AuthKey_\(first.authKey.keyID).p8", "apns-key.json", "ca-key.pem", "ca.pem", "server-key.pem", "server.pem"])
        let p8 = try String(contentsOf: folder.appendingPathComponent("AuthKey_\(first.authKey.keyID).p8"), encoding: .utf8)
        #expect(p8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        for secret in ["AuthKey_\(first.authKey.keyID).p8", "ca-key.pem", "server-key.pem"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(secret).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(secret)")
        }
        let info = try JSONDecoder().decode(CertsDirectory.KeyInfo.self, from: Data(contentsOf: folder.appendingPathComponent("apns-key.json")))
        #expect(info.keyID == first.authKey.keyID && info.teamID == first.authKey.teamID)
    }

    @Test("eight at once on a new folder (as processes starting together): one makes the material, every one gets the same, each key matching its certificate")
    func startingTogether() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Each call opens the lock file itself, so threads exclude each other as processes do (flock is per open file).
        let results = Mutex<[Result<LocalCredentials, PKIError>]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let result = Result { () throws(PKIError) in try CertsDirectory(folder).ensure() }
            results.withLock { $0.append(result) }
        }
        let made = try results.withLock { $0 }.map { try $0.get() }
        #expect(made.count == 8)
        #expect(Set(made.map(\.serverCertificatePEM)).count == 1)
        #expect(Set(made.map(\.serverKeyPEM)).count == 1)
        #expect(Set(made.map(\.authKey.keyID)).count == 1)
        let certificate = try Certificate(pemEncoded: try #require(made.first).serverCertificatePEM)
        let key = try P256.Signing.PrivateKey(pemRepresentation: try #require(made.first).serverKeyPEM)
        #expect(certificate.publicKey == Certificate.PublicKey(key.publicKey))
    }

    @Test("the server certificate names localhost, loopback and Apple's hosts, and chains to the CA")
    func serverCertificate() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let credentials = try CertsDirectory(folder).ensure()
        let server = try Certificate(pemEncoded: credentials.serverCertificatePEM)
        let ca = try Certificate(pemEncoded: credentials.caCertificatePEM)
        let names = try #require(try server.extensions.subjectAlternativeNames)
        var dns: [String] = []
        var ips: [[UInt8]] = []
        for name in names {
            switch name {
            case .dnsName(let value): dns.append(value)
            case .ipAddress(let octets): ips.append(Array(octets.bytes))
            default: break
            }
        }
        #expect(Set(dns) == ["localhost", "api.push.apple.com", "api.sandbox.push.apple.com", "api.development.push.apple.com"])
        #expect(ips.contains([127, 0, 0, 1]))
        #expect(ips.contains([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]))
        #expect(server.issuer == ca.subject)
        #expect(ca.publicKey.isValidSignature(server.signature, for: server))

        // And an independent verifier agrees.
        let verified = try await runProgram(["openssl", "verify", "-CAfile", credentials.caCertificateFile.path,
                                             credentials.serverCertificateFile.path])
        #expect(verified.status == 0)
        #expect(verified.output.contains(": OK"))
    }

    @Test("a user's own .p8 loads with the key ID from its name; SEC1 and non-P-256 keys get clear errors")
    func bringYourOwnKey() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = P256.Signing.PrivateKey()
        let file = folder.appendingPathComponent("AuthKey_ABC123DEFG.p8")
        try key.pemRepresentation.write(to: file, atomically: true, encoding: .utf8)
        let loaded = try APNsAuthKey.load(p8: file, teamID: "DEF123GHIJ")
        #expect(loaded.keyID == "ABC123DEFG")
        #expect(loaded.privateKey.publicKey.rawRepresentation == key.publicKey.rawRepresentation)

        let unnamed = folder.appendingPathComponent("key.p8")
        try key.pemRepresentation.write(to: unnamed, atomically: true, encoding: .utf8)
        #expect(throws: PKIError(.badIdentifier, "")) { try APNsAuthKey.load(p8: unnamed, teamID: "DEF123GHIJ") }
        #expect(try APNsAuthKey.load(p8: unnamed, keyID: "ZZZ123DEFG", teamID: "DEF123GHIJ").keyID == "ZZZ123DEFG")

        let p384 = folder.appendingPathComponent("AuthKey_P384P384P3.p8")
        try P384.Signing.PrivateKey().pemRepresentation.write(to: p384, atomically: true, encoding: .utf8)
        #expect(throws: PKIError(.badKey, "")) { try APNsAuthKey.load(p8: p384, teamID: "DEF123GHIJ") }

        let sec1 = folder.appendingPathComponent("AuthKey_SEC1SEC1SE.p8")
        try "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n".write(to: sec1, atomically: true, encoding: .utf8)
        do {
            _ = try APNsAuthKey.load(p8: sec1, teamID: "DEF123GHIJ")
            Issue.record("a SEC1 key loaded")
        } catch {
            #expect(error.code == .badKey)
            #expect(error.message.contains("openssl pkcs8"))
        }
        #expect(throws: PKIError(.badIdentifier, "")) { try APNsAuthKey.load(p8: file, teamID: "short") }
    }
}
