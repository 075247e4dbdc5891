import APNsReceiver
@testable import AuthBackend
import DeviceOS
import Foundation
import IdentityToolkitAPI
import TestSupport
import Testing
import Utilities

/// Every file authsim keeps state in says its format version and the authsim that wrote it
/// (docs/state-formats.md). `StateFormats/` holds each kind of file as authsim wrote it:
/// `unstamped/` before files had stamps (format 1 of each), `stamped/` as this build writes them.
/// A change of format adds a folder of files written by the build before it.
@Suite("state formats: files of every version authsim wrote load, older ones are migrated, newer ones refused naming both authsims")
struct StateFormatTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("StateFormats")
    static let generations = ["unstamped", "stamped"]

    /// A copy of a fixture folder, to open (opening migrates and compacts).
    static func copy(_ generation: String, _ name: String) throws -> URL {
        let folder = temporaryDirectory("state-formats-\(generation)-\(name)")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent(generation), to: folder)
        return folder
    }

    /// The state the fixtures hold: a phone user (signed in by silent push), an email user, one
    /// push delivered to the device's sandbox token, one refused (BadDeviceToken).
    @Test("each store reads its files as every authsim version wrote them", arguments: generations)
    func everyGenerationLoads(_ generation: String) async throws {
        let folder = try Self.copy(generation, "load")
        defer { try? FileManager.default.removeItem(at: folder) }

        let toolkit = try IdentityToolkit(pusher: nil, stateDirectory: folder.appendingPathComponent("backend"))
        let users = try await toolkit.exportAccounts().users ?? []
        #expect(Set(users.compactMap { $0.phoneNumber ?? $0.email }) == ["+16505551234", "ada@example.com"])

        let deliveries = try DeliveryLog.read(folder.appendingPathComponent("deliveries.jsonl"))
        #expect(deliveries.records.count == 1 && deliveries.unreadable.isEmpty && deliveries.records.first?.topic == "com.example.authsim")
        #expect(try DeliveryLog.count(in: folder.appendingPathComponent("deliveries.jsonl")) == 1)
        let rejections = try RejectionLog.read(folder.appendingPathComponent("rejections.jsonl"))
        #expect(rejections.records.map(\.reason) == [.badDeviceToken] && rejections.unreadable.isEmpty)
        #expect((deliveries.stamp == nil) == (generation == "unstamped") && (rejections.stamp == nil) == (generation == "unstamped"))

        let registry = try DeviceRegistry(file: folder.appendingPathComponent("devices.json"))
        #expect(registry.all.map(\.bundleID) == ["com.example.authsim"])

        let imported = try IdentityToolkit(pusher: nil)
        let report = try await EmulatorExport.load(folder.appendingPathComponent("export"), into: imported)
        #expect(report.users == 2)

        let keychain = Keychain(file: folder.appendingPathComponent("keychain.json"))
        #expect(keychain.loadError == nil && !keychain.items.isEmpty)
    }

    @Test("a log or journal of an older format is migrated when opened for writing: its stamp first, its records unchanged")
    func olderFilesAreMigrated() async throws {
        let folder = try Self.copy("unstamped", "migrate")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, format, open) in [
            ("deliveries.jsonl", DeliveryLog.format, { (file: URL) throws in _ = try DeliveryLog(file: file) }),
            ("rejections.jsonl", RejectionLog.format, { (file: URL) throws in _ = try RejectionLog(file: file) }),
        ] {
            let file = folder.appendingPathComponent(name)
            let before = try Data(contentsOf: file)
            try open(file)
            let after = try Data(contentsOf: file)
            #expect(after == Data(format.stamp.line.utf8) + before, "\(name)")
            // Opened again: nothing more to migrate.
            try open(file)
            #expect(try Data(contentsOf: file) == after)
        }
        let journal = folder.appendingPathComponent("backend/journal.jsonl")
        _ = try IdentityToolkit(pusher: nil, stateDirectory: journal.deletingLastPathComponent())
        let first = try #require(AppendOnlyFile.firstLine(of: journal))
        #expect(FormatStamp.parse(line: first) == BackendJournal.format.stamp)
    }

    /// What a newer authsim would leave: the stamped fixtures with their versions raised.
    static func fromTheFuture(_ folder: URL) throws {
        for name in ["backend/journal.jsonl", "deliveries.jsonl", "rejections.jsonl", "devices.json", "export/firebase-export-metadata.json"] {
            let file = folder.appendingPathComponent(name)
            var text = try String(contentsOf: file, encoding: .utf8)
            text = text.replacingOccurrences(of: #""version":2,"written-by":"0.1.0""#, with: #""version":99,"written-by":"9.0.0""#)
                .replacingOccurrences(of: #""version":1,"written-by":"0.1.0""#, with: #""version":99,"written-by":"9.0.0""#)
                .replacingOccurrences(of: "\"version\" : 1,\n  \"written-by\" : \"0.1.0\"", with: "\"version\" : 99,\n  \"written-by\" : \"9.0.0\"")
            #expect(text.contains("9.0.0"), "\(name) was not changed")
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
    }

    @Test("a file of a newer format is refused by every store, naming both authsims and the versions, and left as it was")
    func newerFilesAreRefused() async throws {
        let folder = try Self.copy("stamped", "newer")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.fromTheFuture(folder)
        func names(_ message: String) -> Bool {
            message.contains("authsim 9.0.0") && message.contains("format 99") && message.contains("(\(AuthsimVersion.current))")
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix("json") || $0.hasSuffix("jsonl") }
        let before = try Dictionary(uniqueKeysWithValues: files.map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) })

        #expect { _ = try IdentityToolkit(pusher: nil, stateDirectory: folder.appendingPathComponent("backend")) } throws: { error in
            guard let error = error as? IdentityToolkitError else { return false }
            return error.code == .stateFormat && names(error.message)
        }
        for (name, use) in [
            ("deliveries.jsonl", { (file: URL) throws(ReceiverError) in _ = try DeliveryLog(file: file) }),
            ("deliveries.jsonl", { (file: URL) throws(ReceiverError) in _ = try DeliveryLog.read(file) }),
            ("rejections.jsonl", { (file: URL) throws(ReceiverError) in _ = try RejectionLog(file: file) }),
            ("rejections.jsonl", { (file: URL) throws(ReceiverError) in _ = try RejectionLog.read(file) }),
            ("devices.json", { (file: URL) throws(ReceiverError) in _ = try DeviceRegistry(file: file) }),
        ] {
            #expect { try use(folder.appendingPathComponent(name)) } throws: { error in
                guard let error = error as? ReceiverError else { return false }
                return error.code == .format && names(error.message)
            }
        }
        let imported = try IdentityToolkit(pusher: nil)
        await #expect { _ = try await EmulatorExport.load(folder.appendingPathComponent("export"), into: imported) } throws: { error in
            guard let error = error as? IdentityToolkitError else { return false }
            return error.code == .stateFormat && names(error.message)
        }
        #expect(try await imported.exportAccounts().users ?? [] == [])
        for (name, data) in before {
            #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == data, "\(name) was changed")
        }
    }

    /// The fixtures follow the formats: a store whose version goes up without a folder of files
    /// written before the change fails here.
    @Test("the stamped fixtures are this build's formats: a format change comes with fixtures of the files it replaces")
    func fixturesAreCurrent() throws {
        let stamped = Self.fixtures.appendingPathComponent("stamped")
        func stamp(_ name: String) throws -> FormatStamp? {
            AppendOnlyFile.firstLine(of: stamped.appendingPathComponent(name)).flatMap(FormatStamp.parse(line:))
        }
        #expect(try stamp("backend/journal.jsonl") == BackendJournal.format.stamp)
        #expect(try stamp("deliveries.jsonl") == DeliveryLog.format.stamp)
        #expect(try stamp("rejections.jsonl") == RejectionLog.format.stamp)
        let registry = try JSONDecoder().decode(FormatStamp.self, from: Data(contentsOf: stamped.appendingPathComponent("devices.json")))
        #expect(registry == DeviceRegistry.format.stamp)
        struct Metadata: Decodable { let authsim: FormatStamp? }
        let metadata = try JSONDecoder().decode(Metadata.self, from: Data(contentsOf: stamped.appendingPathComponent("export/firebase-export-metadata.json")))
        #expect(metadata.authsim == EmulatorExport.format.stamp)
        struct Keys: Decodable { let format: String }
        #expect(try JSONDecoder().decode(Keys.self, from: Data(contentsOf: stamped.appendingPathComponent("keychain.json"))).format == Keychain.format)
    }

    @Test("processes opening a new log at once stamp it once; a reset empties it down to its stamp")
    func oneStampPerFile() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("deliveries.jsonl")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask { _ = try DeliveryLog(file: file) } }
            try await group.waitForAll()
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text == DeliveryLog.format.stamp.line)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"time\":\"2026-12-03T06:18:41.246Z\"}\n".utf8))
        try handle.close()
        try DeliveryLog.empty(file)
        #expect(try String(contentsOf: file, encoding: .utf8) == DeliveryLog.format.stamp.line)
    }
}
