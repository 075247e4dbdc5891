import IdentityToolkitAPI
import Lifecycle
import Utilities
import Crypto
import CryptoExtras
import Foundation
import Logging

/// A backend that is one node of a fleet: its rules run on the fleet's records (``BackendStore``).
extension IdentityToolkit {
    /// Opens `store` (its schema, the fleet's ID-token key), replays its records, and returns a
    /// backend whose every change goes through it.
    package static func open(configuration: BackendConfiguration = BackendConfiguration(), pusher: (any SilentPusher)?,
                            clock: any WallClock = SystemWallClock(), store: any BackendStore,
                            observer: (@Sendable (BackendEvent, SignInID?) -> Void)? = nil,
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
    /// nothing to close): as a part of a group, the backend's state stops after its server.
    package func shutdown() async {
        await fleet?.store.close()
    }

    /// Runs `call`, one change of the fleet's state, in the node's next batch: one transaction
    /// that takes the fleet's write turn, replays what other nodes wrote, runs the batch's calls
    /// one after the other, and commits all their records before any of them answers or tells of
    /// its events. A store that cannot be reached is 503 `UNAVAILABLE` for every call of the
    /// batch, never an answer whose records were not kept.
    ///
    /// Batching is group commit (``GroupCommit``, the state machine that says who leads and what
    /// each batch takes): the four round trips and the flush of one transaction serve as many
    /// requests as arrived while the previous batch was committing, so the fleet's write turn is
    /// held once per batch rather than once per request. Here is only what the machine decides,
    /// done: each change's body and how its caller is woken, kept by its ID.
    func sharedChange<T>(_ call: (inout CoreCall) throws(IdentityToolkitError) -> T) async throws(IdentityToolkitError) -> T {
        // The call runs before this function returns (a batch runs it, then answers us; its
        // entry is removed before that), so it never outlives the call.
        let outcome: Result<T, IdentityToolkitError> = await withoutActuallyEscaping(call) { call in
            let waiter = ChangeWaiter<T>()
            var id: GroupCommit.ChangeID = 0
            let leads = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                waiter.continuation = continuation
                guard let arrival = fleet?.commits.arrive() else { return waiter.wake(leads: false) }
                id = arrival.id
                fleet?.changes[id] = QueuedChange(
                    run: {
                        let outcome = self.core.handle(now: self.clock.now, call)
                        do throws(IdentityToolkitError) {
                            var texts: [String] = []
                            for record in outcome.records { texts.append(try BackendJournal.text(record)) }
                            self.fleet?.pendingRecords?.append(contentsOf: texts)
                            waiter.outcome = outcome
                        } catch {
                            // The records are in this node's state and cannot be written: rebuilt from the store next.
                            self.fleet?.stateIsStale = true
                            waiter.outcome = CoreOutcome(answer: .failure(error), records: [], events: [], logs: outcome.logs)
                        }
                    },
                    finish: { storeError in
                        if let storeError {
                            waiter.answer = .failure(storeError)
                        } else if let outcome = waiter.outcome {
                            self.tell(outcome)
                            waiter.answer = outcome.answer
                        } else {
                            waiter.answer = .failure(IdentityToolkitError(.internal, "a change that did not run"))
                        }
                        waiter.wake(leads: false)
                    },
                    lead: { waiter.wake(leads: true) })
                if arrival.1 == .lead { waiter.wake(leads: true) }
            }
            if leads { await runChangeBatch(leader: id) }
            return waiter.answer ?? .failure(IdentityToolkitError(.internal, "a change that was not answered"))
        }
        return try outcome.get()
    }

    /// The leader's batch: started and run in the store turn, then every change of it answered and
    /// the next leader woken, as the machine says.
    private func runChangeBatch(leader: GroupCommit.ChangeID) async {
        let storeError = await withStoreTurn { () async -> IdentityToolkitError? in
            guard let batch = try? fleet?.commits.startBatch(by: leader) else {
                return IdentityToolkitError(.internal, "change \(leader) was told to lead and could not start a batch: this is a bug in authsim")
            }
            return await runBatch(batch)
        }
        guard let end = try? fleet?.commits.endBatch(by: leader) else {
            logger.critical("change \(leader) could not end its batch: this is a bug in authsim")
            return
        }
        // Each entry goes (its body with it) before its caller resumes: withoutActuallyEscaping checks it.
        let finishes = end.answer.compactMap { fleet?.changes.removeValue(forKey: $0)?.finish }
        for finish in finishes { finish(storeError) }
        if let next = end.nextLeader { fleet?.changes[next]?.lead() }
    }

