import APNsReceiver
import Foundation
import TestSupport
import Testing

/// push-receiver processes sharing one PostgreSQL (`--store`): pushes spread over two receivers,
/// asserted through one query; a receiver killed with SIGKILL under load with nothing it answered
/// 200 missing from the fleet's log; one device registry and one rejection log for the fleet.
@Suite("push-receiver processes sharing one PostgreSQL")
struct ReceiverFleetTests {
    static let payload = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Payloads/firebase-auth-silent.apns").standardized.path

    struct Fleet {
        let folder: URL
        let database: TemporaryPostgres.Database
        let token: String
        var certs: String { folder.appendingPathComponent("Certs").path }
    }

    /// A database with the fleet's token registered in its registry (`devices add --store`).
    static func fleet(_ name: String, postgres: TemporaryPostgres) async throws -> Fleet {
        let fleet = Fleet(folder: temporaryDirectory(name), database: try await postgres.newDatabase(name), token: String(repeating: "7a", count: 32))
        try await devices(fleet, ["add", "--environment", "sandbox", "--bundle", "com.example.authsim", "--token", fleet.token])
        return fleet
    }

    /// `push-receiver devices … --store`: its output.
    @discardableResult
    static func devices(_ fleet: Fleet, _ arguments: [String]) async throws -> String {
        let (output, status) = try await runProgram([try executable("push-receiver"), "devices"] + arguments + ["--store", fleet.database.url])
        #expect(status == 0, "\(arguments): \(output)")
        return output
    }

    /// Receiver `name`: its own --state, the fleet's Certs and store; its TLS port.
    /// - Parameter gateway: with its device gateway (on a port of its own); else `--no-device-gateway`.
    static func receiver(_ name: String, _ fleet: Fleet, _ extra: [String] = [], gateway: Bool = false) async throws -> (ServerProcess, Int) {
        let state = fleet.folder.appendingPathComponent(name).path
        let receiver = try ServerProcess([try executable("push-receiver"), "--certs", fleet.certs, "--state", state, "--sandbox-port", "0",
                                          "--no-production-listener", "--store", fleet.database.url, "--node-name", name]
                                         + (gateway ? ["--device-port", "0"] : ["--no-device-gateway"]) + extra)
        do {
            let lines = try await receiver.waitFor(extra.contains("--fault") ? "faults" : "fleet:")
            #expect(lines.contains { $0.contains("node \(name): devices (1 registered)") }, "\(lines)")
            return (receiver, try receiver.port(after: "https"))
        } catch {
            receiver.stop()
            throw error
        }
    }

    static func sender(_ fleet: Fleet, port: Int, count: Int, concurrency: Int, token: String? = nil) throws -> ServerProcess {
        try ServerProcess([try executable("apns-sender"), payload, "--token", token ?? fleet.token, "--certs", fleet.certs, "--port", String(port),
                           "--count", String(count), "--concurrency", String(concurrency), "--connections", "2", "--retries", "6",
                           "--unique-apns-ids", "--json"])
    }

