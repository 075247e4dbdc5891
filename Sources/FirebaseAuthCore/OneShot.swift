import Synchronization

/// A value that is set once and awaited: the first `fulfill` wins, later ones are ignored. Used to
/// race "the event came" against "the clock ran out".
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }
    private let state = Mutex(State())

    /// Sets the value unless one is set. Returns whether this call set it.
    @discardableResult
    func fulfill(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value, if it is already set.
    var current: Value? { state.withLock { $0.value } }

    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Value? in
                    if let value = state.value { return value }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

/// Waits for `shot`, or gives `fallback` after `timeout` on `clock`.
func wait<Value: Sendable>(for shot: OneShot<Value>, timeout: Duration, clock: any Clock<Duration>,
                           fallback: Value) async -> Value {
    // Already answered (the forwarding probe comes back synchronously): no timer. One started
    // anyway would sleep on the app's clock for an instant before its cancellation, and a test
    // waiting for "the SDK started waiting" could take that sleeper for the one it means.
    if let ready = shot.current { return ready }
    let timer = Task {
        try await clock.sleep(for: timeout)
        shot.fulfill(fallback)
    }
    let value = await shot.value
    timer.cancel()
    return value
}
