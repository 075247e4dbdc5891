import APNsReceiver
import APNsWire
import Foundation
import Logging
import PostgresNIO
import Utilities

/// push-receiver's ``SharedDeviceLinks`` on PostgreSQL: `receiver_device_links` holds the devices
/// connected to each node's gateway, `receiver_forwards` the pushes handed to a node until it
/// takes them. Both are announced on one channel (`links`, `forward:NODE`), heard on a connection
/// of the node's own.
package final class PostgresDeviceLinks: SharedDeviceLinks {
    package let address: String
    package let node: String
    private let session: PostgresSession
    private let listener: PostgresListener
    private let deadline: Double

    package init(location: PostgresLocation, node: String, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        address = location.address
        self.node = node
        self.deadline = deadline
        session = PostgresSession(location: location, clock: clock, logger: logger)
        listener = PostgresListener(location: location, what: "the device links' announcements", logger: logger)
    }

    /// Connects, creates or migrates the schema, and forgets the links this node left when it
    /// stopped (or was killed): its devices connect again. Pushes handed to a node that has not
    /// taken them in an hour (one that never came back) go too.
    package func open() async throws(SharedStoreError) {
        try await session.migrate()
        do {
            try await run("forgetting this node's old links") { [node] connection in
                try await connection.query("DELETE FROM receiver_device_links WHERE node = \(node)", logger: silentStoreLogger)
                try await connection.query("DELETE FROM receiver_forwards WHERE kept_at < now() - interval '1 hour'", logger: silentStoreLogger)
                try await connection.query("SELECT pg_notify(\(DeviceLinksChannel.name), \(DeviceLinksChannel.linksChanged))", logger: silentStoreLogger)
            }
        } catch {
            throw SharedStoreError(.unavailable, error.message)
        }
    }

    package func link(_ token: DeviceToken, environment: APNsEnvironment) async throws(ReceiverError) {
        _ = try await run("linking a device") { [node] connection in
            try await connection.query("""
                WITH linked AS (
                    INSERT INTO receiver_device_links (environment, token, node, streams) VALUES (\(environment.rawValue), \(token.hex), \(node), 1)
                    ON CONFLICT (environment, token, node) DO UPDATE SET streams = receiver_device_links.streams + 1
                    RETURNING 1
                )
                SELECT pg_notify(\(DeviceLinksChannel.name), \(DeviceLinksChannel.linksChanged)) FROM linked
                """, logger: silentStoreLogger)
        }
    }

    package func unlink(_ token: DeviceToken, environment: APNsEnvironment) async throws(ReceiverError) {
        _ = try await run("unlinking a device") { [node] connection in
            try await connection.query("""
                WITH fewer AS (
                    UPDATE receiver_device_links SET streams = streams - 1
                    WHERE environment = \(environment.rawValue) AND token = \(token.hex) AND node = \(node) AND streams > 1
                    RETURNING 1
                ), gone AS (
                    DELETE FROM receiver_device_links
                    WHERE environment = \(environment.rawValue) AND token = \(token.hex) AND node = \(node) AND streams = 1
                    RETURNING 1
                )
                SELECT pg_notify(\(DeviceLinksChannel.name), \(DeviceLinksChannel.linksChanged)) FROM gone
                """, logger: silentStoreLogger)
        }
    }

    package func links() async throws(ReceiverError) -> [ConnectedDevice] {
        let rows = try await run("reading the device links") { [node] connection in
            var rows: [(String, String, String)] = []
            let result = try await connection.query("""
                SELECT environment, token, node FROM receiver_device_links WHERE node <> \(node)
                """, logger: silentStoreLogger)
            for try await row in result.decode((String, String, String).self) { rows.append(row) }
            return rows
        }
        return rows.compactMap { environment, token, node in
            guard let environment = APNsEnvironment(rawValue: environment), let token = DeviceToken(hex: token) else { return nil }
            return ConnectedDevice(environment: environment, token: token, node: node)
        }
    }

    package func forward(_ pushes: [AcceptedPush], to node: String) async throws(ReceiverError) {
        let texts: [String]
        do { texts = try pushes.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) } } catch {
            throw ReceiverError(.storage, "a push cannot be written as JSON: \(error)")
        }
        _ = try await run("handing \(pushes.count) push(es) to \(node)") { connection in
            try await connection.query("""
                WITH handed AS (
                    INSERT INTO receiver_forwards (node, push) SELECT \(node), t.push::jsonb FROM unnest(\(texts)::text[]) AS t(push)
                    RETURNING 1
                )
                SELECT pg_notify(\(DeviceLinksChannel.name), \(DeviceLinksChannel.forwarded(to: node))) FROM (SELECT 1 FROM handed LIMIT 1) AS any_handed
                """, logger: silentStoreLogger)
        }
    }

    package func takeForwarded() async throws(ReceiverError) -> [AcceptedPush] {
        let rows = try await run("taking the pushes handed to this node") { [node] connection in
            var rows: [(Int64, String)] = []
            let result = try await connection.query("""
                DELETE FROM receiver_forwards WHERE node = \(node) RETURNING id, push::text
                """, logger: silentStoreLogger)
            for try await row in result.decode((Int64, String).self) { rows.append(row) }
            return rows
        }
        var pushes: [AcceptedPush] = []
        for (_, text) in rows.sorted(by: { $0.0 < $1.0 }) {
            do { pushes.append(try JSONDecoder().decode(AcceptedPush.self, from: Data(text.utf8))) } catch {
                throw ReceiverError(.storage, "a push handed to \(node) is not one: \(error)")
            }
        }
        return pushes
    }

    package func follow(linksChanged: @escaping @Sendable () -> Void, forwarded: @escaping @Sendable () -> Void) {
        let mine = DeviceLinksChannel.forwarded(to: node)
        listener.start(channel: DeviceLinksChannel.name) { payload in
            switch payload {
            case nil:
                linksChanged()
                forwarded()
            case DeviceLinksChannel.linksChanged: linksChanged()
            case mine: forwarded()
            default: break
            }
        }
    }

    package func close() async {
        await listener.close()
        await session.close()
    }

    private func run<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(ReceiverError) -> T {
        do { return try await session.run(what, seconds: deadline, body) } catch {
            throw ReceiverError(.unavailable, "the fleet's device links \(address): \(error)")
        }
    }
}
