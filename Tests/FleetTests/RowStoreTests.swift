@testable import AuthBackend
import Foundation
import PostgresStores
import TestSupport
import Testing

/// The backend's state as rows in PostgreSQL (`backend_rows`, PostgresBackendStore's `rows` and
/// `commit`): a batch writes only if every row it read is as it read it, under the rows' own locks,
/// so two nodes racing for one code or token cannot both spend it, and neither waits for a change
/// of rows it did not read.
@Suite("The backend's rows in PostgreSQL")
struct RowStoreTests {
    static func store(_ url: String, _ node: String) async throws -> PostgresBackendStore {
        let store = PostgresBackendStore(location: try PostgresLocation(url), node: node)
        _ = try await store.open(projectID: "demo-authsim", candidateKeyPEM: IDTokenSigner.processKey.pemRepresentation)
        return store
    }

    static func batch(read: [String: Int64] = [:], whole: [String] = [], writes: [(String, String?)] = [], expires: Date? = nil) -> RowBatch {
        var batch = RowBatch()
        batch.read = read
        batch.whole = whole
        batch.writes = writes.map { (StateRow(key: $0.0, text: $0.1), expires) }
        return batch
    }

    @Test("a batch commits only if what it read is unchanged; else it gets the rows that changed, and nothing is written")
    func staleReads() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let (a, b) = (try await Self.store(database.url, "a"), try await Self.store(database.url, "b"))
        // Both read session/s1: none.
        #expect(try await a.rows(keys: ["session/s1"], under: []).isEmpty)
        guard case .committed(let first) = try await a.commit(Self.batch(read: ["session/s1": 0], writes: [("session/s1", #"{"code":"1"}"#)])) else {
            Issue.record("the first commit was refused")
            return
        }
        let refused = try await b.commit(Self.batch(read: ["session/s1": 0], writes: [("session/s1", #"{"code":"2"}"#)]))
        #expect(refused == .stale([VersionedRow(key: "session/s1", version: first, text: #"{"code":"1"}"#)]))
        #expect(try await b.rows(keys: ["session/s1"], under: []) == [VersionedRow(key: "session/s1", version: first, text: #"{"code":"1"}"#)])
        // Read again at its version, the row is deleted; a batch that read it before is refused with "none".
        guard case .committed(let second) = try await b.commit(Self.batch(read: ["session/s1": first], writes: [("session/s1", nil)])) else {
            Issue.record("the second commit was refused")
            return
        }
        #expect(second > first)
        #expect(try await a.commit(Self.batch(read: ["session/s1": first], writes: [("receipt/r", "{}")]))
                    == .stale([VersionedRow(key: "session/s1", version: 0, text: nil)]))
        #expect(try await a.rows(keys: ["session/s1", "receipt/r"], under: []).isEmpty)
        await a.close()
        await b.close()
    }

    @Test("many batches racing for one row on two stores: one commits")
    func racesForOneRow() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let stores = [try await Self.store(database.url, "a"), try await Self.store(database.url, "b")]
        for round in 0..<10 {
            let key = "recaptcha/token\(round)"
            guard case .committed(let version) = try await stores[round % 2].commit(Self.batch(read: [key: 0], writes: [(key, #"{"used":false}"#)])) else {
                Issue.record("round \(round): the token was not kept")
                continue
            }
            let wins = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let spend = Self.batch(read: [key: version], writes: [(key, #"{"used":true}"#), ("session/of\(round)-\(index)", "{}")])
                        if case .committed = try? await stores[index % 2].commit(spend) { return true }
                        return false
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1, "round \(round): \(wins) batches spent one token")
        }
        for store in stores { await store.close() }
    }

    @Test("a prefix read whole is stale once a row appears under it; a tenant's prefix is its own")
    func wholePrefixes() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let (a, b) = (try await Self.store(database.url, "a"), try await Self.store(database.url, "b"))
        let expires = Date(timeIntervalSince1970: 1_900_000_000)
        for key in ["user/t1/u1", "user/t10/u2", "user//u3"] {
            _ = try await a.commit(Self.batch(read: [key: 0], writes: [(key, #"{"localId":"x"}"#)], expires: key == "user//u3" ? expires : nil))
        }
        #expect(try await a.rows(keys: [], under: ["user/t1/"]).map(\.key) == ["user/t1/u1"])
        #expect(try await a.rows(keys: [], under: ["user//"]).map(\.key) == ["user//u3"])
        #expect(RowBatch.prefix(of: "user/t1/u1") == "user/t1/" && RowBatch.prefix(of: "session/s") == "session/")
        // a read t1's users whole (one); b adds one; a's commit is refused with the new row.
        let held = try await a.rows(keys: [], under: ["user/t1/"])
        _ = try await b.commit(Self.batch(read: ["user/t1/u9": 0], writes: [("user/t1/u9", "{}")]))
        let refused = try await a.commit(Self.batch(read: Dictionary(uniqueKeysWithValues: held.map { ($0.key, $0.version) }), whole: ["user/t1/"],
                                                     writes: [("tenant/t1", nil)]))
        guard case .stale(let rows) = refused else {
            Issue.record("a batch that read a tenant's users whole committed over a new user")
            return
        }
        #expect(rows.map(\.key) == ["user/t1/u9"])
        #expect(try await postgres.psql(database.name, "SELECT extract(epoch FROM expires_at)::bigint FROM backend_rows WHERE key = 'user//u3'")
                    == "1900000000")
        await a.close()
        await b.close()
    }
}
