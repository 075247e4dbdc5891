import AuthBackend
import Foundation
import Lifecycle
import Logging
import PostgresNIO
import Synchronization
import Utilities

/// A backend node's ``BackendEventSink`` on PostgreSQL: its events go into `backend_events`, in
/// batches, after their answers (events are a view: a request never waits for one). The events
/// that come while a batch is written make the next batch.
///
/// When a batch cannot be written (the database is down), its events wait in memory, at most
/// ``maximumWaiting`` (the oldest beyond that are dropped and counted in the log), and go with the
/// batch the next event starts.
///
/// Inspectors read the events as they come (from the newest when they start), so old ones serve
/// nobody: at most once a minute, a node deletes the fleet's events older than ``retention``.
package final class PostgresEventLog: BackendEventSink {
    package static let maximumWaiting = 100_000
    /// How long events stay in `backend_events`.
    package static let retention: TimeInterval = 3600
    package let address: String
    package let node: String
    private let session: PostgresSession
    private let logger: Logger
    private let deadline: Double
    private let clock: any WallClock
    /// When this node last deleted old events.
    private let pruned = Mutex<Date?>(nil)

    private struct Queue {
        var waiting: [(event: StoredBackendEvent, position: Int64, time: Date)] = []
        var writing = false
        var dropped = 0
        /// ``flush()`` callers, told when a batch run ends.
        var flushers: [CheckedContinuation<Bool, Never>] = []
    }
    private let queue = Mutex(Queue())

    package init(location: PostgresLocation, node: String, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        self.address = location.address
        self.node = node
        self.deadline = deadline
        self.logger = logger
        self.clock = clock
        self.session = PostgresSession(location: location, clock: clock, logger: logger)
    }

    /// Connects, and creates or migrates the schema.
    package func open() async throws(SharedStoreError) {
        try await session.migrate()
    }

    package func record(_ event: BackendEvent, signIn: SignInID?, position: Int64, at time: Date) {
        let starts = queue.withLock { queue -> Bool in
            queue.waiting.append((StoredBackendEvent(event: event, signIn: signIn), position, time))
            if queue.waiting.count > Self.maximumWaiting {
                queue.waiting.removeFirst(queue.waiting.count - Self.maximumWaiting)
                queue.dropped += 1
            }
            guard !queue.writing else { return false }
            queue.writing = true
            return true
        }
        if starts { Task { await write() } }
    }

    /// Writes batches until none is waiting, or one fails (its events wait for the next event).
    private func write() async {
        let encoder = JSONEncoder()
        var succeeded = true
        while true {
            let batch = queue.withLock { queue in
                defer { queue.waiting.removeAll() }
                return queue.waiting
            }
            if batch.isEmpty { break }
            let texts = batch.map { String(decoding: (try? encoder.encode($0.event)) ?? Data("null".utf8), as: UTF8.self) }
            let positions = batch.map(\.position)
            let times = batch.map(\.time)
            let node = self.node
            do {
                _ = try await session.run("keeping \(batch.count) event(s)", seconds: deadline) { connection in
                    try await connection.query("""
                        INSERT INTO backend_events (node, position, at, event)
                        SELECT \(node), t.position, t.at, t.event::jsonb FROM unnest(\(positions)::bigint[], \(times)::timestamptz[], \(texts)::text[])
                            WITH ORDINALITY AS t(position, at, event, n) ORDER BY t.n
                        """, logger: silentStoreLogger)
                }
            } catch {
                logger.warning("the backend's events wait for the fleet's store", metadata: ["store": "\(address)", "events": "\(batch.count)", "error": "\(error)"])
                queue.withLock { $0.waiting.insert(contentsOf: batch, at: 0) }
                succeeded = false
                break
            }
            // After the batch is kept, and apart from it: a failed deletion must not put the kept events back in the queue.
            do { try await pruneIfDue() } catch {
                logger.warning("old events not deleted", metadata: ["store": "\(address)", "error": "\(error)"])
            }
        }
        let (flushers, dropped) = queue.withLock { queue -> ([CheckedContinuation<Bool, Never>], Int) in
            queue.writing = false
            defer { queue.flushers.removeAll(); queue.dropped = 0 }
            return (queue.flushers, queue.dropped)
        }
        if dropped > 0 { logger.warning("the backend's oldest events were dropped while the store was away", metadata: ["dropped": "\(dropped)"]) }
        for flusher in flushers { flusher.resume(returning: succeeded) }
    }

    /// Deletes the fleet's events older than ``retention``, when this node has not in the last minute.
    private func pruneIfDue() async throws(PostgresStoreFailure) {
        let now = clock.now
        let due = pruned.withLock { last -> Bool in
            guard last.map({ now.timeIntervalSince($0) >= 60 }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        let cutoff = now.addingTimeInterval(-Self.retention)
        _ = try await session.run("deleting old events", seconds: deadline) { connection in
            try await connection.query("DELETE FROM backend_events WHERE at < \(cutoff)", logger: silentStoreLogger)
        }
    }

    /// Waits until the events recorded so far are written; false when a write failed (they wait).
    @discardableResult
    package func flush() async -> Bool {
        await withCheckedContinuation { (flusher: CheckedContinuation<Bool, Never>) in
            enum Step { case done, wait, start }
            let step = queue.withLock { queue -> Step in
                if queue.writing {
                    queue.flushers.append(flusher)
                    return .wait
                }
                if queue.waiting.isEmpty { return .done }
                // A failed batch's events wait: try them now.
                queue.writing = true
                queue.flushers.append(flusher)
                return .start
            }
            switch step {
            case .done: flusher.resume(returning: true)
            case .wait: break
            case .start: Task { await self.write() }
            }
        }
    }

    package func close() async {
        await flush()
        await session.close()
    }
}

extension PostgresEventLog: RunningPart {
    package var description: String { "the fleet's event log" }
    package func shutdown() async { await close() }
}
