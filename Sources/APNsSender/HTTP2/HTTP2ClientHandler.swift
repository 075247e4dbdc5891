import APNsWire
import HTTP2Wire
import NIOCore
import NIOHPACK
import NIOTLS
import Synchronization

/// What other threads may ask of a connection: whether it takes new pushes, and its GOAWAY.
final class ClientConnectionState: Sendable {
    private struct State {
        var usable = true
        var goAwayReason: APNsReason?
        var goAwayLastStream: UInt32?
        var closedBecause: String?
    }
    private let state = Mutex(State())

    var usable: Bool { state.withLock { $0.usable } }
    var goAwayReason: APNsReason? { state.withLock { $0.goAwayReason } }
    /// Why the connection was closed from this side (a TLS or socket error, an HTTP/2 error), if it was.
    var closedBecause: String? { state.withLock { $0.closedBecause } }
    func retire() { state.withLock { $0.usable = false } }
    func retire(because reason: String) {
        state.withLock {
            $0.usable = false
            $0.closedBecause = $0.closedBecause ?? reason
        }
    }
    func recordGoAway(reason: APNsReason, lastStream: UInt32) {
        state.withLock {
            $0.usable = false
            $0.goAwayReason = $0.goAwayReason ?? reason
            $0.goAwayLastStream = min($0.goAwayLastStream ?? lastStream, lastStream)
        }
    }
}

/// Who hears a push's fate, exactly once, on the connection's event loop.
enum PushReply: Sendable {
    /// A task waiting in ``APNsConnection/send(method:path:fields:payload:timeout:)``.
    case task(UnsafeContinuation<Result<APNsResponse, SenderError>, Never>)
    /// A bulk run's feeder (``BulkFeeder``), on the event loop: it may hand the handler the next push at once.
    case onLoop(@Sendable (Result<APNsResponse, SenderError>) -> Void)

    func deliver(_ result: Result<APNsResponse, SenderError>) {
        switch self {
        case .task(let continuation): continuation.resume(returning: result)
        case .onLoop(let hear): hear(result)
        }
    }
}

/// One push waiting for a stream.
struct OutgoingPush: Sendable {
    var method: String
    var path: String
    var fields: [(name: String, value: String)]
    var body: [UInt8]
    /// Resumed exactly once, on the event loop: with the answer or with why there is none.
    var reply: PushReply
    var timeout: TimeAmount
    /// When "no answer within `timeout`" is due: counted from when the push was handed over, so a
    /// push that waits for a free stream does not wait longer.
    let deadline: NIODeadline

    init(method: String, path: String, fields: [(name: String, value: String)], body: [UInt8],
         reply: PushReply, timeout: TimeAmount) {
        self.method = method
        self.path = path
        self.fields = fields
        self.body = body
        self.reply = reply
        self.timeout = timeout
        self.deadline = .now() + timeout
    }

    func fail(_ error: SenderError) { reply.deliver(.failure(error)) }
    var timedOut: SenderError { SenderError(.timeout, "no answer within \(timeout.nanoseconds / 1_000_000_000) s") }
}

