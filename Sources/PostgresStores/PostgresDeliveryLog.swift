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
    /// What each event loop that kept something holds: its connection and its waiting batches.
    private let keepers = Mutex<[ObjectIdentifier: LoopKeeper]>([:])
    private let clock: any WallClock
    private let logger: Logger
    private let deadline: Double
    private let statementBytes: Int

    /// - Parameters:
    ///   - deadline: seconds one batch may take before the database counts as lost (503 for its pushes).
    ///   - statementBytes: the lines one statement carries at most, when batches wait to go
    ///     together (a batch larger than this goes alone): past it, the rest wait for the next.
    package init(location: PostgresLocation, node: String, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                statementBytes: Int = 4 << 20, logger: Logger = silentStoreLogger) {
        self.address = location.address
        self.node = node
        self.location = location
        self.clock = clock
        self.logger = logger
        self.deadline = deadline
        self.statementBytes = statementBytes
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
        keeper(on: loop).keep(LoopKeeper.Batch(tokens: AcceptedPush.deviceTokens(of: pushes).joined(separator: " "),
                                               lines: String(decoding: lines.dropLast(), as: UTF8.self),
                                               registryVersion: registryVersion, pushes: pushes.count, done: done))
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
        keeper(on: loop).link.run("keeping \(refusals.count) refusal(s)", seconds: deadline) { connection in
            connection.query("""
                INSERT INTO receiver_rejections (node, device_token, apns_id, entry)
                SELECT \(node), t.token, t.id, t.json FROM unnest(\(tokens)::text[], \(ids)::text[], \(texts)::text[]) AS t(token, id, json)
                """, logger: silentStoreLogger, { _ in }).map { _ in }
        } done: { result in
            if case .failure(let error) = result { return done(ReceiverError(.unavailable, "the fleet's rejection log (\(node)): \(error)")) }
            done(nil)
        }
    }

    /// What `loop` holds, made when the loop first keeps something.
    private func keeper(on loop: any EventLoop) -> LoopKeeper {
        keepers.withLock { keepers in
            if let keeper = keepers[ObjectIdentifier(loop)] { return keeper }
            let keeper = LoopKeeper(link: LoopConnection(loop: loop, location: location, clock: clock, logger: logger), node: node, deadline: deadline,
                                    statementBytes: statementBytes)
            keepers[ObjectIdentifier(loop)] = keeper
            return keeper
        }
    }

    /// How many event loops hold a connection of this log (none once their receiver stopped).
    package var loopConnections: Int { keepers.withLock { $0.count } }

    /// Closes the connections of `group`'s event loops, which stop next (a receiver's, at its shutdown).
    package func release(_ group: any EventLoopGroup) async {
        let loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
        let released = keepers.withLock { keepers in
            let mine = keepers.filter { loops.contains($0.key) }
            for key in mine.keys { keepers[key] = nil }
            return Array(mine.values)
        }
        for keeper in released { try? await keeper.link.close().get() }
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
        for keeper in keepers.withLock({ keepers in defer { keepers = [:] }; return Array(keepers.values) }) { try? await keeper.link.close().get() }
    }
}

/// One event loop's share of a ``PostgresDeliveryLog``: its connection, and the batches waiting
/// for it. One keep is in flight at a time; the batches that arrive meanwhile (from the loop's
/// other client connections) wait, and go together in the next: one statement, one transaction
/// and one WAL flush for all of them, each still a row of its own. Touched on its loop only.
private final class LoopKeeper: @unchecked Sendable {
    struct Batch {
        /// The tokens the lines name, each once, space-separated.
        let tokens: String
        let lines: String
        let registryVersion: Int64?
        let pushes: Int
        let done: @Sendable (KeepOutcome) -> Void
    }

    let link: LoopConnection
    private let node: String
    private let deadline: Double
    private let statementBytes: Int
    private var waiting: [Batch] = []
    private var sending = false

    init(link: LoopConnection, node: String, deadline: Double, statementBytes: Int) {
        self.link = link
        self.node = node
        self.deadline = deadline
        self.statementBytes = statementBytes
    }

    func keep(_ batch: Batch) {
        link.loop.preconditionInEventLoop()
        waiting.append(batch)
        if !sending { send() }
    }

    /// Keeps the waiting batches in one statement, oldest first, as many as ``statementBytes``
    /// allows (one at least). Each is kept only if the fleet's device registry and fault plan
    /// changed after none of its pushes (its version; -1 when its registry is not the fleet's): the
    /// function answers, in order, which were.
    private func send() {
        var taken = 1, bytes = waiting[0].lines.utf8.count
        while taken < waiting.count {
            bytes += waiting[taken].lines.utf8.count
            guard bytes <= statementBytes else { break }
            taken += 1
        }
        let batches = Array(waiting.prefix(taken))
        waiting.removeFirst(taken)
        sending = true
        let (node, tokens, lines) = (node, batches.map(\.tokens), batches.map(\.lines))
        let versions = batches.map { $0.registryVersion ?? -1 }
        let pushes = batches.reduce(0) { $0 + $1.pushes }
        link.run("keeping \(pushes) push(es) in \(batches.count) batch(es)", seconds: deadline) { connection in
            connection.query("SELECT authsim_keep_deliveries(\(node), \(tokens)::text[], \(lines)::text[], \(versions)::bigint[])",
                             logger: silentStoreLogger).flatMapThrowing { result in try result.rows.first?.decode([Bool].self) ?? [] }
        } done: { [self] result in
            // The next statement goes out before these are answered, so the database works meanwhile.
            sending = false
            if !waiting.isEmpty { send() }
            switch result {
            case .success(let kept) where kept.count == batches.count:
                for (batch, kept) in zip(batches, kept) { batch.done(kept ? .kept : .stale) }
            case .success(let kept):
                let error = ReceiverError(.unavailable, "the fleet's delivery log (\(node)): \(kept.count) outcomes for \(batches.count) batches")
                for batch in batches { batch.done(.failed(error)) }
            case .failure(let failure):
                let error = ReceiverError(.unavailable, "the fleet's delivery log (\(node)): \(failure)")
                for batch in batches { batch.done(.failed(error)) }
            }
        }
    }
}