    /// The apns-ids a sender's JSON lines say were answered 200, and those interrupted in flight.
    static func accepted(_ lines: [String]) -> (accepted: Set<String>, interrupted: Set<String>) {
        var accepted: Set<String> = []
        var interrupted: Set<String> = []
        for line in lines {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], let id = object["apns-id"] as? String else { continue }
            if object["status"] as? Int == 200 { accepted.insert(id) } else if object["code"] as? String == "interrupted" { interrupted.insert(id) }
        }
        return (accepted, interrupted)
    }

    /// One push to `token` through the receiver on `port`: its status and reason.
    static func push(_ fleet: Fleet, port: Int, token: String) async throws -> (status: Int, reason: String?) {
        let sender = try sender(fleet, port: port, count: 1, concurrency: 1, token: token)
        _ = try await sender.exit()
        let line = try #require(sender.output.first { $0.hasPrefix("{") }, "\(sender.output); \(sender.errorTail)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return (try #require(object["status"] as? Int, "\(line)"), object["reason"] as? String)
    }

    /// `push-receiver deliveries|rejections --store`: its JSON lines.
    static func fleetLines(_ fleet: Fleet, _ command: String, _ extra: [String] = []) async throws -> [[String: Any]] {
        let (output, status) = try await runProgram([try executable("push-receiver"), command, "--store", fleet.database.url] + extra)
        #expect(status == 0, "\(output)")
        return try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    /// `push-receiver deliveries --store`: apns-id → the node that answered it.
    static func deliveries(_ fleet: Fleet, _ extra: [String] = []) async throws -> [String: String] {
        let (output, status) = try await runProgram([try executable("push-receiver"), "deliveries", "--store", fleet.database.url] + extra)
        #expect(status == 0, "\(output)")
        var nodes: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            let id = try #require(object["apns-id"] as? String)
            #expect(nodes[id] == nil, "\(id) kept twice")
            nodes[id] = object["node"] as? String
        }
        return nodes
    }

    @Test("pushes spread over two receivers: one query through the store returns every push of the fleet, with the node that answered it")
    func spreadOverTwo() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let fleet = try await Self.fleet(#function, postgres: postgres)
        defer { try? FileManager.default.removeItem(at: fleet.folder) }
        let (a, portA) = try await Self.receiver("a", fleet)
        defer { a.stop() }
        let (b, portB) = try await Self.receiver("b", fleet)
        defer { b.stop() }
        let toA = try Self.sender(fleet, port: portA, count: 300, concurrency: 50)
        let toB = try Self.sender(fleet, port: portB, count: 200, concurrency: 50)
        #expect(try await toA.exit() == 0, "\(toA.output.suffix(3)); \(toA.errorTail)")
        #expect(try await toB.exit() == 0, "\(toB.output.suffix(3)); \(toB.errorTail)")
        let sentA = Self.accepted(toA.output).accepted
        let sentB = Self.accepted(toB.output).accepted
        #expect(sentA.count == 300 && sentB.count == 200)

        let kept = try await Self.deliveries(fleet)
        #expect(Set(kept.keys) == sentA.union(sentB))
        #expect(sentA.allSatisfy { kept[$0] == "a" } && sentB.allSatisfy { kept[$0] == "b" })
        // A receiver with a store writes no push to a deliveries.jsonl of its own.
        let local = fleet.folder.appendingPathComponent("a/deliveries.jsonl")
        #expect(try !FileManager.default.fileExists(atPath: local.path) || DeliveryLog.read(local).records.isEmpty)
        #expect(try await Self.deliveries(fleet, ["--device-token", String(repeating: "00", count: 32)]).isEmpty)
        #expect(try await Self.deliveries(fleet, ["--limit", "7"]).count == 7)
    }

    @Test("a receiver killed with SIGKILL under load: every push it answered 200 is in the fleet's log, once")
    func killedUnderLoad() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let fleet = try await Self.fleet(#function, postgres: postgres)
        defer { try? FileManager.default.removeItem(at: fleet.folder) }
        let (a, port) = try await Self.receiver("a", fleet)
        defer { a.stop() }
        // Enough that the sender is still busy when the kill comes, however late this test sees the 500th
        // line (a debug receiver keeps about 4,000 a second in the database); few enough that the
        // sender's retries of the rest, after the kill, end soon (200,000 took 32 s in CI; at 4,000 a second 50,000 last 12 s).
        let sender = try Self.sender(fleet, port: port, count: 50_000, concurrency: 100)
        defer { sender.stop() }
        try await sender.waitForLines(500)
        a.stop()
        #expect(try await sender.exit() == 2, "the sender exits 2 when pushes went unanswered")
        let sent = Self.accepted(sender.output)
        #expect(sent.accepted.count >= 500 && sent.accepted.count < 50_000)
        let kept = try await Self.deliveries(fleet)
        let missing = sent.accepted.subtracting(kept.keys)
        #expect(missing.isEmpty, "answered 200 but not in the fleet's log: \(missing.prefix(5))")
        #expect(Set(kept.keys).subtracting(sent.accepted).isSubset(of: sent.interrupted), "kept pushes the sender never sent")
        print("killed after \(sent.accepted.count) answered 200; the fleet's log has \(kept.count)")
    }

    @Test("one device registry and one rejection log for the fleet: a token added, invalidated or removed through the store is answered so on every receiver at once")
    func sharedRegistry() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let fleet = try await Self.fleet(#function, postgres: postgres)
        defer { try? FileManager.default.removeItem(at: fleet.folder) }
        let (a, portA) = try await Self.receiver("a", fleet)
        defer { a.stop() }
        let (b, portB) = try await Self.receiver("b", fleet)
        defer { b.stop() }

        // Added while both run, and pushed at once on the other receiver: a refusal that rests on a
        // receiver's copy is checked against the store first, so no announcement is waited for.
        let added = String(repeating: "5c", count: 32)
        try await Self.devices(fleet, ["add", "--environment", "sandbox", "--bundle", "com.example.authsim", "--token", added])
        #expect(try await Self.push(fleet, port: portB, token: added) == (200, nil))
        #expect(try await Self.push(fleet, port: portA, token: added) == (200, nil))

        // Invalidated: 410 at once on both. A push accepted on a copy older than the store's
        // registry is not kept, and is validated again.
        try await Self.devices(fleet, ["invalidate", "--environment", "sandbox", "--token", added, "--as", "unregistered"])
        #expect(try await Self.push(fleet, port: portA, token: added) == (410, "Unregistered"))
        #expect(try await Self.push(fleet, port: portB, token: added) == (410, "Unregistered"))
        // Removed: BadDeviceToken on both; the fleet's token still works.
        try await Self.devices(fleet, ["remove", "--environment", "sandbox", "--token", added])
        #expect(try await Self.push(fleet, port: portB, token: added) == (400, "BadDeviceToken"))
        #expect(try await Self.push(fleet, port: portA, token: fleet.token) == (200, nil))

        // One rejection log: each refusal with the node that answered it, kept before its answer.
        let refusals = try await Self.fleetLines(fleet, "rejections")
        #expect(refusals.map { $0["reason"] as? String } == ["Unregistered", "Unregistered", "BadDeviceToken"])
        #expect(refusals.map { $0["node"] as? String } == ["a", "b", "b"])
        #expect(refusals.allSatisfy { $0["device-token"] as? String == added })
        #expect(try await Self.fleetLines(fleet, "rejections", ["--device-token", fleet.token]).isEmpty)
        #expect(try await Self.fleetLines(fleet, "deliveries").count == 3)
        // The registry as the store has it, through any copy.
        let listed = try await Self.devices(fleet, ["list", "--json"])
        #expect(listed.split(separator: "\n").count == 1 && listed.contains(fleet.token), "\(listed)")
        // Neither receiver wrote files of its own for these.
        for name in ["a", "b"] {
            for file in ["devices.json", "rejections.jsonl"] {
                #expect(!FileManager.default.fileExists(atPath: fleet.folder.appendingPathComponent("\(name)/\(file)").path), "\(name)/\(file)")
            }
        }

        // reset --store empties the fleet's logs (and with --devices its registry), as reset empties a receiver's files.
        let (reset, resetStatus) = try await runProgram([try executable("push-receiver"), "reset", "--devices", "--store", fleet.database.url])
        #expect(resetStatus == 0 && reset.contains("1 device(s) removed"), "\(reset)")
        #expect(try await Self.fleetLines(fleet, "deliveries").isEmpty)
        #expect(try await Self.fleetLines(fleet, "rejections").isEmpty)
        #expect(try await Self.push(fleet, port: portA, token: fleet.token) == (400, "BadDeviceToken"))
    }

    /// `push-receiver faults … --store`: its output.
    @discardableResult
    static func faults(_ fleet: Fleet, _ arguments: [String]) async throws -> String {
        let (output, status) = try await runProgram([try executable("push-receiver"), "faults"] + arguments + ["--store", fleet.database.url])
        #expect(status == 0, "\(arguments): \(output)")
        return output
    }

    @Test("one fault plan for the fleet: --fault at start sets it for every receiver, count=3 is three pushes of the fleet, push-receiver faults changes it live")
    func sharedFaultPlan() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let fleet = try await Self.fleet(#function, postgres: postgres)
        defer { try? FileManager.default.removeItem(at: fleet.folder) }
        let (a, portA) = try await Self.receiver("a", fleet)
        defer { a.stop() }
        let (b, portB) = try await Self.receiver("b", fleet, ["--fault", "reject=TooManyRequests,count=3"])
        defer { b.stop() }
        #expect(b.output.contains { $0.contains("faults (the fleet's, on every receiver): reject=TooManyRequests,count=3") }, "\(b.output)")
        #expect(try await Self.faults(fleet, ["list"]) == "reject=TooManyRequests,count=3\n")

        // Receiver a, started before, applies the plan b set; the three uses are the fleet's.
        var answers: [Int] = []
        for port in [portA, portB, portA, portB] { answers.append(try await Self.push(fleet, port: port, token: fleet.token).status) }
        #expect(answers == [429, 429, 429, 200])
        #expect(try await Self.faults(fleet, ["list"]).hasPrefix("no faults"))

        // Changed live from the command line: both receivers answer by it at once.
        try await Self.faults(fleet, ["add", "reject=Unregistered,token=\(fleet.token)"])
        #expect(try await Self.push(fleet, port: portA, token: fleet.token) == (410, "Unregistered"))
        #expect(try await Self.push(fleet, port: portB, token: fleet.token) == (410, "Unregistered"))
        #expect(try await Self.faults(fleet, ["clear"]).hasPrefix("no faults"))
        #expect(try await Self.push(fleet, port: portB, token: fleet.token) == (200, nil))

        // Bad rules are refused before the store is touched; a command without a store says what it needs.
        // (standard error joined to the output, which runProgram reads)
        let joined = #""$0" "$@" 2>&1"#
        let (refused, status) = try await runProgram(["sh", "-c", joined, try executable("push-receiver"), "faults", "set", "reject=NoSuchReason",
                                                      "--store", fleet.database.url])
        #expect(status != 0 && refused.contains("not an APNs reason"), "\(refused)")
        let (noStore, noStoreStatus) = try await runProgram(["-u", "AUTHSIM_STORE", "sh", "-c", joined, try executable("push-receiver"), "faults", "list"])
        #expect(noStoreStatus != 0 && noStore.contains("--store"), "\(noStore)")
    }

    @Test("a push accepted by one receiver reaches the device connected to another receiver's gateway, as APNs routes it to the device's connection")
    func deliveredThroughAnotherReceiver() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let fleet = try await Self.fleet(#function, postgres: postgres)
        defer { try? FileManager.default.removeItem(at: fleet.folder) }
        let (a, portA) = try await Self.receiver("a", fleet, gateway: true)
        defer { a.stop() }
        let (b, portB) = try await Self.receiver("b", fleet, gateway: true)
        defer { b.stop() }
        let gatewayB = try b.port(after: "device gateway:")

        // A device (curl, a client we did not write) holds its notification stream open on b's gateway.
        let device = try ServerProcess(["curl", "-sN", "http://127.0.0.1:\(gatewayB)/devices/sandbox/\(fleet.token)/notifications"])
        defer { device.stop() }
        _ = try await device.waitFor(#""connected":true"#)

        // Pushed through a: a hands it to b, and the device gets it, payload and all.
        let sender = try Self.sender(fleet, port: portA, count: 1, concurrency: 1)
        #expect(try await sender.exit() == 0, "\(sender.output); \(sender.errorTail)")
        let id = try #require(Self.accepted(sender.output).accepted.first)
        let line = try #require(try await device.waitFor(id).first { $0.contains(id) })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        #expect(object["device-token"] as? String == fleet.token)
        let payload = try #require(object["payload"] as? [String: Any], "\(line)")
        #expect((payload["aps"] as? [String: Any])?["content-available"] as? Int == 1, "\(line)")

        // Pushed through b, the receiver it is connected to: delivered there, as before.
        let direct = try Self.sender(fleet, port: portB, count: 1, concurrency: 1)
        #expect(try await direct.exit() == 0, "\(direct.output); \(direct.errorTail)")
        let directID = try #require(Self.accepted(direct.output).accepted.first)
        _ = try await device.waitFor(directID)
    }
}
