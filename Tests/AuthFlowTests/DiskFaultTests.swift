import APNsReceiver
import APNsSender
import APNsWire
@testable import AuthBackend
import DeviceOS
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import InMemoryLogging
import Logging
import Scenarios
import TestSupport
import Testing
import Utilities

/// Every store that writes, on a real filesystem that fills up or turns read-only (a size-limited
/// tmpfs, ``SmallFilesystem``; skipped with a note where one cannot be mounted): the client gets
/// an error (503, as Google's front end and APNs answer while they cannot keep a change), never
/// 200; reads go on; what was answered 200 is there after a restart, and nothing else is.
@Suite("disk faults: a full disk or a read-only folder gets 503 and loses nothing answered 200; a torn last record is dropped with a warning")
struct DiskFaultTests {
    static let apiKey = BackendConfiguration().apiKey

    func signUp(_ server: BackendServer, _ email: String) async throws -> (Int, [String: Any]) {
        try await post("http://\(server.host):\(server.port)/identitytoolkit.googleapis.com/v1/accounts:signUp?key=\(Self.apiKey)",
                       #"{"email":"\#(email)","password":"correct horse","returnSecureToken":true}"#, headers: ["Content-Type": "application/json"])
    }

    func lookup(_ server: BackendServer, _ idToken: String) async throws -> Int {
        try await post("http://\(server.host):\(server.port)/identitytoolkit.googleapis.com/v1/accounts:lookup?key=\(Self.apiKey)",
                       #"{"idToken":"\#(idToken)"}"#, headers: ["Content-Type": "application/json"]).0
    }

    /// Google's answer while it cannot keep a change.
    func isUnavailable(_ answer: (Int, [String: Any])) -> Bool {
        let error = answer.1["error"] as? [String: Any]
        return answer.0 == 503 && error?["status"] as? String == "UNAVAILABLE" && error?["message"] as? String == "The service is currently unavailable."
    }

    @Test("the backend's journal on a full disk: changes get 503 UNAVAILABLE, reads 200; a restart has exactly the changes answered 200; a read-only folder stops its start with the reason")
    func backendJournal() async throws {
        guard let disk = try await SmallFilesystem.mount(#function, bytes: 256 << 10) else { return }
        defer { Task { await disk.unmount() } }
        let state = disk.folder.appendingPathComponent("backend")
        let log = InMemoryLogHandler()
        var answered200: Set<String> = []
        do {
            // Rewrites of the journal (compaction) come every few records, so some fall on the full disk too.
            var configuration = BackendConfiguration()
            configuration.journalCompactionLines = 8
            let toolkit = try IdentityToolkit(configuration: configuration, pusher: nil, stateDirectory: state, logger: Logger(label: "test") { _ in log })
            let server = try await BackendServer.start(toolkit: toolkit)
            let first = try await signUp(server, "kept@example.com")
            #expect(first.0 == 200)
            answered200.insert("kept@example.com")
            let idToken = try #require(first.1["idToken"] as? String)
            try disk.fill()
            // The journal's last page may still have room for a few records: each change is
            // answered 200 and kept, or 503 and not kept.
            var refused: (Int, [String: Any])?
            for index in 0..<200 {
                let answer = try await signUp(server, "full-\(index)@example.com")
                if answer.0 == 200 { answered200.insert("full-\(index)@example.com") } else { refused = answer; break }
            }
            #expect(refused.map(isUnavailable) == true, "\(String(describing: refused))")
            #expect(log.entries.contains { $0.level == .error && "\($0.metadata["error"] ?? "")".contains("No space left on device") })
            #expect(try await lookup(server, idToken) == 200)
            #expect(try FileManager.default.contentsOfDirectory(atPath: state.path).sorted() == ["id-token-rsa-key.pem", "journal.jsonl"],
                    "a failed rewrite left its part behind")
            try disk.free()
            #expect(try await signUp(server, "after-full@example.com").0 == 200)
            answered200.insert("after-full@example.com")
            await server.shutdown()
        }
        // Its journal closed (the toolkit is gone), the folder is made read-only.
        try await disk.remount(readOnly: true)
        #expect { _ = try IdentityToolkit(pusher: nil, stateDirectory: state) } throws: { error in
            "\(error)".contains("Read-only file system")
        }
        try await disk.remount(readOnly: false)
        let restarted = try IdentityToolkit(pusher: nil, stateDirectory: state)
        let emails = Set(try await restarted.exportAccounts().users?.compactMap(\.email) ?? [])
        #expect(emails == answered200)
    }

    @Test("push-receiver on a full disk: pushes get 503 ServiceUnavailable, registry changes an error, reads go on, a restart has exactly the pushes answered 200; a read-only registry refuses changes; a read-only state folder stops its start")
    func receiverStores() async throws {
        guard let disk = try await SmallFilesystem.mount(#function, bytes: 256 << 10),
              let registryDisk = try await SmallFilesystem.mount(#function + "-registry", bytes: 64 << 10) else { return }
        defer { Task { await disk.unmount(); await registryDisk.unmount() } }
        let certs = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: certs) }
        let state = disk.folder.appendingPathComponent("State")
        let registryFile = registryDisk.folder.appendingPathComponent("devices.json")
        var answered200: [String] = []
        do {
            let log = InMemoryLogHandler()
            let channel = try await LocalAPNsChannel.start(certs: certs, state: state, registry: try DeviceRegistry(file: registryFile),
                                                           logger: Logger(label: "receiver") { _ in log })
            let client = try channel.client(environment: .sandbox, retries: 0, timeout: 120)
            let token = DeviceToken.random()
            try channel.register(token, environment: .sandbox, bundleID: "com.example.authsim")
            func push(_ to: DeviceToken = token) async throws -> APNsResponse {
                try await client.send(PushRequest(deviceToken: to, headers: PushHeaders(pushType: .background, topic: "com.example.authsim", priority: .consideringPower),
                                                  payload: Array(#"{"aps":{"content-available":1}}"#.utf8)))
            }
            let kept = try await push()
            #expect(kept.status == 200)
            answered200.append(try #require(kept.apnsID))

            try disk.fill()
            try registryDisk.fill()
            // The log's last page may have room for a few lines: each push is 200 and logged, or 503 and not.
            var refused: APNsResponse?
            for _ in 0..<200 {
                let answer = try await push()
                if answer.status == 200 { answered200.append(try #require(answer.apnsID)) } else { refused = answer; break }
            }
            #expect(refused?.status == 503 && refused?.reason == .serviceUnavailable, "\(String(describing: refused))")
            #expect(try DeliveryLog.read(channel.deliveryLogFile).records.map(\.apnsID) == answered200)
            // Refusals are answered whatever becomes of their lines; one that cannot be kept is said.
            for _ in 0..<200 where !log.entries.contains(where: { "\($0.message)".hasPrefix("the rejection log could not be written") }) {
                #expect(try await push(DeviceToken.random()).reason == .badDeviceToken)
            }
            #expect(log.entries.contains { "\($0.message)".hasPrefix("the rejection log could not be written") && "\($0.metadata["error"] ?? "")".contains("No space left") })
            for fault in ["full", "read-only"] {
                if fault == "read-only" {
                    try registryDisk.free()
                    try await registryDisk.remount(readOnly: true)
                }
                let other = DeviceToken.random()
                #expect(throws: ReceiverError.self, "\(fault)") { try channel.register(other, environment: .sandbox, bundleID: "com.example.authsim") }
                #expect(try await push(other).reason == .badDeviceToken, "\(fault): the registry took a change its file did not")
                #expect(try DeviceRegistry(file: registryFile).all.map(\.token) == [token])
                #expect(try FileManager.default.contentsOfDirectory(atPath: registryDisk.folder.path).filter { $0 != ".filler" } == ["devices.json"],
                        "\(fault): a temporary file was left beside the registry")
            }
            try await registryDisk.remount(readOnly: false)
            try disk.free()
            let after = try await push()
            #expect(after.status == 200)
            answered200.append(try #require(after.apnsID))
            await client.shutdown()
            await channel.shutdown()
        }
        // Its logs closed, the state folder is made read-only: the receiver does not start, and says why.
        try await disk.remount(readOnly: true)
        await #expect { _ = try await LocalAPNsChannel.start(certs: certs, state: state, registry: try DeviceRegistry(file: registryFile)) } throws: { error in
            "\(error)".contains("Read-only file system")
        }
        try await disk.remount(readOnly: false)
        let restarted = try await LocalAPNsChannel.start(certs: certs, state: state, registry: try DeviceRegistry(file: registryFile))
        #expect(try DeliveryLog.read(restarted.deliveryLogFile).records.map(\.apnsID) == answered200)
        await restarted.shutdown()
    }

    @Test("an export and a keychain on a full or read-only disk: the write fails with the reason, the last copy stays whole, no temporary file is left")
    func exportAndKeychain() async throws {
        guard let disk = try await SmallFilesystem.mount(#function, bytes: 256 << 10) else { return }
        defer { Task { await disk.unmount() } }
        let toolkit = try IdentityToolkit(pusher: nil)
        _ = try await toolkit.call(ToolkitCalls.signUp, SignUpNewUserRequest(email: "ada@example.com", password: "correct horse"))
        let export = disk.folder.appendingPathComponent("export")
        try await EmulatorExport.write(toolkit, to: export, version: "authsim")
        let keychain = Keychain(file: disk.folder.appendingPathComponent("keychain.json"))
        try keychain.set(Data("first".utf8), service: "s", account: "a")
        func files() throws -> [String: Data] {
            let paths = try FileManager.default.subpathsOfDirectory(atPath: disk.folder.path).filter { !$0.hasSuffix(".filler") }
            return try Dictionary(uniqueKeysWithValues: paths.compactMap { path in
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: disk.folder.appendingPathComponent(path).path, isDirectory: &isDirectory)
                return isDirectory.boolValue ? nil : (path, try Data(contentsOf: disk.folder.appendingPathComponent(path)))
            })
        }
        let before = try files()
        _ = try await toolkit.call(ToolkitCalls.signUp, SignUpNewUserRequest(email: "grace@example.com", password: "correct horse"))

        for fault in ["full", "read-only"] {
            if fault == "full" { try disk.fill() } else { try await disk.remount(readOnly: true) }
            await #expect { try await EmulatorExport.write(toolkit, to: export, version: "authsim") } throws: { error in
                "\(error)".contains(fault == "full" ? "No space left on device" : "Read-only file system")
            }
            #expect(throws: KeychainError.self) { try keychain.set(Data("second".utf8), service: "s", account: "a") }
            #expect(try files() == before, "\(fault): a file changed, or a temporary one was left")
            // The last export still imports whole.
            let imported = try IdentityToolkit(pusher: nil)
            #expect(try await EmulatorExport.load(export, into: imported).users == 1)
            if fault == "full" { try disk.free() } else { try await disk.remount(readOnly: false) }
        }
        try await EmulatorExport.write(toolkit, to: export, version: "authsim")
        #expect(try await EmulatorExport.load(export, into: IdentityToolkit(pusher: nil)).users == 2)
    }

    /// Audit 3, D3.4: the SDK saves the user before making it current, and a save that fails
    /// fails the call (Auth.swift 1952–1984, `updateCurrentUser(_:byForce: false, savingToDisk:
    /// true)`), and a token or profile change whose save fails fails its call (User.swift 1291,
    /// 1451, 1711, `updateKeychain`).
    @Test("a keychain that cannot be written: sign-in fails with keychainError (17995) and the current user stays; sign-out fails and keeps the user; freed, both work")
    func keychainWriteFailure() async throws {
        guard let disk = try await SmallFilesystem.mount(#function, bytes: 64 << 10) else { return }
        defer { Task { await disk.unmount() } }
        try await withWorld { world, _ in
            let file = disk.folder.appendingPathComponent("Keychain/com.example.authsim.json")
            let (auth, _) = try await world.install(AppProfile(), keychain: Keychain(file: file), appName: "full-disk-app")
            let first = try await auth.signInAnonymously().user
            let saved = try Data(contentsOf: file)
            try disk.fill()
            await expectAuthError(.keychainError) { try await auth.createUser(withEmail: "full@example.com", password: "correct horse") }
            #expect(auth.currentUser?.uid == first.uid)
            await expectAuthError(.keychainError) { try auth.signOut() }
            #expect(auth.currentUser?.uid == first.uid)
            #expect(try Data(contentsOf: file) == saved)
            try disk.free()
            let second = try await auth.createUser(withEmail: "freed@example.com", password: "correct horse").user
            #expect(auth.currentUser?.uid == second.uid)
            try auth.signOut()
            #expect(auth.currentUser == nil)
        }
    }

    @Test("a torn last record (a write cut by a kill) is dropped with a warning that says which file and how many bytes")
    func tornRecords() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appendingPathComponent("backend")
        _ = try IdentityToolkit(pusher: nil, stateDirectory: state)
        let journal = state.appendingPathComponent("journal.jsonl")
        let torn = #"{"session":{"id":"torn","phoneN"#
        try appendBytes(torn, to: journal)
        let log = InMemoryLogHandler()
        _ = try IdentityToolkit(pusher: nil, stateDirectory: state, logger: Logger(label: "test") { _ in log })
        let warning = try #require(log.entries.first { $0.level == .warning })
        #expect(warning.metadata["bytes"] == "\(torn.utf8.count)" && "\(warning.metadata["journal"] ?? "")" == journal.path)

        let receiverState = folder.appendingPathComponent("State")
        let channel = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"), state: receiverState)
        await channel.shutdown()
        let cut = #"{"time":"2026-12-03T06:18:41.246Z","environment":"sand"#
        try appendBytes(cut, to: receiverState.appendingPathComponent("deliveries.jsonl"))
        let receiverLog = InMemoryLogHandler()
        let restarted = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"), state: receiverState,
                                                         logger: Logger(label: "receiver") { _ in receiverLog })
        await restarted.shutdown()
        let cutWarning = try #require(receiverLog.entries.first { $0.level == .warning })
        #expect(cutWarning.metadata["bytes"] == "\(cut.utf8.count)" && "\(cutWarning.metadata["file"] ?? "")".hasSuffix("deliveries.jsonl"))
        // Ended where it was cut: readers count it as one unreadable line.
        #expect(try DeliveryLog.read(receiverState.appendingPathComponent("deliveries.jsonl")).unreadable.count == 1)
    }

    func appendBytes(_ text: String, to file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }
}