    /// One transaction for `batch`: nil when its records are kept, else the error every change of it answers.
    private func runBatch(_ batch: [GroupCommit.ChangeID]) async -> IdentityToolkitError? {
        guard let store = fleet?.store, let after = fleet?.readPosition else { return IdentityToolkitError(.internal, "no shared store") }
        let change: any BackendStoreChange
        do { change = try await store.beginChange(after: after) } catch {
            return storeUnavailable(error, while: "starting a change")
        }
        do { try replay(change.newer) } catch {
            await change.abandon()
            return error
        }
        fleet?.pendingRecords = []
        for id in batch { fleet?.changes[id]?.run() }
        let records = fleet?.pendingRecords ?? []
        fleet?.pendingRecords = nil
        if records.isEmpty {
            await change.abandon()
            return nil
        }
        let snapshot = fleet?.snapshotDue(written: records.count, state: &core.state, now: clock.now, configuration: configuration, logger: logger)
        do {
            let position = try await change.commit(records, snapshot: snapshot)
            fleet?.position = position
        } catch {
            // The records are in this node's state; whether the store has them is unknown.
            fleet?.stateIsStale = true
            return storeUnavailable(error, while: "writing \(records.count) record(s) of \(batch.count) change(s)")
        }
        if let snapshot {
            logger.info("snapshot of the fleet's state written; the records before it are gone",
                        metadata: ["position": "\(storePosition)", "records": "\(snapshot.count)",
                                   "replaced": "\(fleet?.recordsSinceSnapshot ?? 0)"])
            fleet?.snapshotWritten(size: snapshot.count)
        }
        return nil
    }

    /// Brings the core's state up to the store's last record, for an answer that only reads.
    func readShared() async throws(IdentityToolkitError) {
        guard let store = fleet?.store else { return }
        try await withStoreTurn { () async throws(IdentityToolkitError) in
            let newer: BackendStoreRecords
            do throws(SharedStoreError) { newer = try await store.records(after: fleet?.readPosition ?? 0) } catch {
                throw storeUnavailable(error, while: "reading")
            }
            try replay(newer)
        }
    }

    /// Applies what other nodes wrote; from nothing when the state is stale, or when they start
    /// with the store's snapshot (this node was behind it).
    private func replay(_ newer: BackendStoreRecords) throws(IdentityToolkitError) {
        if fleet?.noteRead(newer) == true { core.state = BackendState() }
        let config = core.state.projectConfig
        for text in newer.records {
            let record: BackendRecord
            do { record = try BackendJournal.record(text) } catch {
                logger.critical("a record in the fleet's store is not one this node reads; it stops answering until it is upgraded",
                                metadata: ["store": "\(fleet?.store.address ?? "")", "error": "\(error.message)"])
                throw IdentityToolkitError(.stateFormat, "a record in the fleet's store is not one this authsim (\(AuthsimVersion.current)) reads: "
                                           + "a node of a newer authsim wrote it? Upgrade this node (docs/fleet.md, upgrading). \(error.message)", status: 500)
            }
            core.state.apply(record)
        }
        fleet?.position = newer.position
        if let changed = core.state.projectConfig, changed != config { core.adopt(changed) }
    }

    private func storeUnavailable(_ error: SharedStoreError, while doing: String) -> IdentityToolkitError {
        logger.error("the shared store failed \(doing); answering 503 UNAVAILABLE",
                     metadata: ["store": "\(fleet?.store.address ?? "")", "cause": "\(error.message)"])
        return IdentityToolkitError.unavailable()
    }

    /// Runs `body` holding the node's store turn (one change or read of the store at a time), on
    /// the global executor rather than the event loop the call came in on (the backend's
    /// connections run on theirs): the turn is held over round trips to the store, and each would
    /// resume there behind the loop's other reads.
    private func withStoreTurn<R, E: Error>(_ body: () async throws(E) -> R) async throws(E) -> R {
        try await withTaskExecutorPreference(globalConcurrentExecutor) { () async throws(E) -> R in
            if fleet?.takeTurnIfFree() == false { await withCheckedContinuation { fleet?.waitForTurn($0) } }
            defer { fleet?.giveTurn() }
            return try await body()
        }
    }
}

/// A change's caller while it waits for a batch: what its call made, its answer, and how it is
/// woken (to read its answer, or to run the next batch). Made, read and woken on the actor.
final class ChangeWaiter<T> {
    var outcome: CoreOutcome<T>?
    var answer: Result<T, IdentityToolkitError>?
    var continuation: CheckedContinuation<Bool, Never>?

    func wake(leads: Bool) {
        continuation?.resume(returning: leads)
        continuation = nil
    }
}

extension IdentityToolkit: RunningPart {
    package nonisolated var description: String { "the backend's state" }
}
