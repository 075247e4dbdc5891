import IdentityToolkitAPI
import Utilities
import Crypto
import CryptoExtras
import Foundation
import Logging

/// A backend that is one node of a fleet: its rules run on the fleet's records (``BackendStore``).
extension IdentityToolkit {
    /// Opens `store` (its schema, the fleet's ID-token key), replays its records, and returns a
    /// backend whose every change goes through it.
    public static func open(configuration: BackendConfiguration = BackendConfiguration(), pusher: (any SilentPusher)?,
                            clock: any WallClock = SystemWallClock(), store: any BackendStore,
                            observer: (@Sendable (BackendEvent) -> Void)? = nil,
                            logger: Logger = Logger(label: "authsim.backend", factory: { _ in SwiftLogNoOpLogHandler() })) async throws -> IdentityToolkit {
        let pem = try await store.open(projectID: configuration.projectID, candidateKeyPEM: IDTokenSigner.processKey.pemRepresentation)
        let key: _RSA.Signing.PrivateKey
        do { key = try _RSA.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw SharedStoreError(.corrupt, "\(store.address) holds an ID-token key that is not an RSA private key in PEM: \(error)")
        }
        let applePEM = try await store.appleKey(projectID: configuration.projectID, candidatePEM: AppleIDProvider.processKeyPEM)
        let appleKey: _RSA.Signing.PrivateKey
        do { appleKey = try _RSA.Signing.PrivateKey(pemRepresentation: applePEM) } catch {
            throw SharedStoreError(.corrupt, "\(store.address) holds an Apple signing key that is not an RSA private key in PEM: \(error)")
        }
        let toolkit = try IdentityToolkit(configuration: configuration, pusher: pusher, clock: clock, store: store, key: key,
                                          appleKey: appleKey, observer: observer, logger: logger)
        try await toolkit.readShared()
        return toolkit
    }

    /// Closes the shared store's connections, once the server no longer answers (the journal has
    /// nothing to close).
    public func closeStore() async {
        await sharedStore?.close()
    }

    /// Runs `call`, one change of the fleet's state, in the node's next batch
    /// (``runChangeBatches()``): one transaction that takes the fleet's write turn, replays what
    /// other nodes wrote, runs the batch's calls one after the other, and commits all their
    /// records before any of them answers or tells of its events. A store that cannot be reached
    /// is 503 `UNAVAILABLE` for every call of the batch, never an answer whose records were not kept.
    ///
    /// Batching is group commit: the four round trips and the flush of one transaction serve as
    /// many requests as arrived while the previous batch was committing, so the fleet's write turn
    /// is held once per batch rather than once per request.
    func sharedChange<T>(_ call: (inout BackendCore) throws(IdentityToolkitError) -> T) async throws(IdentityToolkitError) -> T {
        // The call runs before this function returns (the batch runs it, then resumes us), so it
        // never outlives the call.
        let outcome: Result<T, IdentityToolkitError> = await withoutActuallyEscaping(call) { call in
            await withCheckedContinuation { (continuation: CheckedContinuation<ActorBound<Result<T, IdentityToolkitError>>, Never>) in
                let box = OutcomeBox<T>()
                queuedChanges.append(QueuedChange(
                    run: {
                        let outcome = self.core.handle(now: self.clock.now, call)
                        do throws(IdentityToolkitError) {
                            var texts: [String] = []
                            for record in outcome.records { texts.append(try BackendJournal.text(record)) }
                            self.pendingRecords?.append(contentsOf: texts)
                            box.outcome = outcome
                        } catch {
                            // The records are in this node's state and cannot be written: rebuilt from the store next.
                            self.stateIsStale = true
                            box.outcome = CoreOutcome(answer: .failure(error), records: [], events: [], logs: outcome.logs)
                        }
                    },
                    finish: { storeError in
                        let answer: Result<T, IdentityToolkitError>
                        if let storeError {
                            answer = .failure(storeError)
                        } else if let outcome = box.outcome {
                            self.tell(outcome)
                            answer = outcome.answer
                        } else {
                            answer = .failure(IdentityToolkitError(.internal, "a change that did not run"))
                        }
                        continuation.resume(returning: ActorBound(value: answer))
                    }))
                if !changeBatchesRunning {
                    changeBatchesRunning = true
                    Task { await self.runChangeBatches() }
                }
            }.value
        }
        return try outcome.get()
    }

    /// Runs the queued changes, a batch at a time, until none is left.
    private func runChangeBatches() async {
        while !queuedChanges.isEmpty {
            await takeStoreTurn()
            var batch = queuedChanges
            queuedChanges = []
            let storeError = await runBatch(batch)
            giveStoreTurn()
            let finishes = batch.map(\.finish)
            batch = []  // The bodies go before their callers resume (withoutActuallyEscaping checks it).
            for finish in finishes { finish(storeError) }
        }
        changeBatchesRunning = false
    }

