import Foundation
import Testing
import Utilities

/// `StateFormat`'s rule and the stamped files of lines, as values and on real files
/// (docs/state-formats.md; the stores' own files: AuthFlowTests' StateFormatTests).
@Suite("format stamps: which versions a build reads, the stamp line, migration on open")
struct StateFormatRuleTests {
    let format = StateFormat(kind: "test log", current: 3, oldestRead: 2)

    @Test("a stamp of the current or a readable older version is read; newer, too old, another kind or none (when 1 is no longer read) are refused, naming both authsims")
    func versions() throws {
        let path = "State/test.jsonl"
        #expect(try format.version(of: FormatStamp(format: "test log", version: 3, writtenBy: "0.1.0"), in: path) == 3)
        #expect(try format.version(of: FormatStamp(format: "test log", version: 2, writtenBy: "0.0.9"), in: path) == 2)
        #expect(try StateFormat(kind: "test log", current: 2).version(of: nil, in: path) == 1)
        #expect { try format.version(of: FormatStamp(format: "test log", version: 4, writtenBy: "7.0.0"), in: path) } throws: { error in
            let error = error as? StateFormatError
            return error?.code == .newer && error!.message.contains("authsim 7.0.0 in test log format 4")
                && error!.message.contains("(\(AuthsimVersion.current)) reads formats 2–3")
        }
        #expect(throws: StateFormatError(.tooOld, "")) { try format.version(of: FormatStamp(format: "test log", version: 1, writtenBy: "0.0.1"), in: path) }
        #expect(throws: StateFormatError(.tooOld, "")) { try format.version(of: nil, in: path) }
        #expect(throws: StateFormatError(.otherKind, "")) { try format.version(of: FormatStamp(format: "delivery log", version: 3, writtenBy: "0.1.0"), in: path) }
    }

    @Test("a stamp line reads back as itself; records, damaged stamps and other lines are not stamps")
    func stampLine() {
        let stamp = FormatStamp(format: "a \"quoted\" kind", version: 7, writtenBy: "1.2.3")
        #expect(stamp.line.hasSuffix("\n") && !stamp.line.dropLast().contains("\n"))
        #expect(FormatStamp.parse(line: Data(stamp.line.dropLast().utf8)) == stamp)
        #expect(FormatStamp.parse(line: Data(#"{"time":"2026-12-03T06:18:09.883Z","authsim-format":"x","version":1,"written-by":"y"}"#.utf8)) == nil)
        #expect(FormatStamp.parse(line: Data(#"{"authsim-format":"x","version":"#.utf8)) == nil)
        #expect(FormatStamp.parse(line: Data()) == nil)
    }

    @Test("opening an older file for writing migrates it through upgrade (a cut last line kept for readers to skip); a new file is stamped; reading gives each record its file's version")
    func migrationOnOpen() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("state-format-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("test.jsonl")
        let old = FormatStamp(format: "test log", version: 2, writtenBy: "0.0.9")
        try Data((old.line + #"{"n":1}"# + "\n" + #"{"n":2}"# + "\n" + #"{"n":"#).utf8).write(to: file)
        #expect(try AppendOnlyFile.lines(in: file, what: "the test log", format: format) { version, _ in version }.records == [2, 2])

        let opened = try AppendOnlyFile(file: file, what: "the test log", format: format) { version, line in
            #expect(version == 2)
            return Data(String(decoding: line, as: UTF8.self).replacingOccurrences(of: "\"n\"", with: "\"number\"").utf8)
        }
        try opened.append(#"{"number":3}"# + "\n")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text == format.stamp.line + #"{"number":1}"# + "\n" + #"{"number":2}"# + "\n" + #"{"n":"# + "\n" + #"{"number":3}"# + "\n")
        let read = try AppendOnlyFile.lines(in: file, what: "the test log", format: format) { version, line in
            (version, try JSONDecoder().decode([String: Int].self, from: line)["number"])
        }
        #expect(read.records.map(\.0) == [3, 3, 3] && read.records.map(\.1) == [1, 2, 3] && read.stamp == format.stamp)
        #expect(read.unreadable.map(\.line) == [4])
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["test.jsonl"])

        let fresh = folder.appendingPathComponent("fresh.jsonl")
        _ = try AppendOnlyFile(file: fresh, what: "the test log", format: format)
        #expect(try String(contentsOf: fresh, encoding: .utf8) == format.stamp.line)
    }

    @Test("openers of an older file at once: one migrates it, the others wait and open the migrated file; no line is lost")
    func concurrentMigration() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("state-format-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("test.jsonl")
        let format = StateFormat(kind: "test log", current: 2)
        let old = (0..<1000).map { #"{"old":\#($0)}"# + "\n" }.joined()
        try Data(old.utf8).write(to: file)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for opener in 0..<16 {
                group.addTask { try AppendOnlyFile(file: file, what: "the test log", format: format).append(#"{"new":\#(opener)}"# + "\n") }
            }
            try await group.waitForAll()
        }
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first.map { $0 + "\n" } == format.stamp.line && lines.filter { $0.hasPrefix(#"{"authsim-format""#) }.count == 1)
        #expect(Array(lines[1...1000]) == old.split(separator: "\n").map(String.init))
        #expect(Set(lines.dropFirst(1001)) == Set((0..<16).map { #"{"new":\#($0)}"# }) && lines.count == 1017)
    }

    @Test("a refused migration or a newer file leaves the file as it was")
    func refusalsLeaveTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("state-format-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("test.jsonl")
        for content in [FormatStamp(format: "test log", version: 9, writtenBy: "9.0.0").line + "{}\n",
                        FormatStamp(format: "test log", version: 2, writtenBy: "0.0.9").line + "{}\n"] {
            try Data(content.utf8).write(to: file)
            #expect(throws: FileStoreError(.format, "")) {
                _ = try AppendOnlyFile(file: file, what: "the test log", format: format) { _, _ in throw StateFormatError(.tooOld, "cannot") }
            }
            #expect(try String(contentsOf: file, encoding: .utf8) == content)
        }
    }
}
