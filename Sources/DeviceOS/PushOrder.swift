import Synchronization

/// A push the app's own request announced reaches the app after the app has read the request's
/// answer. On a device that holds by time: APNs takes tens of milliseconds at least, reading
/// verifyClient's answer and keeping its receipt takes microseconds, and FirebaseAuth relies on
/// it (a push whose receipt it has not kept yet is not its own: `AuthAppCredentialManager`
/// drops it). Here it holds by event, so that no machine's load (and no `pushLatencyMs: 0`) can
/// reorder the two: what a user debugs is then what a device does, never a race a device cannot
/// have.
struct PushOrder: Sendable {
    /// Answers being read now.
    var reading = 0
    /// Pushes that came while an answer was being read, oldest first.
    var held: [@Sendable () -> Void] = []
    /// A caller is handing the held pushes over: pushes that come meanwhile queue behind them.
    var draining = false
}

extension AppHost {
    /// Runs `body`, which reads an answer that a push may follow (the SDK's verifyClient, until it
    /// has kept the receipt): pushes that reach the device meanwhile wait, in order, until it returns.
    package func readingAnswerBeforePush<T, E: Error>(_ body: () async throws(E) -> T) async throws(E) -> T {
        pushOrder.withLock { $0.reading += 1 }
        defer {
            let open = pushOrder.withLock { order in
                order.reading -= 1
                return order.reading == 0
            }
            if open { releaseHeldPushes() }
        }
        return try await body()
    }

    /// Hands a push to the app through `handOver` now, or, while the app reads an answer a push
    /// may follow, once it has read it; pushes keep the order they reached the device in.
    package func deliverPush(_ handOver: @escaping @Sendable () -> Void) {
        let now = pushOrder.withLock { order in
            if order.reading == 0, !order.draining, order.held.isEmpty { return true }
            order.held.append(handOver)
            return false
        }
        if now { handOver() }
    }

    /// Hands over the held pushes, oldest first, outside the lock (a delegate may call back into
    /// the host); one caller drains at a time, and pushes held meanwhile go after those before them.
    func releaseHeldPushes() {
        let drains = pushOrder.withLock { order in
            guard !order.draining else { return false }
            order.draining = true
            return true
        }
        guard drains else { return }
        while true {
            let next: (@Sendable () -> Void)? = pushOrder.withLock { order in
                guard (order.reading == 0 || isTerminated), !order.held.isEmpty else {
                    order.draining = false
                    return nil
                }
                return order.held.removeFirst()
            }
            guard let next else { return }
            next()
        }
    }
}
