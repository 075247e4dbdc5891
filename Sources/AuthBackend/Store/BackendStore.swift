import Foundation
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
package protocol BackendStore: Sendable {
    /// The store's address for messages: no password.
    var address: String { get }

    /// Checks (and creates or migrates) the store's schema for the backend of `projectID`, and
    /// returns the fleet's ID-token signing key (PEM): the stored one, or `candidateKeyPEM`, stored,
    /// when the fleet has none yet. Every node signs with it, so a token one issues every node accepts.
    func open(projectID: String, candidateKeyPEM: String) async throws(SharedStoreError) -> String

    /// The fleet's key for the simulated Apple's identity tokens (PEM), as ``open(projectID:candidateKeyPEM:)``
    /// gives the ID-token key: the stored one, or `candidatePEM`, stored. So an identity token one
    /// node's Apple sheet signed verifies on every node, and every node gives an Apple user one `sub`.
    func appleKey(projectID: String, candidatePEM: String) async throws(SharedStoreError) -> String

    /// The records after `position`, for a read (no write turn taken).
    func records(after position: Int64) async throws(SharedStoreError) -> BackendStoreRecords

    /// Starts a change: takes the fleet's write turn (no other node's change runs until this one
    /// ends) and returns the records after `position`, which the change's rules must see first.
    /// Exactly one of ``BackendStoreChange/commit(_:)`` and ``BackendStoreChange/abandon()`` ends it.
    func beginChange(after position: Int64) async throws(SharedStoreError) -> any BackendStoreChange

    /// The rows with these keys (``StateRow``'s), and every row under these prefixes, as committed
    /// now (no lock): what a batch loads when its rules missed them. A key with no row is not in
    /// the answer.
    func rows(keys: [String], under prefixes: [String]) async throws(SharedStoreError) -> [VersionedRow]

    /// Writes a batch's rows if every row it read is still as it read it, in one transaction that
    /// holds the rows' locks (shared for a row read, exclusive for one written or a prefix read
    /// whole); otherwise writes nothing and gives back the rows that changed since, to load before
    /// the rules run again.
    func commit(_ batch: RowBatch) async throws(SharedStoreError) -> RowCommit

    /// Closes the store's connections.
    func close() async
}

/// A row of the backend's state as a fleet's store holds it: its text (nil: no row) and the
/// version of its last change (0: no row).
package struct VersionedRow: Sendable, Hashable {
    package var key: String
    package var version: Int64
    package var text: String?
    package init(key: String, version: Int64, text: String?) {
        self.key = key
        self.version = version
        self.text = text
    }
}

/// What a batch read and what it writes (``BackendStore/commit(_:)``).
package struct RowBatch: Sendable {
    /// Every row the batch read, with the version it read (0: none), written rows included.
    package var read: [String: Int64] = [:]
    /// The prefixes the batch read whole (a table's, or a tenant's users').
    package var whole: [String] = []
    /// The rows it writes: their text (nil: deleted) and when the store may drop them (nil: never).
    package var writes: [(row: StateRow, expires: Date?)] = []
    package init() {}

    /// The prefix a row is read whole under: its table's, or for a tenant's users its tenant's.
    package static func prefix(of key: String) -> String {
        guard let slash = key.firstIndex(of: "/") else { return key }
        let table = key[..<slash]
        guard StateTableName(rawValue: String(table))?.isScoped == true,
              let scopeEnd = key[key.index(after: slash)...].firstIndex(of: "/") else { return String(key[...slash]) }
        return String(key[...scopeEnd])
    }
}

/// How a commit ended: written, at this version (the commit's place in the fleet's order), or not
/// written because these rows changed since the batch read them.
package enum RowCommit: Sendable, Equatable {
    case committed(version: Int64)
    case stale([VersionedRow])
}

/// A change in progress: the fleet's write turn is this node's.
package protocol BackendStoreChange: Sendable {
    /// What other nodes wrote since this node's position.
    var newer: BackendStoreRecords { get }
    /// Writes `records` after the fleet's last record and ends the change (its transaction
    /// commits); returns the position of the last record written. With `snapshot` (the records
    /// that rebuild the state as of that position), the store keeps it in place of every record
    /// up to that position.
    func commit(_ records: [String], snapshot: [String]?) async throws(SharedStoreError) -> Int64
    /// Ends the change without writing.
    func abandon() async
}

/// Records read from a store, and the position of the last one.
package struct BackendStoreRecords: Sendable {
    package var records: [String]
    package var position: Int64
    /// When the position asked for was before the store's snapshot: how many of the records are
    /// the snapshot's (the first ones). They rebuild the state from nothing.
    package var snapshotRecords: Int?
    package init(records: [String], position: Int64, snapshotRecords: Int? = nil) {
        self.records = records
        self.position = position
        self.snapshotRecords = snapshotRecords
    }
}

/// Where the nodes of a fleet keep their events (``BackendEvent``: what the inspector draws as
/// sign-ins), so that any node's inspector shows the whole fleet's (PostgreSQL, in
/// `PostgresStores`). Events are a view, not state: they are kept after the answer, in batches.
///
/// Each event carries the fleet position its node had reached when it was emitted (the backend
/// records it had replayed or written). A sign-in whose code was asked on one node and checked on
/// another reads in the order it happened when events are sorted by position: the second node
/// replayed the first node's change before its own, so its events carry a higher position.
package protocol BackendEventSink: Sendable {
    /// Queues `event`; never waits.
    func record(_ event: BackendEvent, signIn: SignInID?, position: Int64, at time: Date)
}

/// An event one node of a fleet kept (``BackendEventSink``), as read back.
package struct FleetBackendEvent: Sendable {
    package var node: String
    package var position: Int64
    package var time: Date
    /// The row's order in the store: ties of position and time are broken by it.
    package var sequence: Int64
    package var event: BackendEvent
    /// The sign-in it is a step of (``SignInID``).
    package var signIn: SignInID?

    package init(node: String, position: Int64, time: Date, sequence: Int64, event: BackendEvent, signIn: SignInID?) {
        self.node = node
        self.position = position
        self.time = time
        self.sequence = sequence
        self.event = event
        self.signIn = signIn
    }
}

/// An event as a fleet's store keeps it (`backend_events.event`): the event and its sign-in.
/// Rows from before sign-ins had IDs hold the event alone, and read as one with none.
package struct StoredBackendEvent: Codable, Sendable {
    package var event: BackendEvent
    package var signIn: SignInID?
    package init(event: BackendEvent, signIn: SignInID?) {
        self.event = event
        self.signIn = signIn
    }

    /// A row's JSON: this shape, or an older row's bare event.
    package static func decode(_ data: Data) throws -> StoredBackendEvent {
        let decoder = JSONDecoder()
        if let stored = try? decoder.decode(StoredBackendEvent.self, from: data) { return stored }
        return StoredBackendEvent(event: try decoder.decode(BackendEvent.self, from: data), signIn: nil)
    }
}
