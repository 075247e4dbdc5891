import Foundation
import Logging
import NIOCore
import PostgresNIO
import Utilities

/// A connection to the store's database that lives on one event loop, the loop of the work that
/// uses it: a statement goes out from the thread that has the work, and its answer comes back to
/// that thread, with no task and no hop between (a receiver's batch of pushes: a task, an actor
/// and two hops between threads cost it more than PostgreSQL's insert). Opened when first needed
/// and again after it breaks, after ``ReconnectBackoff``; a statement is bounded as
/// ``bounded(_:seconds:what:_:)`` bounds a session's, and a connection a statement failed on is
/// dropped, as a session drops it.
///
/// Everything here runs on ``loop``: ``run(_:seconds:_:done:)`` is called there, and PostgresNIO
/// completes the connection's futures there.
final class LoopConnection: @unchecked Sendable {
    let loop: any EventLoop
    private let location: PostgresLocation
    private let clock: any WallClock
    private let logger: Logger
    // Touched on `loop` only.
    private var connection: PostgresConnection?
    /// The callers waiting for the connect in progress (nil when none is).
    private var waiting: [@Sendable (Result<PostgresConnection, PostgresStoreFailure>) -> Void]?
    private var backoff = ReconnectBackoff()
    private var connects = 0
    private var closed = false

    init(loop: any EventLoop, location: PostgresLocation, clock: any WallClock, logger: Logger) {
        self.loop = loop
        self.location = location
        self.clock = clock
        self.logger = logger
    }

    /// A connection let go of without ``close()`` still closes (PostgresNIO requires it).
    deinit {
        if let connection { connection.close().whenComplete { _ in } }
    }

    /// Runs `body`'s statement on the connection, bounded by `seconds`, and hands `done` what came
    /// of it, on ``loop``, never before this returns (a caller may be in the middle of its own work).
    func run<T: Sendable>(_ what: String, seconds: Double, _ body: @escaping @Sendable (PostgresConnection) -> EventLoopFuture<T>,
                          done: @escaping @Sendable (Result<T, PostgresStoreFailure>) -> Void) {
        loop.preconditionInEventLoop()
        let call = Call(done, loop: loop)
        connected { [self] opened in
            switch opened {
            case .failure(let failure): call.finish(.failure(failure))
            case .success(let connection):
                // The bound only bounds a failure (a database that stops answering); nothing waits on it.
                let timer = loop.scheduleTask(in: .nanoseconds(Int64(seconds * 1_000_000_000))) { [self] in
                    call.finish(.failure(.unanswered(in: seconds, while: what)))
                    drop(connection)
                }
                body(connection).whenComplete { [self] result in
                    timer.cancel()
                    switch result {
                    case .success(let value): call.finish(.success(value))
                    case .failure(let error):
                        drop(connection)
                        call.finish(.failure(PostgresStoreFailure(what, failedWith: error)))
                    }
                }
            }
        }
        call.returned()
    }

    /// The open connection, or a new one (callers arriving meanwhile wait for the same connect),
    /// or the backoff's refusal.
    private func connected(_ then: @escaping @Sendable (Result<PostgresConnection, PostgresStoreFailure>) -> Void) {
        if let connection, !connection.isClosed { return then(.success(connection)) }
        if waiting != nil { waiting?.append(then); return }
        if closed { return then(.failure(PostgresStoreFailure("the store's connections are closed"))) }
        connection = nil
        if let refusal = backoff.refusal(at: clock.now) { return then(.failure(PostgresStoreFailure(refusal))) }
        waiting = [then]
        connects += 1
        PostgresConnection.connect(on: loop, configuration: location.configuration, id: connects, logger: logger).whenComplete { [self] result in
            let callers = waiting ?? []
            waiting = nil
            let outcome: Result<PostgresConnection, PostgresStoreFailure>
            switch result {
            case .success(let opened) where closed:
                opened.close().whenComplete { _ in }
                outcome = .failure(PostgresStoreFailure("the store's connections are closed"))
            case .success(let opened):
                if backoff.succeeded() { logger.notice("reconnected to the store", metadata: ["store": "\(location.address)"]) }
                connection = opened
                outcome = .success(opened)
            case .failure(let error):
                let cause = PostgresStoreFailure.describe(error)
                backoff.failed(cause, at: clock.now)
                outcome = .failure(PostgresStoreFailure("cannot connect: \(cause)"))
            }
            for caller in callers { caller(outcome) }
        }
    }

    /// Forgets a connection a statement failed on (never queried again: a query after a failed
    /// one was seen never to answer), so that the next statement opens a new one.
    private func drop(_ failed: PostgresConnection) {
        if connection === failed { connection = nil }
        failed.close().whenComplete { _ in }
    }

    /// Closes the connection; statements after this fail at once. On ``loop``, which must still run.
    func close() -> EventLoopFuture<Void> {
        loop.flatSubmit { [self] in
            closed = true
            guard let open = connection else { return loop.makeSucceededVoidFuture() }
            connection = nil
            return open.close().recover { _ in }
        }
    }

    /// One ``run(_:seconds:_:done:)``: its answer given once (the statement's or the bound's,
    /// whichever comes first), and not inside the call that started it.
    private final class Call<T: Sendable>: @unchecked Sendable {
        private let done: @Sendable (Result<T, PostgresStoreFailure>) -> Void
        private let loop: any EventLoop
        private var finished = false
        private var inCaller = true

        init(_ done: @escaping @Sendable (Result<T, PostgresStoreFailure>) -> Void, loop: any EventLoop) {
            self.done = done
            self.loop = loop
        }

        func returned() { inCaller = false }

        func finish(_ result: Result<T, PostgresStoreFailure>) {
            guard !finished else { return }
            finished = true
            if inCaller { loop.execute { [done] in done(result) } } else { done(result) }
        }
    }
}
