import APNsReceiver
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Utilities

/// push-receiver's ``SharedDeliveryLog`` on PostgreSQL: every receiver of a fleet appends the
/// pushes it answered 200 to `receiver_deliveries`, one INSERT per batch (a connection's read),
/// before their answers go out; one query through any node finds every push of the fleet.
///
/// Appends need no fleet-wide turn (rows are independent), so the batches of all the receiver's
/// connections go out at once over a few connections of its own.
package final class PostgresDeliveryLog: SharedDeliveryLog {
    package let address: String
    /// Written with every push: which receiver answered it.
    package let node: String
    private let sessions: [PostgresSession]
    private let next = Atomic<Int>(0)
    private let deadline: Double

    /// - Parameters:
    ///   - connections: connections to the database (batches are spread over them).
    ///   - deadline: seconds one batch may take before the database counts as lost (500 for its pushes).
    package init(location: PostgresLocation, node: String, connections: Int = 2, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        self.address = location.address
        self.node = node
        self.deadline = deadline
        self.sessions = (0..<max(1, connections)).map { _ in PostgresSession(location: location, clock: clock, logger: logger) }
    }

    /// Connects, and creates or migrates the schema.
    package func open() async throws(SharedStoreError) {
        try await sessions[0].migrate()
    }

    package func keep(_ pushes: [AcceptedPush], lines: [UInt8], registryVersion: Int64?, done: @escaping @Sendable (KeepOutcome) -> Void) {
        let texts = lines.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        guard texts.count == pushes.count else {
            done(.failed(ReceiverError(.storage, "\(pushes.count) pushes but \(texts.count) delivery-log lines")))
            return
        }
        insert("keeping \(pushes.count) push(es)", into: "receiver_deliveries", column: "line", tokens: pushes.map(\.deviceToken.hex),
               ids: pushes.map(\.apnsID), texts: texts, registryVersion: registryVersion) { [node] result in
            switch result {
            case .success(let kept): done(kept == pushes.count ? .kept : .stale)
            case .failure(let error): done(.failed(ReceiverError(.unavailable, "the fleet's delivery log (\(node)): \(error)")))
            }
        }
    }

    package func keep(refusals: [RejectionLog.Entry], done: @escaping @Sendable (ReceiverError?) -> Void) {
        let texts: [String]
        do { texts = try refusals.map { String(decoding: try RejectionLog.encode($0), as: UTF8.self) } } catch {
            done(ReceiverError(.storage, "a refusal cannot be written as JSON: \(error)"))
            return
        }
        insert("keeping \(refusals.count) refusal(s)", into: "receiver_rejections", column: "entry", tokens: refusals.map(\.deviceToken),
               ids: refusals.map(\.apnsID), texts: texts, registryVersion: nil) { [node] result in
            if case .failure(let error) = result { return done(ReceiverError(.unavailable, "the fleet's rejection log (\(node)): \(error)")) }
            done(nil)
        }
    }

    /// Inserts one row per push into `table` (its JSON line, as text, in `column`; two fixed names, never input)
    /// with one INSERT, on the next of the receiver's sessions, then calls `done` with how many
    /// rows were kept. With `registryVersion`, none is kept when the fleet's device registry or
    /// fault plan changed after that version (a probe of receiver_devices' version index and of
    /// the plan's one row, once per batch).
    private func insert(_ what: String, into table: String, column: String, tokens: [String], ids: [String], texts: [String],
                        registryVersion: Int64?, done: @escaping @Sendable (Result<Int, PostgresStoreFailure>) -> Void) {
        let session = sessions[next.add(1, ordering: .relaxed).oldValue % sessions.count]
        let (node, deadline) = (self.node, self.deadline)
        Task {
            do throws(PostgresStoreFailure) {
                let kept = try await session.run(what, seconds: deadline) { connection in
                    // The command tag's row count says how many were kept.
                    try await connection.query("""
                        INSERT INTO \(unescaped: table) (node, device_token, apns_id, \(unescaped: column))
                        SELECT \(node), t.token, t.id, t.json FROM unnest(\(tokens)::text[], \(ids)::text[], \(texts)::text[]) AS t(token, id, json)
                        WHERE \(registryVersion)::bigint IS NULL
                            OR (NOT EXISTS (SELECT 1 FROM receiver_devices WHERE version > \(registryVersion)::bigint)
                                AND NOT EXISTS (SELECT 1 FROM receiver_fault_plan WHERE version > \(registryVersion)::bigint))
                        """, logger: silentStoreLogger, { _ in }).get().rows ?? 0
                }
                done(.success(kept))
            } catch {
                done(.failure(error))
            }
        }
    }

    /// The fleet's refusals, oldest first: each its rejection-log line with `node` added, as JSON text.
    package func rejections(deviceToken: String? = nil, limit: Int? = nil) async throws(SharedStoreError) -> [String] {
        try await lines(of: "receiver_rejections", column: "entry", deviceToken: deviceToken, limit: limit)
    }

    /// The fleet's pushes, oldest first: each its delivery-log line with `node` added, as JSON text.
    package func deliveries(deviceToken: String? = nil, limit: Int? = nil) async throws(SharedStoreError) -> [String] {
        try await lines(of: "receiver_deliveries", column: "line", deviceToken: deviceToken, limit: limit)
    }

    /// Empties the fleet's delivery and rejection logs (`push-receiver reset --store`), as `reset`
    /// empties a receiver's files. Their IDs go on from where they were, so an inspector's cursor
    /// still holds.
    package func empty() async throws(SharedStoreError) {
        do {
            _ = try await sessions[0].run("emptying the fleet's logs", seconds: deadline) { connection in
                try await connection.query("TRUNCATE receiver_deliveries, receiver_rejections", logger: silentStoreLogger)
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    /// `table`'s JSON `column` with `node` added, oldest first (two fixed names, never input).
    private func lines(of table: String, column: String, deviceToken: String?, limit: Int?) async throws(SharedStoreError) -> [String] {
        let token = deviceToken?.lowercased()
        let limit = limit ?? Int(Int32.max)
        do {
            return try await sessions[0].run("reading \(table)", seconds: deadline) { connection in
                var lines: [String] = []
                let query: PostgresQuery = """
                    SELECT (\(unescaped: column)::jsonb || jsonb_build_object('node', node))::text FROM \(unescaped: table)
                    WHERE \(token)::text IS NULL OR device_token = \(token) ORDER BY id LIMIT \(limit)
                    """
                for try await line in try await connection.query(query, logger: silentStoreLogger).decode(String.self) { lines.append(line) }
                return lines
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    package func close() async {
        for session in sessions { await session.close() }
    }
}
