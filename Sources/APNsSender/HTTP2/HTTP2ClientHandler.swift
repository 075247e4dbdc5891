import APNsWire
import HTTP2Wire
import NIOCore
import NIOHPACK
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

/// One push waiting for a stream.
struct OutgoingPush: Sendable {
    var method: String
    var path: String
    var fields: [(name: String, value: String)]
    var body: [UInt8]
    /// Resumed exactly once, on the event loop: with the answer or with why there is none.
    var reply: UnsafeContinuation<Result<APNsResponse, SenderError>, Never>
    var timeout: TimeAmount
    /// When "no answer within `timeout`" is due: counted from when the push was handed over, so a
    /// push that waits for a free stream does not wait longer.
    let deadline: NIODeadline

    init(method: String, path: String, fields: [(name: String, value: String)], body: [UInt8],
         reply: UnsafeContinuation<Result<APNsResponse, SenderError>, Never>, timeout: TimeAmount) {
        self.method = method
        self.path = path
        self.fields = fields
        self.body = body
        self.reply = reply
        self.timeout = timeout
        self.deadline = .now() + timeout
    }

    func fail(_ error: SenderError) { reply.resume(returning: .failure(error)) }
    var timedOut: SenderError { SenderError(.timeout, "no answer within \(timeout.nanoseconds / 1_000_000_000) s") }
}

/// The client side of one HTTP/2 connection, on the connection's bytes (after TLS, if any): the
/// preface, SETTINGS both ways, requests as HEADERS (HPACK with a dynamic table) and DATA within
/// the server's flow-control windows, answers read back into ``APNsResponse``s, PING, RST_STREAM,
/// WINDOW_UPDATE and GOAWAY.
///
/// Pushes beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS wait their turn here. Writes made
/// between two event-loop turns go out in one flush. Every push learns its fate: an answer, or a
/// ``SenderError`` that says whether the server can have processed it.
final class HTTP2ClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private final class Stream {
        let id: UInt32
        let reply: UnsafeContinuation<Result<APNsResponse, SenderError>, Never>
        var response = APNsResponse(status: 0)
        var body: [UInt8] = []
        /// Request bytes not yet sent for lack of window.
        var pendingBody: [UInt8]?
        var sendWindow: Int
        var receiveWindow = HTTP2InboundWindow()
        let deadline: NIODeadline
        let timeout: TimeAmount

