import Foundation
import Logging
@testable import PostgresStores
import TestSupport
import Testing
import Utilities

/// Every statement a fleet's store runs is bounded (PostgresSession's `run`, `bounded`): a
/// database that stops answering must not hold a request, a push's answer or a sign-in forever.
@Suite("A store's statements bounded in time")
struct SessionBoundTests {
    @Test("a statement that does not answer in its bound: an error naming the bound and the work at once, the connection closed; the next statement runs on a new one")
    func unanswered() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let session = PostgresSession(location: try PostgresLocation(database.url), clock: SystemWallClock(), logger: Logger(label: "test"))
        // pg_sleep(600) answers only if the bound never fires; the test waits for the bound's error, not for a time.
        let failure = await #expect(throws: PostgresStoreFailure.self) {
            try await session.run("sleeping", seconds: 0.5) { connection in
                try await connection.query("SELECT pg_sleep(600)", logger: Logger(label: "test"))
            }
        }
        #expect(failure?.description.contains("no answer in 0.5 s while sleeping; the connection is closed") == true, "\(String(describing: failure))")
        // Its bound only bounds a failure: the timer runs on the connection's event loop, and with
        // every core burning the task that reads the answer has waited more than 10 s to run.
        let answer = try await session.run("asking again", seconds: 120) { connection in
            var value = 0
            for try await one in try await connection.query("SELECT 1", logger: Logger(label: "test")).decode(Int.self) { value = one }
            return value
        }
        #expect(answer == 1)
        await session.close()
    }
}
