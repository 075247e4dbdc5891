import APNsWire
import Foundation
import TestSupport
import Testing

/// push-receiver and apns-sender as real processes, under load, with the receiver killed or
/// misbehaving: every push answered 200 is in the delivery log, once. (Debug builds push a few
/// hundred a second; the million-push run is `Benchmarks/load.sh`, on release builds.)
@Suite("Load and faults across processes")
struct LoadAndFaultTests {
    static let payload = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Payloads/firebase-auth-silent.apns").standardized.path

    struct Setup {
        let folder: URL
        let token: String
        var certs: String { folder.appendingPathComponent("Certs").path }
        var state: String { folder.appendingPathComponent("State").path }
        var log: URL { folder.appendingPathComponent("State/deliveries.jsonl") }
    }

    static func setup(_ name: String) async throws -> Setup {
        let setup = Setup(folder: temporaryDirectory(name), token: DeviceToken.random().hex)
        let added = try await runProgram([try executable("push-receiver"), "devices", "add", "--state", setup.state,
                                          "--environment", "sandbox", "--bundle", "com.example.authsim", "--token", setup.token])
        #expect(added.status == 0, "\(added.output)")
        return setup
    }

    /// A receiver on `setup`'s state; `port` 0 picks one. Returns it and its TLS port.
    static func receiver(_ setup: Setup, port: Int = 0, faults: [String] = []) async throws -> (ServerProcess, Int) {
        let receiver = try ServerProcess([try executable("push-receiver"), "--certs", setup.certs, "--state", setup.state,
                                          "--sandbox-port", String(port), "--no-production-listener", "--no-device-gateway"]
                                         + faults.flatMap { ["--fault", $0] })
        do {
            _ = try await receiver.waitFor("delivery log:")
            return (receiver, try receiver.port(after: "https"))
        } catch {
            receiver.stop()
            throw error
        }
    }

    static func sender(_ setup: Setup, port: Int, count: Int, concurrency: Int, connections: Int) throws -> ServerProcess {
        try ServerProcess([try executable("apns-sender"), payload, "--token", setup.token, "--certs", setup.certs,
                           "--port", String(port), "--count", String(count), "--concurrency", String(concurrency),
                           "--connections", String(connections), "--retries", "6", "--unique-apns-ids", "--json"])
    }

    /// The sender's JSON lines: apns-ids answered 200, apns-ids interrupted after sending, other failures by code.
    static func outcomes(_ lines: [String]) -> (accepted: [String], interrupted: Set<String>, failures: [String: Int], rejected: Int) {
        var accepted: [String] = []
        var interrupted: Set<String> = []
        var failures: [String: Int] = [:]
        var rejected = 0
        for line in lines {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], object["device-token"] != nil else { continue }
            if let status = object["status"] as? Int {
                if status == 200, let id = object["apns-id"] as? String { accepted.append(id) } else { rejected += 1 }
            } else if let code = object["code"] as? String {
                if code == "interrupted", let id = object["apns-id"] as? String { interrupted.insert(id) } else { failures[code, default: 0] += 1 }
            }
        }
        return (accepted, interrupted, failures, rejected)
    }

    /// The delivery log's apns-ids (lines that parse) and the number of lines that do not.
    static func logged(_ file: URL) throws -> (ids: [String], torn: Int) {
        let text = try String(contentsOf: file, encoding: .utf8)
        var ids: [String] = []
        var torn = 0
        for line in text.split(separator: "\n") {
            if let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], let id = object["apns-id"] as? String {
                ids.append(id)
            } else {
                torn += 1
            }
        }
        return (ids, torn)
    }

    @Test("push-receiver killed with SIGKILL under load: every push it answered 200 is in the log after a restart, none twice")
    func killedUnderLoad() async throws {
        let setup = try await Self.setup(#function)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        var (receiver, port) = try await Self.receiver(setup)
        defer { receiver.stop() }
        // Enough pushes that the sender (tens of thousands a second) is still busy when the kill comes,
        // however late a loaded machine lets this test see the 800th line: with 20,000 a CI run once
        // saw the sender finish first. After the kill the rest fail fast to connect (about 3 s).
        let sender = try Self.sender(setup, port: port, count: 200_000, concurrency: 100, connections: 2)
        defer { sender.stop() }
        try await sender.waitForLines(800)
        receiver.stop()
        // The sender then fails every push it has left, each to connect: about 3 s here, but with the
        // suite on two busy cores 116,062 of them took more than the old 120 s limit. The limit bounds
        // a hang (stress.sh's is ten minutes), not the machine.
        let status = try await sender.exit(limit: .seconds(600))
        #expect(status == 2, "the sender exits 2 when pushes went unanswered")
        let sent = Self.outcomes(sender.output)
        #expect(sent.rejected == 0)
        #expect(sent.accepted.count >= 800)
        #expect(sent.accepted.count < 200_000, "the kill came before the end")

        // Restarted on the same state folder: the log holds every push answered 200, once; anything
        // else in it is a push that was in flight when the process died. (On a new port: the dead
        // receiver's ephemeral port may meanwhile be any other test's, as a listener or as the local
        // end of a connection, and binding it again then fails. CI saw that once.)
        (receiver, port) = try await Self.receiver(setup)
        let afterKill = try Self.logged(setup.log)
        let logged = Set(afterKill.ids)
        #expect(logged.count == afterKill.ids.count, "no push logged twice")
        let missing = Set(sent.accepted).subtracting(logged)
        #expect(missing.isEmpty, "answered 200 but not logged: \(missing.prefix(5))")
        #expect(logged.subtracting(sent.accepted).isSubset(of: sent.interrupted), "logged pushes the sender never sent")
        #expect(afterKill.torn <= 1)

        // The restarted receiver appends after whatever the kill left, on lines of their own.
        let more = try Self.sender(setup, port: port, count: 50, concurrency: 10, connections: 1)
        // (Once seen failing under load before issue 26's fix, with 49 of the 50 not logged: the
        // sender's last lines say why if it happens again.)
        #expect(try await more.exit() == 0, "\(Self.outcomes(more.output).failures) \(more.output.suffix(5)); \(more.errorTail)")
        let again = try Self.logged(setup.log)
        #expect(again.ids.count == afterKill.ids.count + 50)
        #expect(again.torn == afterKill.torn)
        print("killed after \(sent.accepted.count) answered 200 (\(sent.interrupted.count) interrupted in flight, \(sent.failures) failed to connect); log: \(afterKill.ids.count) lines, \(afterKill.torn) torn")
    }

    @Test("GOAWAY and REFUSED_STREAM under load: refused pushes are sent again, each lands exactly once")
    func goAwayAndRefusedUnderLoad() async throws {
        let setup = try await Self.setup(#function)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let (receiver, port) = try await Self.receiver(setup, faults: ["goaway=Shutdown,count=3", "refuse-stream,count=30"])
        defer { receiver.stop() }
        let sender = try Self.sender(setup, port: port, count: 1_000, concurrency: 100, connections: 2)
        defer { sender.stop() }
        let status = try await sender.exit()
        let sent = Self.outcomes(sender.output)
        #expect(status == 0, "\(sender.output.suffix(3))")
        #expect(sent.accepted.count == 1_000)
        #expect(sent.failures.isEmpty && sent.interrupted.isEmpty && sent.rejected == 0)
        let log = try Self.logged(setup.log)
        #expect(log.ids.count == 1_000)
        #expect(Set(log.ids).symmetricDifference(sent.accepted).count == 0, "the log and the answers differ")
        #expect(Set(log.ids).count == log.ids.count, "a push logged twice")
    }
}
