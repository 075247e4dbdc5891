import AuthBackend
import Foundation
import Logging
import PostgresNIO
import Utilities

/// The backend's ``BackendStore`` on PostgreSQL: every node of a fleet reads and writes the same
/// `backend_rows`, each row under its own advisory lock.
///
/// A batch costs a round trip per load of the rows its rules lacked and one for its commit (one
/// statement, `authsim_backend_commit`: the rows' locks, the check that every row read is as read,
/// the writes). `backend_records` and `backend_snapshots` hold what an older authsim's fleet kept:
/// read once, by the first node that finds no rows (``legacyRecords()``).
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

    package func legacyRecords() async throws(SharedStoreError) -> [String]? {
        do {
            return try await session.run("reading an older fleet's records", seconds: deadline) { [logger] connection in
                var hasRows = false
                for try await exists in try await connection.query("SELECT EXISTS (SELECT 1 FROM backend_rows)", logger: logger).decode(Bool.self) {
                    hasRows = exists
                }
                guard !hasRows else { return nil }
                var records: [String] = []
                for try await (_, text, _) in try await connection.query("SELECT * FROM authsim_backend_records(0)", logger: logger)
                    .decode((Int64, String?, Bool).self) {
                    if let text { records.append(text) }
                }
                return records.isEmpty ? nil : records
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    package func forgetLegacyRecords() async throws(SharedStoreError) {
        do {
            try await session.run("deleting an older fleet's records", seconds: deadline) { [logger] connection in
                try await connection.query("DELETE FROM backend_records", logger: logger)
                try await connection.query("DELETE FROM backend_snapshots", logger: logger)
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
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
            return try await session.run("committing rows", seconds: deadline) { [logger, node] connection in
                var stale: [VersionedRow] = []
                var committed: Int64?
                let rows = try await connection.query("""
                    SELECT * FROM authsim_backend_commit(\(readKeys)::text[], \(readVersions)::bigint[], \(whole)::text[],
                        \(writeKeys)::text[], \(writeValues)::text[], \(writeExpiry)::double precision[], \(deleteKeys)::text[], \(prefixes)::text[], \(node))
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

    package func dropExpired(before date: Date) async throws(SharedStoreError) -> Int {
        do {
            return try await session.run("dropping expired rows", seconds: deadline) { [logger] connection in
                var dropped = 0
                for try await count in try await connection.query("""
                    WITH gone AS (DELETE FROM backend_rows WHERE key IN (
                        SELECT key FROM backend_rows WHERE expires_at < \(date) LIMIT 5000) RETURNING 1)
                    SELECT count(*)::bigint FROM gone
                    """, logger: logger).decode(Int64.self) {
                    dropped = Int(count)
                }
                return dropped
            }
        } catch {
            throw SharedStoreError(.unavailable, error.description)
        }
    }

    package func close() async { await session.close() }
}
