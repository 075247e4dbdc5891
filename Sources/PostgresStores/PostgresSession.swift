import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import Utilities

/// One connection to the store's database, opened when first needed and again after it breaks,
/// no sooner than a backoff (``ReconnectBackoff``) after the last failed attempt.
///
/// One connection, not a pool: a backend node's changes take the fleet's write turn one batch at
/// a time, so a second connection would only wait for the first. (A receiver, whose appends take
/// no turn, keeps its batches over a connection per event loop, ``LoopConnection``.)
actor PostgresSession {
    let location: PostgresLocation
    private let logger: Logger
    private var connection: PostgresConnection?
    /// The connect in progress, which callers arriving meanwhile share.
    private var connecting: Task<PostgresConnection, any Error>?
    private var connections = 0
    private var backoff = ReconnectBackoff()
    /// The backoff's clock (a test moves it instead of waiting).
    private let clock: any WallClock
    /// Runs in flight, and whether one of them is a transaction: a transaction has the connection
    /// to itself, since statements on one connection share its transaction (a plain query sent
    /// meanwhile would run inside it, and a second BEGIN would join it). Plain runs share the
    /// connection, pipelined. Callers wait their turn in order of arrival.
    private var plainRuns = 0
    private var transactionRuns = false
    private var turns: [(transaction: Bool, waiter: CheckedContinuation<Void, Never>)] = []

    init(location: PostgresLocation, clock: any WallClock, logger: Logger) {
        self.location = location
        self.clock = clock
        self.logger = logger
    }

    /// A session dropped without ``close()`` (a backend let go of) still closes its connection,
    /// in a task that keeps it until closed: PostgresNIO requires it.
    deinit {
        if let connection { Task { try? await connection.close() } }
    }

    /// The open connection, or a new one. Callers that arrive while a connection is being opened
    /// wait for that one: the actor is re-entered at the connect's await, and a second connect
    /// would replace the first connection, dropped unclosed (PostgresNIO traps on that; the
    /// stress runs found it when a receiver's batches came faster than the first connect).
    func connected() async throws(PostgresStoreFailure) -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        if let connecting {
            do { return try await connecting.value } catch { throw PostgresStoreFailure("cannot connect: \(PostgresStoreFailure.describe(error))") }
        }
        connection = nil
        if let refusal = backoff.refusal(at: clock.now) { throw PostgresStoreFailure(refusal) }
        connections += 1
        let (configuration, id, logger) = (location.configuration, connections, logger)
        let attempt = Task { try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger) }
        connecting = attempt
        do {
            let opened = try await attempt.value
            connecting = nil
            if backoff.succeeded() { logger.notice("reconnected to the store", metadata: ["store": "\(location.address)"]) }
            connection = opened
            return opened
        } catch {
            connecting = nil
            let cause = PostgresStoreFailure.describe(error)
            backoff.failed(cause, at: clock.now)
            throw PostgresStoreFailure("cannot connect: \(cause)")
        }
    }

    /// Forgets a connection a query failed on, so that the next call opens a new one.
    func broken(_ failed: PostgresConnection) async {
        guard connection === failed else { return }
        connection = nil
        try? await failed.close()
    }

    /// Runs `body` on the connection, bounded by `seconds`; a connection it fails on is dropped
    /// (never queried again: a query after a failed one was seen never to answer).
    /// - Parameter transaction: `body` opens a transaction (BEGIN … COMMIT, `withTransaction`):
    ///   it runs alone on the connection.
    func run<T: Sendable>(_ what: String, seconds: Double, transaction: Bool = false,
                          _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(PostgresStoreFailure) -> T {
        await enter(transaction: transaction)
        defer { leave(transaction: transaction) }
        let connection = try await connected()
        do { return try await bounded(connection, seconds: seconds, what: what, body) } catch {
            await broken(connection)
            throw PostgresStoreFailure(what, failedWith: error)
        }
    }

    private func mayEnter(transaction: Bool) -> Bool {
        transaction ? !transactionRuns && plainRuns == 0 : !transactionRuns
    }

    private func take(transaction: Bool) {
        if transaction { transactionRuns = true } else { plainRuns += 1 }
    }

    /// Waits for the connection's turn: at once when nobody waits and the connection allows it.
    private func enter(transaction: Bool) async {
        if turns.isEmpty, mayEnter(transaction: transaction) { return take(transaction: transaction) }
        await withCheckedContinuation { turns.append((transaction, $0)) }
    }

    /// Ends a run's turn and lets in whoever may enter now, in order.
    private func leave(transaction: Bool) {
        if transaction { transactionRuns = false } else { plainRuns -= 1 }
        while let first = turns.first, mayEnter(transaction: first.transaction) {
            turns.removeFirst()
            take(transaction: first.transaction)
            first.waiter.resume()
        }
    }

    /// Creates or migrates the schema (``Migrations``): `schemaTooNew` for a database a newer
    /// authsim migrated, `unavailable` for anything else.
    func migrate() async throws(SharedStoreError) {
        let connection: PostgresConnection
        do { connection = try await connected() } catch { throw SharedStoreError(.unavailable, error.description) }
        do { try await Migrations.run(on: connection, address: location.address, logger: logger) } catch {
            await broken(connection)
            // Thrown inside the migrations' transaction, which wraps it.
            if let refusal = (error as? PostgresTransactionError)?.closureError as? SharedStoreError { throw refusal }
            throw SharedStoreError(.unavailable, PostgresStoreFailure.describe(error))
        }
    }

    func close() async {
        if let connection { try? await connection.close() }
        connection = nil
    }
}

