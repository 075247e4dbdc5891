import Foundation
import Testing
import TestSupport

/// The Firebase Admin SDK for Python (PyPI `firebase-admin`, installed by `.ci/run`), unchanged,
/// against a real `authsim backend` process as its Auth Emulator (`FIREBASE_AUTH_EMULATOR_HOST`):
/// `Tests/Clients/firebase_admin_suite.py` makes every call and checks every answer; this starts
/// the backend on an Auth Emulator export (`--import`), stops it with SIGTERM so that it writes
/// its own export (`--export-on-exit`), and starts a second backend on that export.
@Suite("The Firebase Admin SDK against authsim backend")
struct AdminSDKTests {
    static let project = "authsim-demo"
    static let apiKey = "AIzaSyA-authsim-local-api-key-0000000"
    static var clients: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Clients").standardized }

    /// `authsim backend` on any free port; its `host:port` once it listens.
    func startBackend(_ folder: URL, _ extra: [String]) async throws -> (ServerProcess, String) {
        let backend = try ServerProcess([try executable("authsim"), "backend", "--port", "0", "--receiver-port", "1",
                                         "--state", folder.appendingPathComponent("State").path,
                                         "--certs", folder.appendingPathComponent("Certs").path,
                                         "--test-number", "+16505553434=654321", "--id-seed", "ci-seed", "--sms-code", "123456"] + extra)
        _ = try await backend.waitFor("listening:")
        return (backend, "127.0.0.1:\(try backend.port(after: "listening:"))")
    }

    @Test("every user-management call, custom tokens, RS256 keys, revocation, disabled users, import and export, bad input")
    func adminSDK() async throws {
        guard await toolAvailable(["python3", "-c", "import firebase_admin, jwt, requests"]) else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let export = folder.appendingPathComponent("export")
        let (backend, host) = try await startBackend(folder.appendingPathComponent("first"), [
            "--import", Self.clients.appendingPathComponent("emulator_export").path, "--export-on-exit", export.path,
        ])
        defer { backend.stop() }
        #expect(backend.output.contains { $0.contains("imported 4 users") }, "\(backend.output)")

        let run = try await runProgram(["python3", Self.clients.appendingPathComponent("firebase_admin_suite.py").path, host, Self.project, Self.apiKey])
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(run.status == 0, "\(run.output)")
        #expect(lines.last == "done", "\(run.output)")
        #expect(lines.filter { $0.hasPrefix("ok ") }.count == 16, "\(run.output)")
        let uid = lines.first { $0.hasPrefix("uid-of-test-number ") }?.split(separator: " ").last.map(String.init)
        let users = lines.first { $0.hasPrefix("users-at-exit ") }?.split(separator: " ").last.flatMap { Int($0) }

        // SIGTERM: the export is written, in the emulator's layout.
        #expect(try await backend.terminate() == 0)
        let metadata = try JSONSerialization.jsonObject(with: Data(contentsOf: export.appendingPathComponent("firebase-export-metadata.json"))) as? [String: Any]
        #expect((metadata?["auth"] as? [String: Any])?["path"] as? String == "auth_export")
        let accounts = try JSONSerialization.jsonObject(with: Data(contentsOf: export.appendingPathComponent("auth_export/accounts.json"))) as? [String: Any]
        #expect(accounts?["kind"] as? String == "identitytoolkit#DownloadAccountResponse")
        #expect((accounts?["users"] as? [Any])?.count == users)
        let config = try JSONSerialization.jsonObject(with: Data(contentsOf: export.appendingPathComponent("auth_export/config.json"))) as? [String: Any]
        #expect(Set(config?.keys.map { $0 } ?? []) == ["signIn", "emailPrivacyConfig"], "only the emulator's own keys, so that it loads the file")

        // A second backend on our export: the same users; the test number's user keeps its UID
        // (--id-seed), here and in a fresh state.
        let (second, secondHost) = try await startBackend(folder.appendingPathComponent("second"), ["--import", export.path])
        defer { second.stop() }
        #expect(second.output.contains { $0.contains("imported \(users ?? -1) users") }, "\(second.output)")
        let listed = try await runProgram(["curl", "-s", "-H", "Authorization: Bearer owner",
                                           "http://\(secondHost)/identitytoolkit.googleapis.com/v1/projects/\(Self.project)/accounts:batchGet?maxResults=-1"])
        let body = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
        let ids = ((body?["users"] as? [[String: Any]]) ?? []).compactMap { $0["localId"] as? String }
        #expect(ids.count == users)
        #expect(uid.map(ids.contains) == true)

        let (third, thirdHost) = try await startBackend(folder.appendingPathComponent("third"), [])
        defer { third.stop() }
        let sent = try await runProgram(["curl", "-s", "-H", "Content-Type: application/json", "-d", #"{"phoneNumber":"+16505553434"}"#,
                                         "http://\(thirdHost)/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=\(Self.apiKey)"])
        let session = (try JSONSerialization.jsonObject(with: Data(sent.output.utf8)) as? [String: Any])?["sessionInfo"] as? String
        let signed = try await runProgram(["curl", "-s", "-H", "Content-Type: application/json", "-d",
                                           #"{"sessionInfo":"\#(session ?? "")","code":"654321"}"#,
                                           "http://\(thirdHost)/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber?key=\(Self.apiKey)"])
        let localId = (try JSONSerialization.jsonObject(with: Data(signed.output.utf8)) as? [String: Any])?["localId"] as? String
        #expect(localId != nil && localId == uid, "the same seed and number give the same UID in a new state: \(signed.output)")
    }

