import Synchronization

/// A clock whose time passes only while somebody waits on it: the clock of a scenario's apps and
/// of its simulated network.
///
/// A scenario says "APNs takes 4 s, the app waits 1 s" and means the app gives up first, on any
/// machine. On real clocks it depends on the load: the push's 4 s start when the receiver accepts
/// it, the app's 1 s when the app has read verifyClient's answer, and a machine that takes 3 s
/// between the two (a busy 2-core CI box can) delivers the push in time. On this clock, time runs
/// only while a task that *holds* it sleeps (the app's waits: ``sleep(until:tolerance:)``), at the
/// wall clock's pace, and stands still while the app works; the network's delays sleep on
/// ``passive``, which does not hold it. Deadlines are reached one at a time, in order, each woken
/// before time goes past it, so two waits end in the order of their deadlines however late the
/// machine wakes either.
///
/// ``runFreely()`` lets time pass with nobody holding it (the end of a scenario, where pushes
/// still on their way arrive on their own).
package final class WaitingClock: Clock, Sendable {
    package typealias Instant = ManualClock.Instant

    private struct Sleeper {
        let deadline: Instant
        let holdsTime: Bool
        let order: Int
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        /// The clock's time when it last stopped, or when the running stretch began.
        var base = Instant(offset: .zero)
        /// When the running stretch began on the wall clock; nil while time stands still.
        var runningSince: ContinuousClock.Instant?
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
        var freeRunning = false
        /// The wall-clock wait for the next deadline, and which schedule it belongs to.
        var timer: Task<Void, Never>?
        var schedule = 0

        var earliest: (id: Int, sleeper: Sleeper)? {
            sleepers.min { ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order) }.map { ($0.key, $0.value) }
        }

        /// Time now: never past the earliest deadline, which must be woken first.
        func now(at wall: ContinuousClock.Instant) -> Instant {
            guard let since = runningSince else { return base }
            let running = base.advanced(by: since.duration(to: wall))
            guard let next = earliest?.sleeper.deadline else { return running }
            return min(running, max(base, next))
        }

        var shouldRun: Bool { freeRunning || sleepers.values.contains { $0.holdsTime } }
    }
    private let state = Mutex(State())

    package init() {}

    package var now: Instant { state.withLock { $0.now(at: .now) } }
    package var minimumResolution: Duration { .nanoseconds(1) }

    /// Whether time passes now (somebody holds it, or ``runFreely()`` was called).
    package var isRunning: Bool { state.withLock { $0.runningSince != nil } }

    /// Sleeps until `deadline`, holding time: it passes while this waits.
    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleep(until: deadline, holdingTime: true)
    }

    /// This clock for waits that must not make time pass on their own (the network's latency):
    /// they end when time, held by somebody else, reaches their deadline.
    package var passive: Passive { Passive(clock: self) }

    package struct Passive: Clock, Sendable {
        let clock: WaitingClock
        package var now: Instant { clock.now }
        package var minimumResolution: Duration { .nanoseconds(1) }
        package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
            try await clock.sleep(until: deadline, holdingTime: false)
        }
    }

    /// From now on time passes whether anybody waits or not.
    package func runFreely() {
        state.withLock { state in
            state.freeRunning = true
            update(&state)
        }
    }

    private func sleep(until deadline: Instant, holdingTime: Bool) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Next { case sleep, wake, cancelled }
                let next = state.withLock { state -> Next in
                    if Task.isCancelled { return .cancelled }
                    if deadline <= state.now(at: .now) { return .wake }
                    state.sleepers[id] = Sleeper(deadline: deadline, holdsTime: holdingTime, order: id, continuation: continuation)
                    update(&state)
                    return .sleep
                }
                switch next {
                case .sleep: break
                case .wake: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else { return nil }
                update(&state)
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Starts or stops time as the sleepers say, and waits on the wall clock for the next deadline.
    private func update(_ state: inout State) {
        let wall = ContinuousClock.now
        let current = state.now(at: wall)
        state.base = current
        state.runningSince = state.shouldRun ? wall : nil
        state.timer?.cancel()
        state.timer = nil
        state.schedule += 1
        guard state.runningSince != nil, let next = state.earliest else { return }
        let schedule = state.schedule
        let wake = wall.advanced(by: current.duration(to: next.sleeper.deadline))
        state.timer = Task { [self] in
            if wake > .now {
                do { try await Task.sleep(until: wake, clock: .continuous) } catch { return }
            }
            fire(schedule)
        }
    }

    /// The earliest deadline has come: time stops there, its sleeper wakes, and time runs on if
    /// somebody still holds it.
    private func fire(_ schedule: Int) {
        let woken = state.withLock { state -> Sleeper? in
            guard state.schedule == schedule, let next = state.earliest else { return nil }
            state.sleepers.removeValue(forKey: next.id)
            state.base = max(state.base, next.sleeper.deadline)
            state.runningSince = nil
            update(&state)
            return next.sleeper
        }
        woken?.continuation.resume()
    }
}