        init(id: UInt32, push: OutgoingPush, sendWindow: Int) {
            self.id = id
            self.reply = push.reply
            self.sendWindow = sendWindow
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
    private var started = false
    private var closed = false
    private var sawServerSettings = false
    private var nextStreamID: UInt32 = 1
    private var streams: [UInt32: Stream] = [:]
    private var waiting: [OutgoingPush] = []
    private var waitingHead = 0
    private var maxConcurrent = HTTP2ClientHandler.initialConcurrencyGuess
    private var peerInitialWindow = HTTP2Limits.defaultWindow
    private var peerMaxFrameSize = HTTP2Limits.defaultMaxFrameSize
    private var sendWindow = HTTP2Limits.defaultWindow
    private var receiveWindow = HTTP2InboundWindow()
    private var blocked: [UInt32] = []
    private var encoder = HPACKRequestEncoder()
    private var decoder: HPACKDecoder
    private var headerBlock: (stream: UInt32, endStream: Bool, fragment: ByteBuffer)?
    private var inbound = HTTP2FrameReader()
    private var output: ByteBuffer
    private var inRead = false
    /// One timer for the earliest answer deadline, not one per push (``sweepTimeouts()``).
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?

    init(state: ClientConnectionState, scheme: String, authority: String, allocator: ByteBufferAllocator) {
        self.state = state
        self.scheme = scheme
        self.authority = authority
        self.output = allocator.buffer(capacity: 4096)
        self.decoder = HPACKDecoder(allocator: allocator)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    /// The connection preface and our SETTINGS (no server push).
    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        output.writeBytes(HTTP2Limits.preface)
        output.writeSettingsFrame([(.enablePush, 0)])
        flush()
    }

    // MARK: Sending

    /// Sends pushes now, or when a stream is free.
    func enqueue(_ pushes: [OutgoingPush]) {
        for push in pushes {
            guard !closed, state.usable else {
                push.fail(SenderError(.connectionClosed, "the connection was closing before the push was sent: not processed, safe to retry"))
                continue
            }
            if streams.count < maxConcurrent, waitingHead == waiting.count {
                open(push)
            } else {
                waiting.append(push)
                if timerDeadline.map({ push.deadline < $0 }) ?? true { armTimer(at: push.deadline) }
            }
        }
        flush()
    }

    private func open(_ push: OutgoingPush) {
        guard nextStreamID < UInt32(Int32.max) else {
            // Stream IDs are used up: this connection takes no more; the pool opens another.
            state.retire()
            return push.fail(SenderError(.connectionClosed, "the connection has used all its stream IDs: not processed, safe to retry"))
        }
        let id = nextStreamID
        nextStreamID += 2
        let stream = Stream(id: id, push: push, sendWindow: peerInitialWindow)
        streams[id] = stream
        var fields: [(name: String, value: String)] = [(":method", push.method), (":scheme", scheme), (":path", push.path),
                                                       (":authority", authority)]
        fields += push.fields
        fields.append(("content-length", String(push.body.count)))
        var block = ByteBuffer()
        block.reserveCapacity(256)
        encoder.encode(fields, into: &block)
        writeHeaders(&block, stream: id, endStream: push.body.isEmpty)
        if !push.body.isEmpty {
            stream.pendingBody = push.body
            if !sendBody(of: stream) { blocked.append(id) }
        }
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
                finish(stream, .failure(SenderError(.timeout, "no answer within \(stream.timeout.nanoseconds / 1_000_000_000) s")))
                output.writeResetStream(stream: stream.id, code: .cancel)
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

    /// HEADERS, split into CONTINUATIONs if the block is larger than the server's frame size.
    private func writeHeaders(_ block: inout ByteBuffer, stream: UInt32, endStream: Bool) {
        var type = HTTP2FrameType.headers
        var flags = endStream ? HTTP2Flag.endStream : 0
        repeat {
            let length = min(block.readableBytes, peerMaxFrameSize)
            if length == block.readableBytes { flags |= HTTP2Flag.endHeaders }
            output.writeFrameHeader(length: length, type: type, flags: flags, stream: stream)
            var piece = block.readSlice(length: length)!
            output.writeBuffer(&piece)
            type = .continuation
            flags = 0
        } while block.readableBytes > 0
    }

    /// Sends as much of a stream's body as the windows allow; true when all of it went out.
    private func sendBody(of stream: Stream) -> Bool {
        guard var body = stream.pendingBody else { return true }
        let done = output.writeDataFrames(&body, stream: stream.id, connectionWindow: &sendWindow,
                                          streamWindow: &stream.sendWindow, maxFrameSize: peerMaxFrameSize)
        stream.pendingBody = done ? nil : body
        return done
    }

    private func sendBlocked() {
        guard !blocked.isEmpty else { return }
        blocked.removeAll { id in
            guard let stream = streams[id] else { return true }
            return sendBody(of: stream)
        }
    }

    /// Starts waiting pushes while streams are free.
    private func startWaiting() {
        while waitingHead < waiting.count, streams.count < maxConcurrent, !closed, state.usable {
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
    private func flush() {
        guard output.readableBytes > 0, let context else { return }
        let bytes = output
        output = context.channel.allocator.buffer(capacity: 4096)
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !closed else { return }
        inbound.append(&bytes)
        inRead = true
        reading: while !closed {
            switch inbound.next() {
            case .needMore: break reading
            case .tooLarge(let header):
                connectionError(.frameSizeError, "a \(header.length)-byte frame from the server")
                break reading
            case .frame(let header, var payload):
                frame(header, payload: &payload)
            }
        }
        inRead = false
        inbound.compact()
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
        for stream in streams.values {
            // A request whose body had not all gone out cannot have been processed.
            let error = stream.pendingBody != nil
                ? SenderError(.connectionClosed, "the connection closed before the push was all sent: not processed, safe to retry")
                : reason.map { SenderError(.interrupted, "the server sent GOAWAY (\($0)) and closed before answering: it may have accepted the push") }
                ?? SenderError(.interrupted, "the connection closed after the push was sent and before an answer: APNs may have accepted it (not retried, so it is not delivered twice)")
            finish(stream, .failure(error))
        }
        failWaiting("the connection closed before the push was sent: not processed, safe to retry")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        state.retire(because: "\(error)")
        context.close(promise: nil)
    }

    private func frame(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) {
        let type = HTTP2FrameType(rawValue: header.type)
        if let block = headerBlock, type != .continuation || header.stream != block.stream {
            return connectionError(.protocolError, "a frame other than CONTINUATION inside a header block")
        }
        if !sawServerSettings {
            guard type == .settings, header.flags & HTTP2Flag.ack == 0 else {
                return connectionError(.protocolError, "the server's first frame was not SETTINGS")
            }
            sawServerSettings = true
        }
        switch type {
        case .headers:
            guard header.stream != 0 else { return connectionError(.protocolError, "HEADERS on stream 0") }
            guard payload.stripHTTP2Padding(flags: header.flags, priorityFields: header.flags & HTTP2Flag.priority != 0) else {
                return connectionError(.protocolError, "HEADERS padding longer than the frame")
            }
            headerBlock = (header.stream, header.flags & HTTP2Flag.endStream != 0, payload)
            if header.flags & HTTP2Flag.endHeaders != 0 { completeHeaderBlock() }
        case .continuation:
            guard headerBlock != nil else { return connectionError(.protocolError, "CONTINUATION without HEADERS") }
            headerBlock!.fragment.writeBuffer(&payload)
            if header.flags & HTTP2Flag.endHeaders != 0 { completeHeaderBlock() }
        case .data: data(header, payload: &payload)
        case .rstStream:
            guard payload.readableBytes == 4 else { return connectionError(.frameSizeError, "RST_STREAM of \(payload.readableBytes) bytes") }
            let code = payload.readInteger(as: UInt32.self)!
            guard let stream = streams[header.stream] else { return }
            finish(stream, .failure(code == HTTP2Code.refusedStream.rawValue
                ? SenderError(.streamRefused, "the server refused the stream (REFUSED_STREAM): not processed, safe to retry")
                : SenderError(.protocolError, "the server reset the stream: \(HTTP2Code(rawValue: code).map { "\($0)" } ?? "code \(code)")")))
        case .settings: settings(header, payload: &payload)
        case .ping:
            guard payload.readableBytes == 8 else { return connectionError(.frameSizeError, "PING of \(payload.readableBytes) bytes") }
            if header.flags & HTTP2Flag.ack == 0 {
                output.writeFrameHeader(length: 8, type: .ping, flags: HTTP2Flag.ack, stream: 0)
                output.writeBuffer(&payload)
            }
        case .goAway: goAway(payload: &payload)
        case .windowUpdate:
            guard payload.readableBytes == 4 else { return connectionError(.frameSizeError, "WINDOW_UPDATE of \(payload.readableBytes) bytes") }
            let increment = Int(payload.readInteger(as: UInt32.self)! & 0x7fff_ffff)
            if header.stream == 0 {
                sendWindow += increment
            } else if let stream = streams[header.stream] {
                stream.sendWindow += increment
            }
            sendBlocked()
        case .pushPromise: connectionError(.protocolError, "PUSH_PROMISE, though SETTINGS_ENABLE_PUSH is 0")
        case .priority, nil: break
        }
    }

    private func completeHeaderBlock() {
        guard var block = headerBlock else { return }
        headerBlock = nil
        let fields: HPACKHeaders
        do { fields = try decoder.decodeHeaders(from: &block.fragment) } catch {
            return connectionError(.compressionError, "the server's header block: \(error)")
        }
        guard let stream = streams[block.stream] else { return }
        for (name, value, _) in fields {
            switch name {
            case ":status":
                let status = Int(value) ?? 0
                // An interim (1xx) answer is not the answer.
                if (100..<200).contains(status) { return }
                stream.response.status = status
            case "apns-id": stream.response.apnsID = value
            case "apns-unique-id": stream.response.apnsUniqueID = value
            default: break
            }
        }
        if block.endStream { complete(stream) }
    }

    private func data(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) {
        let length = payload.readableBytes
        guard receiveWindow.receive(length) else { return connectionError(.flowControlError, "DATA beyond the connection window") }
        if let increment = receiveWindow.dueUpdate() { output.writeWindowUpdate(stream: 0, increment: increment) }
        guard let stream = streams[header.stream] else { return }
        guard stream.receiveWindow.receive(length) else {
            output.writeResetStream(stream: stream.id, code: .flowControlError)
            return finish(stream, .failure(SenderError(.protocolError, "the server sent more DATA than the stream's window allows")))
        }
        guard payload.stripHTTP2Padding(flags: header.flags, priorityFields: false) else {
            return connectionError(.protocolError, "DATA padding longer than the frame")
        }
        if stream.body.count < 65_536 { stream.body.append(contentsOf: payload.readableBytesView.prefix(65_536 - stream.body.count)) }
        if header.flags & HTTP2Flag.endStream != 0 {
            complete(stream)
        } else if let increment = stream.receiveWindow.dueUpdate() {
            output.writeWindowUpdate(stream: stream.id, increment: increment)
        }
    }

    private func settings(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) {
        guard header.flags & HTTP2Flag.ack == 0 else { return }
        guard payload.readableBytes % 6 == 0 else { return connectionError(.frameSizeError, "SETTINGS of \(payload.readableBytes) bytes") }
        while let id = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch HTTP2SettingID(rawValue: id) {
            case .maxConcurrentStreams: maxConcurrent = Int(min(value, 100_000))
            case .initialWindowSize:
                guard value <= UInt32(HTTP2Limits.maximumWindow) else { return connectionError(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE \(value)") }
                let delta = Int(value) - peerInitialWindow
                peerInitialWindow = Int(value)
                for stream in streams.values { stream.sendWindow += delta }
            case .maxFrameSize:
                guard value >= UInt32(HTTP2Limits.defaultMaxFrameSize), value <= UInt32(HTTP2Limits.largestMaxFrameSize) else {
                    return connectionError(.protocolError, "SETTINGS_MAX_FRAME_SIZE \(value)")
                }
                peerMaxFrameSize = Int(value)
            case .headerTableSize: encoder.setPeerTableSize(Int(value))
            default: break
            }
        }
        output.writeFrameHeader(length: 0, type: .settings, flags: HTTP2Flag.ack, stream: 0)
        sendBlocked()
        startWaiting()
    }

    /// GOAWAY: no new streams here; those above its last stream ID were not processed and fail
    /// as refused (safe to retry); the rest wait for their answers.
    private func goAway(payload: inout ByteBuffer) {
        guard payload.readableBytes >= 8 else { return connectionError(.frameSizeError, "GOAWAY of \(payload.readableBytes) bytes") }
        let last = payload.readInteger(as: UInt32.self)! & 0x7fff_ffff
        let code = payload.readInteger(as: UInt32.self)!
        let parsed = APNsErrorBody.decode(payload.readableBytesView).map { APNsReason(wire: $0.reason) }
        let reason = parsed ?? APNsReason(rawValue: "GOAWAY \(HTTP2Code(rawValue: code).map { "\($0)" } ?? "code \(code)")")
        state.recordGoAway(reason: reason, lastStream: last)
        for stream in streams.values where stream.id > last {
            finish(stream, .failure(SenderError(.streamRefused, "the server's GOAWAY (\(reason)) excluded this push (stream \(stream.id) > last stream \(last)): not processed, safe to retry")))
        }
        failWaiting("the server sent GOAWAY (\(reason)) before the push was sent: not processed, safe to retry")
    }

    private func connectionError(_ code: HTTP2Code, _ detail: String) {
        guard !closed, let context else { return }
        state.retire(because: "HTTP/2 \(code): \(detail)")
        output.writeGoAway(lastStreamID: 0, code: code, debugData: Array(detail.utf8.prefix(256)))
        flush()
        context.close(promise: nil)
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
        stream.reply.resume(returning: result)
        if !closed { startWaiting() }
    }

    private func failWaiting(_ message: String) {
        let pending = waiting[waitingHead...]
        waiting.removeAll()
        waitingHead = 0
        for push in pending { push.fail(SenderError(.connectionClosed, message)) }
    }
}
