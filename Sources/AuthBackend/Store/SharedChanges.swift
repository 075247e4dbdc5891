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
            throw BackendStoreError(.corrupt, "\(store.address) holds an ID-token key that is not an RSA private key in PEM: \(error)")
        }
        let toolkit = try IdentityToolkit(configuration: configuration, pusher: pusher, clock: clock, store: store, key: key,
                                          observer: observer, logger: logger)
        try await toolkit.readShared()
        return toolkit
    }

    /// Runs `body`, one change of the backend's state, and keeps what it wrote.
    ///
    /// Without a shared store this is `body()`: the journal writes as the rules commit. With one,
    /// it takes the fleet's write turn, replays what other nodes wrote, runs `body`, and commits
    /// its records in one transaction before returning, also when `body` throws after writing (a
    /// wrong code counts even though the answer is an error). A store that cannot be reached is
    /// 503 `UNAVAILABLE`, never an answer whose records were not kept.
    func change<T>(_ body: () throws(IdentityToolkitError) -> T) async throws(IdentityToolkitError) -> T {
        guard let sharedStore else { return try body() }
        await takeStoreTurn()
        defer { giveStoreTurn() }
        let change: any BackendStoreChange
        do { change = try await sharedStore.beginChange(after: stateIsStale ? 0 : storePosition) } catch {
            throw storeUnavailable(error, while: "starting a change")
        }
        do { try replay(change.newer) } catch {
            await change.abandon()
            throw error
        }
        pendingRecords = []
        let outcome = Result { () throws(IdentityToolkitError) -> T in try body() }
        let records = pendingRecords ?? []
        pendingRecords = nil
        if records.isEmpty {
            await change.abandon()
        } else {
            do { storePosition = try await change.commit(records) } catch {
                // The records are in this node's state; whether the store has them is unknown.
                stateIsStale = true
                throw storeUnavailable(error, while: "writing \(records.count) record(s)")
            }
        }
        return try outcome.get()
    }

    /// Brings ``state`` up to the store's last record, for an answer that only reads.
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

    /// Applies what other nodes wrote; from nothing when ``stateIsStale``.
    private func replay(_ newer: BackendStoreRecords) throws(IdentityToolkitError) {
        if stateIsStale {
            state = BackendState()
            stateIsStale = false
        }
        let config = state.projectConfig
        for text in newer.records { state.apply(try BackendJournal.record(text)) }
        storePosition = newer.position
        if let changed = state.projectConfig, changed != config { adopt(changed) }
    }

    private func storeUnavailable(_ error: BackendStoreError, while doing: String) -> IdentityToolkitError {
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
