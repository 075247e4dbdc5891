import Synchronization

/// A `Clock` that moves only when told, for tests of timeouts (the 5 s APNs-token wait, the 1 s
/// notification probe, `suggestedTimeout`): sleepers wake when ``advance(by:)`` passes their deadline.
package final class ManualClock: Clock, Sendable {
    package struct Instant: InstantProtocol {
        package let offset: Duration
        package init(offset: Duration) { self.offset = offset }
        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
        /// Tasks waiting for a number of sleepers (``waitForSleepers(_:)``), given the count.
        var watchers = Waiters<Int>()
    }
    private let state = Mutex(State())

    package init() {}

    package var now: Instant { state.withLock { $0.now } }
    package var minimumResolution: Duration { .nanoseconds(1) }
    /// How many tasks are sleeping on this clock.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Returns once at least `count` tasks sleep on this clock (woken by each new sleeper, no
    /// polling): a test waits for this before advancing, so that the timeout it means to end has
    /// started.
    package func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { state in state.watchers.add({ $0 >= count }, continuation, now: state.sleepers.count) }
            if !waits { continuation.resume() }
        }
    }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Next { case sleep, wake, cancelled }
                let (next, watchers) = state.withLock { state -> (Next, [CheckedContinuation<Void, Never>]) in
                    // A task cancelled before it got here must not leave a sleeper behind.
                    if Task.isCancelled { return (.cancelled, []) }
                    if deadline <= state.now { return (.wake, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (.sleep, state.watchers.ready(for: state.sleepers.count))
                }
                for watcher in watchers { watcher.resume() }
                switch next {
                case .sleep: break
                case .wake: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    package func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for key in due.keys { state.sleepers.removeValue(forKey: key) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
