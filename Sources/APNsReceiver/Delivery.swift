import APNsWire
import Foundation
import Synchronization
import Utilities

/// The seam between the receiver (APNs) and the device OS: each accepted push that is not dropped
/// is handed here after it is in the delivery log. The simulated device (and through it the app's
/// delegate, which feeds the auth core's `canHandleNotification`) sits behind it.
///
/// Called off the connection's event loop; a slow handler never delays APNs answers. The receiver
/// hands pushes over in batches (``deliver(handed:)``), oldest first: whatever was accepted while
/// the previous batch was being handed over.
package protocol PushDeliveryHandler: Sendable {
    func deliver(_ push: AcceptedPush) async
    /// The pushes accepted since the last batch, oldest first. By default each is given to
    /// ``deliver(_:)`` at once, none waiting for another. A delivery latency counts from when
    /// the batch is handed over (the pushes were accepted while the one before was).
    func deliver(batch: [AcceptedPush]) async
    /// Whether the receiver may hand background pushes over as their delivery-log lines alone,
    /// now (read once per batch of answers). By default never.
    var takesLogLines: Bool { get }
    /// The pushes accepted since the last batch, oldest first, as the receiver hands them over:
    /// lines only while ``takesLogLines`` said so. By default each line is read back into its push
    /// and the batch goes to ``deliver(batch:)``.
    func deliver(handed batch: [HandedPush]) async
}

extension PushDeliveryHandler {
    package func deliver(batch: [AcceptedPush]) async {
        await withTaskGroup(of: Void.self) { group in
            for push in batch { group.addTask { await self.deliver(push) } }
        }
    }

    package var takesLogLines: Bool { false }

    package func deliver(handed batch: [HandedPush]) async {
        await deliver(batch: batch.flatMap(\.pushes))
    }
}

/// Accepted pushes on their way to the device side: one push, or the delivery-log lines of a
/// read's background pushes.
///
/// Lines are what a receiver hands over while nothing on the device side can take a push (no
/// device connected, no app, no observer: ``PushDeliveryHandler/takesLogLines``): the pushes
/// reach no device and nobody hears of them, unless a device connects before their latency has
/// passed (they are read back then). Held as themselves for the latency (a quarter-second:
/// 50,000 pushes at push-receiver's rate), the pushes made the event loops allocate from cold
/// memory, and the receiver did 0.82× of the pushes per CPU-second it does alone; holding their
/// reads' lines in memory, 0.91×; only where the lines are in the delivery log file, 0.94×
/// (docs/benchmark-limits.md). Only a fleet's lines (its log is the database) are held in memory.
package enum HandedPush: Sendable {
    case push(AcceptedPush)
    case lines(HandedLines)

    /// The pushes, read back from their lines if that is what was handed (see ``HandedLines/push(_:)``).
    package var pushes: [AcceptedPush] {
        switch self {
        case .push(let push): [push]
        case .lines(let lines): lines.pushes()
        }
    }
}

/// Some of the delivery-log lines one read kept, oldest first: where they are and how to read them.
package struct HandedLines: Sendable {
    /// Where the read's lines are.
    enum Place: Sendable {
        /// In memory (a fleet's log: its lines went to the database).
        case bytes([UInt8])
        /// In the delivery log file, from there.
        case file(DeliveryLog, at: AppendOnlyFile.Location)
    }
    private let place: Place
    /// Each line's place in the read's lines.
    private let ranges: [Range<Int>]

    init(_ place: Place, ranges: [Range<Int>]) {
        self.place = place
        self.ranges = ranges
    }

    /// All of them, read back with one read of the file (those it no longer holds left out).
    package func pushes() -> [AcceptedPush] {
        guard let first = ranges.first?.lowerBound, let end = ranges.last?.upperBound else { return [] }
        switch place {
        case .bytes(let bytes): return ranges.compactMap { AcceptedPush(deliveryLogLine: bytes[$0]) }
        case .file(let log, let at):
            guard let read = log.read(at: at.advanced(by: first), count: end - first) else { return [] }
            return ranges.compactMap { AcceptedPush(deliveryLogLine: read[($0.lowerBound - first)..<($0.upperBound - first)]) }
        }
    }
}

/// The receiver's side of the hand-off: the connections append each accepted push (no task, no
/// timer per push), and one drain task at a time hands whatever has gathered to the handler as a
/// batch. At a receiver's rate a task and a sleeping timer per push cost it a third of its
/// throughput (Benchmarks/run.sh inspector, issue 27).
final class DeliveryQueue: Sendable {
    private struct State {
        var pending: [HandedPush] = []
        /// The last batch's array, emptied, kept for the next: pushes are appended without the
        /// array growing from nothing (and copying itself) batch after batch.
        var spare: [HandedPush] = []
        var draining = false
    }
    private let state = Mutex(State())
    let handler: any PushDeliveryHandler

    init(handler: any PushDeliveryHandler) { self.handler = handler }

    /// Whether a background push may go as its line now (``PushDeliveryHandler/takesLogLines``).
    var takesLogLines: Bool { handler.takesLogLines }

    func enqueue(_ push: HandedPush) {
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
            var batch = state.withLock { state -> [HandedPush] in
                if state.pending.isEmpty { state.draining = false }
                var batch = state.spare
                swap(&batch, &state.pending)
                state.spare = []
                return batch
            }
            guard !batch.isEmpty else { return }
            await handler.deliver(handed: batch)
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
