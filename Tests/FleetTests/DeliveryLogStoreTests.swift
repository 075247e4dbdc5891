import APNsReceiver
import APNsSender
import APNsWire
import DeviceLink
import Foundation
import NIOCore
import NIOPosix
import PostgresStores
import Scenarios
import Synchronization
import TestSupport
import Testing
import Utilities

/// A receiver in this process keeping its pushes in PostgreSQL, the database lost under it: no 200
/// for a push that was not kept, APNs's 503 `ServiceUnavailable` instead, and back after the
/// backoff (a clock the test moves).
@Suite("push-receiver's shared delivery log, the database lost")
struct DeliveryLogStoreTests {
    static let silent = Array(#"{"aps":{"content-available":1}}"#.utf8)

    @Test("the database lost: 503 ServiceUnavailable, never 200 unkept; after the backoff pushes are kept again")
    func databaseLost() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = ManualWallClock(Date())
        let log = PostgresDeliveryLog(location: try PostgresLocation(database.url), node: "a", clock: clock)
        try await log.open()
        let channel = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"),
                                                       sharedLog: log)
        let token = DeviceToken.random()
        try channel.register(token, environment: .sandbox, bundleID: "com.example.authsim")
        // A push's answer waits on the receiver's attempt to reach the lost database: with the suite on
        // two busy cores it once took more than the client's default 10 s. The limit bounds a failure.
        let client = try channel.client(environment: .sandbox, retries: 0, timeout: 120)
        func push() async throws -> APNsResponse {
            try await client.send(PushRequest(deviceToken: token, headers: PushHeaders(pushType: .background, topic: "com.example.authsim",
                                                                                       priority: .consideringPower), payload: Self.silent))
        }
        let first = try await push()
        #expect(first.status == 200)

        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(database.name)\" ALLOW_CONNECTIONS false")
        _ = try await postgres.psql("postgres", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database.name)'")
        for _ in 0..<3 {
            let refused = try await push()
            #expect(refused.status == 503)
            #expect(refused.reason == .serviceUnavailable)
        }

        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(database.name)\" ALLOW_CONNECTIONS true")
        clock.advance(by: 10)
        let again = try await push()
        #expect(again.status == 200)
        let kept = try await log.deliveries().compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["apns-id"] as? String
        }
        #expect(kept == [first.apnsID, again.apnsID].compactMap { $0 })
        await client.shutdown()
        await channel.shutdown()
        await log.close()
    }

    @Test("nothing on the device side to take them: a fleet's log's lines go over held in memory, and reach a device that connects in time")
    func linesHeldForFleetLog() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = PostgresDeliveryLog(location: try PostgresLocation(database.url), node: "a")
        try await log.open()
        let channel = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"),
                                                       sharedLog: log)
        let token = DeviceToken.random()
        try channel.register(token, environment: .sandbox, bundleID: "com.example.authsim")
        #expect(channel.hub.takesLogLines)
        await channel.hub.setPaused(true)
        let client = try channel.client(environment: .sandbox, timeout: 120)
        var ids: [String] = []
        for _ in 0..<3 {
            let answer = try await client.send(PushRequest(deviceToken: token, headers: PushHeaders(pushType: .background, topic: "com.example.authsim",
                                                                                                    priority: .consideringPower), payload: Self.silent))
            #expect(answer.status == 200)
            ids.append(try #require(answer.apnsID))
        }
        await client.shutdown()
        let (got, arrival) = AsyncStream.makeStream(of: AcceptedPush.self)
        _ = await channel.hub.connect(token: token, environment: .sandbox) { arrival.yield($0) }
        // Bounds a failure (the pushes never come): the stream ends, and the count below says so.
        let bound = Task {
            try? await Task.sleep(for: .seconds(120))
            arrival.finish()
        }
        defer { bound.cancel() }
        await channel.hub.setPaused(false)
        var pushes: [AcceptedPush] = []
        for await push in got {
            pushes.append(push)
            if pushes.count == ids.count { break }
        }
        #expect(pushes.map(\.apnsID) == ids && pushes.allSatisfy { $0.payload == Self.silent })
        await channel.shutdown()
        await log.close()
    }

    /// The outcomes of keeps, gathered on their loop until all have come.
    final class Outcomes: @unchecked Sendable {
        private var outcomes: [String?]
        private let continuation: CheckedContinuation<[String?], Never>
        init(_ count: Int, _ continuation: CheckedContinuation<[String?], Never>) {
            outcomes = Array(repeating: nil, count: count)
            self.continuation = continuation
        }
        func add(_ index: Int, _ outcome: KeepOutcome) {
            switch outcome {
            case .kept: outcomes[index] = "kept"
            case .stale: outcomes[index] = "stale"
            case .failed(let error): outcomes[index] = "failed: \(error)"
            }
            if !outcomes.contains(nil) { continuation.resume(returning: outcomes) }
        }
    }

    /// Two pushes to one device, as a receiver accepts them, and their delivery-log lines.
    static func batch(_ index: Int) throws -> ([AcceptedPush], [UInt8]) {
        let token = DeviceToken.random()
        let pushes = try (0..<2).map { push in
            try JSONDecoder().decode(AcceptedPush.self, from: Data("""
                {"received-at":1790000000.25,"environment":"sandbox","apns-id":"batch-\(index)-\(push)","device-token":"\(token.hex)",
                 "topic":"com.example.authsim","bundle-id":"com.example.authsim","push-type":"background","priority":5,
                 "team-id":"TEAM123456","key-id":"KEY1234567","payload":"\(Data(silent).base64EncodedString())","background":true,"dropped":false}
                """.utf8))
        }
        let lines = pushes.map { #"{"apns-id":"\#($0.apnsID)","device-token":"\#(token.hex)"}"# + "\n" }.joined()
        return (pushes, Array(lines.utf8))
    }

    /// Keeps `batches` through `log` in one turn of a loop of its own (the first goes at once, the
    /// rest wait), each against its registry version: their outcomes, in order.
    static func keepInOneTurn(_ log: PostgresDeliveryLog, _ batches: [([AcceptedPush], [UInt8])], versions: [Int64?]) async throws -> [String?] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let outcomes = await withCheckedContinuation { continuation in
            let gathered = Outcomes(batches.count, continuation)
            loop.execute {
                for (index, (batch, version)) in zip(batches, versions).enumerated() {
                    log.keep(batch.0, lines: batch.1, registryVersion: version, on: loop) { gathered.add(index, $0) }
                }
            }
        }
        await log.release(group)
        try await group.shutdownGracefully()
        return outcomes
    }

    /// PostgresDeliveryLog's LoopKeeper: the batches that arrive while an event loop's keep runs
    /// wait, and go together in the next statement (one transaction: the rows share an xmin).
    @Test("batches that wait for an event loop's connection go in one statement: each a row, in order, each checked against its own registry version")
    func waitingBatchesTogether() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let log = PostgresDeliveryLog(location: try PostgresLocation(database.url), node: "a")
        try await log.open()
        // The fleet's registry at version 1: a change a receiver validating on version 0 did not know.
        _ = try await postgres.psql(database.name, "INSERT INTO receiver_devices (environment, token, device, version, node) VALUES ('sandbox', 'aa', NULL, 1, 'cli')")
        // Five batches in one turn of a loop: the first goes at once, the four after it wait.
        // The third was validated on version 0 and is not kept; the fourth's registry is not the fleet's.
        let versions: [Int64?] = [1, 1, 0, nil, 2]
        let outcomes = try await Self.keepInOneTurn(log, try versions.indices.map(Self.batch), versions: versions)
        #expect(outcomes == ["kept", "kept", "stale", "kept", "kept"])
        let kept = try await log.deliveries().compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["apns-id"] as? String
        }
        #expect(kept == [0, 1, 3, 4].flatMap { ["batch-\($0)-0", "batch-\($0)-1"] })
        #expect(try await postgres.psql(database.name, "SELECT count(DISTINCT xmin::text) FROM receiver_delivery_batches") == "2",
                "the first batch alone, the three kept of those that waited in one transaction")
        await log.close()
    }

    @Test("a batch row's device tokens: each once, sorted, whether neighbours share them or not")
    func batchTokens() throws {
        let (first, _) = try Self.batch(0), (second, _) = try Self.batch(1)
        let (a, b) = (first[0].deviceToken.hex, second[0].deviceToken.hex)
        let both = [a, b].sorted()
        #expect(AcceptedPush.deviceTokens(of: first) == [a])
        #expect(AcceptedPush.deviceTokens(of: first + second) == both)
        #expect(AcceptedPush.deviceTokens(of: [first[0], second[0], first[1], second[1]]) == both, "apart, not neighbours")
        #expect(AcceptedPush.deviceTokens(of: []) == [])
    }

    @Test("batches that wait go together up to a statement's bytes: four waiting, two to a statement")
    func waitingBatchesCapped() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let batches = try (0..<5).map(Self.batch)
        // Room for two batches' lines in a statement, not three (the batches' lines are of one length).
        let size = batches[0].1.count - 1
        let log = PostgresDeliveryLog(location: try PostgresLocation(database.url), node: "a", statementBytes: 2 * size + 1)
        try await log.open()
        let outcomes = try await Self.keepInOneTurn(log, batches, versions: Array(repeating: nil, count: batches.count))
        #expect(outcomes == Array(repeating: "kept", count: 5))
        #expect(try await postgres.psql(database.name, "SELECT string_agg(n::text, ' ' ORDER BY first) FROM (SELECT count(*) AS n, min(id) AS first FROM receiver_delivery_batches GROUP BY xmin::text) t") == "1 2 2",
                "the first alone, then the four that waited two to a statement")
        await log.close()
    }

    /// Schema 9 keeps the logs' lines as text (PostgreSQL parsing them into jsonb cost a fifth of
    /// a kept push), schema 12 a receiver's batch of pushes to a row, schema 13 its lines
    /// compressed: a database of schema 8, its lines jsonb and one push to a row, keeps them
    /// through the migrations.
    @Test("a schema-8 database's pushes and refusals, kept as jsonb one to a row, read the same after the migrations to text and to batches")
    func linesMigrateToText() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let location = try PostgresLocation(database.url)
        let first = PostgresDeliveryLog(location: location, node: "a")
        try await first.open()
        await first.close()
        // Back to schema 8, as an older authsim left it, with a push and a refusal in it.
        _ = try await postgres.psql(database.name, """
            DROP VIEW receiver_deliveries; DROP TABLE receiver_delivery_batches; DROP FUNCTION authsim_keep_deliveries;
            CREATE TABLE receiver_deliveries (id bigserial PRIMARY KEY, node text NOT NULL, kept_at timestamptz NOT NULL DEFAULT now(),
                device_token text NOT NULL, apns_id text NOT NULL, line jsonb NOT NULL);
            CREATE INDEX receiver_deliveries_device_token ON receiver_deliveries (device_token, id);
            ALTER TABLE receiver_rejections ALTER COLUMN entry TYPE jsonb USING entry::jsonb;
            DELETE FROM authsim_migrations WHERE version >= 9;
            DROP TABLE authsim_formats;
            DROP FUNCTION authsim_backend_rows; DROP FUNCTION authsim_backend_commit; DROP TABLE backend_rows; DROP SEQUENCE backend_row_versions;
            ALTER TABLE authsim_migrations DROP COLUMN applied_by;
            INSERT INTO receiver_deliveries (node, device_token, apns_id, line) VALUES ('old', '7a7a', 'p1', '{"apns-id":"p1","device-token":"7a7a","topic":"com.example.authsim"}'::jsonb);
            INSERT INTO receiver_rejections (node, device_token, apns_id, entry) VALUES ('old', '7a7a', 'r1', '{"apns-id":"r1","reason":"BadDeviceToken"}'::jsonb)
            """)
        let log = PostgresDeliveryLog(location: location, node: "b")
        try await log.open()
        // Step 12: the push kept one to a row is a batch of one now; the view shows it as it was.
        #expect(try await postgres.psql(database.name, "SELECT node || ' ' || array_to_string(device_tokens, ',') FROM receiver_delivery_batches") == "old 7a7a")
        #expect(try await postgres.psql(database.name, "SELECT apns_id || ' ' || device_token || ' ' || position FROM receiver_deliveries") == "p1 7a7a 1")
        // The steps after 8 applied once each, by this authsim; the formats set.
        #expect(try await postgres.psql(database.name, "SELECT version || ' ' || coalesce(applied_by, '-') FROM authsim_migrations WHERE version >= 8 ORDER BY version")
            .split(separator: "\n") == ["8 -"] + (9...13).map { "\($0) \(AuthsimVersion.current)" })
        #expect(try await postgres.psql(database.name, "SELECT count(*) FROM authsim_formats") == "2")
        // Step 13: the batches' lines compressed with lz4 on a server that has it (14 and later, Debian's built with lz4).
        #expect(try await postgres.psql(database.name, """
            SELECT (current_setting('server_version_num')::integer < 140000) OR attcompression = 'l'
            FROM pg_attribute WHERE attrelid = 'receiver_delivery_batches'::regclass AND attname = 'lines'
            """) == "t")
        let pushes = try await log.deliveries().map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        #expect(pushes == [["apns-id": "p1", "device-token": "7a7a", "topic": "com.example.authsim", "node": "old"]])
        let refusals = try await log.rejections().map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        #expect(refusals == [["apns-id": "r1", "reason": "BadDeviceToken", "node": "old"]])
        await log.close()
    }
}

/// A receiver in this process on a copy of the fleet's device registry that hears no
/// announcements: what it answers must still be what the store says, through the two checks
/// (a refusal confirmed against the store, a batch kept only when the registry has not changed).
@Suite("push-receiver's copy of the fleet's device registry")
struct SharedRegistryTests {
    /// A fleet's registry whose announcements never come.
    struct Deaf: SharedDeviceRegistry {
        let store: PostgresDeviceRegistry
        var address: String { store.address }
        func changes(after version: Int64) async throws(ReceiverError) -> RegistryChanges { try await store.changes(after: version) }
        func write(_ change: DeviceChange) async throws(ReceiverError) -> DeviceRecord? { try await store.write(change) }
        func write(_ change: FaultPlanChange) async throws(ReceiverError) -> FaultPlanRecord { try await store.write(change) }
        func faultPlan() async throws(ReceiverError) -> FaultPlanRecord { try await store.faultPlan() }
        func claim(_ claim: FaultClaim) async throws(ReceiverError) -> Int? { try await store.claim(claim) }
        func follow(_ changed: @escaping @Sendable () -> Void) {}
        func close() async { await store.close() }
    }

    /// A receiver ("b") on a copy that hears no announcements, a writer ("cli") on the same
    /// store with a copy that does, and a registered-nowhere token: what both deaf tests share.
    struct DeafReceiver {
        let writer: DeviceRegistry
        let copy: DeviceRegistry
        let log: PostgresDeliveryLog
        let channel: LocalAPNsChannel
        let client: APNsClient
        let token = DeviceToken.random()

        init(database url: String, folder: URL) async throws {
            let location = try PostgresLocation(url)
            let elsewhere = PostgresDeviceRegistry(location: location, node: "cli")
            try await elsewhere.open()
            writer = try await DeviceRegistry(shared: elsewhere)
            copy = try await DeviceRegistry(shared: Deaf(store: PostgresDeviceRegistry(location: location, node: "b")))
            log = PostgresDeliveryLog(location: location, node: "b")
            channel = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"),
                                                       sharedLog: log, registry: copy)
            client = try channel.client(environment: .sandbox, retries: 0)
        }

        func push() async throws -> APNsResponse { try await SharedRegistryTests.push(token, client) }

        func close() async {
            await client.shutdown()
            await channel.shutdown()
            await log.close()
            await writer.shared?.close()
            await copy.shared?.close()
        }
    }

    @Test("a copy that heard nothing: a device added on another node is accepted, one invalidated there is refused 410, one removed 400")
    func deafCopy() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let b = try await DeafReceiver(database: try await postgres.newDatabase(#function).url, folder: folder)
        let (writer, copy, token) = (b.writer, b.copy, b.token)

        try await writer.apply(.register(RegisteredDevice(token: token, environment: .sandbox, bundleID: "com.example.authsim")))
        #expect(copy.lookup(token, in: .sandbox) == nil, "the copy heard of it")
        #expect(try await b.push().status == 200)

        try await writer.apply(.invalidate(token, environment: .sandbox, as: .unregistered, at: Date()))
        #expect(copy.lookup(token, in: .sandbox)?.state == .active, "the copy heard of it")
        let invalidated = try await b.push()
        #expect(invalidated.status == 410 && invalidated.reason == .unregistered)

        try await writer.apply(.remove(token, environment: .sandbox))
        #expect(copy.lookup(token, in: .sandbox)?.state == .unregistered, "the copy heard of it")
        let removed = try await b.push()
        #expect(removed.status == 400 && removed.reason == .badDeviceToken)

        #expect(try await b.log.deliveries().count == 1)
        let refusals = try await b.log.rejections().compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["reason"] as? String
        }
        #expect(refusals == ["Unregistered", "BadDeviceToken"])
        await b.close()
    }

    /// A background push to `token` through `client`.
    static func push(_ token: DeviceToken, _ client: APNsClient) async throws -> APNsResponse {
        try await client.send(PushRequest(deviceToken: token, headers: PushHeaders(pushType: .background, topic: "com.example.authsim",
                                                                                   priority: .consideringPower), payload: DeliveryLogStoreTests.silent))
    }

    /// `FaultPlan`'s fleet mode: `count=N` is claimed in the store, one conditional UPDATE per use
    /// (PostgresDeviceRegistry.claim), so two receivers racing for the uses get N between them.
    @Test("a fleet's fault plan: count=5 refuses 5 pushes of 40 raced over two receivers, and the plan set on one is the other's")
    func countedFaultAcrossReceivers() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let location = try PostgresLocation(database.url)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        var channels: [LocalAPNsChannel] = []
        var logs: [PostgresDeliveryLog] = []
        for node in ["a", "b"] {
            let log = PostgresDeliveryLog(location: location, node: node)
            try await log.open()
            let registry = try await DeviceRegistry(shared: PostgresDeviceRegistry(location: location, node: node))
            logs.append(log)
            channels.append(try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"),
                                                             state: folder.appendingPathComponent("State-\(node)"), sharedLog: log, registry: registry))
        }
        let token = DeviceToken.random()
        try await channels[0].registry.apply(.register(RegisteredDevice(token: token, environment: .sandbox, bundleID: "com.example.authsim")))
        try await channels[0].faults.change(.replace([FaultRule(.reject(.tooManyRequests), count: 5)]))
        #expect(throws: ReceiverError.self, "a fleet's plan changes only through the store") { try channels[1].faults.add(FaultRule(.drop)) }

        let clients = try channels.map { try $0.client(environment: .sandbox, retries: 0) }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 { group.addTask { try await Self.push(token, clients[index % 2]).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 429 }.count == 5)
        #expect(statuses.filter { $0 == 200 }.count == 35)
        #expect(try await logs[0].deliveries().count == 35)
        #expect(try await channels[1].faults.rules().isEmpty, "the rule is used up for the fleet")
        #expect(try await Self.push(token, clients[1]).status == 200)

        for client in clients { await client.shutdown() }
        for channel in channels {
            await channel.shutdown()
            await channel.registry.shared?.close()
        }
        for log in logs { await log.close() }
    }

    @Test("a copy that heard nothing of the fault plan: a rule planned elsewhere applies, one cleared elsewhere does not, a count is claimed")
    func deafFaultPlan() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let b = try await DeafReceiver(database: try await postgres.newDatabase(#function).url, folder: folder)
        let plan = try #require(b.writer.fleetFaults)
        try await b.writer.apply(.register(RegisteredDevice(token: b.token, environment: .sandbox, bundleID: "com.example.authsim")))
        #expect(try await b.push().status == 200)

        // Planned elsewhere: the copy accepts on its empty plan, the keep finds the plan newer, and the push is decided again.
        try await plan.change(.replace([FaultRule(.reject(.unregistered), deviceToken: b.token)]))
        #expect(b.channel.faults.current.isEmpty, "the copy heard of it")
        let planned = try await b.push()
        #expect(planned.status == 410 && planned.reason == .unregistered)

        // Cleared elsewhere: the copy's rule would refuse, so the copy catches up first.
        try await plan.change(.clear)
        #expect(b.channel.faults.current.count == 1, "the copy heard of it")
        #expect(try await b.push().status == 200)

        // A counted rule: claimed in the store, once.
        try await plan.change(.replace([FaultRule(.reject(.tooManyRequests), count: 1)]))
        #expect(try await b.push().status == 429)
        #expect(try await b.push().status == 200)
        #expect(try await plan.rules().isEmpty)

        #expect(try await b.log.deliveries().count == 3)
        await b.close()
    }

    /// Device links whose announcements never come.
    struct DeafLinks: SharedDeviceLinks {
        let store: PostgresDeviceLinks
        var address: String { store.address }
        var node: String { store.node }
        func link(_ token: DeviceToken, environment: APNsEnvironment) async throws(ReceiverError) { try await store.link(token, environment: environment) }
        func unlink(_ token: DeviceToken, environment: APNsEnvironment) async throws(ReceiverError) { try await store.unlink(token, environment: environment) }
        func links() async throws(ReceiverError) -> [ConnectedDevice] { try await store.links() }
        func forward(_ pushes: [AcceptedPush], to node: String) async throws(ReceiverError) { try await store.forward(pushes, to: node) }
        func takeForwarded() async throws(ReceiverError) -> [AcceptedPush] { try await store.takeForwarded() }
        func follow(linksChanged: @escaping @Sendable () -> Void, forwarded: @escaping @Sendable () -> Void) {}
        func close() async { await store.close() }
    }

    @Test("a device that connected to another node a moment ago: a copy that heard nothing checks the store, and the push is handed there whole")
    func deafLinks() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let location = try PostgresLocation(database.url)
        let linksA = PostgresDeviceLinks(location: location, node: "a")
        try await linksA.open()
        let linksB = PostgresDeviceLinks(location: location, node: "b")
        try await linksB.open()
        let notesA = Mutex<[DeliveryNote]>([])
        let hubA = DeviceHub(observer: { _, note in notesA.withLock { $0.append(note) } })
        try await hubA.join(FleetDeviceLinks(shared: DeafLinks(store: linksA)))
        let hubB = DeviceHub()
        try await hubB.join(FleetDeviceLinks(shared: linksB))

        // The device connects to b's gateway after a read its links.
        let token = DeviceToken.random()
        let (arrivals, arrived) = AsyncStream.makeStream(of: AcceptedPush.self)
        _ = await hubB.connect(token: token, environment: .sandbox) { arrived.yield($0) }
        try await linksB.link(token, environment: .sandbox)

        let json = """
            {"received-at":1790000000.25,"environment":"sandbox","apns-id":"6E2A4C1B-0D3F-4B7A-9C2E-5F8A1B3C4D5E","device-token":"\(token.hex)",
             "topic":"com.example.authsim","bundle-id":"com.example.authsim","push-type":"background","priority":5,"team-id":"TEAM123456",
             "key-id":"KEY1234567","payload":"\(Data(DeliveryLogStoreTests.silent).base64EncodedString())","background":true,"dropped":false}
            """
        let push = try JSONDecoder().decode(AcceptedPush.self, from: Data(json.utf8))
        await hubA.deliver(push)
        try #require(notesA.withLock { $0 } == [.forwarded(node: "b")], "a's copy had no link for the token, and the store was not asked")
        var iterator = arrivals.makeAsyncIterator()
        let got = await iterator.next()
        #expect(got == push)

        await linksA.close()
        await linksB.close()
    }

    /// Pushes at once, from several connections, each batch one row (PostgresDeliveryLog): each
    /// push kept once, and a node name with a tab, a backslash and a newline kept as it is; one
    /// device's pushes found through the batches that name its token.
    @Test("200 pushes at once over 4 connections: each kept once; a node name with a tab, a backslash and a newline kept as given; one device's pushes alone")
    func manyAtOnce() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let node = "node\tone\\two\nthree"
        let log = PostgresDeliveryLog(location: try PostgresLocation(database.url), node: node)
        try await log.open()
        let channel = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"),
                                                       sharedLog: log)
        let token = DeviceToken.random(), other = DeviceToken.random()
        try channel.register(token, environment: .sandbox, bundleID: "com.example.authsim")
        try channel.register(other, environment: .sandbox, bundleID: "com.example.authsim")
        var clients: [APNsClient] = []
        for _ in 0..<4 { clients.append(try channel.client(environment: .sandbox, retries: 0)) }
        let answered = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<200 {
                let client = clients[index % clients.count]
                group.addTask {
                    let response = try await client.send(PushRequest(deviceToken: index % 5 == 0 ? other : token, headers: PushHeaders(pushType: .background, topic: "com.example.authsim",
                                                                                                              priority: .consideringPower), payload: DeliveryLogStoreTests.silent))
                    return response.status == 200 ? response.apnsID : nil
                }
            }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(answered.count == 200 && !answered.contains { $0 == nil })
        let kept = try await log.deliveries().compactMap { line in try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] }
        #expect(kept.count == 200)
        #expect(Set(kept.compactMap { $0["apns-id"] as? String }) == Set(answered.compactMap { $0 }))
        #expect(kept.allSatisfy { $0["node"] as? String == node })
        let others = try await log.deliveries(deviceToken: other.hex.uppercased()).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["device-token"] as? String
        }
        #expect(others == Array(repeating: other.hex, count: 40))
        #expect(try await log.deliveries(deviceToken: token.hex, limit: 7).count == 7)
        #expect(log.loopConnections >= 1)
        for client in clients { await client.shutdown() }
        await channel.shutdown()
        #expect(log.loopConnections == 0, "the receiver's shutdown closes the connections on its event loops before they stop")
        await log.close()
    }
}
