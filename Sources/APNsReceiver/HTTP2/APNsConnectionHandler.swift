import APNsWire
import HTTP2Wire
import NIOCore
import NIOHPACK

/// How long a connection told GOAWAY stays open before the server closes it: time for answers
/// still queued to go out and for the client to read them and hang up first. Closing at once
/// would make the kernel answer the client's unread requests with a TCP reset, which throws
/// away answers and the GOAWAY itself before the client reads them.
enum GoAwayTiming {
    static let grace: TimeAmount = .seconds(1)
}

/// The server side of one HTTP/2 connection, as APNs speaks it, working on the connection's
/// bytes directly (after TLS, if any): the preface and SETTINGS, HEADERS/CONTINUATION (HPACK),
/// DATA with flow control both ways, PING, RST_STREAM, WINDOW_UPDATE and GOAWAY, with RFC 9113's
/// connection and stream errors. Each finished request goes to ``PushExchange``; the answers of
/// one read go out in one write.
///
/// Streams are plain records in a dictionary, not channels: an APNs request is one HEADERS, a
/// small body, and one answer, so per-stream pipelines (swift-nio-http2's multiplexer) cost more
/// than everything APNs checks. HPACK decoding is NIOHPACK's; answers are written by ``HPACKAnswer``.
final class APNsConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The SETTINGS APNs announces.
    static let maxConcurrentStreams = 1000
    static let maxHeaderListSize = 8000
    static let settings: [(HTTP2SettingID, UInt32)] = [
        (.headerTableSize, 4096), (.maxConcurrentStreams, UInt32(maxConcurrentStreams)),
        (.initialWindowSize, UInt32(HTTP2Limits.defaultWindow)), (.maxFrameSize, UInt32(HTTP2Limits.defaultMaxFrameSize)),
        (.maxHeaderListSize, UInt32(maxHeaderListSize)),
    ]
    /// The connection-level receive window, raised from 64 KiB at the start.
    static let connectionWindow = 1 << 20
    /// A header block (HEADERS and its CONTINUATIONs) larger than this is ENHANCE_YOUR_CALM.
    static let maximumHeaderBlock = 64 * 1024

    private enum Phase { case preface, firstSettings, open, failed }

    /// What a request's header block says.
    private struct RequestHead {
        var method: String?
        var path: String?
        var headers: [(name: String, value: String)] = []
        var contentLength: Int?
    }

    /// The last header block that left the HPACK table alone, and what it said: the same bytes
    /// mean the same request head until the table changes (``HPACKBlockShape``).
    private struct HeadMemo {
        var block: ByteBuffer
        var generation: Int
        var head: RequestHead
    }

    /// One request stream.
    private final class Stream {
        let id: UInt32
        let head: RequestHead
        var body: [UInt8] = []
        var bodyLength = 0
        var receiveWindow = HTTP2InboundWindow()
        var sendWindow: Int
        var remoteClosed = false
        /// An answer body waiting for flow-control window.
        var pendingBody: [UInt8]?
        var pendingDelivery: AcceptedPush?

        init(id: UInt32, head: RequestHead, sendWindow: Int) {
            self.id = id
            self.head = head
            self.sendWindow = sendWindow
        }
    }

    /// A header block being read: HEADERS, then CONTINUATIONs until END_HEADERS.
    private struct HeaderBlock {
        enum Kind { case request, trailers, refused, malformed }
        var stream: UInt32
        var endStream: Bool
        var kind: Kind
        var fragment: ByteBuffer
    }

    private let exchange: PushExchange
    private var handshake: Scheduled<Void>?
    private var phase = Phase.preface
    private var inbound = HTTP2FrameReader()
    private var output: ByteBuffer
    private var decoder: HPACKDecoder
    /// Counts header blocks that changed the HPACK table; a memo is good only within one generation.
    private var tableGeneration = 0
    private var headMemo: HeadMemo?
    private var streams: [UInt32: Stream] = [:]
    private var highestStreamID: UInt32 = 0
    private var headerBlock: HeaderBlock?
    private var receiveWindow = HTTP2InboundWindow()
    private var sendWindow = HTTP2Limits.defaultWindow
    private var peerInitialWindow = HTTP2Limits.defaultWindow
    private var peerMaxFrameSize = HTTP2Limits.defaultMaxFrameSize
    private var blocked: [UInt32] = []
    /// Pushes accepted during this read, and their delivery-log lines: written with one
    /// `write(2)` before the read's answers go out (``commitStaged()``).
    private var staged: [(stream: Stream, push: AcceptedPush)] = []
    private var stagedLines: [UInt8] = []
    private var inRead = false
    private var context: ChannelHandlerContext?

    init(exchange: PushExchange, handshake: Scheduled<Void>?, allocator: ByteBufferAllocator) {
        self.exchange = exchange
        self.handshake = handshake
        self.output = allocator.buffer(capacity: 1024)
        self.decoder = HPACKDecoder(allocator: allocator, maxDynamicTableSize: 4096, maxHeaderListSize: Self.maximumHeaderBlock)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard phase != .failed else { return }
        inbound.append(&bytes)
        inRead = true
        defer { inRead = false }
        parse(context: context)
        inbound.compact()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushOutput(context: context)
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Pushes decided but neither logged nor answered are dropped: the client never heard back.
        staged.removeAll()
        stagedLines.removeAll()
        phase = .failed
        handshake?.cancel()
        handshake = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Bad TLS or a socket error: the client gets a closed socket and the server goes on.
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            goAway(reason: .idleTimeout, lastStreamID: exchange.connection.lastProcessedStream)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func parse(context: ChannelHandlerContext) {
        if phase == .preface {
            switch inbound.readClientPreface() {
            case .needMore: return
            case .invalid: return fail(.protocolError, "not an HTTP/2 connection preface")
            case .complete: break
            }
            phase = .firstSettings
            output.writeSettingsFrame(Self.settings)
            output.writeWindowUpdate(stream: 0, increment: Self.connectionWindow - HTTP2Limits.defaultWindow)
            receiveWindow = HTTP2InboundWindow(size: Self.connectionWindow)
        }
        while phase != .failed {
            switch inbound.next() {
            case .needMore: return
            case .tooLarge(let header):
                return fail(.frameSizeError, "a \(header.length)-byte frame; the limit is \(HTTP2Limits.defaultMaxFrameSize)")
            case .frame(let header, var payload):
                frame(rawType: header.type, flags: header.flags, stream: header.stream, payload: &payload, context: context)
            }
        }
    }

    private func frame(rawType: UInt8, flags: UInt8, stream: UInt32, payload: inout ByteBuffer, context: ChannelHandlerContext) {
        let type = HTTP2FrameType(rawValue: rawType)
        if let block = headerBlock, type != .continuation || stream != block.stream {
            return fail(.protocolError, "a frame other than CONTINUATION in the middle of a header block")
        }
        if phase == .firstSettings {
            guard type == .settings, flags & HTTP2Flag.ack == 0 else {
                return fail(.protocolError, "the client's first frame must be SETTINGS")
            }
            phase = .open
            // TLS and the client's preface are done: the handshake deadline no longer applies.
            handshake?.cancel()
            handshake = nil
        }
        switch type {
        case .data: data(flags: flags, stream: stream, payload: &payload)
        case .headers: headers(flags: flags, stream: stream, payload: &payload)
        case .continuation: continuation(flags: flags, stream: stream, payload: &payload)
        case .priority:
            guard stream != 0 else { return fail(.protocolError, "PRIORITY on stream 0") }
            guard payload.readableBytes == 5 else { return reset(stream, .frameSizeError) }
        case .rstStream:
            guard stream != 0 else { return fail(.protocolError, "RST_STREAM on stream 0") }
            guard payload.readableBytes == 4 else { return fail(.frameSizeError, "RST_STREAM of \(payload.readableBytes) bytes") }
            guard stream <= highestStreamID else { return fail(.protocolError, "RST_STREAM on idle stream \(stream)") }
            forget(stream)
        case .settings: settings(flags: flags, stream: stream, payload: &payload)
        case .pushPromise: fail(.protocolError, "a client sent PUSH_PROMISE")
        case .ping:
            guard stream == 0 else { return fail(.protocolError, "PING on stream \(stream)") }
            guard payload.readableBytes == 8 else { return fail(.frameSizeError, "PING of \(payload.readableBytes) bytes") }
            if flags & HTTP2Flag.ack == 0 {
                output.writeFrameHeader(length: 8, type: .ping, flags: HTTP2Flag.ack, stream: 0)
                output.writeBuffer(&payload)
                if !inRead { flushOutput(context: context) }
            }
        case .goAway:
            guard stream == 0 else { return fail(.protocolError, "GOAWAY on stream \(stream)") }
            guard payload.readableBytes >= 8 else { return fail(.frameSizeError, "GOAWAY of \(payload.readableBytes) bytes") }
            // The client opens nothing more; streams already open are still answered.
        case .windowUpdate: windowUpdate(stream: stream, payload: &payload)
        case nil: break  // Unknown frame types are ignored (RFC 9113 §4.1).
        }
    }

    private func data(flags: UInt8, stream id: UInt32, payload: inout ByteBuffer) {
        guard id != 0 else { return fail(.protocolError, "DATA on stream 0") }
        let flowLength = payload.readableBytes
        guard receiveWindow.receive(flowLength) else { return fail(.flowControlError, "DATA beyond the connection window") }
        if let increment = receiveWindow.dueUpdate() { output.writeWindowUpdate(stream: 0, increment: increment) }
        guard let stream = streams[id] else {
            // DATA on a stream this side reset or answered is ignored; on an idle stream it is an error.
            if id > highestStreamID { fail(.protocolError, "DATA on idle stream \(id)") }
            return
        }
        guard !stream.remoteClosed else { return reset(id, .streamClosed) }
        guard stream.receiveWindow.receive(flowLength) else { return reset(id, .flowControlError) }
        guard payload.stripHTTP2Padding(flags: flags, priorityFields: false) else { return fail(.protocolError, "DATA padding longer than the frame") }
        stream.bodyLength += payload.readableBytes
        let room = PushValidator.maximumBufferedBody + 1 - stream.body.count
        if room > 0 { stream.body.append(contentsOf: payload.readableBytesView.prefix(room)) }
        if flags & HTTP2Flag.endStream != 0 {
            stream.remoteClosed = true
            finish(stream)
        } else if let increment = stream.receiveWindow.dueUpdate() {
            output.writeWindowUpdate(stream: id, increment: increment)
        }
    }

    private func headers(flags: UInt8, stream id: UInt32, payload: inout ByteBuffer) {
        guard id != 0, id & 1 == 1 else { return fail(.protocolError, "HEADERS on stream \(id)") }
        guard payload.stripHTTP2Padding(flags: flags, priorityFields: flags & HTTP2Flag.priority != 0) else {
            return fail(.protocolError, "HEADERS padding longer than the frame")
        }
        let endStream = flags & HTTP2Flag.endStream != 0
        let kind: HeaderBlock.Kind
        if let stream = streams[id] {
            // A second block on a stream is trailers: it must end the stream.
            guard !stream.remoteClosed else { return fail(.streamClosed, "HEADERS on half-closed stream \(id)") }
            kind = endStream ? .trailers : .malformed
        } else {
            guard id > highestStreamID else { return fail(.protocolError, "HEADERS on closed stream \(id)") }
            highestStreamID = id
            kind = streams.count >= Self.maxConcurrentStreams || exchange.connection.closing ? .refused : .request
        }
        headerBlock = HeaderBlock(stream: id, endStream: endStream, kind: kind, fragment: payload)
        if flags & HTTP2Flag.endHeaders != 0 { completeHeaderBlock() }
    }

    private func continuation(flags: UInt8, stream: UInt32, payload: inout ByteBuffer) {
        guard headerBlock != nil else { return fail(.protocolError, "CONTINUATION without HEADERS") }
        guard headerBlock!.fragment.readableBytes + payload.readableBytes <= Self.maximumHeaderBlock else {
            return fail(.enhanceYourCalm, "a header block over \(Self.maximumHeaderBlock) bytes")
        }
        headerBlock!.fragment.writeBuffer(&payload)
        if flags & HTTP2Flag.endHeaders != 0 { completeHeaderBlock() }
    }

    private func completeHeaderBlock() {
        guard var block = headerBlock else { return }
        headerBlock = nil
        if block.kind == .request, let memo = headMemo, memo.generation == tableGeneration, memo.block == block.fragment {
            return open(block.stream, head: memo.head, endStream: block.endStream)
        }
        let original = block.fragment
        let fields: HPACKHeaders
        do { fields = try decoder.decodeHeaders(from: &block.fragment) } catch {
            return fail(.compressionError, "HPACK: \(error)")
        }
        let pure = !HPACKBlockShape.mutatesTable(original)
        if !pure { tableGeneration += 1 }
        switch block.kind {
        case .refused: reset(block.stream, .refusedStream)
        case .malformed: reset(block.stream, .protocolError)
        case .trailers:
            guard let stream = streams[block.stream] else { return }
            guard !fields.contains(where: { $0.name.hasPrefix(":") }) else { return reset(block.stream, .protocolError) }
            stream.remoteClosed = true
            finish(stream)
        case .request:
            guard let head = Self.readRequest(fields) else { return reset(block.stream, .protocolError) }
            // (A copy: the block is a slice of a read buffer it would otherwise keep alive.)
            if pure { headMemo = HeadMemo(block: ByteBuffer(bytes: original.readableBytesView), generation: tableGeneration, head: head) }
            open(block.stream, head: head, endStream: block.endStream)
        }
    }

    private func open(_ id: UInt32, head: RequestHead, endStream: Bool) {
        let stream = Stream(id: id, head: head, sendWindow: peerInitialWindow)
        streams[id] = stream
        if endStream {
            stream.remoteClosed = true
            finish(stream)
        }
    }

    /// Reads a request's fields; nil when the request is malformed (RFC 9113 §8.1.1).
    private static func readRequest(_ fields: HPACKHeaders) -> RequestHead? {
        var head = RequestHead()
        var scheme = false
        var regular = false
        for (name, value, _) in fields {
            if name.hasPrefix(":") {
                guard !regular else { return nil }
                switch name {
                case ":method":
                    guard head.method == nil else { return nil }
                    head.method = value
                case ":path":
                    guard head.path == nil, !value.isEmpty else { return nil }
                    head.path = value
                case ":scheme":
                    guard !scheme else { return nil }
                    scheme = true
                case ":authority": break
                default: return nil
                }
                continue
            }
            regular = true
            guard !name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return nil }
            switch name {
            case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade": return nil
            case "te" where value != "trailers": return nil
            case "content-length":
                guard let length = Int(value), length >= 0, head.contentLength == nil || head.contentLength == length else { return nil }
                head.contentLength = length
            default: break
            }
            head.headers.append((name, value))
        }
        guard head.method != nil, head.path != nil, scheme else { return nil }
        return head
    }

    private func settings(flags: UInt8, stream: UInt32, payload: inout ByteBuffer) {
        guard stream == 0 else { return fail(.protocolError, "SETTINGS on stream \(stream)") }
        if flags & HTTP2Flag.ack != 0 {
            guard payload.readableBytes == 0 else { return fail(.frameSizeError, "SETTINGS ACK with a payload") }
            return
        }
        guard payload.readableBytes % 6 == 0 else { return fail(.frameSizeError, "SETTINGS of \(payload.readableBytes) bytes") }
        while let id = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch HTTP2SettingID(rawValue: id) {
            case .enablePush:
                guard value <= 1 else { return fail(.protocolError, "SETTINGS_ENABLE_PUSH \(value)") }
            case .initialWindowSize:
                guard value <= UInt32(HTTP2Limits.maximumWindow) else { return fail(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE \(value)") }
                let delta = Int(value) - peerInitialWindow
                peerInitialWindow = Int(value)
                for stream in streams.values {
                    stream.sendWindow += delta
                    guard stream.sendWindow <= HTTP2Limits.maximumWindow else { return fail(.flowControlError, "a stream window over 2^31-1") }
                }
            case .maxFrameSize:
                guard value >= UInt32(HTTP2Limits.defaultMaxFrameSize), value <= UInt32(HTTP2Limits.largestMaxFrameSize) else {
                    return fail(.protocolError, "SETTINGS_MAX_FRAME_SIZE \(value)")
                }
                peerMaxFrameSize = Int(value)
            default: break  // Header table size (answers use no dynamic table), and unknown settings.
            }
        }
        output.writeFrameHeader(length: 0, type: .settings, flags: HTTP2Flag.ack, stream: 0)
        sendBlocked()
    }

    private func windowUpdate(stream id: UInt32, payload: inout ByteBuffer) {
        guard payload.readableBytes == 4 else { return fail(.frameSizeError, "WINDOW_UPDATE of \(payload.readableBytes) bytes") }
        let increment = Int(payload.readInteger(as: UInt32.self)! & 0x7fff_ffff)
        if id == 0 {
            guard increment > 0 else { return fail(.protocolError, "WINDOW_UPDATE of 0 on the connection") }
            sendWindow += increment
            guard sendWindow <= HTTP2Limits.maximumWindow else { return fail(.flowControlError, "the connection window over 2^31-1") }
        } else if let stream = streams[id] {
            guard increment > 0 else { return reset(id, .protocolError) }
            stream.sendWindow += increment
            guard stream.sendWindow <= HTTP2Limits.maximumWindow else { return reset(id, .flowControlError) }
        } else if id > highestStreamID {
            return fail(.protocolError, "WINDOW_UPDATE on idle stream \(id)")
        }
        sendBlocked()
    }

    // MARK: Answering

    private func finish(_ stream: Stream) {
        if let expected = stream.head.contentLength, expected != stream.bodyLength { return reset(stream.id, .protocolError) }
        let request = IncomingPush(method: stream.head.method, path: stream.head.path, headers: stream.head.headers, body: stream.body,
                                   bodyLength: stream.bodyLength)
        switch exchange.decide(request) {
        case .refuse: reset(stream.id, .refusedStream)
        case .goAway(let reason):
            forget(stream.id)
            goAway(reason: reason, lastStreamID: exchange.connection.lastProcessedStream)
        case .answer(let answer, let delay):
            send(answer, on: stream, after: delay)
        case .accept(let push, let delay):
            // Counted as processed now, so a GOAWAY sent before the commit does not disown it.
            noteProcessed(stream.id)
            if delay == nil || delay == 0, inRead {
                DeliveryLog.encode(push, into: &stagedLines)
                staged.append((stream, push))
            } else {
                var line: [UInt8] = []
                DeliveryLog.encode(push, into: &line)
                send(exchange.commit([push], lines: line)[0], on: stream, after: delay)
            }
        }
    }

    private func send(_ answer: PushAnswer, on stream: Stream, after delay: Int?) {
        guard let delay, delay > 0, let context else { return write(answer, on: stream) }
        let loopBound = NIOLoopBound((self, stream), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay))) {
            let (handler, stream) = loopBound.value
            // The client may have reset the stream or gone meanwhile.
            guard handler.phase != .failed, handler.streams[stream.id] === stream else { return }
            handler.write(answer, on: stream)
        }
    }

    /// Logs the pushes accepted in this read with one write, then queues their answers.
    private func commitStaged() {
        guard !staged.isEmpty else { return }
        let batch = staged
        let answers = exchange.commit(batch.map(\.push), lines: stagedLines)
        staged.removeAll(keepingCapacity: true)
        stagedLines.removeAll(keepingCapacity: true)
        let wasInRead = inRead
        inRead = true
        defer { inRead = wasInRead }
        for (entry, answer) in zip(batch, answers) where streams[entry.stream.id] === entry.stream {
            write(answer, on: entry.stream)
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
        let flags = HTTP2Flag.endHeaders | (answer.body == nil ? HTTP2Flag.endStream : 0)
        output.writeFrameHeader(length: block.readableBytes, type: .headers, flags: flags, stream: stream.id)
        output.writeBuffer(&block)
        stream.pendingDelivery = answer.delivery
        if let body = answer.body {
            stream.pendingBody = body
            if !sendBody(of: stream) { blocked.append(stream.id) }
        } else {
            complete(stream)
        }
        if !inRead, let context { flushOutput(context: context) }
    }

    /// Writes as much of a stream's answer body as the windows allow (in frames the client's
    /// SETTINGS_MAX_FRAME_SIZE permits); true when all of it went out.
    private func sendBody(of stream: Stream) -> Bool {
        guard var body = stream.pendingBody else { return true }
        let done = output.writeDataFrames(&body, stream: stream.id, connectionWindow: &sendWindow,
                                          streamWindow: &stream.sendWindow, maxFrameSize: peerMaxFrameSize)
        stream.pendingBody = done ? nil : body
        if done { complete(stream) }
        return done
    }

    private func sendBlocked() {
        guard !blocked.isEmpty else { return }
        blocked.removeAll { id in
            guard let stream = streams[id] else { return true }
            return sendBody(of: stream)
        }
    }

    /// The answer is all out: the stream is closed, and an accepted push goes to the device side.
    private func complete(_ stream: Stream) {
        streams.removeValue(forKey: stream.id)
        if let push = stream.pendingDelivery { exchange.handOff(push) }
    }

    private func forget(_ id: UInt32) {
        streams.removeValue(forKey: id)
    }

    private func reset(_ id: UInt32, _ code: HTTP2Code) {
        forget(id)
        output.writeResetStream(stream: id, code: code)
        if !inRead, let context { flushOutput(context: context) }
    }

    /// Says GOAWAY with APNs's `{"reason":…}` and closes after ``GoAwayTiming/grace`` (unless the
    /// client hangs up first). Streams that finish afterwards are refused.
    func goAway(reason: APNsReason, lastStreamID: UInt32) {
        guard let context, !exchange.connection.closing, phase != .failed else { return }
        exchange.connection.closing = true
        commitStaged()
        output.writeGoAway(lastStreamID: lastStreamID, code: .noError, debugData: APNsErrorBody(reason: reason).encoded())
        let channel = context.channel
        let written = flushOutput(context: context)
        written.whenComplete { _ in
            let close = channel.eventLoop.scheduleTask(in: GoAwayTiming.grace) { channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in close.cancel() }
        }
    }

    /// A connection error: GOAWAY with the code, then close.
    private func fail(_ code: HTTP2Code, _ detail: String) {
        guard phase != .failed, let context else { return }
        commitStaged()
        phase = .failed
        exchange.services.logger.debug("HTTP/2 connection error", metadata: ["code": "\(code)", "detail": "\(detail)"])
        output.writeGoAway(lastStreamID: highestStreamID, code: code, debugData: Array(detail.utf8.prefix(256)))
        let channel = context.channel
        flushOutput(context: context).whenComplete { _ in channel.close(promise: nil) }
    }

    @discardableResult
    private func flushOutput(context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        commitStaged()
        guard output.readableBytes > 0 else { return context.eventLoop.makeSucceededVoidFuture() }
        let bytes = output
        output = context.channel.allocator.buffer(capacity: 1024)
        return context.writeAndFlush(wrapOutboundOut(bytes))
    }
}
