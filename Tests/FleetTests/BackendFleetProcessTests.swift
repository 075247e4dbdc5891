import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import Testing

/// `authsim backend --store` as processes: two nodes on one PostgreSQL behind nothing but their
/// ports, the silent push through a real push-receiver, one node killed with SIGKILL mid-flow.
@Suite("authsim backend processes sharing one PostgreSQL")
struct BackendFleetProcessTests {
    static let token = String(repeating: "6e", count: 32)
    static let number = "+16505550177"
    static let apiKey = "AIzaSyA-authsim-local-api-key-0000000"
    static let v3 = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
    static let v1 = "/identitytoolkit.googleapis.com/v1/accounts"

    /// A node of the fleet: `authsim backend --store url --node-name name`; its base URL.
    static func node(_ name: String, store: String, folder: URL, receiverPort: Int) async throws -> (ServerProcess, String) {
        let (process, port) = try await startBackend(in: folder.appendingPathComponent(name), receiverPort: String(receiverPort),
                                                     ["--certs", folder.appendingPathComponent("Certs").path, "--store", store, "--node-name", name])
        #expect(process.output.contains { $0.contains("state: shared store") && $0.contains("node \(name)") }, "\(process.output)")
        return (process, "http://127.0.0.1:\(port)")
    }

    @Test("a silent-push sign-in split across two nodes, the first killed with SIGKILL after it answered: nothing it answered is lost")
    func splitAcrossProcesses() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let registered = try await runProgram([try executable("push-receiver"), "devices", "add", "--state", folder.appendingPathComponent("receiver").path,
                                               "--environment", "sandbox", "--bundle", "com.example.authsim", "--token", Self.token])
        #expect(registered.status == 0, "\(registered.output)")
        let (receiver, apnsPort, _) = try await startReceiver(in: folder)
        defer { receiver.stop() }
        var (a, baseA) = try await Self.node("a", store: database.url, folder: folder, receiverPort: apnsPort)
        defer { a.stop() }
        let (b, baseB) = try await Self.node("b", store: database.url, folder: folder, receiverPort: apnsPort)
        defer { b.stop() }

