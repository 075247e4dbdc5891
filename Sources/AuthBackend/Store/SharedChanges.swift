import IdentityToolkitAPI
import Lifecycle
import Utilities
import Crypto
import CryptoExtras
import Foundation
import Logging

/// A backend that is one node of a fleet: its rules run on rows of the fleet's state, loaded from
/// the store as they read them (``BackendStore``), never on a copy of every node's history.
extension IdentityToolkit {
    /// Opens `store` (its schema, the fleet's ID-token key) and returns a backend whose every
    /// change goes through it.
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
        try await toolkit.adoptLegacyRecords()
        try await toolkit.reading { _ in }
        return toolkit
    }

    /// The first node of this authsim on a store an older authsim's fleet kept as records: their
    /// state, rebuilt once (purged of what expired), becomes the fleet's rows, in one commit that
    /// refuses if another node did it first; then the records go.
    private func adoptLegacyRecords() async throws {
        guard let store = fleet?.store, let records = try await store.legacyRecords() else { return }
        // A fleet node's state, so that the outbox and the silent pushes are rows too.
        var state = BackendState(reads: StateReads())
        for text in records { state.apply(try BackendJournal.record(text)) }
        state.purge(now: clock.now, configuration: configuration)
        var batch = RowBatch()
        for row in try state.allRows() {
            batch.read[row.key] = 0
            batch.writes.append((row, state.expiry(of: row, configuration: configuration)))
        }
        if case .committed = try await store.commit(batch) {
            try await store.forgetLegacyRecords()
            logger.notice("the fleet's records, as an older authsim kept them, are rows now",
                          metadata: ["store": "\(store.address)", "records": "\(records.count)", "rows": "\(batch.writes.count)"])
        }
    }

    /// Closes the shared store's connections, once the server no longer answers (the journal has
    /// nothing to close): as a part of a group, the backend's state stops after its server.
    package func shutdown() async {
        await fleet?.store.close()
    }

    /// Runs `call`, one change of the fleet's state, in the node's next batch: its rules run on the
    /// rows they read, loaded from the store, and the rows they change are written in one commit
    /// that holds those rows' locks and checks that every row read is as it was read, before any
    /// change of the batch answers or tells of its events. A store that cannot be reached is 503
    /// `UNAVAILABLE` for every call of the batch, never an answer whose rows were not kept.
    ///
    /// Batching is group commit (``GroupCommit``, the state machine that says who leads and what
    /// each batch takes): one commit serves as many requests as arrived while the previous batch
    /// was committing. Here is only what the machine decides, done: each change's body and how its
    /// caller is woken, kept by its ID.
    func sharedChange<T>(_ call: (inout CoreCall) throws(IdentityToolkitError) -> T) async throws(IdentityToolkitError) -> T {
        // The call runs before this function returns (a batch runs it, then answers us; its
        // entry is removed before that), so it never outlives the call.
        let outcome: Result<T, IdentityToolkitError> = await withoutActuallyEscaping(call) { call in
            let waiter = ChangeWaiter<T>()
            // The same bytes each time the batch runs the call's rules (RecordedRandom).
            let random = RecordedRandom()
            var id: GroupCommit.ChangeID = 0
            let leads = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                waiter.continuation = continuation
                guard let arrival = fleet?.commits.arrive() else { return waiter.wake(leads: false) }
                id = arrival.id
                fleet?.changes[id] = QueuedChange(
                    run: {
                        random.rewind()
                        waiter.outcome = self.core.handle(now: self.clock.now, random: random.source, call)
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

    /// The leader's batch: run in the store turn, then every change of it answered and the next
    /// leader woken, as the machine says.
    private func runChangeBatch(leader: GroupCommit.ChangeID) async {
        let storeError = await withStoreTurn { () async -> IdentityToolkitError? in
            guard let batch = try? fleet?.commits.startBatch(by: leader) else {
                return IdentityToolkitError(.internal, "change \(leader) was told to lead and could not start a batch: this is a bug in authsim")
            }
            do throws(IdentityToolkitError) {
                try await runOnRows(commit: true) { [self] in for id in batch { fleet?.changes[id]?.run() } }
                return nil
            } catch {
                return error
            }
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

    /// Runs `body` (which reads the core's state) on the rows of the fleet's state it reads, and
    /// gives back what it returned; outside a fleet, on the state as it is.
    func reading<R>(_ body: (BackendState) throws(IdentityToolkitError) -> R) async throws(IdentityToolkitError) -> R {
        guard fleet != nil else { return try body(core.state) }
        let result = RunResult<Result<R, IdentityToolkitError>>()
        try await withoutActuallyEscaping(body) { body async throws(IdentityToolkitError) in
            try await onRows { result.value = Result { () throws(IdentityToolkitError) -> R in try body(self.core.state) } }
        }
        guard let result = result.value else { throw IdentityToolkitError(.internal, "a read that did not run") }
        return try result.get()
    }

    /// Runs `body`, which reads the core (its state), on the rows of the fleet's state it reads
    /// (a fleet node's reads; nothing is written).
    func onRows(_ body: () -> Void) async throws(IdentityToolkitError) {
        try await withStoreTurn { () async throws(IdentityToolkitError) in try await runOnRows(commit: false, body) }
    }

    /// The most times a batch runs its rules before it gives up (503): each run after the first
    /// follows rows it lacked or rows another node changed meanwhile.
    static let mostRuns = 64

    /// Runs `body`, the rules of a batch or a read, on a state that holds only rows of the fleet's:
    /// each row or table the rules read and the state lacks is loaded, and they run again, until
    /// they lack nothing. With `commit`, the rows they changed are then written if every row
    /// read is still as read; if not, the rows that changed are loaded and they run again. What
    /// `body` left (the callers' outcomes) is its last run's.
    private func runOnRows(commit: Bool, _ body: () -> Void) async throws(IdentityToolkitError) {
        guard let store = fleet?.store else { throw IdentityToolkitError(.internal, "no shared store") }
        let reads = StateReads()
        var held = BackendState(reads: reads)
        var versions: [String: Int64] = [:]
        // The core as the batch found it: each run starts from it (the rules' settings, as an
        // adopted project config, are the core's; its state is the rows held).
        var adopted = core
        adopted.state = BackendState()
        var done = false
        defer {
            // The last run's core stays if the batch was kept (a config it adopted); else the core
            // as the batch found it, but for the fleet's config adopted meanwhile. No rows stay.
            if !done { core = adopted }
            core.state = BackendState()
        }
        for _ in 0..<Self.mostRuns {
            reads.clearMisses()
            // Every run reads the fleet's project config, and adopts it once it is loaded.
            if let config = held.sharedConfig[BackendState.sharedConfigKey], config != fleet?.adoptedConfig {
                adopted.adopt(config)
                fleet?.adoptedConfig = config
            }
            core = adopted
            core.state = held
            body()
            if reads.hasMisses {
                let (keys, prefixes, loose) = (Array(reads.missing), Array(reads.missingWhole), Array(reads.missingLoose))
                let rows: [VersionedRow]
                var looseRows: [VersionedRow] = []
                do throws(SharedStoreError) {
                    rows = try await store.rows(keys: keys, under: prefixes)
                    if !loose.isEmpty { looseRows = try await store.rows(keys: [], under: loose) }
                } catch {
                    throw storeUnavailable(error, while: "reading \(keys.count) row(s) and \(prefixes.count + loose.count) table(s)")
                }
                // Put in as they are, with no version: the commit does not check them.
                for row in looseRows where versions[row.key] == nil { try held.loadRow(StateRow(key: row.key, text: row.text)) }
                reads.loadedLoosely(loose)
                var found: [String: VersionedRow] = [:]
                for row in rows { found[row.key] = row }
                for key in keys where found[key] == nil { found[key] = VersionedRow(key: key, version: 0, text: nil) }
                try load(found.values, into: &held, versions: &versions)
                reads.hold(rows: found.keys, whole: prefixes)
                continue
            }
            noteSeen(versions.values.max() ?? 0)
            let changed = commit ? try core.state.changedRows() : []
            guard !changed.isEmpty else {
                done = true
                return
            }
            var batch = RowBatch()
            batch.read = versions
            for row in changed where batch.read[row.key] == nil { batch.read[row.key] = 0 }
            batch.whole = Array(reads.loadedWhole)
            batch.writes = changed.map { ($0, core.state.expiry(of: $0, configuration: configuration)) }
            let outcome: RowCommit
            do throws(SharedStoreError) { outcome = try await store.commit(batch) } catch {
                throw storeUnavailable(error, while: "writing \(changed.count) row(s)")
            }
            switch outcome {
            case .committed(let version):
                noteSeen(version)
                done = true
                await dropExpiredRows()
                return
            case .stale(let rows):
                try load(rows, into: &held, versions: &versions)
            }
        }
        logger.error("a batch ran its rules \(Self.mostRuns) times and still found rows changed by other nodes; answering 503 UNAVAILABLE")
        throw IdentityToolkitError.unavailable()
    }

    /// Raises the highest row version this node has seen (the position its events carry) to `version`.
    private func noteSeen(_ version: Int64) {
        // (A local first: `fleet?.x = f(fleet)` reads fleet inside its own modification.)
        let seen = max(fleet?.lastVersion ?? 0, version)
        fleet?.lastVersion = seen
    }

    /// Once a minute, after a commit: the rows past their expiry go (what a journal's state
    /// purges), so that the store holds what a sign-in leaves for its lifetime and retention, not
    /// every sign-in ever. A store that cannot do it now costs the batch nothing; the next commit tries.
    private func dropExpiredRows() async {
        let now = clock.now
        guard let store = fleet?.store, let due = fleet?.nextExpiry, now >= due else { return }
        fleet?.nextExpiry = now.addingTimeInterval(60)
        do throws(SharedStoreError) {
            let dropped = try await store.dropExpired(before: now)
            if dropped > 0 { logger.debug("expired rows dropped", metadata: ["rows": "\(dropped)"]) }
        } catch {
            logger.warning("the expired rows could not be dropped now; the next commit after a minute tries again", metadata: ["cause": "\(error.message)"])
        }
    }

    /// Puts rows read from the store in `state`, and their versions in `versions`.
    private func load(_ rows: some Sequence<VersionedRow>, into state: inout BackendState, versions: inout [String: Int64]) throws(IdentityToolkitError) {
        for row in rows {
            do throws(IdentityToolkitError) { try state.loadRow(StateRow(key: row.key, text: row.text)) } catch {
                logger.critical("a row in the fleet's store is not one this node reads; it stops answering until it is upgraded",
                                metadata: ["store": "\(fleet?.store.address ?? "")", "row": "\(row.key)", "error": "\(error.message)"])
                throw IdentityToolkitError(.stateFormat, "\(error.message) (a node of a newer authsim wrote it? Upgrade this node: docs/fleet.md, upgrading)",
                                           status: 500)
            }
            versions[row.key] = row.version
        }
    }

    private func storeUnavailable(_ error: SharedStoreError, while doing: String) -> IdentityToolkitError {
        logger.error("the shared store failed \(doing); answering 503 UNAVAILABLE",
                     metadata: ["store": "\(fleet?.store.address ?? "")", "cause": "\(error.message)"])
        return IdentityToolkitError.unavailable()
    }

    /// Runs `body` holding the node's store turn (one batch or read of the store at a time), on
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

/// What the last run of a read's rules gave (``IdentityToolkit/reading(_:)``): made, set and read on the actor.
final class RunResult<T>: @unchecked Sendable {
    var value: T?
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