/// Runs `body` on `connection`, bounded by `seconds`: a database that stops answering (a network
/// partition, a server that hangs) must not hold a request forever. Past the bound the connection
/// is closed (which fails what runs on it) and the caller gets an error at once; the body is not
/// waited for. The bound is a guard on a failure, never a wait anything relies on.
func bounded<T: Sendable>(_ connection: PostgresConnection, seconds: Double, what: String,
                          _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
    let race = BoundedRace<T>()
    return try await withCheckedThrowingContinuation { continuation in
        race.arm(continuation)
        // On the connection's event loop: a task and a sleep per call cost the hot path a thread's wake-up.
        race.setTimer(connection.eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1_000_000_000))) {
            // The bound's error first: closing fails the body, whose error must not win the race.
            race.finish(.failure(PostgresStoreFailure.unanswered(in: seconds, while: what)))
            connection.close().whenComplete { _ in }
        })
        Task {
            do { race.finish(.success(try await body(connection))) } catch { race.finish(.failure(error)) }
        }
    }
}

/// The body and the timer of ``bounded(_:seconds:what:_:)``: the first to finish answers and stops the timer.
private final class BoundedRace<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, any Error>?, timer: Scheduled<Void>?, done: Bool)>((nil, nil, false))

    func arm(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    func setTimer(_ timer: Scheduled<Void>) {
        let finished = state.withLock { state -> Bool in
            if !state.done { state.timer = timer }
            return state.done
        }
        if finished { timer.cancel() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Scheduled<Void>?) in
            guard !state.done else { return (nil, nil) }
            state.done = true
            defer { (state.continuation, state.timer) = (nil, nil) }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }
}

/// What went wrong talking to PostgreSQL, in words: the server's message and detail, or the
/// connection's error. (PSQLError's own description hides everything, on purpose.)
struct PostgresStoreFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// A statement's failure while doing `what`, said with the server's words.
    init(_ what: String, failedWith error: any Error) { self.init("\(what): \(Self.describe(error))") }

    /// A statement past its bound (whose connection is then closed).
    static func unanswered(in seconds: Double, while what: String) -> PostgresStoreFailure {
        PostgresStoreFailure("no answer in \(seconds) s while \(what); the connection is closed")
    }

    /// A TLS failure said as what to do (the raw BoringSSL text after it), or nil for another error.
    static func tlsAdvice(_ error: any Error) -> String? {
        let text = "\(error)"
        if text.contains("failedToValidateHostname") {
            return "the server's TLS certificate does not name the host of the URL (connect by a name it holds, or sslmode=verify-ca to check its chain only): \(text)"
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's TLS certificate does not verify against the trusted roots (a private CA: give its certificate with sslrootcert=FILE): \(text)"
        }
        return nil
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else {
            if let transaction = error as? PostgresTransactionError {
                return [transaction.beginError, transaction.closureError, transaction.commitError].compactMap { $0 }.map(describe).first
                    ?? "a transaction failed"
            }
            if let error = error as? SharedStoreError { return error.message }
            return "\(error)"
        }
        var parts: [String] = []
        if let info = error.serverInfo {
            if let message = info[.message] { parts.append(message) }
            if let detail = info[.detail] { parts.append(detail) }
            if let state = info[.sqlState] { parts.append("SQLSTATE \(state)") }
        }
        if let underlying = error.underlying { parts.append(tlsAdvice(underlying) ?? "\(underlying)") }
        if parts.isEmpty { parts.append("\(error.code)") }
        return parts.joined(separator: "; ")
    }
}

/// The logger of a store given none, and of the stores' own queries, whose PostgresNIO lines
/// would drown the program's (failures are logged by the stores, with the store and the cause).
@usableFromInline let silentStoreLogger = Logger(label: "authsim.store", factory: { _ in SwiftLogNoOpLogHandler() })