        // verifyClient on A: the receipt comes back; the secret goes out in the silent push.
        let (status1, verify) = try await post("\(baseA)\(Self.v3)/verifyClient?key=\(Self.apiKey)", #"{"appToken":"\#(Self.token)","isSandbox":true}"#)
        #expect(status1 == 200, "\(verify)")
        let receipt = try #require(verify["receipt"] as? String)
        let deliveries = try String(contentsOf: folder.appendingPathComponent("receiver/deliveries.jsonl"), encoding: .utf8)
        let line = try #require(deliveries.split(separator: "\n").last)
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let secret = try #require(((entry["payload"] as? [String: Any])?["com.google.firebase.auth"] as? [String: Any])?["secret"] as? String)

        // A dies with what it answered; B knows what became of A's push (an app that asks B why
        // no push came gets the answer), takes the app credential and sends the code.
        a.stop()
        _ = try await a.exit()
        let pushes = try await URLSession.shared.data(from: URL(string: "\(baseB)/emulator/v1/projects/authsim-demo/silentPushes")!).0
        let listed = try #require(try JSONSerialization.jsonObject(with: pushes) as? [String: Any])
        let records = try #require(listed["silentPushes"] as? [[String: Any]], "\(listed)")
        #expect(records.count == 1 && records.first?["appToken"] as? String == Self.token && records.first?["status"] as? Int == 200, "\(records)")
        let (status2, sent) = try await post("\(baseB)\(Self.v1):sendVerificationCode?key=\(Self.apiKey)",
                                             #"{"phoneNumber":"\#(Self.number)","iosReceipt":"\#(receipt)","iosSecret":"\#(secret)"}"#)
        #expect(status2 == 200, "\(sent)")
        let sessionInfo = try #require(sent["sessionInfo"] as? String)

        // A new A reads B's SMS from the store and takes the code.
        (a, baseA) = try await Self.node("a", store: database.url, folder: folder, receiverPort: apnsPort)
        let outbox = try await URLSession.shared.data(from: URL(string: "\(baseA)/emulator/v1/projects/authsim-demo/verificationCodes")!).0
        let codes = (try JSONSerialization.jsonObject(with: outbox) as? [String: Any])?["verificationCodes"] as? [[String: Any]] ?? []
        let code = try #require(codes.first { $0["sessionInfo"] as? String == sessionInfo }?["code"] as? String)
        let (status3, signedIn) = try await post("\(baseA)\(Self.v1):signInWithPhoneNumber?key=\(Self.apiKey)",
                                                 #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code)"}"#)
        #expect(status3 == 200, "\(signedIn)")
        let idToken = try #require(signedIn["idToken"] as? String)

        // B accepts the ID token A signed (one key for the fleet) and finds the user.
        let (status4, lookup) = try await post("\(baseB)\(Self.v1):lookup?key=\(Self.apiKey)", #"{"idToken":"\#(idToken)"}"#)
        #expect(status4 == 200, "\(lookup)")
        #expect(((lookup["users"] as? [[String: Any]])?.first?["phoneNumber"] as? String) == Self.number)
        // The code is spent for the whole fleet.
        let (status5, again) = try await post("\(baseB)\(Self.v1):signInWithPhoneNumber?key=\(Self.apiKey)",
                                              #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code)"}"#)
        #expect(status5 == 400)
        #expect(errorMessage(again)?.hasPrefix("INVALID_SESSION_INFO") == true, "\(again)")
        let nodes = try await postgres.psql(database.name, "SELECT string_agg(DISTINCT node, ',' ORDER BY node) FROM backend_rows")
        #expect(nodes == "a,b")
    }

    @Test("a store that cannot be reached at start: the backend exits with the URL (no password) and the cause")
    func unreachableAtStart() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = "postgres://authsim@/fleet?host=\(folder.path)/no-such-folder"
        let process = try ServerProcess([try executable("authsim"), "backend", "--port", "0", "--certs", folder.appendingPathComponent("Certs").path,
                                         "--store", missing])
        #expect(try await process.exit() == 1)
        #expect(process.errorTail.contains("cannot open the store \(missing)"), "\(process.errorTail)")
        #expect(process.errorTail.contains("No such file or directory"), "\(process.errorTail)")

        let withPassword = try ServerProcess([try executable("authsim"), "backend", "--port", "0", "--certs", folder.appendingPathComponent("Certs").path,
                                              "--store", "postgres://authsim:hunter2@127.0.0.1:1/fleet?sslmode=disable"])
        #expect(try await withPassword.exit() == 1)
        #expect(withPassword.errorTail.contains("postgres://authsim:***@127.0.0.1:1/fleet"), "\(withPassword.errorTail)")
        #expect(!withPassword.errorTail.contains("hunter2"), "\(withPassword.errorTail)")

        let notAURL = try ServerProcess([try executable("authsim"), "backend", "--port", "0", "--certs", folder.appendingPathComponent("Certs").path,
                                         "--store", "mysql://root@localhost/fleet"])
        #expect(try await notAURL.exit() != 0)
        #expect(notAURL.errorTail.contains("is not a postgres:// URL"), "\(notAURL.errorTail)")
    }

    @Test("Sign in with Apple across processes: the Apple sheet on one node, signInWithIdp on the other, the same user from either")
    func appleAcrossProcesses() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        // No silent push here: the receiver's port is never dialled.
        let (a, baseA) = try await Self.node("a", store: database.url, folder: folder, receiverPort: 1)
        defer { a.stop() }
        let (b, baseB) = try await Self.node("b", store: database.url, folder: folder, receiverPort: 1)
        defer { b.stop() }
        // The nonce's SHA-256 (hex) goes to the sheet, the raw one to signInWithIdp.
        let raw = "fleet-nonce"
        let hashed = "db388cb39d67666f06b757a431e82fd4227c7c718d2adab4989eb82a8d8df74f"
        func signIn(sheet: String, at node: String) async throws -> [String: Any] {
            let (status, sheetAnswer) = try await post("\(sheet)/appleid/auth/authorize", #"{"client_id":"com.example.authsim","user":"ada","nonce":"\#(hashed)"}"#)
            #expect(status == 200, "\(sheetAnswer)")
            let token = try #require(sheetAnswer["identity_token"] as? String)
            let body = #"{"postBody":"providerId=apple.com&id_token=\#(token)&nonce=\#(raw)","requestUri":"http://localhost","returnSecureToken":true}"#
            let (signedIn, answer) = try await post("\(node)\(Self.v1):signInWithIdp?key=\(Self.apiKey)", body)
            #expect(signedIn == 200, "\(answer)")
            return answer
        }
        let first = try await signIn(sheet: baseA, at: baseB)
        let second = try await signIn(sheet: baseB, at: baseA)
        let uid = try #require(first["localId"] as? String)
        #expect(second["localId"] as? String == uid)
        #expect(first["isNewUser"] as? Bool == true && second["isNewUser"] as? Bool != true)
    }
}
