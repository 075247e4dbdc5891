import APNsWire
import Foundation
import NIOCore
import Synchronization

/// Hands out a bulk run's pushes, each once, to whoever sends next (feeders, then workers).
final class BulkClaims: Sendable {
    private let claimed = Mutex(0)
    let total: Int
    init(total: Int) { self.total = total }
    func next() -> Int? {
        claimed.withLock { next in
            guard next < total else { return nil }
            next += 1
            return next - 1
        }
    }
}

/// What a feeder ends with: its tally, and the pushes the server refused before processing them
/// (REFUSED_STREAM, a GOAWAY, a connection that closed before they were sent), to be sent again.
struct BulkOutcome: Sendable {
    var report = BulkSender.Report()
    var again: [PushRequest] = []
}

/// Keeps `window` of a bulk run's pushes in flight on one connection, from the connection's event
/// loop: each answer is tallied there and a new push takes its stream there, with no task waiting
/// per push and no hop to Swift's pool (a task per push cost apns-sender a third of its rate
/// against h2load, which keeps its streams full from one loop). Answers that arrive in one read are
/// refilled together, with one flush.
///
/// Lives on its connection's event loop (reached only through `NIOLoopBound`).
final class BulkFeeder {
    private let connection: APNsConnection
    private let handler: HTTP2ClientHandler
    private let claims: BulkClaims
    private let requests: [PushRequest]
    private let assignAPNsIDs: Bool
    private let tokens: ProviderTokenCache
    private let timeout: TimeAmount
    private let window: Int
    private let onResult: (@Sendable (BulkSender.Result) -> Void)?
    private let done: EventLoopPromise<BulkOutcome>
    private var outcome = BulkOutcome()
    private var inFlight = 0
    private var claimsLeft = true
    private var refillScheduled = false
    private var finished = false
    /// Each request's `:path`, by index, made on first use.
    private lazy var paths = [String?](repeating: nil, count: requests.count)
    /// The last request's header fields and the token they carry: most runs send one request again and again.
    private var fields: (index: Int, token: String, fields: [(name: String, value: String)])?

    private init(connection: APNsConnection, handler: HTTP2ClientHandler, claims: BulkClaims, requests: [PushRequest],
                 assignAPNsIDs: Bool, tokens: ProviderTokenCache, timeout: TimeAmount, window: Int,
                 onResult: (@Sendable (BulkSender.Result) -> Void)?, done: EventLoopPromise<BulkOutcome>) {
        self.connection = connection
        self.handler = handler
        self.claims = claims
        self.requests = requests
        self.assignAPNsIDs = assignAPNsIDs
        self.tokens = tokens
        self.timeout = timeout
        self.window = window
        self.onResult = onResult
        self.done = done
    }

    /// Feeds `connection` until the claims run out (or it stops taking pushes), and returns what came of its pushes.
    static func run(on connection: APNsConnection, claims: BulkClaims, requests: [PushRequest], assignAPNsIDs: Bool,
                    tokens: ProviderTokenCache, timeout: TimeAmount, window: Int,
                    onResult: (@Sendable (BulkSender.Result) -> Void)?) async -> BulkOutcome {
        let done = connection.eventLoop.makePromise(of: BulkOutcome.self)
        connection.onLoop { handler in
            // (Only a connection that was made is fed; one that was not leaves its claims to the others.)
            guard let handler else { return done.succeed(BulkOutcome()) }
            let feeder = BulkFeeder(connection: connection, handler: handler, claims: claims, requests: requests,
                                    assignAPNsIDs: assignAPNsIDs, tokens: tokens, timeout: timeout, window: max(1, window),
                                    onResult: onResult, done: done)
            feeder.refill()
        }
        // Always fulfilled: every push sent hears its fate from the handler, and the feeder ends when none is left in flight.
        return (try? await done.futureResult.get()) ?? BulkOutcome()
    }

    /// Tops the connection up to `window` pushes in flight, with one flush; ends the run when
    /// nothing is left to send and nothing is in flight.
    private func refill() {
        refillScheduled = false
        guard !finished else { return }
        var batch: [OutgoingPush] = []
        while claimsLeft, inFlight + batch.count < window {
            guard connection.isUsable, let index = claims.next() else {
                claimsLeft = false
                break
            }
            batch.append(push(for: index))
        }
        inFlight += batch.count
        if !batch.isEmpty { handler.enqueue(batch) }
        if inFlight == 0 {
            finished = true
            done.succeed(outcome)
        }
    }

    private func push(for index: Int) -> OutgoingPush {
        let requestIndex = index % requests.count
        let token = tokens.token()
        let headerFields: [(name: String, value: String)]
        // The answer's closure holds the request's index (and the apns-id given to it), not a
        // copy of the request: the request is made again only for whoever needs it.
        var assigned: UUID?
        if assignAPNsIDs, requests[requestIndex].headers.apnsID == nil {
            var headers = requests[requestIndex].headers
            assigned = UUID()
            headers.apnsID = assigned
            headerFields = headers.headerFields(authorization: token)
        } else if let cached = fields, cached.index == requestIndex, cached.token == token {
            headerFields = cached.fields
        } else {
            headerFields = requests[requestIndex].headers.headerFields(authorization: token)
            fields = (requestIndex, token, headerFields)
        }
        let bound = NIOLoopBound(self, eventLoop: connection.eventLoop)
        let apnsID = assigned
        return OutgoingPush(method: "POST", path: path(for: requestIndex), fields: headerFields, body: requests[requestIndex].payload,
                            reply: .onLoop({ result in bound.value.heard(result, request: requestIndex, apnsID: apnsID) }), timeout: timeout)
    }

    /// The request's `:path`, made once per request.
    private func path(for index: Int) -> String {
        if let cached = paths[index] { return cached }
        let made = PushHeaders.path(forRaw: requests[index].deviceToken)
        paths[index] = made
        return made
    }

    /// A push's fate. Its stream is free again: a refill runs once the loop is done with what it
    /// is doing (never inside the handler's own bookkeeping), for every answer heard meanwhile.
    private func heard(_ result: Result<APNsResponse, SenderError>, request index: Int, apnsID: UUID?) {
        inFlight -= 1
        func request() -> PushRequest {
            var request = requests[index]
            if let apnsID { request.headers.apnsID = apnsID }
            return request
        }
        switch result {
        case .failure(let error) where error.isRetryable:
            outcome.again.append(request())
        default:
            if case .success(let response) = result { tokens.heard(response) }
            outcome.report.record(result)
            onResult?(BulkSender.Result(request: request(), outcome: result))
        }
        guard !refillScheduled else { return }
        refillScheduled = true
        let bound = NIOLoopBound(self, eventLoop: connection.eventLoop)
        connection.eventLoop.execute { bound.value.refill() }
    }
}