    /// One transaction for `batch`: nil when its records are kept, else the error every change of it answers.
    private func runBatch(_ batch: [QueuedChange]) async -> IdentityToolkitError? {
        guard let sharedStore else { return IdentityToolkitError(.internal, "no shared store") }
        let change: any BackendStoreChange
        do { change = try await sharedStore.beginChange(after: stateIsStale ? 0 : storePosition) } catch {
            return storeUnavailable(error, while: "starting a change")
        }
        do { try replay(change.newer) } catch {
            await change.abandon()
            return error
        }
        pendingRecords = []
        for queued in batch { queued.run() }
        let records = pendingRecords ?? []
        pendingRecords = nil
        if records.isEmpty {
            await change.abandon()
            return nil
        }
        recordsSinceSnapshot += records.count
        let snapshot = snapshotDue()
        do { storePosition = try await change.commit(records, snapshot: snapshot) } catch {
            // The records are in this node's state; whether the store has them is unknown.
            stateIsStale = true
            return storeUnavailable(error, while: "writing \(records.count) record(s) of \(batch.count) change(s)")
        }
        if let snapshot {
            logger.info("snapshot of the fleet's state written; the records before it are gone",
                        metadata: ["position": "\(storePosition)", "records": "\(snapshot.count)", "replaced": "\(recordsSinceSnapshot)"])
            (recordsSinceSnapshot, lastSnapshotSize) = (0, snapshot.count)
        }
        return nil
    }

    /// The state as records (what a compacted journal holds, after a purge), when a snapshot is
    /// due: this batch's commit writes it in place of the records before it.
    private func snapshotDue() -> [String]? {
        guard recordsSinceSnapshot >= max(configuration.storeSnapshotEvery, lastSnapshotSize) else { return nil }
        core.state.purge(now: clock.now, configuration: configuration)
        do { return try core.state.records.map(BackendJournal.text) } catch {
            logger.error("no snapshot: a record cannot be written as JSON", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Brings the core's state up to the store's last record, for an answer that only reads.
    func readShared() async throws(IdentityToolkitError) {
        guard let sharedStore else { return }
        await takeStoreTurn()
        defer { giveStoreTurn() }
        let newer: BackendStoreRecords
        do { newer = try await sharedStore.records(after: stateIsStale ? 0 : storePosition) } catch {
            throw storeUnavailable(error, while: "reading")
        }
        try replay(newer)
    }

    /// Applies what other nodes wrote; from nothing when ``stateIsStale``, or when they start with
    /// the store's snapshot (this node was behind it).
    private func replay(_ newer: BackendStoreRecords) throws(IdentityToolkitError) {
        if stateIsStale || newer.snapshotRecords != nil {
            core.state = BackendState()
            stateIsStale = false
        }
        if let snapshotRecords = newer.snapshotRecords {
            (recordsSinceSnapshot, lastSnapshotSize) = (newer.records.count - snapshotRecords, snapshotRecords)
        } else {
            recordsSinceSnapshot += newer.records.count
        }
        let config = core.state.projectConfig
        for text in newer.records { core.state.apply(try BackendJournal.record(text)) }
        storePosition = newer.position
        if let changed = core.state.projectConfig, changed != config { core.adopt(changed) }
    }

    private func storeUnavailable(_ error: SharedStoreError, while doing: String) -> IdentityToolkitError {
        logger.error("the shared store failed \(doing); answering 503 UNAVAILABLE",
                     metadata: ["store": "\(sharedStore?.address ?? "")", "cause": "\(error.message)"])
        return IdentityToolkitError.unavailable()
    }

    private func takeStoreTurn() async {
        guard storeTurnTaken else {
            storeTurnTaken = true
            return
        }
        await withCheckedContinuation { storeTurnWaiters.append($0) }
    }

    /// Hands the turn to the next waiter, or frees it.
    private func giveStoreTurn() {
        if storeTurnWaiters.isEmpty { storeTurnTaken = false } else { storeTurnWaiters.removeFirst().resume() }
    }
}

/// A change waiting for its node's next batch: its body (run in the batch), and how its caller is answered.
struct QueuedChange {
    let run: () -> Void
    let finish: (IdentityToolkitError?) -> Void
}

/// An outcome handed from the batch to its caller: made on the actor and read on it (both
/// ``IdentityToolkit/change(_:)`` and the batch are the actor's), though the continuation between
/// them asks for Sendable values; a sign-in's outcome holds a closure, which is not.
struct ActorBound<Value>: @unchecked Sendable {
    let value: Value
}

/// Where a queued call leaves its outcome until the batch commits.
final class OutcomeBox<T> {
    var outcome: CoreOutcome<T>?
}
