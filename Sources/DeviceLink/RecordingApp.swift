import APNsReceiver
import Foundation

/// A stand-in app whose delegate keeps every notification it gets, so a run can wait for one.
/// (The auth core's app, which feeds `canHandleNotification`, replaces it in full scenarios.)
package actor RecordingApp: SimulatedApp {
    package nonisolated let bundleID: String
    package private(set) var received: [AcceptedPush] = []
    private var waiters: [Int: CheckedContinuation<AcceptedPush?, Never>] = [:]
    private var nextWaiter = 0

    package init(bundleID: String) { self.bundleID = bundleID }

    package func didReceiveRemoteNotification(_ payload: [UInt8], push: AcceptedPush) async {
        received.append(push)
        let pending = waiters
        waiters.removeAll()
        for waiter in pending.values { waiter.resume(returning: push) }
    }

    /// The first notification received (waiting for it if none has come yet), or `nil` after `timeout`.
    package func firstPush(timeout: Duration) async -> AcceptedPush? {
        if let first = received.first { return first }
        let id = nextWaiter
        nextWaiter += 1
        return await withCheckedContinuation { continuation in
            waiters[id] = continuation
            Task {
                try? await Task.sleep(for: timeout)
                self.expire(id)
            }
        }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(returning: nil)
    }
}
