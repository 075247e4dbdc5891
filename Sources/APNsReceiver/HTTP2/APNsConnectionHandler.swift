import APNsWire
import HTTP2Wire
import NIOCore

/// How long a connection told GOAWAY stays open before the server closes it: time for answers
/// still queued to go out and for the client to read them and hang up first. Closing at once
/// would make the kernel answer the client's unread requests with a TCP reset, which throws
/// away answers and the GOAWAY itself before the client reads them.
enum GoAwayTiming {
    static let grace: TimeAmount = .seconds(1)
}

/// The server side of one HTTP/2 connection, as APNs speaks it: the protocol is
/// ``HTTP2Connection``'s (frames, stream states, flow control, HPACK decoding, GOAWAY, the abuse
/// limits); this handler keeps only what is APNs's. Each finished request goes to
/// ``PushExchange``; accepted pushes of one read go into the delivery log with one write before
/// their answers; answers (``HPACKAnswer``) of one read go out in one write; delay faults hold an
/// answer back; GOAWAY carries APNs's `{"reason":…}`.
///
/// Streams are plain records in a dictionary, not channels: an APNs request is one HEADERS, a
/// small body, and one answer, so per-stream pipelines (swift-nio-http2's multiplexer) cost more
/// than everything APNs checks.
final class APNsConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The SETTINGS APNs announces.
    static let maxConcurrentStreams = 1000
    static let maxHeaderListSize = 8000
    static let configuration = HTTP2Connection.Configuration(
        settings: [
            (.headerTableSize, 4096), (.maxConcurrentStreams, UInt32(maxConcurrentStreams)),
            (.initialWindowSize, UInt32(HTTP2Limits.defaultWindow)), (.maxFrameSize, UInt32(HTTP2Limits.defaultMaxFrameSize)),
            (.maxHeaderListSize, UInt32(maxHeaderListSize)),
        ],
        // The connection-level receive window, raised from 64 KiB at the start.
        connectionWindow: 1 << 20)

    /// One request stream: what APNs needs of it.
    private final class Stream {
        let id: UInt32
        let head: IncomingPush.Head
        var body: [UInt8] = []
        var bodyLength = 0
        /// What the decisions on it so far found.
        var progress = PushProgress()

        init(id: UInt32, head: IncomingPush.Head) {
            self.id = id
            self.head = head
        }

        /// The finished request, as the exchange decides on it (again, when a fleet's registry
        /// changed under it).
        var request: IncomingPush { IncomingPush(head: head, body: body, bodyLength: bodyLength) }
    }

    /// A refused push and the rejection-log entry a fleet keeps of it before the answer.
    private typealias Refused = (stream: Stream, answer: PushAnswer, refusal: RejectionLog.Entry)

    /// Accepted pushes to keep in the delivery log, and their streams, side by side: the log takes
    /// the pushes as they are and the answers go to the streams, with no push copied out of a pair.
    private struct KeptBatch {
        var streams: [Stream] = []
        var pushes: [AcceptedPush] = []
        var isEmpty: Bool { streams.isEmpty }
        mutating func append(_ stream: Stream, _ push: consuming AcceptedPush) {
            streams.append(stream)
            pushes.append(push)
        }
    }

    private let exchange: PushExchange
    private var handshake: HandshakeDeadline?
    private var connection: HTTP2Connection
    private var streams: [UInt32: Stream] = [:]
    /// Pushes accepted during this read, and their delivery-log lines: written with one
    /// `write(2)` before the read's answers go out (``commitStaged()``).
    private var staged = KeptBatch()
    private var stagedLines = BatchLines()
    /// A fleet's registry: the version the first of ``staged`` was validated on.
    private var stagedVersion: Int64?
    /// A fleet's refusals of this read: kept in its rejection log with one INSERT, then answered.
    private var stagedRefusals: [Refused] = []
    private var lineEncoder = DeliveryLog.LineEncoder()
    /// The last request head and what it says as APNs reads it. ``HTTP2Connection`` hands out one
    /// head for every request that repeats its header block, so a provider's pushes are read and
    /// checked as far as their head goes once, not once each (the head is kept here, so the
    /// identity cannot be another head's).
    private var lastHead: (wire: HTTP2Head, read: IncomingPush.Head)?
    private var inRead = false
    private var closing = false
    private var context: ChannelHandlerContext?

    init(exchange: PushExchange, handshake: HandshakeDeadline?, allocator: ByteBufferAllocator) {
        self.exchange = exchange
        self.handshake = handshake
        self.connection = HTTP2Connection(role: .server, configuration: Self.configuration, allocator: allocator)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !closing else { return }
        connection.receive(&bytes)
        inRead = true
        defer { inRead = false }
        while !closing, let event = connection.nextEvent() {
            handle(event, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushOutput(context: context)
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Pushes decided but neither logged nor answered are dropped: the client never heard back.
        staged = KeptBatch()
        stagedLines.removeAll()
        stagedRefusals.removeAll()
        closing = true
        handshake?.finish()
        handshake = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Bad TLS or a socket error: the client gets a closed socket and the server goes on.
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            let services = exchange.services
            services.events.record(.idledOut(seconds: services.validator.policy.idleTimeout ?? 0, environment: exchange.connection.environment))
            goAway(reason: .idleTimeout, lastStreamID: exchange.connection.lastProcessedStream)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func handle(_ event: HTTP2Event, context: ChannelHandlerContext) {
        switch event {
        case .settings(_, let first):
            if first {
                // TLS and the client's preface are done: the handshake deadline no longer applies.
                handshake?.handshakeDone()
                handshake = nil
            }
        case .headers(let id, let head, let endStream):
            let stream = Stream(id: id, head: read(head))
            streams[id] = stream
            if endStream { finish(stream) }
        case .data(let id, let payload, let endStream):
            guard let stream = streams[id] else { return }
            stream.bodyLength += payload.readableBytes
            let room = PushValidator.maximumBufferedBody + 1 - stream.body.count
            if room > 0 { stream.body.append(contentsOf: payload.readableBytesView.prefix(room)) }
            if endStream { finish(stream) }
        case .trailers(let id):
            if let stream = streams[id] { finish(stream) }
        case .streamReset(let id, _), .streamError(let id, _, _):
            streams.removeValue(forKey: id)
        case .goAway:
            break  // The client opens nothing more; streams already open are still answered.
        case .connectionError(let code, let detail):
            exchange.services.logger.debug("HTTP/2 connection error", metadata: ["code": "\(code)", "detail": "\(detail)"])
            closing = true
            // Not closed at once: the abuser's frames still unread would make the kernel reset the
            // connection, and the reset can throw the GOAWAY away before the client reads why. Its
            // input is read and dropped (`closing`) until it hangs up or the grace ends.
            closeAfterGrace(flushOutput(context: context), channel: context.channel)
        }
    }

    /// What `head` says as APNs reads it: the last head's reading when it is the same head.
    private func read(_ head: HTTP2Head) -> IncomingPush.Head {
        if let lastHead, lastHead.wire === head { return lastHead.read }
        let read = IncomingPush.Head(method: head.method, path: head.path, headers: head.fields)
        lastHead = (head, read)
        return read
    }

    // MARK: Answering

    private func finish(_ stream: Stream) {
        decide(stream)
    }

    /// Decides on the push (first, or again with what ``Stream/progress`` found) and acts on it.
    private func decide(_ stream: Stream) {
        let request = stream.request
        let version = registryVersion()
        act(on: exchange.decide(request, progress: &stream.progress), stream: stream, request: request, version: version)
    }

    /// The version of a fleet's registry, read before a validation: what the pushes it accepts
    /// are kept against (nil when the registry is not a fleet's).
    private func registryVersion() -> Int64? {
        let registry = exchange.services.validator.registry
        return registry.isFleets ? registry.version : nil
    }

    private func act(on decision: consuming PushDecision, stream: Stream, request: IncomingPush, version: Int64?) {
        switch consume decision {
        case .refuse: reset(stream.id, .refusedStream)
        case .goAway(let reason):
            // Not answered: the GOAWAY's last-stream-ID tells the client it was not processed.
            streams.removeValue(forKey: stream.id)
            goAway(reason: reason, lastStreamID: exchange.connection.lastProcessedStream)
        case .answer(let answer, let delay, let refusal):
            guard let refusal else { return send(answer, on: stream, after: delay) }
            noteProcessed(stream.id)
            if delay == nil || delay == 0, inRead {
                stagedRefusals.append((stream, answer, refusal))
            } else {
                keepRefusals([(stream, answer, refusal)], delay: delay)
            }
        case .confirm:
            noteProcessed(stream.id)
            confirm(stream)
        case .claim(let claim, let fault):
            noteProcessed(stream.id)
            self.claim(claim, fault, for: stream)
        case .accept(let push, let delay):
            // Counted as processed now, so a GOAWAY sent before the commit does not disown it.
            noteProcessed(stream.id)
            if delay == nil || delay == 0, inRead {
                stagedLines.append(push, with: &lineEncoder)
                if staged.isEmpty { stagedVersion = version }
                staged.append(stream, push)
            } else {
                var line = BatchLines()
                line.append(push, with: &lineEncoder)
                keep(KeptBatch(streams: [stream], pushes: [push]), lines: line, version: version, delay: delay, callerFlushes: false)
            }
        }
    }

    /// A fleet's copy refused the push: once this receiver's copies have caught up with the
    /// store, the push is decided on again and answered as that decides.
    private func confirm(_ stream: Stream) {
        let registry = exchange.services.validator.registry
        let logger = exchange.services.logger
        resume(stream) {
            do { try await registry.catchUp() } catch {
                logger.warning("the fleet's device registry cannot be read; the refusal rests on this receiver's copy", metadata: ["error": "\(error)"])
            }
        } then: { handler, stream, _ in
            stream.progress.confirmed = true
            handler.decide(stream)
        }
    }

    /// Claims a use of a fleet's counted fault in the store, then decides again: with the fault
    /// when claimed; without the rule (used up, or the plan changed) after catching up; 503 when
    /// the store cannot be reached.
    private func claim(_ claim: FaultClaim, _ fault: Fault, for stream: Stream) {
        let plan = exchange.services.faults
        let registry = exchange.services.validator.registry
        resume(stream) { () -> Result<Bool, ReceiverError> in
            do throws(ReceiverError) {
                let claimed = try await plan.claim(claim)
                if !claimed { try? await registry.catchUp() }
                return .success(claimed)
            } catch {
                return .failure(error)
            }
        } then: { handler, stream, outcome in
            switch outcome {
            case .success(true):
                stream.progress.chosen = PushProgress.Chosen(fault: fault, planVersion: claim.planVersion, claimed: true)
                handler.decide(stream)
            case .success(false):
                stream.progress = PushProgress(chosen: nil, confirmed: true)
                handler.decide(stream)
            case .failure(let error):
                let request = stream.request
                handler.act(on: handler.exchange.unavailable(request, error), stream: stream, request: request, version: nil)
            }
        }
    }

    /// Runs `work` off the event loop, then `then` back on it, if the stream is still open, and
    /// flushes what that queued.
    private func resume<T: Sendable>(_ stream: Stream, _ work: @escaping @Sendable () async -> T,
                                     then: @escaping (APNsConnectionHandler, Stream, T) -> Void) {
        guard let context else { return }
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, stream, then), eventLoop: loop)
        Task {
            let outcome = await work()
            loop.execute {
                let (handler, stream, then) = bound.value
                guard !handler.closing, handler.streams[stream.id] === stream else { return }
                then(handler, stream, outcome)
                if !handler.inRead, let context = handler.context { handler.flushOutput(context: context) }
            }
        }
    }

    /// Keeps a fleet's refusals in its rejection log, then answers them (after `delay`, a
    /// fault's), kept or not: the refusal is APNs's answer either way, and a failure is logged.
    private func keepRefusals(_ batch: [Refused], delay: Int?) {
        guard let shared = exchange.services.sharedLog, let context else { return }
        let loop = context.eventLoop
        let logger = exchange.services.logger
        let bound = NIOLoopBound((self, batch), eventLoop: loop)
        shared.keep(refusals: batch.map(\.refusal), on: loop) { error in
            if let error { logger.error("refusals not kept in the fleet's rejection log; answered anyway", metadata: ["error": "\(error)"]) }
            let (handler, batch) = bound.value
            handler.answer(batch.lazy.map { ($0.stream, $0.answer) }, delay: delay)
            if !handler.inRead, let context = handler.context { handler.flushOutput(context: context) }
        }
    }

    private func send(_ answer: PushAnswer, on stream: Stream, after delay: Int?) {
        guard let delay, delay > 0, let context else { return write(answer, on: stream) }
        let loopBound = NIOLoopBound((self, stream), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay))) {
            let (handler, stream) = loopBound.value
            // The client may have reset the stream or gone meanwhile.
            guard !handler.closing, handler.streams[stream.id] === stream else { return }
            handler.write(answer, on: stream)
        }
    }

    /// Logs the pushes accepted in this read with one write, then queues their answers.
    private func commitStaged() {
        if !stagedRefusals.isEmpty {
            let refused = stagedRefusals
            stagedRefusals.removeAll(keepingCapacity: true)
            keepRefusals(refused, delay: nil)
        }
        guard !staged.isEmpty else { return }
        let batch = staged
        let lines = stagedLines
        staged = KeptBatch()
        stagedLines.removeAll()
        // Its callers, flushOutput and goAway, flush right after.
        keep(batch, lines: lines, version: stagedVersion, delay: nil, callerFlushes: true)
    }

    /// Keeps `batch` in the delivery log, then answers it (after `delay`, a fault's). The file
    /// keeps it at once, in this call; a fleet's shared log later, and the answers then come back
    /// to this connection's event loop.
    /// - Parameter callerFlushes: the caller flushes once this returns; otherwise, outside a read
    ///   (a delayed fault's push), this flushes the answers the file's keeping queued.
    /// - Parameter version: the fleet's registry's version the batch was validated on.
    private func keep(_ batch: KeptBatch, lines: BatchLines, version: Int64?, delay: Int?, callerFlushes: Bool) {
        // Answered now, not after a fault's delay: the pushes may go to the device side as their lines.
        let answeredNow = (delay ?? 0) == 0
        guard let shared = exchange.services.sharedLog else {
            let (answers, at) = exchange.commit(batch.pushes, lines: lines, asLines: answeredNow)
            answerKept(batch, answers, lines: at.map { .file(exchange.services.log, at: $0) }, delay: delay)
            if !callerFlushes, !inRead, let context { flushOutput(context: context) }
            return
        }
        guard let context else { return }
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, batch), eventLoop: loop)
        let pushes = batch.pushes
        let registry = exchange.services.validator.registry
        // `done` comes on this loop, after this returns.
        shared.keep(pushes, lines: lines.bytes, registryVersion: version, on: loop) { outcome in
            let answer = { @Sendable in
                let (handler, batch) = bound.value
                switch outcome {
                case .kept:
                    handler.answerKept(batch, handler.exchange.answers(for: pushes, kept: nil, lines: answeredNow ? lines : nil),
                                       lines: .bytes(lines.bytes), delay: delay)
                case .failed(let error):
                    handler.answerKept(batch, handler.exchange.answers(for: pushes, kept: error, lines: nil), lines: nil, delay: delay)
                case .stale: handler.validateAgain(batch, delay: delay)
                }
                // Outside a read nothing else flushes them.
                if !handler.inRead, let context = handler.context { handler.flushOutput(context: context) }
            }
            guard case .stale = outcome else { return answer() }
            // The registry changed since these were validated: nothing was kept. Catch up first
            // (a failure leaves the copy as it is, and the keep's own check decides again).
            Task {
                try? await registry.catchUp()
                loop.execute { answer() }
            }
        }
    }

    /// Decides again on the pushes of a batch the fleet's log found stale, on the copies' latest
    /// (registry and fault plan), and acts on what that decides (kept and answered 200, or refused).
    private func validateAgain(_ batch: KeptBatch, delay: Int?) {
        asInRead {
            for stream in batch.streams where streams[stream.id] === stream {
                stream.progress.confirmed = true
                decide(stream)
            }
        }
    }

    /// Runs `body` as a read runs: the answers it queues are written once, by the caller's
    /// flush, not one by one (``inRead``).
    private func asInRead(_ body: () -> Void) {
        let wasInRead = inRead
        inRead = true
        defer { inRead = wasInRead }
        body()
    }

    /// Queues the answers of kept pushes whose streams are still open (the caller flushes), then
    /// hands the device side, as one, the lines of those that go as lines (``PushAnswer/ToDevice/line(_:)``),
    /// which are at `lines`.
    /// (By index, not through ``answer(_:delay:)``: each answer is read in place, not copied.)
    private func answerKept(_ batch: KeptBatch, _ answers: [PushAnswer], lines: HandedLines.Place?, delay: Int?) {
        var handed: [Range<Int>] = []
        asInRead {
            for index in 0..<min(answers.count, batch.streams.count) where streams[batch.streams[index].id] === batch.streams[index] {
                if case .line(let line) = answers[index].toDevice { handed.append(line) }
                send(answers[index], on: batch.streams[index], after: delay)
            }
        }
        if let lines, !handed.isEmpty { exchange.handOff(lines: HandedLines(lines, ranges: handed)) }
    }

    /// Queues answers on the streams still open, after `delay` (a fault's), as one write (the
    /// caller flushes): a fleet's refusals once kept.
    private func answer<Answers: Sequence>(_ answers: Answers, delay: Int?) where Answers.Element == (Stream, PushAnswer) {
        asInRead {
            for (stream, answer) in answers where streams[stream.id] === stream { send(answer, on: stream, after: delay) }
        }
    }

    private func noteProcessed(_ id: UInt32) {
        let connection = exchange.connection
        if id > connection.lastProcessedStream { connection.lastProcessedStream = id }
    }

    private func write(_ answer: PushAnswer, on stream: Stream) {
        noteProcessed(stream.id)
        var block = ByteBuffer()
        block.reserveCapacity(128)
        HPACKAnswer.writeStatus(answer.status, into: &block)
        if answer.body != nil { HPACKAnswer.writeContentType("application/json", into: &block) }
        HPACKAnswer.writeLiteral(name: "apns-id", value: answer.apnsID, into: &block)
        if let unique = answer.apnsUniqueID { HPACKAnswer.writeLiteral(name: "apns-unique-id", value: unique, into: &block) }
        streams.removeValue(forKey: stream.id)
        connection.writeHeaders(&block, stream: stream.id, endStream: answer.body == nil)
        if let body = answer.body {
            // An error's JSON; it goes out as the client's windows allow.
            connection.writeBody(body, stream: stream.id)
        } else if case .push(let push) = answer.toDevice {
            // The answer is all out: an accepted push goes to the device side.
            exchange.handOff(push)
        }
        if !inRead, let context { flushOutput(context: context) }
    }

    private func reset(_ id: UInt32, _ code: HTTP2Code) {
        streams.removeValue(forKey: id)
        connection.resetStream(id, code: code)
        if !inRead, let context { flushOutput(context: context) }
    }

    /// Says GOAWAY with APNs's `{"reason":…}` and closes after ``GoAwayTiming/grace`` (unless the
    /// client hangs up first). Streams that finish afterwards are refused.
    /// - Parameter closeIfIdle: close as soon as the GOAWAY is written when no request is in
    ///   flight (a receiver shutting down: nothing is left to answer), instead of after the grace.
    func goAway(reason: APNsReason, lastStreamID: UInt32, closeIfIdle: Bool = false) {
        guard let context, !exchange.connection.closing, !closing else { return }
        exchange.connection.closing = true
        commitStaged()
        connection.writeGoAway(lastStreamID: lastStreamID, code: .noError, debugData: APNsErrorBody(reason: reason).encoded())
        let written = flushOutput(context: context)
        if closeIfIdle, streams.isEmpty {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        } else {
            closeAfterGrace(written, channel: context.channel)
        }
    }

    /// Closes `channel` ``GoAwayTiming/grace`` after its GOAWAY is `written`, unless the client hangs up first.
    private func closeAfterGrace(_ written: EventLoopFuture<Void>, channel: any Channel) {
        written.whenComplete { _ in
            let close = channel.eventLoop.scheduleTask(in: GoAwayTiming.grace) { channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in close.cancel() }
        }
    }

    @discardableResult
    private func flushOutput(context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        commitStaged()
        guard let bytes = connection.takeOutput(allocator: context.channel.allocator) else { return context.eventLoop.makeSucceededVoidFuture() }
        return context.writeAndFlush(wrapOutboundOut(bytes))
    }
}