/// The client side of one HTTP/2 connection: the protocol is ``HTTP2Connection``'s (preface,
/// SETTINGS both ways, stream states, flow control both ways, HPACK decoding, GOAWAY, the abuse
/// limits); this handler keeps what is a provider's: requests encoded with a dynamic HPACK table
/// (``HPACKRequestEncoder``), answers read back into ``APNsResponse``s, timeouts, and what each
/// push learns when the connection goes.
///
/// Pushes beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS wait their turn here, and so do
/// pushes handed over while the connection is still being made: they go out right behind the
/// preface, from the event loop, with no task to wake in between. Writes made between two
/// event-loop turns go out in one flush. Every push learns its fate: an answer, or a
/// ``SenderError`` that says whether the server can have processed it.
final class HTTP2ClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What this side announces: no server push. Everything else stays at RFC 9113's defaults.
    static let configuration = HTTP2Connection.Configuration(settings: [(.enablePush, 0)],
                                                             maximumHeaderListSize: HPACKDecoder.defaultMaxHeaderListSize)

    private final class Stream {
        let id: UInt32
        let reply: PushReply
        var response = APNsResponse(status: 0)
        var body: [UInt8] = []
        let deadline: NIODeadline
        let timeout: TimeAmount

        init(id: UInt32, push: OutgoingPush) {
            self.id = id
            self.reply = push.reply
            self.timeout = push.timeout
            self.deadline = push.deadline
        }
    }

    /// Until the server's SETTINGS say otherwise (APNs allows 1,000; RFC 9113 suggests assuming 100).
    private static let initialConcurrencyGuess = 100

    private let state: ClientConnectionState
    private let scheme: String
    private let authority: String
    private var context: ChannelHandlerContext?
    /// Whether the channel is connected and the preface has gone out: streams open only then.
    private var active = false
    /// Behind NIOSSL, until the handshake completes: a connection closed meanwhile sent nothing.
    private var handshaking: Bool
    private var closed = false
    private var connection: HTTP2Connection
    private var streams: [UInt32: Stream] = [:]
    private var waiting: [OutgoingPush] = []
    private var waitingHead = 0
    private var maxConcurrent = HTTP2ClientHandler.initialConcurrencyGuess
    private var encoder = HPACKRequestEncoder()
    /// Each request's header block is encoded here and copied into the connection's output: one
    /// buffer for the connection's life, not one allocated per push.
    private var block = ByteBuffer()
    /// One timer for the earliest answer deadline, not one per push (``sweepTimeouts()``).
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?

    /// - Parameter behindTLS: whether a TLS handler sits in front of this one (and pushes wait for its handshake).
    init(state: ClientConnectionState, scheme: String, authority: String, behindTLS: Bool, allocator: ByteBufferAllocator) {
        self.state = state
        self.scheme = scheme
        self.authority = authority
        self.handshaking = behindTLS
        // The preface and SETTINGS are in its output from the start.
        self.connection = HTTP2Connection(role: .client, configuration: Self.configuration, allocator: allocator)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start() }
    }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    /// Sends the connection preface and our SETTINGS (in the connection's output from the start;
    /// a second call finds nothing left to send), then the pushes that came while connecting.
    private func start() {
        guard !active, !closed else { return }
        active = true
        startWaiting()
        flush()
    }

    /// The connection could not be made: the pushes waiting for it learn why.
    func connectFailed(_ error: SenderError) {
        closed = true
        timer?.cancel()
        state.retire(because: error.message)
        failWaiting(with: error)
    }

    // MARK: Sending

    /// Sends pushes now, or when a stream is free.
    func enqueue(_ pushes: [OutgoingPush]) {
        for push in pushes {
            guard !closed, state.usable else {
                push.fail(SenderError(.connectionClosed, "the connection was closing before the push was sent: not processed, safe to retry"))
                continue
            }
            if active, connection.openLocalStreams < maxConcurrent, waitingHead == waiting.count {
                open(push)
            } else {
                waiting.append(push)
                if timerDeadline.map({ push.deadline < $0 }) ?? true { armTimer(at: push.deadline) }
            }
        }
        flush()
    }

    private func open(_ push: OutgoingPush) {
        // Checked before the header block is encoded: encoding changes the HPACK table.
        guard connection.acceptsNewStreams else {
            // Stream IDs are used up, or GOAWAY came: this connection takes no more; the pool opens another.
            state.retire()
            return push.fail(SenderError(.connectionClosed, connection.receivedGoAway
                ? "the server sent GOAWAY before the push was sent: not processed, safe to retry"
                : "the connection has used all its stream IDs: not processed, safe to retry"))
        }
        var fields: [(name: String, value: String)] = [(":method", push.method), (":scheme", scheme), (":path", push.path),
                                                       (":authority", authority)]
        fields += push.fields
        fields.append(("content-length", String(push.body.count)))
        block.clear()
        encoder.encode(fields, into: &block)
        let id = connection.openStream(headers: &block, body: push.body)!
        let stream = Stream(id: id, push: push)
        streams[id] = stream
        if timerDeadline.map({ stream.deadline < $0 }) ?? true { armTimer(at: stream.deadline) }
    }

    private func armTimer(at deadline: NIODeadline) {
        guard let context else { return }
        timer?.cancel()
        timerDeadline = deadline
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) { bound.value.sweepTimeouts() }
    }

    /// Fails the pushes whose answer is overdue (resetting their streams; a push still waiting for a
    /// stream was never sent), then sets the timer for the next deadline.
    private func sweepTimeouts() {
        timer = nil
        timerDeadline = nil
        let now = NIODeadline.now()
        var next: NIODeadline?
        func consider(_ deadline: NIODeadline) {
            if next.map({ deadline < $0 }) ?? true { next = deadline }
        }
        for stream in Array(streams.values) {
            if stream.deadline <= now {
                connection.resetStream(stream.id, code: .cancel)
                finish(stream, .failure(SenderError(.timeout, "no answer within \(stream.timeout.nanoseconds / 1_000_000_000) s")))
            } else {
                consider(stream.deadline)
            }
        }
        if waiting[waitingHead...].contains(where: { $0.deadline <= now }) {
            let still = waiting[waitingHead...].filter { push in
                guard push.deadline <= now else { return true }
                push.fail(push.timedOut)
                return false
            }
            waiting = Array(still)
            waitingHead = 0
        }
        for push in waiting[waitingHead...] { consider(push.deadline) }
        // Streams opened above (as others finished) may have set an earlier timer already.
        if let next, timerDeadline.map({ next < $0 }) ?? true { armTimer(at: next) }
        flush()
    }

    /// Starts waiting pushes while streams are free.
    private func startWaiting() {
        while active, waitingHead < waiting.count, connection.openLocalStreams < maxConcurrent, !closed, state.usable {
            let push = waiting[waitingHead]
            waitingHead += 1
            open(push)
        }
        if waitingHead == waiting.count, waitingHead > 0 {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        } else if waitingHead > 1024, waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }

    /// Writes out what is queued. Reads flush at read-complete; everything else (a batch of pushes
    /// from the mailbox, the timer, the preface) is already one batch and flushes when done.
    @discardableResult
    private func flush() -> EventLoopFuture<Void>? {
        // (Nothing goes out before the channel is connected: the preface leads, from start().)
        guard active, let context, let bytes = connection.takeOutput(allocator: context.channel.allocator) else { return nil }
        return context.writeAndFlush(wrapOutboundOut(bytes))
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !closed else { return }
        connection.receive(&bytes)
        while !closed, let event = connection.nextEvent() {
            handle(event, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flush()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        timer?.cancel()
        state.retire()
        let reason = state.goAwayReason
        // Why this side closed it (a TLS or socket error, an HTTP/2 error), when it did.
        let why = state.closedBecause.map { " (\($0))" } ?? ""
        // No byte of a push goes out before the TLS handshake is done (NIOSSL holds them): a server
        // we do not trust, or one that does not speak TLS, is said so, and not retried.
        let handshakeFailed = handshaking ? SenderError(.tls, "the TLS handshake did not complete\(why): nothing was sent") : nil
        for stream in Array(streams.values) {
            // A request whose body had not all gone out cannot have been processed.
            let error = connection.isSendingBody(stream.id)
                ? SenderError(.connectionClosed, "the connection closed\(why) before the push was all sent: not processed, safe to retry")
                : reason.map { SenderError(.interrupted, "the server sent GOAWAY (\($0)) and closed before answering: it may have accepted the push") }
                ?? SenderError(.interrupted, "the connection closed\(why) after the push was sent and before an answer: APNs may have accepted it (not retried, so it is not delivered twice)")
            finish(stream, .failure(handshakeFailed ?? error))
        }
        failWaiting(with: handshakeFailed ?? SenderError(.connectionClosed, "the connection closed\(why) before the push was sent: not processed, safe to retry"))
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event { handshaking = false }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        state.retire(because: "\(error)")
        context.close(promise: nil)
    }

    private func handle(_ event: HTTP2Event, context: ChannelHandlerContext) {
        switch event {
        case .settings(let settings, _):
            if let limit = settings.maxConcurrentStreams { maxConcurrent = min(limit, 100_000) }
            encoder.setPeerTableSize(settings.headerTableSize)
            startWaiting()
        case .headers(let id, let head, let endStream):
            guard let stream = streams[id] else { return }
            stream.response.status = head.status!
            // (One pass over the fields, not one per field looked for.)
            for (name, value, _) in head.headers {
                switch name {
                case "apns-id": stream.response.apnsID = value
                case "apns-unique-id": stream.response.apnsUniqueID = value
                default: break
                }
            }
            if endStream { complete(stream) }
        case .data(let id, let payload, let endStream):
            guard let stream = streams[id] else { return }
            if stream.body.count < 65_536 { stream.body.append(contentsOf: payload.readableBytesView.prefix(65_536 - stream.body.count)) }
            if endStream { complete(stream) }
        case .trailers(let id):
            if let stream = streams[id] { complete(stream) }
        case .streamReset(let id, let code):
            guard let stream = streams[id] else { return }
            finish(stream, .failure(code == HTTP2Code.refusedStream.rawValue
                ? SenderError(.streamRefused, "the server refused the stream (REFUSED_STREAM): not processed, safe to retry")
                : SenderError(.protocolError, "the server reset the stream: \(HTTP2Code(rawValue: code).map { "\($0)" } ?? "code \(code)")")))
        case .streamError(let id, let code, let detail):
            guard let stream = streams[id] else { return }
            finish(stream, .failure(SenderError(.protocolError, "the server broke HTTP/2's rules on the stream (\(code)): \(detail)")))
        case .goAway(let last, let code, let debugData):
            goAway(lastStreamID: last, code: code, debugData: debugData)
        case .connectionError(let code, let detail):
            state.retire(because: "HTTP/2 \(code): \(detail)")
            closed = true
            flush()
            context.close(promise: nil)
        }
    }

    /// GOAWAY: no new streams here; those above its last stream ID were not processed and fail
    /// as refused (safe to retry); the rest wait for their answers.
    private func goAway(lastStreamID last: UInt32, code: UInt32, debugData: [UInt8]) {
        let parsed = APNsErrorBody.decode(debugData).map { APNsReason(wire: $0.reason) }
        let reason = parsed ?? APNsReason(rawValue: "GOAWAY \(HTTP2Code(rawValue: code).map { "\($0)" } ?? "code \(code)")")
        state.recordGoAway(reason: reason, lastStream: last)
        for stream in Array(streams.values) where stream.id > last {
            finish(stream, .failure(SenderError(.streamRefused, "the server's GOAWAY (\(reason)) excluded this push (stream \(stream.id) > last stream \(last)): not processed, safe to retry")))
        }
        failWaiting("the server sent GOAWAY (\(reason)) before the push was sent: not processed, safe to retry")
    }

    // MARK: Answers

    private func complete(_ stream: Stream) {
        var response = stream.response
        // APNs sends a JSON reason only with an error status.
        if response.status != 200, !stream.body.isEmpty, let parsed = APNsErrorBody.decode(stream.body) {
            response.reason = APNsReason(wire: parsed.reason)
            response.timestamp = parsed.timestamp
        }
        finish(stream, .success(response))
    }

    private func finish(_ stream: Stream, _ result: Result<APNsResponse, SenderError>) {
        guard streams.removeValue(forKey: stream.id) != nil else { return }
        stream.reply.deliver(result)
        if !closed { startWaiting() }
    }

    private func failWaiting(_ message: String) {
        failWaiting(with: SenderError(.connectionClosed, message))
    }

    private func failWaiting(with error: SenderError) {
        let pending = waiting[waitingHead...]
        waiting.removeAll()
        waitingHead = 0
        for push in pending { push.fail(error) }
    }

}