    /// `Tests/Clients/tenants_suite.py`: tenant management by Google's generated client (its
    /// bundled v2 discovery document), a tenant's users by the Admin SDK's `auth_for_tenant`, an
    /// app's REST sign-ins with `tenantId`, each checked there.
    @Test("tenants: managed by Google's generated client, their users by the Admin SDK's auth_for_tenant, signed in to by REST")
    func tenants() async throws {
        guard await toolAvailable(["python3", "-c", "import firebase_admin, googleapiclient, jwt, requests"]) else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (backend, host) = try await startBackend(folder, [])
        defer { backend.stop() }
        let run = try await runProgram(["python3", Self.clients.appendingPathComponent("tenants_suite.py").path, host, Self.project, Self.apiKey])
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(run.status == 0, "\(run.output)")
        #expect(lines.last == "done", "\(run.output)")
        #expect(lines.filter { $0.hasPrefix("ok ") }.count == 11, "\(run.output)")
    }

    // docs/auth-emulator.md's first command, as a new user runs it: the folder does not exist yet.
    @Test("--import D --export-on-exit D on a first run (D missing, then empty) starts with no users and writes D; a file is refused; any API key is taken")
    func importFolderOnFirstRun() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("emulator-data")
        let (first, host) = try await startBackend(folder.appendingPathComponent("first"), ["--import", data.path, "--export-on-exit", data.path])
        defer { first.stop() }
        #expect(first.output.contains { $0.contains("\(data.path) does not exist yet or is empty: starting with no users") }, "\(first.output)")
        #expect(first.output.contains { $0.contains("any key is taken") }, "\(first.output)")
        // A suite written for the emulator sends any key (firebase-tools server.ts takes any non-empty one).
        let signUp = try await runProgram(["curl", "-s", "-H", "Content-Type: application/json", "-d", "{}",
                                           "http://\(host)/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake-api-key"])
        let answer = try JSONSerialization.jsonObject(with: Data(signUp.output.utf8)) as? [String: Any]
        #expect(answer?["localId"] is String, "\(signUp.output)")
        #expect(try await first.terminate() == 0)
        #expect(first.output.contains { $0.contains("exported 1 user to") }, "\(first.output)")
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("auth_export/accounts.json").path))

        // The next run of the same command imports what the first exported.
        let (second, _) = try await startBackend(folder.appendingPathComponent("second"), ["--import", data.path, "--export-on-exit", data.path])
        defer { second.stop() }
        #expect(second.output.contains { $0.contains("imported 1 user from") }, "\(second.output)")
        second.stop()

        let empty = folder.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let (third, _) = try await startBackend(folder.appendingPathComponent("third"), ["--import", empty.path])
        defer { third.stop() }
        #expect(third.output.contains { $0.contains("starting with no users") }, "\(third.output)")
        third.stop()

        let file = folder.appendingPathComponent("not-a-folder.json")
        try Data("{}".utf8).write(to: file)
        let refused = try await runProgram(["sh", "-c", #"exec "$0" "$@" 2>&1"#, try executable("authsim"), "backend", "--port", "0", "--receiver-port", "1",
                                            "--state", folder.appendingPathComponent("fourth/State").path,
                                            "--certs", folder.appendingPathComponent("fourth/Certs").path, "--import", file.path])
        #expect(refused.status != 0)
        #expect(refused.output.contains("is a file: give the folder an export was written to"), "\(refused.output)")
    }

    @Test("--api-key: the backend plays a project configured with its key; another is 400 API_KEY_INVALID")
    func configuredAPIKey() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (backend, host) = try await startBackend(folder, ["--api-key", "AIzaSy-my-project-key"])
        defer { backend.stop() }
        #expect(!backend.output.contains { $0.contains("any key is taken") }, "\(backend.output)")
        for (key, code) in [("fake-api-key", "API_KEY_INVALID"), ("AIzaSy-my-project-key", "")] {
            let signUp = try await runProgram(["curl", "-s", "-H", "Content-Type: application/json", "-d", "{}",
                                               "http://\(host)/identitytoolkit.googleapis.com/v1/accounts:signUp?key=\(key)"])
            #expect(code.isEmpty ? signUp.output.contains("localId") : signUp.output.contains(code), "\(key): \(signUp.output)")
        }
        let empty = try await runProgram(["sh", "-c", #"exec "$0" "$@" 2>&1"#, try executable("authsim"), "backend", "--api-key", "", "--port", "0"])
        #expect(empty.status != 0 && empty.output.contains("--api-key is empty"), "\(empty.output)")
    }
}
