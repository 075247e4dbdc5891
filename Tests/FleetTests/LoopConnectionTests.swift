import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
@testable import PostgresStores
import TestSupport
import Testing
import Utilities

/// A connection that lives on one event loop (LoopConnection: a receiver's batches of pushes),
/// run against a real PostgreSQL: its statements bounded, its failures answered after the call
/// that started them returns, its reconnects after the backoff.
@Suite("A store's connection on an event loop")
struct LoopConnectionTests {
    /// A flag set on the loop once `run` returned.
    final class Returned: @unchecked Sendable { var value = false }

    /// Runs `body` through `link` on its loop; the outcome, and whether `run` had returned when it came.
    static func run<T: Sendable>(_ link: LoopConnection, seconds: Double = 120,
                                 _ body: @escaping @Sendable (PostgresConnection) -> EventLoopFuture<T>) async -> (Result<T, PostgresStoreFailure>, afterReturn: Bool) {
        await withCheckedContinuation { continuation in
            link.loop.execute {
                let returned = Returned()
                link.run("testing", seconds: seconds, body) { continuation.resume(returning: ($0, returned.value)) }
                returned.value = true
            }
        }
    }

    static func one(_ connection: PostgresConnection) -> EventLoopFuture<Int> {
        connection.query("SELECT 1", logger: silentStoreLogger).flatMapThrowing { try $0.rows.first?.decode(Int.self) ?? 0 }
    }

    @Test("a statement that does not answer in its bound: the bound's error, the connection closed; the next statement runs on a new one")
    func unanswered() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let link = LoopConnection(loop: group.next(), location: try PostgresLocation(database.url), clock: SystemWallClock(), logger: silentStoreLogger)
        // pg_sleep(600) answers only if the bound never fires; the test waits for the bound's error, not for a time.
        let (slept, _) = await Self.run(link, seconds: 0.5) { connection in
            connection.query("SELECT pg_sleep(600)", logger: silentStoreLogger).map { _ in 0 }
        }
        guard case .failure(let failure) = slept else { Issue.record("pg_sleep(600) answered: \(slept)"); return }
        #expect(failure.description == "no answer in 0.5 s while testing; the connection is closed")
        let (again, afterReturn) = await Self.run(link, Self.one)
        #expect(try again.get() == 1)
        #expect(afterReturn)
        try await link.close().get()
        try await group.shutdownGracefully()
    }

    @Test("a database that cannot be reached: the connect's cause; within the backoff the cause again, at once and after run returned; a connect again once it passed")
    func unreachable() async throws {
        let folder = temporaryDirectory(#function)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clock = ManualWallClock()
        // A socket folder with no server in it: every connect fails at once.
        let link = LoopConnection(loop: group.next(), location: try PostgresLocation("postgres://authsim@/nothing?host=\(folder.path)"),
                                  clock: clock, logger: silentStoreLogger)
        let (first, _) = await Self.run(link, Self.one)
        #expect(first.failure?.description.hasPrefix("cannot connect: ") == true, "\(first)")
        let (refused, afterReturn) = await Self.run(link, Self.one)
        #expect(refused.failure?.description.hasPrefix("unreachable (") == true, "\(refused)")
        #expect(refused.failure?.description.hasSuffix("; next attempt within 0.1 s") == true, "\(refused)")
        #expect(afterReturn, "a refusal known at once still comes after run returned")
        clock.advance(by: 0.1)
        let (tried, _) = await Self.run(link, Self.one)
        #expect(tried.failure?.description.hasPrefix("cannot connect: ") == true, "\(tried)")
        let (closedLater, _) = await Self.run(link, Self.one)
        #expect(closedLater.failure?.description.hasSuffix("; next attempt within 0.2 s") == true, "\(closedLater)")
        try await link.close().get()
        let (closed, closedAfterReturn) = await Self.run(link, Self.one)
        #expect(closed.failure?.description == "the store's connections are closed")
        #expect(closedAfterReturn)
        try await group.shutdownGracefully()
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
