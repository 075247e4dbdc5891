import APNsReceiver
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import Utilities

/// push-receiver's ``SharedDeliveryLog`` on PostgreSQL: every receiver of a fleet keeps the
/// pushes it answered 200 in `receiver_delivery_batches`, a batch (a connection's read) to a row of
/// its delivery-log lines, before their answers go out; one query through any node finds every
/// push of the fleet. Refusals go to `receiver_rejections`, one row each (they are few).
///
/// Appends need no fleet-wide turn (rows are independent): each of the receiver's event loops
/// keeps its connections' batches over a connection of its own (``LoopConnection``), from the
/// loop that read them, and answers them there when PostgreSQL has. Reads, the schema and
/// `reset` use a session of their own.
package final class PostgresDeliveryLog: SharedDeliveryLog {
    package let address: String
    /// Written with every push: which receiver answered it.
    package let node: String
    private let location: PostgresLocation
    private let session: PostgresSession
    /// The connection of each event loop that kept something, by the loop.
    private let links = Mutex<[ObjectIdentifier: LoopConnection]>([:])
    private let clock: any WallClock
    private let logger: Logger
    private let deadline: Double

    /// - Parameters:
    ///   - deadline: seconds one batch may take before the database counts as lost (503 for its pushes).
    package init(location: PostgresLocation, node: String, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        self.address = location.address
        self.node = node
        self.location = location
        self.clock = clock
        self.logger = logger
        self.deadline = deadline
        self.session = PostgresSession(location: location, clock: clock, logger: logger)
    }

    /// Connects, and creates or migrates the schema.
    package func open() async throws(SharedStoreError) {
        try await session.migrate()
    }

    package func keep(_ pushes: [AcceptedPush], lines: [UInt8], registryVersion: Int64?, on loop: any EventLoop,
                      done: @escaping @Sendable (KeepOutcome) -> Void) {
        guard lines.last == UInt8(ascii: "\n"), Self.newlines(in: lines) == pushes.count else {
            loop.execute { done(.failed(ReceiverError(.storage, "\(pushes.count) pushes but another number of delivery-log lines"))) }
            return
        }
        // The lines without the last newline (the row splits them at each), and each token once.
        let text = String(decoding: lines.dropLast(), as: UTF8.self)
        let tokens = Set(pushes.lazy.map(\.deviceToken)).map(\.hex).sorted()
        let node = self.node
        // With `registryVersion`, the batch is kept only if the fleet's device registry and fault
        // plan changed after none of it (a probe of each one's version index): false when stale.
        link(on: loop).run("keeping \(pushes.count) push(es)", seconds: deadline) { connection in
            connection.query("SELECT authsim_keep_deliveries(\(node), \(tokens)::text[], \(text), \(registryVersion)::bigint)",
                             logger: silentStoreLogger).flatMapThrowing { result in try result.rows.first?.decode(Bool.self) ?? false }
        } done: { result in
            switch result {
            case .success(let kept): done(kept ? .kept : .stale)
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

    package func keep(refusals: [RejectionLog.Entry], on loop: any EventLoop, done: @escaping @Sendable (ReceiverError?) -> Void) {
        let texts: [String]
        do { texts = try refusals.map { String(decoding: try RejectionLog.encode($0), as: UTF8.self) } } catch {
            loop.execute { done(ReceiverError(.storage, "a refusal cannot be written as JSON: \(error)")) }
            return
        }
        let (node, tokens, ids) = (self.node, refusals.map(\.deviceToken), refusals.map(\.apnsID))
        link(on: loop).run("keeping \(refusals.count) refusal(s)", seconds: deadline) { connection in
            connection.query("""
                INSERT INTO receiver_rejections (node, device_token, apns_id, entry)
                SELECT \(node), t.token, t.id, t.json FROM unnest(\(tokens)::text[], \(ids)::text[], \(texts)::text[]) AS t(token, id, json)
                """, logger: silentStoreLogger, { _ in }).map { _ in }
        } done: { result in
            if case .failure(let error) = result { return done(ReceiverError(.unavailable, "the fleet's rejection log (\(node)): \(error)")) }
            done(nil)
        }
    }

    /// The connection of `loop`, made when the loop first keeps something.
    private func link(on loop: any EventLoop) -> LoopConnection {
        links.withLock { links in
            if let link = links[ObjectIdentifier(loop)] { return link }
            let link = LoopConnection(loop: loop, location: location, clock: clock, logger: logger)
            links[ObjectIdentifier(loop)] = link
            return link
        }
    }

    /// How many event loops hold a connection of this log (none once their receiver stopped).
    package var loopConnections: Int { links.withLock { $0.count } }

    /// Closes the connections of `group`'s event loops, which stop next (a receiver's, at its shutdown).
    package func release(_ group: any EventLoopGroup) async {
        let loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
        let released = links.withLock { links in
            let mine = links.filter { loops.contains($0.key) }
            for key in mine.keys { links[key] = nil }
            return Array(mine.values)
        }
        for link in released { try? await link.close().get() }
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
            _ = try await session.run("emptying the fleet's logs", seconds: deadline) { connection in
                try await connection.query("TRUNCATE receiver_delivery_batches, receiver_rejections", logger: silentStoreLogger)
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    /// The text of each row `query` returns, in its order.
    private func lines(_ what: String, _ query: PostgresQuery) async throws(SharedStoreError) -> [String] {
        do {
            return try await session.run(what, seconds: deadline) { connection in
                var lines: [String] = []
                for try await line in try await connection.query(query, logger: silentStoreLogger).decode(String.self) { lines.append(line) }
                return lines
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    /// Closes the session and the loops' connections (a receiver released its own at its shutdown).
    package func close() async {
        await session.close()
        for link in links.withLock({ links in defer { links = [:] }; return Array(links.values) }) { try? await link.close().get() }
    }
}
