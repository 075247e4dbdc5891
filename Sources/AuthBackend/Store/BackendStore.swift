import Foundation
import IdentityToolkitAPI
import Utilities

/// Where a fleet of backends keeps what they share: the backend's state as rows (``StateRow``: a
/// receipt, a session, a user, an index of users, …), each with the version of its last change
/// (PostgreSQL, in `PostgresStores`).
///
/// A node's rules run on the rows they read, loaded as they read them, and a batch's changed rows
/// are written only if every row it read is still as read, under those rows' locks: so each rule (a
/// code is spent once, a receipt is used once, quotas count every node's SMS) runs on the fleet's
/// state, and no node replays another's work. A batch's rows are written before its answers go out.
///
/// The journal on disk (``BackendJournal``) is the embedded default and is not one of these: one
/// backend's actor already gives its one order, and the journal appends without a round trip.
///
/// Rows cross this seam as JSON text, so that the state's types stay the backend's own.
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

    /// The records a fleet of an older authsim kept (its snapshot, then the records after it), when
    /// the store holds no rows yet; nil when it holds rows, or nothing at all. A node that gets
    /// them rebuilds the state from them and commits it as rows (``forgetLegacyRecords()`` then).
    func legacyRecords() async throws(SharedStoreError) -> [String]?

    /// Deletes the older fleet's records, once their state is rows.
    func forgetLegacyRecords() async throws(SharedStoreError)

    /// The rows with these keys (``StateRow``'s), and every row under these prefixes, as committed
    /// now (no lock): what a batch loads when its rules missed them. A key with no row is not in
    /// the answer.
    func rows(keys: [String], under prefixes: [String]) async throws(SharedStoreError) -> [VersionedRow]

    /// Writes a batch's rows if every row it read is still as it read it, in one transaction that
    /// holds the rows' locks (shared for a row read, exclusive for one written or a prefix read
    /// whole); otherwise writes nothing and gives back the rows that changed since, to load before
    /// the rules run again.
    func commit(_ batch: RowBatch) async throws(SharedStoreError) -> RowCommit

    /// Deletes rows whose expiry is before `date` (at most a few thousand a call); returns how many.
    func dropExpired(before date: Date) async throws(SharedStoreError) -> Int

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

/// Where the nodes of a fleet keep their events (``BackendEvent``: what the inspector draws as
/// sign-ins), so that any node's inspector shows the whole fleet's (PostgreSQL, in
/// `PostgresStores`). Events are a view, not state: they are kept after the answer, in batches.
///
/// Each event carries the fleet position its node had reached when it was emitted (the highest
/// version of a row it had read or written). A sign-in whose code was asked on one node and
/// checked on another reads in the order it happened when events are sorted by position: the
/// second node read the session the first wrote, so its events carry a higher position.
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
