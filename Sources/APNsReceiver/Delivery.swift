import APNsWire
import Foundation
import Synchronization
import Utilities

/// The seam between the receiver (APNs) and the device OS: each accepted push that is not dropped
/// is handed here after it is in the delivery log. The simulated device (and through it the app's
/// delegate, which feeds the auth core's `canHandleNotification`) sits behind it.
///
/// Called off the connection's event loop; a slow handler never delays APNs answers. The receiver
/// hands pushes over in batches (``deliver(batch:)``), oldest first: whatever was accepted while
/// the previous batch was being handed over.
package protocol PushDeliveryHandler: Sendable {
    func deliver(_ push: AcceptedPush) async
    /// The pushes accepted since the last batch, oldest first. By default each is given to
    /// ``deliver(_:)`` at once, none waiting for another. A delivery latency counts from when
    /// the batch is handed over (the pushes were accepted while the one before was).
    func deliver(batch: [AcceptedPush]) async
}

extension PushDeliveryHandler {
    package func deliver(batch: [AcceptedPush]) async {
        await withTaskGroup(of: Void.self) { group in
            for push in batch { group.addTask { await self.deliver(push) } }
        }
    }
}

/// The receiver's side of the hand-off: the connections append each accepted push (no task, no
/// timer per push), and one drain task at a time hands whatever has gathered to the handler as a
/// batch. At a receiver's rate a task and a sleeping timer per push cost it a third of its
/// throughput (Benchmarks/run.sh inspector, issue 27).
final class DeliveryQueue: Sendable {
    private struct State {
        var pending: [AcceptedPush] = []
        /// The last batch's array, emptied, kept for the next: pushes are appended without the
        /// array growing from nothing (and copying itself) batch after batch.
        var spare: [AcceptedPush] = []
        var draining = false
    }
    private let state = Mutex(State())
    let handler: any PushDeliveryHandler

    init(handler: any PushDeliveryHandler) { self.handler = handler }

    func enqueue(_ push: AcceptedPush) {
        let startDrain = state.withLock { state -> Bool in
            state.pending.append(push)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if startDrain { Task { await drain() } }
    }

    private func drain() async {
        while true {
            var batch = state.withLock { state -> [AcceptedPush] in
                if state.pending.isEmpty { state.draining = false }
                var batch = state.spare
                swap(&batch, &state.pending)
                state.spare = []
                return batch
            }
            guard !batch.isEmpty else { return }
            await handler.deliver(batch: batch)
            batch.removeAll(keepingCapacity: true)
            state.withLock { $0.spare = batch }
        }
    }
}

/// A delivery handler built from a closure.
package struct ClosureDeliveryHandler: PushDeliveryHandler {
    private let body: @Sendable (AcceptedPush) async -> Void
    package init(_ body: @escaping @Sendable (AcceptedPush) async -> Void) { self.body = body }
    package func deliver(_ push: AcceptedPush) async { await body(push) }
}
