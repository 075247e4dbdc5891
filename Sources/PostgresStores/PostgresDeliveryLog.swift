import APNsReceiver
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Utilities

/// push-receiver's ``SharedDeliveryLog`` on PostgreSQL: every receiver of a fleet keeps the
/// pushes it answered 200 in `receiver_delivery_batches`, a batch (a connection's read) to a row of
/// its delivery-log lines, before their answers go out; one query through any node finds every
/// push of the fleet. Refusals go to `receiver_rejections`, one row each (they are few).
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
        guard lines.last == UInt8(ascii: "\n"), Self.newlines(in: lines) == pushes.count else {
            done(.failed(ReceiverError(.storage, "\(pushes.count) pushes but another number of delivery-log lines")))
            return
        }
        // The lines without the last newline (the row splits them at each), and each token once.
        let text = String(decoding: lines.dropLast(), as: UTF8.self)
        let tokens = Set(pushes.lazy.map(\.deviceToken)).map(\.hex).sorted()
        let node = self.node
        // With `registryVersion`, the batch is kept only if the fleet's device registry and fault
        // plan changed after none of it (a probe of each one's version index); the command tag's
        // row count says which (1 kept, 0 stale).
        run("keeping \(pushes.count) push(es)") { connection in
            try await connection.query("""
                INSERT INTO receiver_delivery_batches (node, device_tokens, lines)
                SELECT \(node), \(tokens)::text[], \(text)
                WHERE \(registryVersion)::bigint IS NULL
                    OR (NOT EXISTS (SELECT 1 FROM receiver_devices WHERE version > \(registryVersion)::bigint)
                        AND NOT EXISTS (SELECT 1 FROM receiver_fault_plan WHERE version > \(registryVersion)::bigint))
                """, logger: silentStoreLogger, { _ in }).get().rows ?? 0
        } done: { result in
            switch result {
            case .success(let kept): done(kept == 1 ? .kept : .stale)
            case .failure(let error): done(.failed(ReceiverError(.unavailable, "the fleet's delivery log (\(node)): \(error)")))
            }
        }
    }

    /// How many newlines `bytes` holds (`memchr`: a batch's lines run to tens of kilobytes).
    static func newlines(in bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { raw in
            guard var at = raw.baseAddress else { return 0 }
            let end = at + raw.count
            var count = 0
            while at < end, let found = memchr(at, 0x0A, end - at) {
                count += 1
                at = UnsafeRawPointer(found) + 1
            }
            return count
        }
    }

    package func keep(refusals: [RejectionLog.Entry], done: @escaping @Sendable (ReceiverError?) -> Void) {
        let texts: [String]
        do { texts = try refusals.map { String(decoding: try RejectionLog.encode($0), as: UTF8.self) } } catch {
            done(ReceiverError(.storage, "a refusal cannot be written as JSON: \(error)"))
            return
        }
        let (node, tokens, ids) = (self.node, refusals.map(\.deviceToken), refusals.map(\.apnsID))
        run("keeping \(refusals.count) refusal(s)") { connection in
            _ = try await connection.query("""
                INSERT INTO receiver_rejections (node, device_token, apns_id, entry)
                SELECT \(node), t.token, t.id, t.json FROM unnest(\(tokens)::text[], \(ids)::text[], \(texts)::text[]) AS t(token, id, json)
                """, logger: silentStoreLogger)
        } done: { result in
            if case .failure(let error) = result { return done(ReceiverError(.unavailable, "the fleet's rejection log (\(node)): \(error)")) }
            done(nil)
        }
    }

    /// Runs `body` on the next of the receiver's sessions, off the caller's thread (a connection's
    /// event loop), and hands `done` what came of it, on any thread.
    private func run<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T,
                                  done: @escaping @Sendable (Result<T, PostgresStoreFailure>) -> Void) {
        let session = sessions[next.add(1, ordering: .relaxed).oldValue % sessions.count]
        let deadline = self.deadline
        Task {
            do throws(PostgresStoreFailure) { done(.success(try await session.run(what, seconds: deadline, body))) } catch { done(.failure(error)) }
        }
    }

    /// The fleet's refusals, oldest first: each its rejection-log line with `node` added, as JSON text.
    package func rejections(deviceToken: String? = nil, limit: Int? = nil) async throws(SharedStoreError) -> [String] {
        let token = deviceToken?.lowercased()
        let limit = limit ?? Int(Int32.max)
        return try await lines("reading receiver_rejections", """
            SELECT (entry::jsonb || jsonb_build_object('node', node))::text FROM receiver_rejections
            WHERE \(token)::text IS NULL OR device_token = \(token) ORDER BY id LIMIT \(limit)
            """)
    }

    /// The fleet's pushes, oldest first: each its delivery-log line with `node` added, as JSON text.
    /// For one device, only the batches naming its token are read (their index), then their lines.
    package func deliveries(deviceToken: String? = nil, limit: Int? = nil) async throws(SharedStoreError) -> [String] {
        let limit = limit ?? Int(Int32.max)
        guard let token = deviceToken?.lowercased() else {
            return try await lines("reading receiver_delivery_batches", """
                SELECT (l.line::jsonb || jsonb_build_object('node', b.node))::text FROM receiver_delivery_batches b
                    CROSS JOIN LATERAL unnest(string_to_array(b.lines, E'\\n')) WITH ORDINALITY AS l(line, position)
                ORDER BY b.id, l.position LIMIT \(limit)
                """)
        }
        return try await lines("reading receiver_delivery_batches", """
            SELECT (l.line::jsonb || jsonb_build_object('node', b.node))::text FROM receiver_delivery_batches b
                CROSS JOIN LATERAL unnest(string_to_array(b.lines, E'\\n')) WITH ORDINALITY AS l(line, position)
            WHERE b.device_tokens @> ARRAY[\(token)::text] AND l.line::json->>'device-token' = \(token)
            ORDER BY b.id, l.position LIMIT \(limit)
            """)
    }

    /// Empties the fleet's delivery and rejection logs (`push-receiver reset --store`), as `reset`
    /// empties a receiver's files. Their IDs go on from where they were, so an inspector's cursor
    /// still holds.
    package func empty() async throws(SharedStoreError) {
        do {
            _ = try await sessions[0].run("emptying the fleet's logs", seconds: deadline) { connection in
                try await connection.query("TRUNCATE receiver_delivery_batches, receiver_rejections", logger: silentStoreLogger)
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    /// The text of each row `query` returns, in its order.
    private func lines(_ what: String, _ query: PostgresQuery) async throws(SharedStoreError) -> [String] {
        do {
            return try await sessions[0].run(what, seconds: deadline) { connection in
                var lines: [String] = []
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
