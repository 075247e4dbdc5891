import NIOCore
import NIOHPACK

/// One HTTP/2 connection's protocol state (RFC 9113), for either end, as a plain value: bytes go
/// in (``receive(_:)``), events come out one at a time (``nextEvent()``), and the frames this
/// side owes the peer collect in ``output`` for the owner to write. No channel, no socket, no
/// clock of its own: time comes from ``Configuration/clock``, so every rule is tested frame by frame.
///
/// What it keeps for its owner:
/// - the connection preface and the first SETTINGS, SETTINGS both ways and their ACKs, PING;
/// - stream states (idle, open, half-closed, closed) with the errors RFC 9113 §5.1 and §6 give
///   for every frame in every state, stream identifiers, concurrency (streams past the limit it
///   announced are refused);
/// - header blocks: HEADERS and CONTINUATION assembly, HPACK decoding, the well-formed message
///   rules of §8 (``HTTP2Head``), `content-length` against the DATA received, priority fields
///   (a stream may not depend on itself, §5.3.1);
/// - both flow-control windows both ways: DATA received is counted and given back with
///   WINDOW_UPDATE; bodies sent wait for window (``writeBody(_:stream:)``);
/// - GOAWAY both ways, and connection errors (GOAWAY with the code, then the owner closes);
/// - the known denial-of-service patterns (``HTTP2AbuseLimits``).
///
/// What it leaves to its owner: what a request or an answer means, encoding header blocks, when
/// to answer, timeouts, and closing the socket.
///
/// A request that repeats the previous one's header block byte for byte, while the HPACK table is
/// unchanged, is not decoded again (``HPACKBlockShape``): providers repeat a 200-byte provider
/// token on every push, which nghttp2-based clients never index.
package struct HTTP2Connection {
    package enum Role: Sendable { case server, client }

    package struct Configuration: Sendable {
        /// The SETTINGS this side announces. SETTINGS_MAX_CONCURRENT_STREAMS is also how many
        /// streams the peer may open (more are refused), SETTINGS_INITIAL_WINDOW_SIZE each of
        /// those streams' receive window, SETTINGS_MAX_FRAME_SIZE the largest frame read.
        package var settings: [(HTTP2SettingID, UInt32)]
        /// The connection's receive window, raised from 64 KiB with a WINDOW_UPDATE right after
        /// the preface.
        package var connectionWindow: Int
        /// A header block (HEADERS and its CONTINUATIONs) larger than this is ENHANCE_YOUR_CALM.
        package var maximumHeaderBlock: Int
        /// The HPACK decoder's limit on a decoded header list.
        package var maximumHeaderListSize: Int
        package var limits: HTTP2AbuseLimits
        /// Monotonic nanoseconds, the abuse limits' clock: asked only when a limited frame comes
        /// (RST_STREAM, SETTINGS, PING, a stream error), not on every read.
        package var clock: @Sendable () -> UInt64

        package init(settings: [(HTTP2SettingID, UInt32)], connectionWindow: Int = HTTP2Limits.defaultWindow,
                    maximumHeaderBlock: Int = 64 * 1024, maximumHeaderListSize: Int = 64 * 1024,
                    limits: HTTP2AbuseLimits = HTTP2AbuseLimits(),
                    clock: @escaping @Sendable () -> UInt64 = { NIODeadline.now().uptimeNanoseconds }) {
            self.settings = settings
            self.connectionWindow = connectionWindow
            self.maximumHeaderBlock = maximumHeaderBlock
            self.maximumHeaderListSize = maximumHeaderListSize
            self.limits = limits
            self.clock = clock
        }

        func value(_ id: HTTP2SettingID) -> UInt32? {
            settings.last { $0.0 == id }?.1
        }
    }

    /// What the peer's SETTINGS say (RFC 9113 §6.5.2), defaults until it says otherwise.
    package struct PeerSettings: Sendable, Equatable {
        package var headerTableSize = 4096
        package var enablePush = true
        /// Nil: the peer sets no limit.
        package var maxConcurrentStreams: Int?
        package var initialWindowSize = HTTP2Limits.defaultWindow
        package var maxFrameSize = HTTP2Limits.defaultMaxFrameSize
        package var maxHeaderListSize: Int?
    }

    /// Where the connection is.
    package enum Phase: Sendable, Equatable {
        /// A server waiting for the client's connection preface.
        case preface
        /// Waiting for the peer's first frame, which must be SETTINGS.
        case firstSettings
        case open
        /// A connection error happened: GOAWAY is in ``output``; nothing more is read.
        case failed
    }

    private struct Stream {
        var remoteClosed = false
        var localClosed = false
        /// A final (non-1xx) head was received on it.
        var sawHead = false
        var receiveWindow: HTTP2InboundWindow
        var sendWindow: Int
        /// Body bytes wait for window in ``HTTP2Connection/pendingBodies``. (Kept out of this
        /// record so that it holds no reference: reading it through the dictionary copies it.)
        var sendingBody = false
        var contentLength: Int?
        var received = 0
    }

    /// A header block being read: HEADERS, then CONTINUATIONs until END_HEADERS.
    private struct HeaderBlock {
        enum Purpose {
            /// A new request (server) or an answer head (client).
            case head
            case trailers
            /// Decoded (the HPACK table must stay in step) and then the stream is reset.
            case reset(HTTP2Code, String)
            /// Decoded and dropped: a stream this side reset already.
            case ignore
        }
        var stream: UInt32
        var endStream: Bool
        var purpose: Purpose
        var fragment: ByteBuffer
        var continuations = 0
    }

    /// The last header block that left the HPACK table alone, and what it said.
    private struct HeadMemo {
        var block: ByteBuffer
        var generation: Int
        var head: HTTP2Head
    }

    package let role: Role
    private let configuration: Configuration
    package private(set) var phase: Phase
    package private(set) var peerSettings = PeerSettings()
    /// Frames owed to the peer, in order; the owner writes and empties it (``takeOutput()``).
    package var output: ByteBuffer

    private var reader = HTTP2FrameReader()
    private var decoder: HPACKDecoder
    private var headMemo: HeadMemo?
    /// Counts header blocks that changed the HPACK table; a memo is good only within one generation.
    private var tableGeneration = 0
    private var streams: [UInt32: Stream] = [:]
    /// Streams the peer opened and that are still open (their count is limited).
    private var peerOpenStreams = 0
    private var highestPeerStream: UInt32 = 0
    private var nextLocalStream: UInt32
    /// Streams this side reset lately: frames the peer sent before it learnt of the reset are
    /// dropped quietly (RFC 9113 §5.1 "closed"). Resets are rare, so a set.
    private var resetHere = ClosedStreams(hashed: true)
    /// Streams closed lately by END_STREAM both ways or the peer's RST_STREAM: HEADERS on one is
    /// STREAM_CLOSED rather than PROTOCOL_ERROR. Every request ends here, so a ring: appending costs
    /// no hashing, and it is searched only on the way to a connection error.
    private var closedRing = ClosedStreams()
    private var headerBlock: HeaderBlock?
    private var receiveWindow: HTTP2InboundWindow
    private var sendWindow = HTTP2Limits.defaultWindow
    private let localInitialWindow: Int
    private let localMaxFrameSize: Int
    private let localMaxConcurrentStreams: Int
    /// Streams with body bytes waiting for window, in the order they began waiting.
    private var blocked: [UInt32] = []
    /// Their bytes; END_STREAM goes with the last of them.
    private var pendingBodies: [UInt32: [UInt8]] = [:]
    private var sentGoAway = false
    package private(set) var receivedGoAway = false
    private var now: UInt64 { configuration.clock() }
    private var resets: TokenBucket
    private var glitches: TokenBucket
    private var controlFrames: TokenBucket
    private var emptyDataInARow = 0

    package init(role: Role, configuration: Configuration, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.role = role
        self.configuration = configuration
        self.phase = role == .server ? .preface : .firstSettings
        self.output = allocator.buffer(capacity: 1024)
        let tableSize = Int(configuration.value(.headerTableSize) ?? 4096)
        self.decoder = HPACKDecoder(allocator: allocator, maxDynamicTableSize: tableSize,
                                    maxHeaderListSize: configuration.maximumHeaderListSize)
        self.nextLocalStream = role == .client ? 1 : 2
        self.localInitialWindow = Int(configuration.value(.initialWindowSize) ?? UInt32(HTTP2Limits.defaultWindow))
        self.localMaxFrameSize = Int(configuration.value(.maxFrameSize) ?? UInt32(HTTP2Limits.defaultMaxFrameSize))
        self.localMaxConcurrentStreams = Int(configuration.value(.maxConcurrentStreams) ?? UInt32(Int32.max))
        self.receiveWindow = HTTP2InboundWindow(size: HTTP2Limits.defaultWindow)
        self.resets = TokenBucket(configuration.limits.resets)
        self.glitches = TokenBucket(configuration.limits.glitches)
        self.controlFrames = TokenBucket(configuration.limits.controlFrames)
        if role == .client {
            output.writeBytes(HTTP2Limits.preface)
            writePreface()
        }
    }

    /// The SETTINGS that open this side's half of the connection, and the connection window.
    private mutating func writePreface() {
        output.writeSettingsFrame(configuration.settings)
        if configuration.connectionWindow > HTTP2Limits.defaultWindow {
            output.writeWindowUpdate(stream: 0, increment: configuration.connectionWindow - HTTP2Limits.defaultWindow)
            receiveWindow = HTTP2InboundWindow(size: configuration.connectionWindow)
        }
    }

    // MARK: What the owner asks

    /// Streams this side opened that are not closed yet.
    package var openLocalStreams: Int { streams.count - peerOpenStreams }
    /// Whether new streams may be opened: no GOAWAY either way, no connection error, IDs left.
    package var acceptsNewStreams: Bool {
        phase != .failed && !receivedGoAway && !sentGoAway && nextLocalStream < UInt32(Int32.max)
    }
    /// Whether a stream has body bytes still waiting for flow-control window.
    package func isSendingBody(_ stream: UInt32) -> Bool { streams[stream]?.sendingBody ?? false }
    /// Whether a stream is open in either direction.
    package func isOpen(_ stream: UInt32) -> Bool { streams[stream] != nil }

    /// Takes the frames written so far; nil when there are none.
    package mutating func takeOutput(allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard output.readableBytes > 0 else { return nil }
        defer { output = allocator.buffer(capacity: 1024) }
        return output
    }

    // MARK: Reading

    /// Takes bytes read from the peer. The events they make come from ``nextEvent()``.
    package mutating func receive(_ bytes: inout ByteBuffer) {
        guard phase != .failed else { return }
        reader.append(&bytes)
    }

    /// The next thing that happened in the bytes received, or nil when they are all used (or the
    /// connection failed). Call until nil after each ``receive(_:)``.
    package mutating func nextEvent() -> HTTP2Event? {
        if phase == .preface {
            switch reader.readClientPreface() {
            case .needMore: return nil
            case .invalid: return connectionError(.protocolError, "not an HTTP/2 connection preface")
            case .complete:
                phase = .firstSettings
                writePreface()
            }
        }
        while phase != .failed {
            switch reader.next(maxLength: localMaxFrameSize) {
            case .needMore:
                reader.compact()
                return nil
            case .tooLarge(let header):
                return connectionError(.frameSizeError, "a \(header.length)-byte frame; the limit is \(localMaxFrameSize)")
            case .frame(let header, var payload):
                if let event = frame(header, payload: &payload) { return event }
            }
        }
        return nil
    }

    private mutating func frame(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        let type = HTTP2FrameType(rawValue: header.type)
        if let block = headerBlock, type != .continuation || header.stream != block.stream {
            return connectionError(.protocolError, "a \(type.map { "\($0)" } ?? "type \(header.type)") frame in the middle of a header block")
        }
        if phase == .firstSettings {
            guard type == .settings, header.flags & HTTP2Flag.ack == 0 else {
                return connectionError(.protocolError, "the peer's first frame must be SETTINGS")
            }
        }
        if type != .data { emptyDataInARow = 0 }
        switch type {
        case .data: return data(header, payload: &payload)
        case .headers: return headers(header, payload: &payload)
        case .continuation: return continuation(header, payload: &payload)
        case .priority: return priority(header, payload: &payload)
        case .rstStream: return resetStream(header, payload: &payload)
        case .settings: return settings(header, payload: &payload)
        case .pushPromise:
            return connectionError(.protocolError, role == .server ? "a client sent PUSH_PROMISE" : "PUSH_PROMISE, though SETTINGS_ENABLE_PUSH is 0")
        case .ping: return ping(header, payload: &payload)
        case .goAway: return goAway(header, payload: &payload)
        case .windowUpdate: return windowUpdate(header, payload: &payload)
        case nil: return nil  // Unknown frame types are ignored (RFC 9113 §4.1, §5.5).
        }
    }

    private enum StreamState { case open, idle, closed(resetHere: Bool) }

    private func state(of id: UInt32) -> StreamState {
        if streams[id] != nil { return .open }
        let peerInitiated = (id & 1 == 1) == (role == .server)
        if peerInitiated ? id > highestPeerStream : id >= nextLocalStream { return .idle }
        return .closed(resetHere: resetHere.contains(id))
    }

    private mutating func data(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        let id = header.stream
        guard id != 0 else { return connectionError(.protocolError, "DATA on stream 0") }
        // The whole payload, padding included, counts against the connection window in every state.
        let flowLength = payload.readableBytes
        guard receiveWindow.receive(flowLength) else { return connectionError(.flowControlError, "DATA beyond the connection window") }
        if let increment = receiveWindow.dueUpdate() { output.writeWindowUpdate(stream: 0, increment: increment) }
        guard payload.stripHTTP2Padding(flags: header.flags, priorityFields: false) else {
            return connectionError(.protocolError, "DATA padding longer than the frame")
        }
        let endStream = header.flags & HTTP2Flag.endStream != 0
        if payload.readableBytes == 0, !endStream {
            emptyDataInARow += 1
            if emptyDataInARow > configuration.limits.maximumSequentialEmptyData {
                return connectionError(.enhanceYourCalm, "\(emptyDataInARow) empty DATA frames in a row")
            }
        } else {
            emptyDataInARow = 0
        }
        guard let index = streams.index(forKey: id) else {
            switch state(of: id) {
            case .idle: return connectionError(.protocolError, "DATA on idle stream \(id)")
            case .closed(resetHere: true): return nil
            case .closed(resetHere: false), .open: return streamError(id, .streamClosed, "DATA on closed stream \(id)")
            }
        }
        // (One hash lookup per DATA frame: the record is read once and changed in place through its index.)
        let stream = streams.values[index]
        guard !stream.remoteClosed else { return streamError(id, .streamClosed, "DATA after END_STREAM on stream \(id)") }
        guard stream.sawHead else { return streamError(id, .protocolError, "DATA before the answer's HEADERS on stream \(id)") }
        guard streams.values[index].receiveWindow.receive(flowLength) else { return streamError(id, .flowControlError, "DATA beyond stream \(id)'s window") }
        let received = stream.received + payload.readableBytes
        streams.values[index].received = received
        if let expected = stream.contentLength, received > expected || (endStream && received != expected) {
            return streamError(id, .protocolError, "content-length \(expected), but \(received) bytes of DATA on stream \(id)")
        }
        if endStream {
            remoteClose(index)
        } else if let increment = streams.values[index].receiveWindow.dueUpdate() {
            output.writeWindowUpdate(stream: id, increment: increment)
        }
        return .data(stream: id, payload: payload, endStream: endStream)
    }

    private mutating func headers(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        let id = header.stream
        guard id != 0 else { return connectionError(.protocolError, "HEADERS on stream 0") }
        let hasPriority = header.flags & HTTP2Flag.priority != 0
        var dependency: UInt32?
        if hasPriority {
            let offset = header.flags & HTTP2Flag.padded != 0 ? 1 : 0
            dependency = payload.getInteger(at: payload.readerIndex + offset, as: UInt32.self).map { $0 & 0x7fff_ffff }
        }
        guard payload.stripHTTP2Padding(flags: header.flags, priorityFields: hasPriority) else {
            return connectionError(.protocolError, "HEADERS padding longer than the frame")
        }
        let endStream = header.flags & HTTP2Flag.endStream != 0
        var purpose: HeaderBlock.Purpose
        let index = streams.index(forKey: id)
        if let index {
            let stream = streams.values[index]
            if stream.remoteClosed {
                purpose = .reset(.streamClosed, "HEADERS after END_STREAM on stream \(id)")
            } else if role == .client && !stream.sawHead {
                purpose = .head
            } else {
                purpose = .trailers
            }
        } else {
            switch state(of: id) {
            case .idle:
                guard role == .server, id & 1 == 1 else {
                    return connectionError(.protocolError, role == .server ? "HEADERS on even stream \(id)" : "HEADERS on stream \(id), which this client never opened")
                }
                highestPeerStream = id
                if sentGoAway {
                    purpose = .reset(.refusedStream, "stream \(id) opened after GOAWAY")
                } else if peerOpenStreams >= localMaxConcurrentStreams {
                    purpose = .reset(.refusedStream, "more than \(localMaxConcurrentStreams) concurrent streams")
                } else {
                    purpose = .head
                }
            case .closed(resetHere: true): purpose = .ignore
            case .closed(resetHere: false), .open:
                if closedRing.contains(id) { return connectionError(.streamClosed, "HEADERS on closed stream \(id)") }
                return connectionError(.protocolError, "HEADERS on stream \(id), not above the last stream opened (\(highestPeerStream))")
            }
        }
        if let dependency, dependency == id {
            purpose = .reset(.protocolError, "stream \(id) depends on itself")
        }
        headerBlock = HeaderBlock(stream: id, endStream: endStream, purpose: purpose, fragment: payload)
        guard header.flags & HTTP2Flag.endHeaders != 0 else { return nil }
        // Nothing has changed the streams since the lookup above: its index still holds.
        return completeHeaderBlock(index: index)
    }

    private mutating func continuation(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        guard headerBlock != nil else { return connectionError(.protocolError, "CONTINUATION without HEADERS") }
        headerBlock!.continuations += 1
        guard headerBlock!.continuations <= configuration.limits.maximumContinuations else {
            return connectionError(.enhanceYourCalm, "more than \(configuration.limits.maximumContinuations) CONTINUATION frames in one header block")
        }
        guard headerBlock!.fragment.readableBytes + payload.readableBytes <= configuration.maximumHeaderBlock else {
            return connectionError(.enhanceYourCalm, "a header block over \(configuration.maximumHeaderBlock) bytes")
        }
        headerBlock!.fragment.writeBuffer(&payload)
        guard header.flags & HTTP2Flag.endHeaders != 0 else { return nil }
        return completeHeaderBlock(index: streams.index(forKey: headerBlock!.stream))
    }

    /// `index`: the stream's, if it is open (looked up again only when the block spanned frames).
    private mutating func completeHeaderBlock(index: Dictionary<UInt32, Stream>.Index?) -> HTTP2Event? {
        guard var block = headerBlock else { return nil }
        headerBlock = nil
        let id = block.stream
        if case .head = block.purpose, role == .server, let memo = headMemo, memo.generation == tableGeneration, memo.block == block.fragment {
            return openRequest(id, head: memo.head, endStream: block.endStream)
        }
        let original = block.fragment
        let decoded: HPACKHeaders
        do { decoded = try decoder.decodeHeaders(from: &block.fragment) } catch {
            return connectionError(.compressionError, "HPACK: \(error)")
        }
        // (Only a server keeps a memo: a client's answers carry a new apns-id each.)
        let pure = role == .server && !HPACKBlockShape.mutatesTable(original)
        if !pure { tableGeneration += 1 }
        switch block.purpose {
        case .ignore: return nil
        case .reset(let code, let detail):
            if code == .refusedStream {
                // Refusing is not the peer's fault (it may not have seen the SETTINGS or GOAWAY yet).
                output.writeResetStream(stream: id, code: code)
                resetHere.insert(id)
                return .streamError(stream: id, code: code, detail: detail)
            }
            return streamError(id, code, detail)
        case .trailers:
            guard block.endStream else { return streamError(id, .protocolError, "a second header block without END_STREAM on stream \(id)") }
            if let problem = HTTP2Head.trailers(decoded) { return streamError(id, .protocolError, "malformed trailers: \(problem)") }
            guard let index else { return nil }
            let stream = streams.values[index]
            if let expected = stream.contentLength, expected != stream.received {
                return streamError(id, .protocolError, "content-length \(expected), but \(stream.received) bytes of DATA on stream \(id)")
            }
            remoteClose(index)
            return .trailers(stream: id)
        case .head where role == .server:
            switch HTTP2Head.request(decoded) {
            case .failure(let problem):
                // The stream was opened (its ID is used) and is reset at once.
                return streamError(id, .protocolError, "malformed request: \(problem)")
            case .success(let head):
                // (A copy: the block is a slice of a read buffer it would otherwise keep alive.)
                if pure { headMemo = HeadMemo(block: ByteBuffer(bytes: original.readableBytesView), generation: tableGeneration, head: head) }
                return openRequest(id, head: head, endStream: block.endStream)
            }
        case .head:
            switch HTTP2Head.response(decoded) {
            case .failure(let problem): return streamError(id, .protocolError, "malformed answer: \(problem)")
            case .success(let head):
                if head.status! < 200 {
                    // An interim (1xx) answer is not the answer, and cannot end the stream.
                    return block.endStream ? streamError(id, .protocolError, "an interim \(head.status!) answer with END_STREAM") : nil
                }
                guard let index else { return nil }
                streams.values[index].sawHead = true
                streams.values[index].contentLength = head.contentLength
                if block.endStream {
                    if let expected = head.contentLength, expected != 0 {
                        return streamError(id, .protocolError, "content-length \(expected) on an answer without a body")
                    }
                    remoteClose(index)
                }
                return .headers(stream: id, head: head, endStream: block.endStream)
            }
        }
    }

    private mutating func openRequest(_ id: UInt32, head: HTTP2Head, endStream: Bool) -> HTTP2Event? {
        if endStream, let expected = head.contentLength, expected != 0 {
            // Opened and at once malformed: the stream is used, then reset.
            streams[id] = Stream(sawHead: true, receiveWindow: HTTP2InboundWindow(size: localInitialWindow), sendWindow: peerSettings.initialWindowSize)
            peerOpenStreams += 1
            return streamError(id, .protocolError, "content-length \(expected) on a request without a body")
        }
        streams[id] = Stream(remoteClosed: endStream, sawHead: true, receiveWindow: HTTP2InboundWindow(size: localInitialWindow),
                             sendWindow: peerSettings.initialWindowSize, contentLength: head.contentLength)
        peerOpenStreams += 1
        return .headers(stream: id, head: head, endStream: endStream)
    }

    private mutating func priority(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        let id = header.stream
        guard id != 0 else { return connectionError(.protocolError, "PRIORITY on stream 0") }
        guard payload.readableBytes == 5 else { return streamError(id, .frameSizeError, "PRIORITY of \(payload.readableBytes) bytes") }
        let dependency = payload.readInteger(as: UInt32.self)! & 0x7fff_ffff
        guard dependency != id else { return streamError(id, .protocolError, "stream \(id) depends on itself") }
        // Priorities are advice (RFC 9113 §5.3.2 deprecates the scheme); answers go out in order.
        return nil
    }

    private mutating func resetStream(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        let id = header.stream
        guard id != 0 else { return connectionError(.protocolError, "RST_STREAM on stream 0") }
        guard payload.readableBytes == 4 else { return connectionError(.frameSizeError, "RST_STREAM of \(payload.readableBytes) bytes") }
        let code = payload.readInteger(as: UInt32.self)!
        switch state(of: id) {
        case .idle: return connectionError(.protocolError, "RST_STREAM on idle stream \(id)")
        case .closed: return nil
        case .open:
            guard resets.take(now: now) else {
                return connectionError(.enhanceYourCalm, "too many streams reset (more than \(configuration.limits.resets.burst) at once, then \(configuration.limits.resets.perSecond) a second)")
            }
            close(id, resetHere: false)
            return .streamReset(stream: id, code: code)
        }
    }

    private mutating func settings(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        guard header.stream == 0 else { return connectionError(.protocolError, "SETTINGS on stream \(header.stream)") }
        if header.flags & HTTP2Flag.ack != 0 {
            guard payload.readableBytes == 0 else { return connectionError(.frameSizeError, "SETTINGS ACK with a payload") }
            return nil
        }
        guard payload.readableBytes % 6 == 0 else { return connectionError(.frameSizeError, "SETTINGS of \(payload.readableBytes) bytes") }
        guard payload.readableBytes / 6 <= configuration.limits.maximumSettingsEntries else {
            return connectionError(.enhanceYourCalm, "\(payload.readableBytes / 6) entries in one SETTINGS frame")
        }
        guard controlFrames.take(now: now) else { return controlFlood("SETTINGS") }
        while let rawID = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch HTTP2SettingID(rawValue: rawID) {
            case .headerTableSize: peerSettings.headerTableSize = Int(value)
            case .enablePush:
                guard value <= 1 else { return connectionError(.protocolError, "SETTINGS_ENABLE_PUSH \(value)") }
                guard role == .server || value == 0 else { return connectionError(.protocolError, "a server sent SETTINGS_ENABLE_PUSH 1") }
                peerSettings.enablePush = value == 1
            case .maxConcurrentStreams: peerSettings.maxConcurrentStreams = Int(value)
            case .initialWindowSize:
                guard value <= UInt32(HTTP2Limits.maximumWindow) else { return connectionError(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE \(value)") }
                let delta = Int(value) - peerSettings.initialWindowSize
                peerSettings.initialWindowSize = Int(value)
                // (Walked by index: iterating `keys` while changing values would copy the dictionary.)
                var index = streams.startIndex
                while index != streams.endIndex {
                    streams.values[index].sendWindow += delta
                    guard streams.values[index].sendWindow <= HTTP2Limits.maximumWindow else {
                        return connectionError(.flowControlError, "stream \(streams.keys[index])'s window over 2^31-1")
                    }
                    streams.formIndex(after: &index)
                }
            case .maxFrameSize:
                guard value >= UInt32(HTTP2Limits.defaultMaxFrameSize), value <= UInt32(HTTP2Limits.largestMaxFrameSize) else {
                    return connectionError(.protocolError, "SETTINGS_MAX_FRAME_SIZE \(value)")
                }
                peerSettings.maxFrameSize = Int(value)
            case .maxHeaderListSize: peerSettings.maxHeaderListSize = Int(value)
            case nil: break  // Unknown settings are ignored (RFC 9113 §6.5.2).
            }
        }
        output.writeFrameHeader(length: 0, type: .settings, flags: HTTP2Flag.ack, stream: 0)
        let first = phase == .firstSettings
        phase = .open
        sendBlocked()
        return .settings(peerSettings, first: first)
    }

    private mutating func ping(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        guard header.stream == 0 else { return connectionError(.protocolError, "PING on stream \(header.stream)") }
        guard payload.readableBytes == 8 else { return connectionError(.frameSizeError, "PING of \(payload.readableBytes) bytes") }
        guard header.flags & HTTP2Flag.ack == 0 else { return nil }
        guard controlFrames.take(now: now) else { return controlFlood("PING") }
        output.writeFrameHeader(length: 8, type: .ping, flags: HTTP2Flag.ack, stream: 0)
        output.writeBuffer(&payload)
        return nil
    }

    private mutating func goAway(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        guard header.stream == 0 else { return connectionError(.protocolError, "GOAWAY on stream \(header.stream)") }
        guard payload.readableBytes >= 8 else { return connectionError(.frameSizeError, "GOAWAY of \(payload.readableBytes) bytes") }
        let last = payload.readInteger(as: UInt32.self)! & 0x7fff_ffff
        let code = payload.readInteger(as: UInt32.self)!
        receivedGoAway = true
        return .goAway(lastStreamID: last, code: code, debugData: Array(payload.readableBytesView))
    }

    private mutating func windowUpdate(_ header: HTTP2FrameHeader, payload: inout ByteBuffer) -> HTTP2Event? {
        let id = header.stream
        guard payload.readableBytes == 4 else { return connectionError(.frameSizeError, "WINDOW_UPDATE of \(payload.readableBytes) bytes") }
        let increment = Int(payload.readInteger(as: UInt32.self)! & 0x7fff_ffff)
        if id == 0 {
            guard increment > 0 else { return connectionError(.protocolError, "WINDOW_UPDATE of 0 on the connection") }
            sendWindow += increment
            guard sendWindow <= HTTP2Limits.maximumWindow else { return connectionError(.flowControlError, "the connection window over 2^31-1") }
        } else {
            switch state(of: id) {
            case .idle: return connectionError(.protocolError, "WINDOW_UPDATE on idle stream \(id)")
            case .closed: return nil  // It may have crossed this side's END_STREAM or RST_STREAM.
            case .open:
                guard increment > 0 else { return streamError(id, .protocolError, "WINDOW_UPDATE of 0 on stream \(id)") }
                streams[id]!.sendWindow += increment
                guard streams[id]!.sendWindow <= HTTP2Limits.maximumWindow else { return streamError(id, .flowControlError, "stream \(id)'s window over 2^31-1") }
            }
        }
        sendBlocked()
        return nil
    }

    // MARK: Writing

    /// Opens a stream (a client's request); nil when ``acceptsNewStreams`` is false.
    package mutating func openStream() -> UInt32? {
        guard acceptsNewStreams else { return nil }
        let id = nextLocalStream
        nextLocalStream += 2
        streams[id] = Stream(receiveWindow: HTTP2InboundWindow(size: localInitialWindow), sendWindow: peerSettings.initialWindowSize)
        return id
    }

    /// A client's whole request at once: opens a stream, writes the header block (END_STREAM on
    /// it when `body` is empty) and as much of the body as the windows allow. Nil when
    /// ``acceptsNewStreams`` is false: check it before encoding the block, since encoding changes
    /// the HPACK table. (One dictionary insert per request, which is what a provider's rate
    /// measures; ``openStream()``, ``writeHeaders(_:stream:endStream:)`` and
    /// ``writeBody(_:stream:)`` do the same in three steps.)
    package mutating func openStream(headers block: inout ByteBuffer, body: [UInt8]) -> UInt32? {
        guard acceptsNewStreams else { return nil }
        let id = nextLocalStream
        nextLocalStream += 2
        writeHeaderFrames(&block, stream: id, endStream: body.isEmpty)
        var stream = Stream(localClosed: body.isEmpty, receiveWindow: HTTP2InboundWindow(size: localInitialWindow),
                            sendWindow: peerSettings.initialWindowSize)
        if !body.isEmpty {
            var rest = body
            let done = output.writeDataFrames(&rest, stream: id, connectionWindow: &sendWindow, streamWindow: &stream.sendWindow,
                                              maxFrameSize: peerSettings.maxFrameSize)
            stream.localClosed = done
            stream.sendingBody = !done
            if !done {
                pendingBodies[id] = rest
                blocked.append(id)
            }
        }
        streams[id] = stream
        return id
    }

    /// Writes a header block on an open stream, split into CONTINUATIONs if it is larger than the
    /// peer's frame size; with `endStream` this side is done sending on the stream.
    package mutating func writeHeaders(_ block: inout ByteBuffer, stream id: UInt32, endStream: Bool) {
        guard let index = streams.index(forKey: id), phase != .failed, !streams.values[index].localClosed else { return }
        writeHeaderFrames(&block, stream: id, endStream: endStream)
        if endStream { localClose(index) }
    }

    private mutating func writeHeaderFrames(_ block: inout ByteBuffer, stream id: UInt32, endStream: Bool) {
        var type = HTTP2FrameType.headers
        var flags = endStream ? HTTP2Flag.endStream : 0
        repeat {
            let length = min(block.readableBytes, peerSettings.maxFrameSize)
            if length == block.readableBytes { flags |= HTTP2Flag.endHeaders }
            output.writeFrameHeader(length: length, type: type, flags: flags, stream: id)
            var piece = block.readSlice(length: length)!
            output.writeBuffer(&piece)
            type = .continuation
            flags = 0
        } while block.readableBytes > 0
    }

    /// Sends a body on an open stream, END_STREAM with its last byte, as much as both windows
    /// allow now and the rest as WINDOW_UPDATEs come (``isSendingBody(_:)``).
    package mutating func writeBody(_ body: [UInt8], stream id: UInt32) {
        guard let index = streams.index(forKey: id), phase != .failed else { return }
        let stream = streams.values[index]
        guard !stream.localClosed, !stream.sendingBody else { return }
        if body.isEmpty {
            output.writeFrameHeader(length: 0, type: .data, flags: HTTP2Flag.endStream, stream: id)
            return localClose(index)
        }
        if !send(body, at: index) { blocked.append(id) }
    }

    /// Resets a stream from this side (a timeout, an answer no longer wanted).
    package mutating func resetStream(_ id: UInt32, code: HTTP2Code) {
        guard streams[id] != nil, phase != .failed else { return }
        output.writeResetStream(stream: id, code: code)
        close(id, resetHere: true)
    }

    /// Says GOAWAY: streams the peer opens from now on are refused. `lastStreamID` defaults to
    /// the highest stream the peer opened.
    package mutating func writeGoAway(lastStreamID: UInt32? = nil, code: HTTP2Code, debugData: [UInt8]) {
        guard phase != .failed else { return }
        sentGoAway = true
        output.writeGoAway(lastStreamID: lastStreamID ?? highestPeerStream, code: code, debugData: debugData)
    }

    /// Writes as much of `body` as both windows allow on the stream at `index`; the rest waits in
    /// the stream. True when all of it went out (and the stream is closed this way).
    private mutating func send(_ body: [UInt8], at index: Dictionary<UInt32, Stream>.Index) -> Bool {
        var body = body
        let id = streams.keys[index]
        let done = output.writeDataFrames(&body, stream: id, connectionWindow: &sendWindow,
                                          streamWindow: &streams.values[index].sendWindow, maxFrameSize: peerSettings.maxFrameSize)
        streams.values[index].sendingBody = !done
        if done {
            localClose(index)
        } else {
            pendingBodies[id] = body
        }
        return done
    }

    private mutating func sendBlocked() {
        guard !blocked.isEmpty, sendWindow > 0 else { return }
        var still: [UInt32] = []
        for id in blocked {
            guard let body = pendingBodies.removeValue(forKey: id), let index = streams.index(forKey: id) else { continue }
            if !send(body, at: index) { still.append(id) }
        }
        blocked = still
    }

    // MARK: Stream lifecycle

    private mutating func remoteClose(_ index: Dictionary<UInt32, Stream>.Index) {
        if streams.values[index].localClosed { return close(at: index, resetHere: false) }
        streams.values[index].remoteClosed = true
    }

    private mutating func localClose(_ index: Dictionary<UInt32, Stream>.Index) {
        if streams.values[index].remoteClosed { return close(at: index, resetHere: false) }
        streams.values[index].localClosed = true
    }

    private mutating func close(_ id: UInt32, resetHere reset: Bool) {
        guard let index = streams.index(forKey: id) else { return }
        close(at: index, resetHere: reset)
    }

    private mutating func close(at index: Dictionary<UInt32, Stream>.Index, resetHere reset: Bool) {
        let (id, stream) = streams.remove(at: index)
        if stream.sendingBody { pendingBodies.removeValue(forKey: id) }
        if (id & 1 == 1) == (role == .server) { peerOpenStreams -= 1 }
        if reset { resetHere.insert(id) } else { closedRing.insert(id) }
    }

    // MARK: Errors

    /// A stream error (RFC 9113 §5.4.2): RST_STREAM with the code; counts as a glitch.
    private mutating func streamError(_ id: UInt32, _ code: HTTP2Code, _ detail: String) -> HTTP2Event {
        guard glitches.take(now: now) else {
            return connectionError(.enhanceYourCalm, "too many stream errors (more than \(configuration.limits.glitches.burst) at once, then \(configuration.limits.glitches.perSecond) a second); the last: \(detail)")
        }
        output.writeResetStream(stream: id, code: code)
        if let index = streams.index(forKey: id) { close(at: index, resetHere: true) } else { resetHere.insert(id) }
        return .streamError(stream: id, code: code, detail: detail)
    }

    private mutating func controlFlood(_ what: String) -> HTTP2Event {
        connectionError(.enhanceYourCalm, "a flood of \(what) frames (more than \(configuration.limits.controlFrames.burst) at once, then \(configuration.limits.controlFrames.perSecond) a second)")
    }

    /// A connection error (RFC 9113 §5.4.1): GOAWAY with the code; the owner closes once it is written.
    private mutating func connectionError(_ code: HTTP2Code, _ detail: String) -> HTTP2Event {
        phase = .failed
        headerBlock = nil
        output.writeGoAway(lastStreamID: role == .server ? highestPeerStream : 0, code: code, debugData: Array(detail.utf8.prefix(256)))
        return .connectionError(code: code, detail: detail)
    }
}

/// What the peer's frames meant, one at a time.
package enum HTTP2Event {
    /// The peer's SETTINGS were applied and acknowledged; `first` for the one that opens the connection.
    case settings(HTTP2Connection.PeerSettings, first: Bool)
    /// A request (server) or an answer's head (client), well-formed.
    case headers(stream: UInt32, head: HTTP2Head, endStream: Bool)
    /// Body bytes (padding removed).
    case data(stream: UInt32, payload: ByteBuffer, endStream: Bool)
    /// Trailers, which end the stream.
    case trailers(stream: UInt32)
    /// The peer reset a stream (RST_STREAM), with its code.
    case streamReset(stream: UInt32, code: UInt32)
    /// This side reset a stream for breaking the rules (RST_STREAM is in ``HTTP2Connection/output``).
    case streamError(stream: UInt32, code: HTTP2Code, detail: String)
    /// The peer said GOAWAY.
    case goAway(lastStreamID: UInt32, code: UInt32, debugData: [UInt8])
    /// A connection error: GOAWAY is in ``HTTP2Connection/output``; close once it is written.
    case connectionError(code: HTTP2Code, detail: String)
}

/// A bounded memory of stream IDs: the last 1,024 added. `hashed` keeps a set beside the ring,
/// for a memory that is asked often (every frame on a stream this side reset).
private struct ClosedStreams {
    private static let capacity = 1024
    private var ring: [UInt32] = []
    private var next = 0
    private var set: Set<UInt32>?

    init(hashed: Bool = false) {
        set = hashed ? [] : nil
    }

    mutating func insert(_ id: UInt32) {
        if let set, set.contains(id) { return }
        if ring.count < Self.capacity {
            ring.append(id)
        } else {
            set?.remove(ring[next])
            ring[next] = id
            next = (next + 1) % Self.capacity
        }
        set?.insert(id)
    }

    func contains(_ id: UInt32) -> Bool { set.map { $0.contains(id) } ?? ring.contains(id) }
}
