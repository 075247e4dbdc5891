import IdentityToolkitAPI
import Utilities

/// Where a fleet of backends keeps what they share: every change their rules make, as
/// ``BackendRecord``s in one order that every node reads (PostgreSQL, in `PostgresStores`).
///
/// A node replays the records it has not seen before each change, so each rule (a code is spent
/// once, a receipt is used once, quotas count every node's SMS) runs on the fleet's state, not its
/// own; a change's records are written, in one transaction, before its answer goes out.
///
/// The journal on disk (``BackendJournal``) is the embedded default and is not one of these: one
/// backend's actor already gives its one order, and the journal appends without a round trip.
///
/// Records cross this seam as their JSON text (the journal's line, without the newline), so that
/// the record types stay the backend's own.
public protocol BackendStore: Sendable {
    /// The store's address for messages: no password.
    var address: String { get }

    /// Checks (and creates or migrates) the store's schema for the backend of `projectID`, and
    /// returns the fleet's ID-token signing key (PEM): the stored one, or `candidateKeyPEM`, stored,
    /// when the fleet has none yet. Every node signs with it, so a token one issues every node accepts.
    func open(projectID: String, candidateKeyPEM: String) async throws(SharedStoreError) -> String

    /// The records after `position`, for a read (no write turn taken).
    func records(after position: Int64) async throws(SharedStoreError) -> BackendStoreRecords

    /// Starts a change: takes the fleet's write turn (no other node's change runs until this one
    /// ends) and returns the records after `position`, which the change's rules must see first.
    /// Exactly one of ``BackendStoreChange/commit(_:)`` and ``BackendStoreChange/abandon()`` ends it.
    func beginChange(after position: Int64) async throws(SharedStoreError) -> any BackendStoreChange

    /// Closes the store's connections.
    func close() async
}

/// A change in progress: the fleet's write turn is this node's.
public protocol BackendStoreChange: Sendable {
    /// What other nodes wrote since this node's position.
    var newer: BackendStoreRecords { get }
    /// Writes `records` after the fleet's last record and ends the change (its transaction
    /// commits); returns the position of the last record written.
    func commit(_ records: [String]) async throws(SharedStoreError) -> Int64
    /// Ends the change without writing.
    func abandon() async
}

/// Records read from a store, and the position of the last one.
public struct BackendStoreRecords: Sendable {
    public var records: [String]
    public var position: Int64
    public init(records: [String], position: Int64) {
        self.records = records
        self.position = position
    }
}
