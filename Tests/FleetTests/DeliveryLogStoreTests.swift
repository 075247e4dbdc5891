import APNsReceiver
import APNsSender
import APNsWire
import Foundation
import PostgresStores
import Scenarios
import TestSupport
import Testing
import Utilities

/// A receiver in this process keeping its pushes in PostgreSQL, the database lost under it: no 200
/// for a push that was not kept, APNs's 503 `ServiceUnavailable` instead, and back after the
/// backoff (a clock the test moves).
@Suite("push-receiver's shared delivery log, the database lost")
struct DeliveryLogStoreTests {
    static let silent = Array(#"{"aps":{"content-available":1}}"#.utf8)

    @Test("the database lost: 503 ServiceUnavailable, never 200 unkept; after the backoff pushes are kept again")
    func databaseLost() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = ManualWallClock(Date())
        let log = PostgresDeliveryLog(location: try PostgresLocation(database.url), node: "a", connections: 1, clock: clock)
        try await log.open()
        let channel = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"),
                                                       sharedLog: log)
        let token = DeviceToken.random()
        try channel.register(token, environment: .sandbox, bundleID: "com.example.authsim")
        let client = try channel.client(environment: .sandbox, retries: 0)
        func push() async throws -> APNsResponse {
            try await client.send(PushRequest(deviceToken: token, headers: PushHeaders(pushType: .background, topic: "com.example.authsim",
                                                                                       priority: .consideringPower), payload: Self.silent))
        }
        let first = try await push()
        #expect(first.status == 200)

        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(database.name)\" ALLOW_CONNECTIONS false")
        _ = try await postgres.psql("postgres", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database.name)'")
        for _ in 0..<3 {
            let refused = try await push()
            #expect(refused.status == 503)
            #expect(refused.reason == .serviceUnavailable)
        }

        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(database.name)\" ALLOW_CONNECTIONS true")
        clock.advance(by: 10)
        let again = try await push()
        #expect(again.status == 200)
        let kept = try await log.deliveries().compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["apns-id"] as? String
        }
        #expect(kept == [first.apnsID, again.apnsID].compactMap { $0 })
        await client.shutdown()
        await channel.shutdown()
        await log.close()
    }
}
