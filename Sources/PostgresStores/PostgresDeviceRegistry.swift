import APNsReceiver
import APNsWire
import Foundation
import Lifecycle
import Logging
import PostgresNIO
import Synchronization
import Utilities

/// push-receiver's ``SharedDeviceRegistry`` on PostgreSQL: `receiver_devices` holds each token as
/// it is now, with the version of its last change; `receiver_fault_plan` and `receiver_fault_rules`
/// the fleet's fault plan, whose versions are the registry's.
///
/// - A change takes a lock (so versions commit in the order they are numbered), writes the token's
///   row with the next version, and announces the version with `NOTIFY` in the same transaction:
///   the announcement goes out only if the change commits.
/// - Each receiver `LISTEN`s on a connection of its own and, on each announcement, reads the rows
///   after its copy's version (``changes(after:)``). The announcement only wakes it; the version is
///   the cursor, so an announcement lost while the connection was down costs nothing: after a
///   reconnect the receiver reads everything after its version.
/// - Why not poll: the registry changes rarely and every push reads it, so a copy should learn of
///   a change within a round trip, and a poll that fast would cost a query per receiver every few
///   milliseconds for nothing.
package final class PostgresDeviceRegistry: SharedDeviceRegistry {
    package let address: String
    /// Written with each change: which node made it.
    package let node: String
    private let session: PostgresSession
    private let deadline: Double
    /// The connection that hears of other writers' changes, while following.
    private let listener: PostgresListener

    package init(location: PostgresLocation, node: String, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        self.address = location.address
        self.node = node
        self.deadline = deadline
        self.session = PostgresSession(location: location, clock: clock, logger: logger)
        listener = PostgresListener(location: location, what: "the device registry's announcements", logger: logger)
    }

    /// Connects, and creates or migrates the schema.
    package func open() async throws(SharedStoreError) {
        try await session.migrate()
    }

    package func changes(after version: Int64) async throws(ReceiverError) -> RegistryChanges {
        typealias Row = (kind: String, environment: String?, text: String?, device: String?, version: Int64, usesLeft: Int?)
        let rows: [Row]
        do {
            rows = try await session.run("reading the device registry", seconds: deadline) { connection in
                // One statement, so one snapshot: the copy's version covers the devices and the plan alike.
                var rows: [Row] = []
                let result = try await connection.query("""
                    SELECT 'device', environment, token, device::text, version, NULL::integer, NULL::integer
                        FROM receiver_devices WHERE version > \(version)
                    UNION ALL
                    SELECT 'faults', NULL, r.rule, NULL, p.version, r.uses_left, r.position
                        FROM receiver_fault_plan p LEFT JOIN receiver_fault_rules r ON r.plan_version = p.version
                        WHERE p.version > \(version)
                    ORDER BY 1, 5, 7
                    """, logger: silentStoreLogger)
                for try await row in result.decode((String, String?, String?, String?, Int64, Int?, Int?).self) {
                    rows.append((row.0, row.1, row.2, row.3, row.4, row.5))
                }
                return rows
            }
        } catch {
            throw ReceiverError(.unavailable, "the fleet's device registry \(address): \(error)")
        }
        var records: [DeviceRecord] = []
        var plan: [(rule: String?, usesLeft: Int?, version: Int64)] = []
        for row in rows {
            guard row.kind == "device" else {
                plan.append((row.text, row.usesLeft, row.version))
                continue
            }
            guard let environment = row.environment.flatMap(APNsEnvironment.init(rawValue:)), let hex = row.text, let token = DeviceToken(hex: hex) else {
                throw ReceiverError(.storage, "the fleet's device registry \(address) has a row that is not a device: \(row.environment ?? "") \(row.text ?? "")")
            }
            var device: RegisteredDevice?
            if let json = row.device {
                do { device = try JSONDecoder().decode(RegisteredDevice.self, from: Data(json.utf8)) } catch {
                    throw ReceiverError(.storage, "the fleet's device registry \(address) has a token \(hex) that is not a device: \(error)")
                }
            }
            records.append(DeviceRecord(environment: environment, token: token, device: device, version: row.version))
        }
        guard let last = plan.last else { return RegistryChanges(devices: records) }
        var rules: [FaultRule] = []
        for row in plan { if let text = row.rule { rules.append(try Self.rule(text, usesLeft: row.usesLeft)) } }
        return RegistryChanges(devices: records, faults: FaultPlanRecord(rules: rules, version: last.version))
    }

    /// A rule of the plan as the store keeps it: its text (without `count=`) and its uses left.
    private static func rule(_ text: String, usesLeft: Int?) throws(ReceiverError) -> FaultRule {
        do {
            var rule = try FaultRule(parsing: text)
            rule.count = usesLeft
            return rule
        } catch {
            throw ReceiverError(.storage, "the fleet's fault plan has a rule that is not one: \(text): \(error.message)")
        }
    }

    /// The whole fault plan, inside a change's transaction or alone (none yet: empty, version 0).
    private static func plan(on connection: PostgresConnection) async throws -> FaultPlanRecord {
        var record = FaultPlanRecord(rules: [], version: 0)
        let rows = try await connection.query("""
            SELECT p.version, r.rule, r.uses_left FROM receiver_fault_plan p
            LEFT JOIN receiver_fault_rules r ON r.plan_version = p.version
            ORDER BY r.position
            """, logger: silentStoreLogger)
        for try await (version, text, left) in rows.decode((Int64, String?, Int?).self) {
            record.version = version
            if let text { record.rules.append(try rule(text, usesLeft: left)) }
        }
        return record
    }

    package func faultPlan() async throws(ReceiverError) -> FaultPlanRecord {
        do {
            return try await session.run("reading the fault plan", seconds: deadline) { connection in
                try await Self.plan(on: connection)
            }
        } catch {
            throw ReceiverError(.unavailable, "the fleet's fault plan \(address): \(error)")
        }
    }

    package func write(_ change: FaultPlanChange) async throws(ReceiverError) -> FaultPlanRecord {
        let node = self.node
        do {
            return try await session.run("changing the fault plan", seconds: deadline, transaction: true) { connection in
                try await connection.withTransaction(logger: silentStoreLogger) { connection in
                    // The registry's turn: the plan's version is one of the registry's, committed in order.
                    try await connection.query("SELECT pg_advisory_xact_lock(\(DeviceRegistryLock.key))", logger: silentStoreLogger)
                    var rules: [FaultRule]
                    switch change {
                    case .add(let rule): rules = (try await Self.plan(on: connection).rules.filter { $0.count != 0 }) + [rule]
                    case .replace(let new): rules = new
                    case .clear: rules = []
                    }
                    var version: Int64 = 0
                    for try await next in try await connection.query("SELECT nextval('receiver_device_versions')", logger: silentStoreLogger).decode(Int64.self) {
                        version = next
                    }
                    try await connection.query("DELETE FROM receiver_fault_rules", logger: silentStoreLogger)
                    for (position, rule) in rules.enumerated() {
                        var spec = rule
                        spec.count = nil
                        try await connection.query("""
                            INSERT INTO receiver_fault_rules (plan_version, position, rule, uses_left)
                            VALUES (\(version), \(position), \(spec.description), \(rule.count))
                            """, logger: silentStoreLogger)
                    }
                    try await connection.query("""
                        INSERT INTO receiver_fault_plan (only_row, version, node) VALUES (true, \(version), \(node))
                        ON CONFLICT (only_row) DO UPDATE SET version = EXCLUDED.version, node = EXCLUDED.node, changed_at = now()
                        """, logger: silentStoreLogger)
                    try await connection.query("SELECT pg_notify(\(DeviceRegistryLock.channel), \(String(version)))", logger: silentStoreLogger)
                    return FaultPlanRecord(rules: rules, version: version)
                }
            }
        } catch {
            throw ReceiverError(.unavailable, "the fleet's fault plan \(address): \(error)")
        }
    }

    package func claim(_ claim: FaultClaim) async throws(ReceiverError) -> Int? {
        do {
            return try await session.run("claiming a fault", seconds: deadline) { connection in
                // One conditional UPDATE: two receivers racing for the last use cannot both get it.
                let rows = try await connection.query("""
                    UPDATE receiver_fault_rules SET uses_left = uses_left - 1
                    WHERE plan_version = \(claim.planVersion) AND position = \(claim.position) AND uses_left > 0
                    RETURNING uses_left
                    """, logger: silentStoreLogger)
                for try await left in rows.decode(Int.self) { return left }
                return nil
            }
        } catch {
            throw ReceiverError(.unavailable, "the fleet's fault plan \(address): \(error)")
        }
    }

    package func write(_ change: DeviceChange) async throws(ReceiverError) -> DeviceRecord? {
        let node = self.node
        do {
            return try await session.run("changing the device registry", seconds: deadline, transaction: true) { connection in
                try await connection.withTransaction(logger: silentStoreLogger) { connection in
                    try await connection.query("SELECT pg_advisory_xact_lock(\(DeviceRegistryLock.key))", logger: silentStoreLogger)
                    let (environment, token): (APNsEnvironment, DeviceToken)
                    var device: RegisteredDevice?
                    switch change {
                    case .register(let registered):
                        (environment, token, device) = (registered.environment, registered.token, registered)
                    case .invalidate(let invalidated, let where_, let newState, let time):
                        (environment, token) = (where_, invalidated)
                        guard var current = try await Self.current(environment, token, on: connection) else { return nil }
                        current.state = newState
                        current.invalidSince = newState == .active ? nil : Int64(time.timeIntervalSince1970 * 1000)
                        device = current
                    case .remove(let removed, let where_):
                        (environment, token) = (where_, removed)
                        guard try await Self.current(environment, token, on: connection) != nil else { return nil }
                    }
                    let json = try device.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
                    var version: Int64 = 0
                    let rows = try await connection.query("""
                        INSERT INTO receiver_devices (environment, token, device, version, node)
                        VALUES (\(environment.rawValue), \(token.hex), \(json)::jsonb, nextval('receiver_device_versions'), \(node))
                        ON CONFLICT (environment, token) DO UPDATE
                            SET device = EXCLUDED.device, version = EXCLUDED.version, node = EXCLUDED.node, changed_at = now()
                        RETURNING version
                        """, logger: silentStoreLogger)
                    for try await written in rows.decode(Int64.self) { version = written }
                    try await connection.query("SELECT pg_notify(\(DeviceRegistryLock.channel), \(String(version)))", logger: silentStoreLogger)
                    return DeviceRecord(environment: environment, token: token, device: device, version: version)
                }
            }
        } catch {
            throw ReceiverError(.unavailable, "the fleet's device registry \(address): \(error)")
        }
    }

    /// The token's device, when registered (inside a change's transaction).
    private static func current(_ environment: APNsEnvironment, _ token: DeviceToken, on connection: PostgresConnection) async throws -> RegisteredDevice? {
        let rows = try await connection.query("""
            SELECT device::text FROM receiver_devices WHERE environment = \(environment.rawValue) AND token = \(token.hex) AND device IS NOT NULL
            """, logger: silentStoreLogger)
        for try await json in rows.decode(String.self) { return try JSONDecoder().decode(RegisteredDevice.self, from: Data(json.utf8)) }
        return nil
    }

    package func follow(_ changed: @escaping @Sendable () -> Void) {
        listener.start(channel: DeviceRegistryLock.channel) { _ in changed() }
    }

    package func close() async {
        await listener.close()
        await session.close()
    }
}

