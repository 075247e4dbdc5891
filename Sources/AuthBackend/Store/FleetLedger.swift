import Foundation
import IdentityToolkitAPI
import Logging

/// What a fleet's node knows of the fleet's store (``BackendStore``), and the changes waiting for
/// its next batch: how far into the store's records its state is, when a snapshot is due, and
/// whose turn it is to talk to the store.
///
/// A value the ``IdentityToolkit`` actor holds beside its ``BackendCore``; the actor's extension in
/// SharedChanges.swift runs the batches with it, as ``GroupCommit`` decides them. A batch does not
/// react to its leader's cancellation (the store runs each query in a task of its own), so a
/// cancelled call never fails the others of its batch.
struct FleetLedger {
    let store: any BackendStore
    /// How far into the store's records the node's state is.
    var position: Int64 = 0
    /// Records in the store since its last snapshot (as far as this node saw), and how many
    /// records that snapshot held: the next snapshot is due when the first reaches
    /// ``BackendConfiguration/storeSnapshotEvery`` and the second (so that writing snapshots costs
    /// at most as many records as they replace).
    var recordsSinceSnapshot = 0
    var lastSnapshotSize = 0
    /// A change whose commit failed: what the node's state holds may not be what the store holds,
    /// so the next change or read rebuilds it from the store's first record.
    var stateIsStale = false
    /// The records of the batch in progress; `nil` outside one.
    var pendingRecords: [String]?
    /// Who leads the node's batches and what each takes (``GroupCommit``), and the waiting
    /// changes' bodies and callers by ID.
    var commits = GroupCommit()
    var changes: [GroupCommit.ChangeID: QueuedChange] = [:]
    /// One change or read of the store at a time on this node (the actor is re-entered while a
    /// change waits for the database): a taken flag and the waiters, in order.
    private var turnTaken = false
    private var turnWaiters: [CheckedContinuation<Void, Never>] = []

    init(store: any BackendStore) {
        self.store = store
    }

    /// The position to read the store after: 0 when the state must be rebuilt.
    var readPosition: Int64 { stateIsStale ? 0 : position }

    /// Takes the store turn if it is free; else the caller waits with ``waitForTurn(_:)``.
    mutating func takeTurnIfFree() -> Bool {
        guard turnTaken else {
            turnTaken = true
            return true
        }
        return false
    }

    mutating func waitForTurn(_ continuation: CheckedContinuation<Void, Never>) {
        turnWaiters.append(continuation)
    }

    /// Hands the turn to the next waiter, or frees it.
    mutating func giveTurn() {
        if turnWaiters.isEmpty { turnTaken = false } else { turnWaiters.removeFirst().resume() }
    }

    /// Counts records read from the store: they start from nothing when they begin with its
    /// snapshot. Returns whether the state must be emptied before they are applied.
    mutating func noteRead(_ newer: BackendStoreRecords) -> Bool {
        let fromNothing = stateIsStale || newer.snapshotRecords != nil
        stateIsStale = false
        if let snapshotRecords = newer.snapshotRecords {
            (recordsSinceSnapshot, lastSnapshotSize) = (newer.records.count - snapshotRecords, snapshotRecords)
        } else {
            recordsSinceSnapshot += newer.records.count
        }
        return fromNothing
    }

    /// The state as records (what a compacted journal holds, after a purge), when a snapshot is
    /// due once `written` more records are committed: the commit writes it in place of the
    /// records before it.
    mutating func snapshotDue(written: Int, state: inout BackendState, now: Date, configuration: BackendConfiguration,
                              logger: Logger) -> [String]? {
        recordsSinceSnapshot += written
        guard recordsSinceSnapshot >= max(configuration.storeSnapshotEvery, lastSnapshotSize) else { return nil }
        state.purge(now: now, configuration: configuration)
        do { return try state.records.map(BackendJournal.text) } catch {
            logger.error("no snapshot: a record cannot be written as JSON", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// A snapshot of `size` records was committed at ``position``.
    mutating func snapshotWritten(size: Int) {
        (recordsSinceSnapshot, lastSnapshotSize) = (0, size)
    }
}

/// A change waiting for its node's next batch: its body (run in the batch), how its caller is
/// answered, and how it is told to run the next batch itself.
struct QueuedChange {
    let run: () -> Void
    let finish: (IdentityToolkitError?) -> Void
    let lead: () -> Void
}
