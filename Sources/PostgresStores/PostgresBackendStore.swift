import AuthBackend
import Foundation
import Logging
import PostgresNIO
import Utilities

/// The backend's ``BackendStore`` on PostgreSQL: every node of a fleet reads and writes the same
/// `backend_records`, in the order the fleet's write turn (an advisory lock) gives them.
///
/// A change costs four round trips (BEGIN, the turn with the records since this node's last,
/// the INSERT of its records, COMMIT); a node whose position is current reads nothing back.
///
/// Now and then a change also writes a snapshot of the state (`backend_snapshots`) and deletes
/// the records it replaces, so the table stays the size of the recent past: a node that starts,
/// or one behind the snapshot, reads the snapshot and the records after it.
package actor PostgresBackendStore: BackendStore {
    package nonisolated let address: String
    /// Written with every record: which node handled the request.
    package nonisolated let node: String
    private let session: PostgresSession
    private let logger: Logger
    /// How long one step of a change may take before the database counts as lost (503).
    private let deadline: Double

    /// - Parameters:
    ///   - node: this node's name (`--node-name`), kept with every record it writes.
    ///   - clock: the reconnection backoff's clock.
    ///   - deadline: seconds one step of a change (its start, its commit, a read) may take before
    ///     the database counts as lost: the connection is closed and the request answered 503.
    package init(location: PostgresLocation, node: String, clock: any WallClock = SystemWallClock(), deadline: Double = 10,
                logger: Logger = silentStoreLogger) {
        self.deadline = deadline
        self.address = location.address
        self.node = node
        self.session = PostgresSession(location: location, clock: clock, logger: logger)
        self.logger = logger
    }

    package func open(projectID: String, candidateKeyPEM: String) async throws(SharedStoreError) -> String {
        try await session.migrate()
        let projects: [(String, String)]
        do {
            projects = try await session.run("reading the fleet's ID-token key", seconds: deadline) { [logger] connection in
                // The first node stores its key; every later one reads it back.
                try await connection.query("""
                    INSERT INTO backend_fleet (project_id, id_token_key_pem) VALUES (\(projectID), \(candidateKeyPEM))
                    ON CONFLICT (project_id) DO NOTHING
                    """, logger: logger)
                var projects: [(String, String)] = []
                for try await row in try await connection.query("SELECT project_id, id_token_key_pem FROM backend_fleet", logger: logger)
                    .decode((String, String).self) {
                    projects.append(row)
                }
                return projects
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
        guard projects.count == 1, let (_, pem) = projects.first(where: { $0.0 == projectID }) else {
            let others = projects.map(\.0).filter { $0 != projectID }.sorted().joined(separator: ", ")
            throw SharedStoreError(.otherProject, "the database holds the backend of project \(others), not \(projectID): give each project its own database")
        }
        return pem
    }

    package func appleKey(projectID: String, candidatePEM: String) async throws(SharedStoreError) -> String {
        let stored: String?
        do {
            stored = try await session.run("reading the fleet's Apple key", seconds: deadline) { [logger] connection in
                // The first node to ask stores its key (the row's lock orders nodes asking at once).
                var stored: String?
                for try await pem in try await connection.query("""
                    UPDATE backend_fleet SET apple_key_pem = coalesce(apple_key_pem, \(candidatePEM)) WHERE project_id = \(projectID)
                    RETURNING apple_key_pem
                    """, logger: logger).decode(String.self) {
                    stored = pem
                }
                return stored
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
        guard let stored else { throw SharedStoreError(.otherProject, "the database holds no backend of project \(projectID)") }
        return stored
    }

    package func records(after position: Int64) async throws(SharedStoreError) -> BackendStoreRecords {
        do {
            return try await session.run("reading", seconds: deadline) { [logger] connection in
                try await Self.read(try await connection.query("SELECT * FROM authsim_backend_records(\(position))", logger: logger),
                                    after: position)
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    package func beginChange(after position: Int64) async throws(SharedStoreError) -> any BackendStoreChange {
        let connection = try await connected()
        do {
            let newer = try await bounded(connection, seconds: deadline, what: "starting a change") { [logger] connection in
                try await connection.query("BEGIN", logger: logger)
                return try await Self.read(try await connection.query("SELECT * FROM authsim_backend_turn_from(\(position))", logger: logger),
                                           after: position)
            }
            return Change(store: self, connection: connection, newer: newer)
        } catch {
            // Closing the connection ends its transaction too. (A query after a failed one, a
            // ROLLBACK on a connection the server had just closed, was seen never to answer.)
            await session.broken(connection)
            throw SharedStoreError(.unavailable, "starting a change: \(PostgresStoreFailure.describe(error))")
        }
    }

    package func rows(keys: [String], under prefixes: [String]) async throws(SharedStoreError) -> [VersionedRow] {
        do {
            return try await session.run("reading rows", seconds: deadline) { [logger] connection in
                var rows: [VersionedRow] = []
                for try await (key, version, text) in try await connection.query(
                    "SELECT * FROM authsim_backend_rows(\(keys)::text[], \(prefixes)::text[])", logger: logger).decode((String, Int64, String).self) {
                    rows.append(VersionedRow(key: key, version: version, text: text))
                }
                return rows
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    package func commit(_ batch: RowBatch) async throws(SharedStoreError) -> RowCommit {
        let readKeys = Array(batch.read.keys)
        let readVersions = readKeys.map { batch.read[$0]! }
        let kept = batch.writes.filter { $0.row.text != nil }
        let writeKeys = kept.map(\.row.key)
        let writeValues = kept.map { $0.row.text! }
        let writeExpiry = kept.map { $0.expires?.timeIntervalSince1970 ?? 0 }
        let deleteKeys = batch.writes.filter { $0.row.text == nil }.map(\.row.key)
        let prefixes = Array(Set(batch.writes.map { RowBatch.prefix(of: $0.row.key) }))
        let whole = batch.whole
        do {
            return try await session.run("committing rows", seconds: deadline) { [logger] connection in
                var stale: [VersionedRow] = []
                var committed: Int64?
                let rows = try await connection.query("""
                    SELECT * FROM authsim_backend_commit(\(readKeys)::text[], \(readVersions)::bigint[], \(whole)::text[],
                        \(writeKeys)::text[], \(writeValues)::text[], \(writeExpiry)::double precision[], \(deleteKeys)::text[], \(prefixes)::text[])
                    """, logger: logger)
                for try await (key, version, text) in rows.decode((String?, Int64, String?).self) {
                    if let key { stale.append(VersionedRow(key: key, version: version, text: text)) } else { committed = version }
                }
                if let committed { return .committed(version: committed) }
                return .stale(stale)
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    package func close() async { await session.close() }

    private func connected() async throws(SharedStoreError) -> PostgresConnection {
        do { return try await session.connected() } catch { throw SharedStoreError(.unavailable, error.description) }
        // (Callers name the store: the command line says which URL; a request's log line says `store`.)
    }

    /// Ends a change that will not commit.
    fileprivate func rollBack(_ connection: PostgresConnection) async {
        do {
            _ = try await bounded(connection, seconds: deadline, what: "rolling back") { [logger] connection in
                try await connection.query("ROLLBACK", logger: logger)
            }
        } catch {
            await session.broken(connection)
        }
    }

    fileprivate func write(_ records: [String], snapshot: [String]?, after position: Int64,
                           on connection: PostgresConnection) async throws(SharedStoreError) -> Int64 {
        let last = position + Int64(records.count)
        do {
            try await bounded(connection, seconds: deadline, what: "writing") { [logger, node] connection in
                try await connection.query("""
                    INSERT INTO backend_records (position, node, record)
                    SELECT \(position) + t.ordinality, \(node), t.record::jsonb FROM unnest(\(records)::text[]) WITH ORDINALITY AS t(record, ordinality)
                    """, logger: logger)
                if let snapshot {
                    // The state as of the last record replaces every record up to it, and any older snapshot.
                    try await connection.query("""
                        INSERT INTO backend_snapshots (position, node, records)
                        SELECT \(last), \(node), coalesce(jsonb_agg(t.record::jsonb ORDER BY t.n), '[]'::jsonb)
                        FROM unnest(\(snapshot)::text[]) WITH ORDINALITY AS t(record, n)
                        """, logger: logger)
                    try await connection.query("DELETE FROM backend_records WHERE position <= \(last)", logger: logger)
                    try await connection.query("DELETE FROM backend_snapshots WHERE position < \(last)", logger: logger)
                }
                try await connection.query("COMMIT", logger: logger)
            }
            return last
        } catch {
            // A COMMIT whose answer was lost may have committed: the caller rebuilds from the store.
            await session.broken(connection)
            throw SharedStoreError(.unavailable, "writing: \(PostgresStoreFailure.describe(error))")
        }
    }

    private static func read(_ rows: PostgresRowSequence, after position: Int64) async throws -> BackendStoreRecords {
        var result = BackendStoreRecords(records: [], position: position)
        for try await (at, text, fromSnapshot) in rows.decode((Int64, String?, Bool).self) {
            result.position = at
            if fromSnapshot {
                // The snapshot's header row (no text), then its records.
                result.snapshotRecords = (result.snapshotRecords ?? -1) + 1
            }
            if let text { result.records.append(text) }
        }
        return result
    }

    private struct Change: BackendStoreChange {
        let store: PostgresBackendStore
        let connection: PostgresConnection
        let newer: BackendStoreRecords

        func commit(_ records: [String], snapshot: [String]?) async throws(SharedStoreError) -> Int64 {
            try await store.write(records, snapshot: snapshot, after: newer.position, on: connection)
        }

        func abandon() async { await store.rollBack(connection) }
    }
}
