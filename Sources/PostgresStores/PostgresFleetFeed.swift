import APNsReceiver
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Utilities

/// The pushes the other receivers of a fleet answer, read from `receiver_deliveries` and
/// `receiver_rejections` as they are kept: what an inspector shows of the fleet.
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
public final class PostgresFleetFeed: Sendable {
    /// How long an ID below the cursor is waited for.
    public static let holeLifetime: TimeInterval = 60
    /// Rows read per table and poll, at most.
    static let pageSize = 2000

    public let address: String
    /// The inspector's own receiver, whose pushes it records itself (with their payloads and headers).
    public let ownNode: String?
    private let session: PostgresSession
    private let clock: any WallClock
    private let deadline: Double
    private let logger: Logger

    private struct Cursor {
        var last: Int64 = 0
        /// Unseen IDs below `last`, with when they were first missed.
        var holes: [Int64: Date] = [:]
    }
    private struct State {
        var deliveries = Cursor()
        var rejections = Cursor()
        var started = false
        var task: Task<Void, Never>?
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - ownNode: rows of this node are left out.
    ///   - clock: the holes' ages.
    public init(location: PostgresLocation, ownNode: String?, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = Logger(label: "authsim.store", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.address = location.address
        self.ownNode = ownNode
        self.clock = clock
        self.deadline = deadline
        self.logger = logger
        self.session = PostgresSession(location: location, clock: clock, logger: logger)
    }

    /// Connects, creates or migrates the schema, and places the cursors `backlog` rows before the
    /// newest, so that the first poll brings the recent past.
    public func open(backlog: Int) async throws(SharedStoreError) {
        try await session.migrate()
        let backlog = Int64(max(0, backlog))
        let latest: (Int64, Int64)
        do {
            latest = try await session.run("reading the fleet's logs", seconds: deadline) { connection in
                var latest: (Int64, Int64) = (0, 0)
                let rows = try await connection.query("""
                    SELECT (SELECT coalesce(max(id), 0) FROM receiver_deliveries), (SELECT coalesce(max(id), 0) FROM receiver_rejections)
                    """, logger: Self.silent)
                for try await row in rows.decode((Int64, Int64).self) { latest = row }
                return latest
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
        state.withLock { state in
            state.deliveries.last = max(0, latest.0 - backlog)
            state.rejections.last = max(0, latest.1 - backlog)
        }
    }

    /// The pushes kept since the last poll (and those that were missing then), oldest first in
    /// each table.
    public func poll() async throws(SharedStoreError) -> [FleetPush] {
        let (deliveries, rejections) = state.withLock { ($0.deliveries, $0.rejections) }
        let now = clock.now
        let (own, page) = (ownNode, Self.pageSize)
        let rows: [(table: Int, id: Int64, node: String, text: String)]
        do {
            rows = try await session.run("reading the fleet's logs", seconds: deadline) { connection in
                var rows: [(table: Int, id: Int64, node: String, text: String)] = []
                for (table, name, column, cursor) in [(0, "receiver_deliveries", "line", deliveries), (1, "receiver_rejections", "entry", rejections)] {
                    let holes = Array(cursor.holes.keys)
                    let result = try await connection.query("""
                        (SELECT id, node, \(unescaped: column)::text FROM \(unescaped: name) WHERE id > \(cursor.last) ORDER BY id LIMIT \(page))
                        UNION ALL
                        (SELECT id, node, \(unescaped: column)::text FROM \(unescaped: name) WHERE id = ANY(\(holes)::bigint[]))
                        """, logger: Self.silent)
                    for try await (id, node, text) in result.decode((Int64, String, String).self) { rows.append((table, id, node, text)) }
                }
                return rows
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
        // Move the cursors: IDs skipped between the old cursor and the newest row become holes.
        state.withLock { state in
            for table in 0...1 {
                var cursor = table == 0 ? state.deliveries : state.rejections
                let ids = rows.filter { $0.table == table }.map(\.id)
                let seen = Set(ids)
                for id in ids where cursor.holes[id] != nil { cursor.holes[id] = nil }
                if let newest = ids.max(), newest > cursor.last {
                    for missing in (cursor.last + 1)..<newest where !seen.contains(missing) { cursor.holes[missing] = now }
                    cursor.last = newest
                }
                cursor.holes = cursor.holes.filter { now.timeIntervalSince($0.value) < Self.holeLifetime }
                if table == 0 { state.deliveries = cursor } else { state.rejections = cursor }
            }
        }
        let decoder = JSONDecoder()
        var pushes: [FleetPush] = []
        for row in rows.sorted(by: { ($0.table, $0.id) < ($1.table, $1.id) }) where row.node != own {
            let data = Data(row.text.utf8)
            if row.table == 0, let entry = try? decoder.decode(DeliveryLog.Entry.self, from: data) {
                pushes.append(FleetPush(node: row.node, answer: .delivered(entry)))
            } else if row.table == 1, let entry = try? RejectionLog.decode(data) {
                pushes.append(FleetPush(node: row.node, answer: .refused(entry)))
            } else {
                logger.warning("a row of the fleet's logs does not read", metadata: ["id": "\(row.id)", "node": "\(row.node)"])
            }
        }
        return pushes
    }

    /// Polls every `interval` seconds in the background, handing each poll's pushes to `deliver`,
    /// until ``close()``. A failed poll is logged and tried again at the next turn.
    public func start(every interval: Double = 0.25, _ deliver: @escaping @Sendable ([FleetPush]) -> Void) {
        let task = Task { [self] in
            var failing = false
            while !Task.isCancelled {
                do {
                    let pushes = try await poll()
                    if failing { logger.notice("reading the fleet's pushes again", metadata: ["store": "\(address)"]) }
                    failing = false
                    if !pushes.isEmpty { deliver(pushes) }
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

    public func close() async {
        let task = state.withLock { state -> Task<Void, Never>? in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
        await session.close()
    }

    private static let silent = Logger(label: "authsim.store", factory: { _ in SwiftLogNoOpLogHandler() })
}