/// What a receiver of a fleet keeps in the fleet's PostgreSQL: its pushes (delivered and refused),
/// the device registry and fault plan, and the links of the devices connected to its gateway,
/// opened together.
package struct PostgresReceiverStores: Sendable {
    package let log: PostgresDeliveryLog
    package let devices: PostgresDeviceRegistry
    package let links: PostgresDeviceLinks
    package var address: String { log.address }
    package var node: String { log.node }

    package init(location: PostgresLocation, node: String, logger: Logger) {
        log = PostgresDeliveryLog(location: location, node: node, logger: logger)
        devices = PostgresDeviceRegistry(location: location, node: node, logger: logger)
        links = PostgresDeviceLinks(location: location, node: node, logger: logger)
    }

    /// Connects, creates or migrates the schema, and forgets the device links this node left.
    package func open() async throws(SharedStoreError) {
        try await log.open()
        try await links.open()
    }

    /// This receiver's copy of the fleet's registry, read whole and then kept current.
    package func registry() async throws(ReceiverError) -> DeviceRegistry {
        try await DeviceRegistry(shared: devices)
    }

    package func close() async {
        await links.close()
        await devices.close()
        await log.close()
    }
}

extension PostgresReceiverStores: RunningPart {
    package var description: String { "push-receiver's stores in \(address)" }
    package func shutdown() async { await close() }
}
