import Foundation
import IdentityToolkitAPI

/// What a fleet's node knows of the fleet's store (``BackendStore``), and the changes waiting for
/// its next batch: the latest version of the fleet's rows it has seen (the order its events carry),
/// the project config it adopted, and whose turn it is to talk to the store.
///
/// A value the ``IdentityToolkit`` actor holds beside its ``BackendCore``; the actor's extension in
/// SharedChanges.swift runs the batches with it, as ``GroupCommit`` decides them. A batch does not
/// react to its leader's cancellation (the store runs each query in a task of its own), so a
/// cancelled call never fails the others of its batch.
struct FleetLedger {
    let store: any BackendStore
    /// The highest version of a row this node has read or written: a commit's version is drawn
    /// after the locks of the rows it read, so a change that read another's rows comes after it.
    var lastVersion: Int64 = 0
    /// The fleet's project config as this node's core adopted it (nil: none set).
    var adoptedConfig: SharedProjectConfig?
    /// When this node next deletes the fleet's expired rows (after a commit, once a minute).
    var nextExpiry: Date = .distantPast
    /// Who leads the node's batches and what each takes (``GroupCommit``), and the waiting
    /// changes' bodies and callers by ID.
    var commits = GroupCommit()
    var changes: [GroupCommit.ChangeID: QueuedChange] = [:]
    /// One batch or read of the store at a time on this node (the actor is re-entered while a
    /// batch waits for the database): a taken flag and the waiters, in order.
    private var turnTaken = false
    private var turnWaiters: [CheckedContinuation<Void, Never>] = []

    init(store: any BackendStore) {
        self.store = store
    }

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
}

/// A change waiting for its node's next batch: its body (run in the batch, once per run of its
/// rules), how its caller is answered, and how it is told to run the next batch itself.
struct QueuedChange {
    let run: () -> Void
    let finish: (IdentityToolkitError?) -> Void
    let lead: () -> Void
}
