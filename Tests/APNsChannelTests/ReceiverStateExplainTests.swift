import APNsReceiver
import APNsWire
import Foundation
import Testing
import TestSupport

/// `authsim explain --receiver-state` on what push-receiver wrote (issue 19's bugs): a dropped push
/// is named, not blamed on the app's forwarding; a key push-receiver does not trust gets the
/// `--p8` fix, not "re-sign"; the exit status is what a CI step needs.
@Suite("explain --receiver-state: drops, untrusted keys, exit statuses")
struct ReceiverStateExplainTests {
    func write(_ folder: URL, deliveries: [String], rejections: [String]) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try (deliveries.joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("deliveries.jsonl"), atomically: true, encoding: .utf8)
        try (rejections.joined(separator: "\n") + (rejections.isEmpty ? "" : "\n"))
            .write(to: folder.appendingPathComponent("rejections.jsonl"), atomically: true, encoding: .utf8)
    }

    static func delivery(dropped: Bool) -> String {
        #"{"time":"2026-11-24T10:00:00.000Z","environment":"sandbox","apns-id":"\#(UUID().uuidString)","device-token":"ab12","topic":"com.example.authsim","push-type":"background","priority":5,"team-id":"TEAM123456","key-id":"KEY1234567","background":true,"dropped":\#(dropped),"payload-bytes":60}"#
    }

    @Test("dropped pushes are named (and fail the step); with --fail-on rejected alone they do not")
    func dropped() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        try write(folder, deliveries: [Self.delivery(dropped: true), Self.delivery(dropped: true)], rejections: [])
        let authsim = try executable("authsim")
        let run = try await runProgram([authsim, "explain", "--receiver-state", folder.path])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("2 accepted (2 of them dropped by a fault), 0 rejected"), "\(run.output)")
        #expect(run.output.contains("2 × push-receiver answered 2 pushes 200 but dropped them"), "\(run.output)")
        #expect(!run.output.contains("not reaching Auth on the device"), "a drop is not the app's forwarding: \(run.output)")
        let rejectedOnly = try await runProgram([authsim, "explain", "--receiver-state", folder.path, "--fail-on", "rejected"])
        #expect(rejectedOnly.status == 0)
    }

    @Test("logs it cannot read are an error, not 'nothing reached it'; a few unreadable lines are counted and named")
    func unreadable() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        // Nothing push-receiver wrote: an error, exit 1, naming the file and the first line.
        try write(folder, deliveries: ["not json", #"{"some":"other log"}"#], rejections: [])
        let garbage = try await runProgram(["sh", "-c", "\"$0\" explain --receiver-state \"$1\" 2>&1", authsim, folder.path])
        #expect(garbage.status == 1, "a log it cannot read fails the run, not the usage: \(garbage.output)")
        #expect(!garbage.output.contains("Usage:"), "\(garbage.output)")
        #expect(garbage.output.contains("deliveries.jsonl holds no line push-receiver wrote (2 lines, line 1: not json)"), "\(garbage.output)")
        #expect(!garbage.output.contains("nothing reached it"), "\(garbage.output)")
        // One line cut by a kill among good ones: counted and named; the rest explained.
        try write(folder, deliveries: [Self.delivery(dropped: false), #"{"time":"2026-11-24T10:00:00.000Z","environ"#, Self.delivery(dropped: false)],
                  rejections: [])
        let cut = try await runProgram([authsim, "explain", "--receiver-state", folder.path])
        #expect(cut.status == 0, "\(cut.output)")
        #expect(cut.output.contains("2 accepted") && cut.output.contains("1 × 1 line of deliveries.jsonl could not be read and is not counted above (line 2:"),
                "\(cut.output)")
    }

    @Test("a wrong --receiver-state is a usage error that says what is wrong; --fail-on takes commas too")
    func wrongFolder() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        let explain = { (path: String, more: [String]) in
            try await runProgram(["sh", "-c", "\"$0\" explain --receiver-state \"$@\" 2>&1", authsim, path] + more)
        }
        let missing = try await explain(folder.appendingPathComponent("nowhere").path, [])
        #expect(missing.status == 64 && missing.output.contains("nowhere does not exist"), "\(missing.output)")
        try write(folder, deliveries: [Self.delivery(dropped: true)], rejections: [])
        let file = try await explain(folder.appendingPathComponent("deliveries.jsonl").path, [])
        #expect(file.status == 64 && file.output.contains("deliveries.jsonl is a file, not a folder"), "\(file.output)")
        let empty = temporaryDirectory(#function + "-empty")
        defer { try? FileManager.default.removeItem(at: empty) }
        let other = try await explain(empty.path, [])
        #expect(other.status == 64 && other.output.contains("has neither deliveries.jsonl nor rejections.jsonl"), "\(other.output)")
        // `rejected,dropped` as `rejected dropped` (the help shows the default so); none goes alone.
        let commas = try await explain(folder.path, ["--fail-on", "rejected,dropped"])
        #expect(commas.status == 1 && commas.output.contains("exit status 1: --fail-on rejected dropped"), "\(commas.output)")
        let mixed = try await explain(folder.path, ["--fail-on", "none", "dropped"])
        #expect(mixed.status == 64 && mixed.output.contains("--fail-on none reports only"), "\(mixed.output)")
    }

    @Test("an untrusted key's InvalidProviderToken gets push-receiver --p8 as its fix; all delivered exits 0")
    func untrustedKey() async throws {
        guard await toolAvailable(["openssl", "version"]) else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certs = folder.appendingPathComponent("Certs").path
        let state = folder.appendingPathComponent("State").path
        let token = DeviceToken.random().hex
        let payload = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Payloads/firebase-auth-silent.apns").standardized.path
        #expect(try await runProgram([try executable("push-receiver"), "devices", "add", "--state", state, "--environment", "sandbox",
                                      "--bundle", "com.example.authsim", "--token", token]).status == 0)
        let receiver = try ServerProcess([try executable("push-receiver"), "--certs", certs, "--state", state, "--sandbox-port", "0",
                                          "--no-production-listener", "--no-device-gateway"])
        defer { receiver.stop() }
        _ = try await receiver.waitFor("delivery log:")
        // A provider whose .p8 push-receiver was never given: the real rejection, as the receiver logs it
        // (issue 31: explain read "is not a key this server trusts" in its detail; it reads the problem's code).
        let p8 = folder.appendingPathComponent("AuthKey_ZZZZZZZZZZ.p8").path
        #expect(try await runProgram(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8]).status == 0)
        let sent = try await runProgram([try executable("apns-sender"), payload, "--token", token, "--certs", certs,
                                         "--port", String(try receiver.port(after: "https")), "--p8", p8, "--team-id", "ABCDE12345"])
        #expect(sent.status == 1, "\(sent.output)")
        #expect(sent.output.contains("InvalidProviderToken"), "\(sent.output)")
        #expect(try await receiver.terminate() == 0)
        let logged = try String(contentsOfFile: state + "/rejections.jsonl", encoding: .utf8)
        #expect(logged.contains(#""provider-token-problem":"unknownKeyID""#), "\(logged)")
        let authsim = try executable("authsim")
        let run = try await runProgram([authsim, "explain", "--receiver-state", state, "--json"])
        #expect(run.status == 1)
        #expect(run.output.contains(#""code":"untrustedProviderKey""#), "\(run.output)")
        #expect(run.output.contains("--p8 AuthKey_<KEYID>.p8 --team-id <TEAMID>"), "\(run.output)")

        // A line from before the problem was logged: the detail's words alone decide nothing.
        let old = temporaryDirectory(#function + "old")
        defer { try? FileManager.default.removeItem(at: old) }
        let rejection = #"{"time":"2026-11-24T10:00:00.000Z","environment":"sandbox","apns-id":"x","device-token":"ab12","status":403,"reason":"InvalidProviderToken","detail":"kid \"ABCDE12345\" is not a key this server trusts"}"#
        try write(old, deliveries: [Self.delivery(dropped: false)], rejections: [rejection])
        let oldRun = try await runProgram([authsim, "explain", "--receiver-state", old.path, "--json"])
        #expect(oldRun.status == 1)
        #expect(oldRun.output.contains(#""code":"invalidProviderToken""#), "\(oldRun.output)")

        let clean = temporaryDirectory(#function + "clean")
        defer { try? FileManager.default.removeItem(at: clean) }
        try write(clean, deliveries: [Self.delivery(dropped: false)], rejections: [])
        let ok = try await runProgram([authsim, "explain", "--receiver-state", clean.path])
        #expect(ok.status == 0, "\(ok.output)")
        #expect(ok.output.contains("accepted all 1 pushes"))
    }

    // A scenario's folder had deliveries.jsonl only: explain said nothing reached the receiver.
    @Test("a scenario's state folder reads as push-receiver's: its refusals are there, named, and fail the step; explain of its text timeline says to use --json")
    func scenarioFolder() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Scenarios").standardized.path
        let run = try await runProgram(["sh", "-c", #"cd "$0" && exec "$1" run debug-build-declares-prod --scenarios "$2""#, folder.path, authsim, scenarios])
        #expect(run.status == 0, "\(run.output)")
        let state = folder.appendingPathComponent("State/run/debug-build-declares-prod").path
        let explained = try await runProgram([authsim, "explain", "--receiver-state", state])
        #expect(explained.status == 1, "\(explained.output)")
        #expect(explained.output.contains("1 rejected") && explained.output.contains("BadDeviceToken"), "\(explained.output)")
        #expect(!explained.output.contains("nothing reached it"), "\(explained.output)")

        let timeline = folder.appendingPathComponent("run.txt")
        try run.output.write(to: timeline, atomically: true, encoding: .utf8)
        let text = try await runProgram(["sh", "-c", #"exec "$0" explain "$1" 2>&1"#, authsim, timeline.path])
        #expect(text.status != 0 && text.output.contains("is a text timeline, which explain cannot read: run it again with --json"), "\(text.output)")
        #expect(!text.output.contains("/.build/") || text.output.contains("swift run authsim"), "advice names the program as the user runs it: \(text.output)")
    }
}

/// `push-receiver devices add|list --json` and `push-receiver reset` (issue 19: no JSON, and no way
/// to start clean but deleting files).
@Suite("push-receiver devices --json and reset")
struct ReceiverCommandTests {
    @Test("devices add and list print JSON with the inspector's names; reset empties the logs, and with --devices the registry")
    func jsonAndReset() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try executable("push-receiver")
        let added = try await runProgram([receiver, "devices", "add", "--state", folder.path, "--environment", "sandbox",
                                          "--bundle", "com.example.authsim", "--label", "ci", "--json"])
        #expect(added.status == 0)
        let device = try #require(try JSONSerialization.jsonObject(with: Data(added.output.utf8)) as? [String: Any])
        #expect(device["environment"] as? String == "sandbox" && device["bundleID"] as? String == "com.example.authsim"
                && (device["token"] as? String)?.count == 64 && device["label"] as? String == "ci")
        let listed = try await runProgram([receiver, "devices", "list", "--state", folder.path, "--json"])
        #expect(listed.output.split(separator: "\n").count == 1 && listed.output.contains(device["token"] as! String))

        try #"{"x":1}"#.write(to: folder.appendingPathComponent("deliveries.jsonl"), atomically: true, encoding: .utf8)
        try #"{"y":1}"#.write(to: folder.appendingPathComponent("rejections.jsonl"), atomically: true, encoding: .utf8)
        let reset = try await runProgram([receiver, "reset", "--state", folder.path])
        #expect(reset.status == 0 && reset.output.contains("emptied deliveries.jsonl, rejections.jsonl"))
        // Emptied down to the format stamp.
        #expect(try String(contentsOf: folder.appendingPathComponent("deliveries.jsonl"), encoding: .utf8) == DeliveryLog.format.stamp.line)
        #expect(try DeliveryLog.read(folder.appendingPathComponent("deliveries.jsonl")).records.isEmpty)
        #expect(try await runProgram([receiver, "devices", "list", "--state", folder.path, "--json"]).output.split(separator: "\n").count == 1)
        _ = try await runProgram([receiver, "reset", "--state", folder.path, "--devices"])
        #expect(try await runProgram([receiver, "devices", "list", "--state", folder.path, "--json"]).output.isEmpty)
    }
}
