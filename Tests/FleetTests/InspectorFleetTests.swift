import APNsReceiver
@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Inspector
import Logging
import PostgresNIO
import PostgresStores
import Synchronization
import TestSupport
import Testing
import Utilities

/// The inspector's view of a fleet: the pushes other receivers answered, read from the fleet's
/// logs by a cursor that misses no row committed out of order (`PostgresFleetFeed`), and shown by
/// `authsim serve --store` with the node that answered each.
@Suite("the inspector's view of a fleet")
struct InspectorFleetTests {
    static func deliveryLine(_ id: String) -> String {
        #"{"apns-id":"\#(id)","background":true,"device-token":"7a7a","dropped":false,"environment":"sandbox","key-id":"KEY","payload-bytes":32,"# +
            #""priority":5,"push-type":"background","team-id":"TEAM","time":"2026-11-26T10:00:00.000Z","topic":"com.example.authsim"}"#
    }

    static func insert(_ node: String, _ id: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO receiver_delivery_batches (node, device_tokens, lines) VALUES (\(node), ARRAY['7a7a'], \(deliveryLine(id)))
            """, logger: Logger(label: "test"))
    }

    /// SQL keeping a batch of pushes `ids` (their lines in one row, as a receiver keeps a read's pushes) from `node`.
    static func batch(_ node: String, _ ids: [String]) -> String {
        "INSERT INTO receiver_delivery_batches (node, device_tokens, lines) VALUES ('\(node)', ARRAY['7a7a'], '\(ids.map(deliveryLine).joined(separator: "\n"))')"
    }

    static func ids(_ pushes: [FleetPush]) -> [String] {
        pushes.map { push in
            switch push.answer {
            case .delivered(let entry): "\(push.node):\(entry.apnsID)"
            case .refused(let entry): "\(push.node):\(entry.apnsID):\(entry.reason.rawValue)"
            }
        }
    }

    @Test("a batch that commits after one with higher IDs is still read; the feed's own node is left out; refusals come too")
    func outOfOrderCommits() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let location = try PostgresLocation(database.url)
        let feed = PostgresFleetFeed(location: location, ownNode: "here", clock: ManualWallClock(Date()))
        try await feed.open(backlog: 100)
        #expect(try await feed.poll().pushes.isEmpty)

        // A's batch takes ID 1 and stays open while B's (two pushes, one row) takes ID 2 and commits.
        let slow = try await PostgresConnection.connect(configuration: location.configuration, id: 1, logger: Logger(label: "test"))
        try await slow.query("BEGIN", logger: Logger(label: "test"))
        try await Self.insert("a", "first", on: slow)
        _ = try await postgres.psql(database.name, Self.batch("b", ["second", "third"]))
        #expect(Self.ids(try await feed.poll().pushes) == ["b:second", "b:third"])
        // A commits: the hole at ID 1 is read at the next poll.
        try await slow.query("COMMIT", logger: Logger(label: "test"))
        #expect(Self.ids(try await feed.poll().pushes) == ["a:first"])
        #expect(try await feed.poll().pushes.isEmpty)
        try await slow.close()

        // The feed's own node is recorded by its own receiver, not read back.
        _ = try await postgres.psql(database.name, Self.batch("here", ["own"]))
        #expect(try await feed.poll().pushes.isEmpty)
        // A refusal another node kept.
        let refusal = #"{"apns-id":"refused","detail":"not registered","device-token":"7a7a","environment":"sandbox","reason":"BadDeviceToken","status":400,"time":"2026-11-26T10:00:01.000Z"}"#
        _ = try await postgres.psql(database.name, "INSERT INTO receiver_rejections (node, device_token, apns_id, entry) VALUES ('b', '7a7a', 'refused', '\(refusal)'::jsonb)")
        #expect(Self.ids(try await feed.poll().pushes) == ["b:refused:BadDeviceToken"])
        await feed.close()
    }

    @Test("authsim serve --store: the pushes another receiver of the fleet answers appear live in its inspector, with that node")
    func serveShowsTheFleet() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let fleet = try await ReceiverFleetTests.fleet(#function, postgres: postgres)
        defer { try? FileManager.default.removeItem(at: fleet.folder) }
        let serve = try ServerProcess([try executable("authsim"), "serve", "--state", fleet.folder.appendingPathComponent("serve").path,
                                       "--certs", fleet.certs, "--sandbox-port", "0", "--production-port", "0", "--device-port", "0",
                                       "--backend-port", "0", "--ui-port", "0", "--store", fleet.database.url, "--node-name", "s"])
        defer { serve.stop() }
        let lines = try await serve.waitFor("Ctrl-C stops everything")
        #expect(lines.contains { $0.contains("fleet:") && $0.contains("node s") }, "\(lines)")
        let inspectorLine = try #require(lines.first { $0.contains("inspector:") })
        let inspector = String(try #require(inspectorLine.split(separator: " ").first { $0.hasPrefix("http://") }))
        let (receiver, port) = try await ReceiverFleetTests.receiver("r", fleet)
        defer { receiver.stop() }

        let stream = try ServerProcess(["curl", "-sN", "\(inspector)/api/v1/events"])
        defer { stream.stop() }
        _ = try await stream.waitFor("authsim inspector")
        let sender = try ReceiverFleetTests.sender(fleet, port: port, count: 3, concurrency: 3)
        #expect(try await sender.exit() == 0, "\(sender.output); \(sender.errorTail)")
        #expect(try await ReceiverFleetTests.push(fleet, port: port, token: String(repeating: "0f", count: 32)) == (400, "BadDeviceToken"))
        // Live: the refusal, sent last, comes on the stream with its node.
        _ = try await stream.waitFor("BadDeviceToken")

        let (body, status) = try await runProgram(["curl", "-s", "\(inspector)/api/v1/pushes"])
        #expect(status == 0)
        let pushes = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]], "\(body)")
        #expect(pushes.count == 4, "\(body)")
        #expect(pushes.allSatisfy { $0["node"] as? String == "r" }, "\(body)")
        #expect(pushes.filter { $0["status"] as? Int == 200 }.count == 3)
        let refused = try #require(pushes.first { $0["status"] as? Int == 400 })
        #expect(refused["reason"] as? String == "BadDeviceToken" && (refused["cause"] as? String)?.isEmpty == false, "\(refused)")

        // The Faults page sets the fleet's plan: the other receiver applies it, and its one use is the fleet's.
        let (set, setStatus) = try await runProgram(["curl", "-s", "-X", "PUT", "-H", "content-type: application/json",
                                                     "-d", #"{"faults":["reject=TooManyRequests,count=1"]}"#, "\(inspector)/api/v1/faults"])
        #expect(setStatus == 0 && set.contains("count=1"), "\(set)")
        #expect(try await ReceiverFleetTests.push(fleet, port: port, token: fleet.token) == (429, "TooManyRequests"))
        #expect(try await ReceiverFleetTests.push(fleet, port: port, token: fleet.token) == (200, nil))
        let (listed, _) = try await runProgram(["curl", "-s", "\(inspector)/api/v1/faults"])
        #expect(listed.replacingOccurrences(of: " ", with: "").contains(#""faults":[]"#), "\(listed)")

        // The database out of reach: the users' list is 503 with the cause (try again), not a 500.
        let (users, usersStatus) = try await runProgram(["curl", "-s", "-w", "\n%{http_code}", "\(inspector)/api/v1/users"])
        #expect(usersStatus == 0 && users.hasSuffix("\n200"), "\(users)")
        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(fleet.database.name)\" ALLOW_CONNECTIONS false")
        _ = try await postgres.psql("postgres", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(fleet.database.name)'")
        let (cut, _) = try await runProgram(["curl", "-s", "-w", "\n%{http_code}", "\(inspector)/api/v1/users"])
        // A change refused for the same reason is not the caller's fault: 503, not 400.
        let (added, _) = try await runProgram(["curl", "-s", "-w", "\n%{http_code}", "-X", "POST", "-H", "content-type: application/json",
                                               "-d", #"{"email":"cut@example.com"}"#, "\(inspector)/api/v1/users"])
        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(fleet.database.name)\" ALLOW_CONNECTIONS true")
        #expect(cut.hasSuffix("\n503") && cut.contains("cannot read or keep its state now"), "\(cut)")
        #expect(added.hasSuffix("\n503") && added.contains("cannot read or keep its state now"), "\(added)")
        #expect(try await serve.terminate() == 0)
    }

    /// A node's event sink that holds its events until told: a node whose events are kept late.
    final class Late: BackendEventSink, @unchecked Sendable {
        let sink: PostgresEventLog
        private let held = Mutex<[(BackendEvent, SignInID?, Int64, Date)]>([])
        init(_ sink: PostgresEventLog) { self.sink = sink }
        func record(_ event: BackendEvent, signIn: SignInID?, position: Int64, at time: Date) { held.withLock { $0.append((event, signIn, position, time)) } }
        func release() async {
            for (event, signIn, position, time) in held.withLock({ $0 }) { sink.record(event, signIn: signIn, position: position, at: time) }
            await sink.flush()
        }
    }

    @Test("a sign-in split over two backends reads as one sign-in, in the order it happened, each step with its node, though the first node's events were kept last")
    func splitSignInInOrder() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let location = try PostgresLocation(database.url)
        let a = try await BackendStoreTests.node(database.url, "a")
        let b = try await BackendStoreTests.node(database.url, "b")
        let eventsA = PostgresEventLog(location: location, node: "a")
        let eventsB = PostgresEventLog(location: location, node: "b")
        try await eventsA.open()
        let late = Late(eventsA)
        await a.setEventSink(late)
        await b.setEventSink(eventsB)
        let feed = PostgresFleetFeed(location: location, ownNode: "b")
        try await feed.open(backlog: 100)

        let sent = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: BackendStoreTests.number))
        await BackendStoreTests.expectError(.invalidCode) { () throws(IdentityToolkitError) in
            _ = try await b.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "000000"))
        }
        let signedIn = try await b.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "123456"))
        // B's events are kept first, A's after them.
        #expect(await eventsB.flush())
        await late.release()
        let read = try await feed.poll()
        #expect(read.events.map(\.node) == ["b", "b", "a", "a"], "kept in this order")
        // One sign-in: node b's steps carry the ID node a gave it (the session's).
        #expect(Set(read.events.map(\.signIn)).count == 1 && read.events[0].signIn != nil)

        let order = FleetFlowOrder()
        let start = Date()
        #expect(order.release(adding: read.events, now: start).isEmpty, "an event waits before it is shown")
        let flows = FlowHistory()
        for event in order.release(adding: [], now: start.addingTimeInterval(FleetFlowOrder.settle)) {
            flows.record(event.event, signIn: event.signIn, at: event.time, node: event.node)
        }
        let all = flows.all
        #expect(all.count == 1, "\(all.map(\.steps))")
        let flow = try #require(all.first)
        #expect(flow.outcome == .signedIn && flow.uid == signedIn.localId && flow.phoneNumber == BackendStoreTests.number)
        #expect(flow.steps.map(\.event) == ["codeRequested", "smsSent", "rejected", "signedIn"])
        #expect(flow.steps.map(\.node) == ["a", "a", "b", "b"])
        await feed.close()
        await eventsA.close()
        await eventsB.close()
        await a.shutdown()
        await b.shutdown()
    }
}
