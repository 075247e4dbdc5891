import APNsReceiver
import APNsWire
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Utilities

/// push-receiver's ``SharedDeviceRegistry`` on PostgreSQL: `receiver_devices` holds each token as
/// it is now, with the version of its last change.
///
/// - A change takes a lock (so versions commit in the order they are numbered), writes the token's
///   row with the next version, and announces the version with `NOTIFY` in the same transaction:
///   the announcement goes out only if the change commits.
/// - Each receiver `LISTEN`s on a connection of its own and, on each announcement, reads the rows
///   after its copy's version (``records(after:)``). The announcement only wakes it; the version is
///   the cursor, so an announcement lost while the connection was down costs nothing: after a
///   reconnect the receiver reads everything after its version.
/// - Why not poll: the registry changes rarely and every push reads it, so a copy should learn of
///   a change within a round trip, and a poll that fast would cost a query per receiver every few
///   milliseconds for nothing.
public final class PostgresDeviceRegistry: SharedDeviceRegistry {
    public let address: String
    /// Written with each change: which node made it.
    public let node: String
    private let location: PostgresLocation
    private let session: PostgresSession
    private let logger: Logger
    private let deadline: Double
    /// The listening connection and its task, while following.
    private let listening = Mutex<(task: Task<Void, Never>?, connection: PostgresConnection?, closed: Bool)>((nil, nil, false))

    public init(location: PostgresLocation, node: String, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        self.address = location.address
        self.node = node
        self.location = location
        self.deadline = deadline
        self.logger = logger
        self.session = PostgresSession(location: location, clock: clock, logger: logger)
    }

    /// Connects, and creates or migrates the schema.
    public func open() async throws(SharedStoreError) {
        try await session.migrate()
    }

    public func records(after version: Int64) async throws(ReceiverError) -> [DeviceRecord] {
        let rows: [(String, String, String?, Int64)]
        do {
            rows = try await session.run("reading the device registry", seconds: deadline) { connection in
                var rows: [(String, String, String?, Int64)] = []
                let result = try await connection.query("""
                    SELECT environment, token, device::text, version FROM receiver_devices WHERE version > \(version) ORDER BY version
                    """, logger: silentStoreLogger)
                for try await row in result.decode((String, String, String?, Int64).self) { rows.append(row) }
                return rows
            }
        } catch {
            throw ReceiverError(.unavailable, "the fleet's device registry \(address): \(error)")
        }
        var records: [DeviceRecord] = []
        for (environmentName, hex, deviceJSON, version) in rows {
            guard let environment = APNsEnvironment(rawValue: environmentName), let token = DeviceToken(hex: hex) else {
                throw ReceiverError(.storage, "the fleet's device registry \(address) has a row that is not a device: \(environmentName) \(hex)")
            }
            var device: RegisteredDevice?
            if let deviceJSON {
                do { device = try JSONDecoder().decode(RegisteredDevice.self, from: Data(deviceJSON.utf8)) } catch {
                    throw ReceiverError(.storage, "the fleet's device registry \(address) has a token \(hex) that is not a device: \(error)")
                }
            }
            records.append(DeviceRecord(environment: environment, token: token, device: device, version: version))
        }
        return records
    }

    public func write(_ change: DeviceChange) async throws(ReceiverError) -> DeviceRecord? {
        let node = self.node
        do {
            return try await session.run("changing the device registry", seconds: deadline) { connection in
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

    public func follow(_ changed: @escaping @Sendable () -> Void) {
        let (configuration, logger, address) = (location.configuration, logger, address)
        let task = Task { [self] in
            var backoff = 0.1
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: silentStoreLogger)
                    let closed = listening.withLock { state -> Bool in
                        if !state.closed { state.connection = connection }
                        return state.closed
                    }
                    if closed {
                        try? await connection.close()
                        return
                    }
                    try await connection.listen(on: DeviceRegistryLock.channel) { notifications in
                        // Listening now: whatever changed before (or while the connection was down) is read once.
                        backoff = 0.1
                        changed()
                        for try await _ in notifications { changed() }
                    }
                    try? await connection.close()
                } catch {
                    if Task.isCancelled || listening.withLock({ $0.closed }) { return }
                    logger.warning("lost the device registry's announcements; reconnecting",
                                   metadata: ["store": "\(address)", "error": "\(PostgresStoreFailure.describe(error))", "retry in s": "\(backoff)"])
                }
                // Reconnection backoff for a background listener; nothing waits on it.
                try? await Task.sleep(for: .seconds(backoff))
                backoff = min(backoff * 2, 5)
            }
        }
        let previous = listening.withLock { state -> Task<Void, Never>? in
            defer { state.task = task }
            return state.task
        }
        previous?.cancel()
    }

    public func close() async {
        let (task, connection) = listening.withLock { state -> (Task<Void, Never>?, PostgresConnection?) in
            state.closed = true
            defer { (state.task, state.connection) = (nil, nil) }
            return (state.task, state.connection)
        }
        task?.cancel()
        if let connection { try? await connection.close() }
        await task?.value
        await session.close()
    }
}

/// What a receiver of a fleet keeps in the fleet's PostgreSQL: its pushes (delivered and refused)
/// and the device registry, opened together.
public struct PostgresReceiverStores: Sendable {
    public let log: PostgresDeliveryLog
    public let devices: PostgresDeviceRegistry
    public var address: String { log.address }
    public var node: String { log.node }

    public init(location: PostgresLocation, node: String, logger: Logger) {
        log = PostgresDeliveryLog(location: location, node: node, logger: logger)
        devices = PostgresDeviceRegistry(location: location, node: node, logger: logger)
    }

    /// Connects, and creates or migrates the schema.
    public func open() async throws(SharedStoreError) {
        try await log.open()
    }

    /// This receiver's copy of the fleet's registry, read whole and then kept current.
    public func registry() async throws(ReceiverError) -> DeviceRegistry {
        try await DeviceRegistry(shared: devices)
    }

    public func close() async {
        await devices.close()
        await log.close()
    }
}
