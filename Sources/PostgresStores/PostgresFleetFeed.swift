import APNsReceiver
import AuthBackend
import Foundation
import Lifecycle
import Logging
import PostgresNIO
import Synchronization
import Utilities

/// What an inspector shows of a fleet: the pushes the other receivers answer, read from
/// `receiver_delivery_batches` and `receiver_rejections` as they are kept, and every backend node's
/// events (`backend_events`, this node's own included, so that a sign-in's steps from several
/// nodes are put in one order: ``FleetFlowOrder``).
///
/// **Polling with a cursor, not LISTEN/NOTIFY.** Pushes come by the tens of thousands a second; a
/// NOTIFY per batch would put every receiver's commits through PostgreSQL's one notification queue
/// (a lock taken at each commit), slowing the hot path for a view. A poll every quarter second
/// costs each inspector four small queries a second, whatever the rate, and reads its rows in bulk.
///
/// **The cursor and its holes.** Row IDs are handed out when rows are inserted, not when they
/// commit, so a batch may commit after one with higher IDs: a plain `id > cursor` would skip it
/// for ever. Each poll therefore also asks again for the IDs below the cursor it has not seen
/// (its holes). A hole is kept until its row appears or ``holeLifetime`` has passed: every batch
/// a receiver keeps is bounded (10 s, after which its connection is closed and the transaction
/// ends), so a hole still empty after a minute is an ID a failed batch used up.
package final class PostgresFleetFeed: Sendable {
    /// How long an ID below the cursor is waited for.
    package static let holeLifetime: TimeInterval = 60
    /// Rows read per table and poll, at most (batches of pushes: a tenth as many).
    static let pageSize = 2000

    package let address: String
    /// The inspector's own receiver, whose pushes it records itself (with their payloads and headers).
    package let ownNode: String?
    private let session: PostgresSession
    private let clock: any WallClock
    private let deadline: Double
    private let logger: Logger

    struct Cursor: Sendable {
        var last: Int64 = 0
        /// Unseen IDs below `last`, with when they were first missed.
        var holes: [Int64: Date] = [:]

        /// Moves past the rows read (`ids`): the IDs skipped on the way become holes, holes read
        /// are filled, and holes older than ``holeLifetime`` are given up.
        mutating func advance(past ids: [Int64], now: Date) {
            let seen = Set(ids)
            for id in ids { holes[id] = nil }
            if let newest = ids.max(), newest > last {
                for missing in (last + 1)..<newest where !seen.contains(missing) { holes[missing] = now }
                last = newest
            }
            holes = holes.filter { now.timeIntervalSince($0.value) < PostgresFleetFeed.holeLifetime }
        }
    }
    /// The tables read, each with its rows' ID, node, position (a push's in its batch, an event's
    /// in the backend's order), time and JSON.
    private static let tables = ["receiver_delivery_batches", "receiver_rejections", "backend_events"]
    /// The columns read after a row's ID and node, of the tables kept an entry to a row.
    private static let columns = ["receiver_rejections": "0::bigint, kept_at, entry", "backend_events": "position, at, event::text"]

    /// The rows of table `table` after `cursor`, at most a page, and those of its holes.
    static func query(_ table: Int, after cursor: Cursor) -> PostgresQuery {
        let (name, holes) = (tables[table], Array(cursor.holes.keys))
        guard let columns = columns[name] else {
            // A page of whole batches of pushes (never a batch cut at a page's end), then their lines.
            return """
                SELECT b.id, b.node, l.position, b.kept_at, l.line FROM (
                    (SELECT id, node, kept_at, lines FROM receiver_delivery_batches WHERE id > \(cursor.last) ORDER BY id LIMIT \(pageSize / 10))
                    UNION ALL
                    (SELECT id, node, kept_at, lines FROM receiver_delivery_batches WHERE id = ANY(\(holes)::bigint[]))
                ) AS b CROSS JOIN LATERAL unnest(string_to_array(b.lines, E'\\n')) WITH ORDINALITY AS l(line, position)
                """
        }
        return """
            (SELECT id, node, \(unescaped: columns) FROM \(unescaped: name) WHERE id > \(cursor.last) ORDER BY id LIMIT \(pageSize))
            UNION ALL
            (SELECT id, node, \(unescaped: columns) FROM \(unescaped: name) WHERE id = ANY(\(holes)::bigint[]))
            """
    }

    private struct State {
        /// One per table of ``tables``, in its order.
        var cursors = [Cursor](repeating: Cursor(), count: PostgresFleetFeed.tables.count)
        var task: Task<Void, Never>?
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - ownNode: rows of this node are left out.
    ///   - clock: the holes' ages.
    package init(location: PostgresLocation, ownNode: String?, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        self.address = location.address
        self.ownNode = ownNode
        self.clock = clock
        self.deadline = deadline
        self.logger = logger
        self.session = PostgresSession(location: location, clock: clock, logger: logger)
    }

    /// Connects, creates or migrates the schema, and places the cursors `backlog` rows before the
    /// newest, so that the first poll brings the recent past.
    package func open(backlog: Int) async throws(SharedStoreError) {
        try await session.migrate()
        let backlog = Int64(max(0, backlog))
        let latest: [Int64]
        do {
            latest = try await session.run("reading the fleet's logs", seconds: deadline) { connection in
                // One round trip for every table (fixed names, never input).
                let newest = Self.tables.enumerated().map { "SELECT \($0.offset), coalesce(max(id), 0) FROM \($0.element)" }
                var latest = [Int64](repeating: -1, count: Self.tables.count)
                let rows = try await connection.query(PostgresQuery(unsafeSQL: newest.joined(separator: " UNION ALL ")), logger: silentStoreLogger)
                for try await (table, id) in rows.decode((Int, Int64).self) { latest[table] = id }
                return latest
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
        guard !latest.contains(-1) else { throw SharedStoreError(.unavailable, "the fleet's logs gave no row for a table") }
        state.withLock { state in
            for (table, newest) in latest.enumerated() { state.cursors[table].last = max(0, newest - backlog) }
        }
    }

    /// What one poll read.
    package struct Poll: Sendable {
        /// The other receivers' pushes, oldest first in each log.
        package var pushes: [FleetPush] = []
        /// Every backend node's events (this node's too), in the order they were kept.
        package var events: [FleetBackendEvent] = []
    }

    /// The rows kept since the last poll (and those that were missing then).
    package func poll() async throws(SharedStoreError) -> Poll {
        let cursors = state.withLock { $0.cursors }
        let now = clock.now
        typealias Row = (table: Int, id: Int64, node: String, position: Int64, at: Date, text: String)
        let rows: [Row]
        do {
            rows = try await session.run("reading the fleet's logs", seconds: deadline) { connection in
                var rows: [Row] = []
                for table in Self.tables.indices {
                    let result = try await connection.query(Self.query(table, after: cursors[table]), logger: silentStoreLogger)
                    for try await (id, node, position, at, text) in result.decode((Int64, String, Int64, Date, String).self) {
                        rows.append((table, id, node, position, at, text))
                    }
                }
                return rows
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
        state.withLock { state in
            for table in state.cursors.indices { state.cursors[table].advance(past: rows.filter { $0.table == table }.map(\.id), now: now) }
        }
        let decoder = JSONDecoder()
        var poll = Poll()
        for row in rows.sorted(by: { ($0.table, $0.id, $0.position) < ($1.table, $1.id, $1.position) }) {
            let data = Data(row.text.utf8)
            switch row.table {
            case 0 where row.node != ownNode:
                guard let entry = try? decoder.decode(DeliveryLog.Entry.self, from: data) else { unreadable(row.id, row.node); continue }
                poll.pushes.append(FleetPush(node: row.node, answer: .delivered(entry)))
            case 1 where row.node != ownNode:
                guard let entry = try? RejectionLog.decode(data) else { unreadable(row.id, row.node); continue }
                poll.pushes.append(FleetPush(node: row.node, answer: .refused(entry)))
            case 2:
                guard let stored = try? StoredBackendEvent.decode(data) else { unreadable(row.id, row.node); continue }
                poll.events.append(FleetBackendEvent(node: row.node, position: row.position, time: row.at, sequence: row.id, event: stored.event,
                                                     signIn: stored.signIn))
            default: continue
            }
        }
        return poll
    }

    private func unreadable(_ id: Int64, _ node: String) {
        logger.warning("a row of the fleet's logs does not read", metadata: ["id": "\(id)", "node": "\(node)"])
    }

    /// Polls every `interval` seconds in the background, handing each poll's pushes to `deliver`,
    /// until ``close()``. A failed poll is logged and tried again at the next turn.
    package func start(every interval: Double = 0.25, _ deliver: @escaping @Sendable (Poll) -> Void) {
        let task = Task { [self] in
            var failing = false
            while !Task.isCancelled {
                do {
                    let read = try await poll()
                    if failing { logger.notice("reading the fleet's pushes again", metadata: ["store": "\(address)"]) }
                    failing = false
                    // Called on every turn, read or not: the sign-ins' order releases what has settled.
                    deliver(read)
                } catch {
                    if !failing { logger.warning("cannot read the fleet's pushes", metadata: ["store": "\(address)", "error": "\(error)"]) }
                    failing = true
                }
                // The poll's period; nothing waits on it but the view.
                try? await Task.sleep(for: .seconds(interval))
            }
        }
        let previous = state.withLock { state -> Task<Void, Never>? in
            defer { state.task = task }
            return state.task
        }
        previous?.cancel()
    }

    package func close() async {
        let task = state.withLock { state -> Task<Void, Never>? in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
        await session.close()
    }
}

extension PostgresFleetFeed: RunningPart {
    package var description: String { "the fleet's feed" }
    package func shutdown() async { await close() }
}
