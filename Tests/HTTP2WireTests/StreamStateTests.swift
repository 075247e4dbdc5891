import HTTP2Wire
import NIOCore
import Testing

/// RFC 9113's stream states and frame rules, frame by frame, on the server side (push-receiver's
/// role). Each case names the RFC section and, where it has one, the h2spec case that checks it
/// (h2spec's `http2` group, whose six failures issue 20 lists).
@Suite("HTTP/2 core: stream states, frame by frame")
struct StreamStateTests {
    /// Opens stream 1 with a request whose body is still to come, and answers nothing.
    private func openStream(_ peer: inout Peer, endStream: Bool) {
        let events = peer.feed(peer.headers(1, endStream: endStream))
        #expect(events.map(\.description) == [endStream ? "headers 1 end" : "headers 1"])
    }

    /// Answers stream 1 with a bodiless 200, as push-receiver answers an accepted push.
    private func answer(_ peer: inout Peer, _ stream: UInt32 = 1) {
        var block = ByteBuffer(bytes: [0x88])  // :status 200, static index 8
        peer.connection.writeHeaders(&block, stream: stream, endStream: true)
        _ = peer.written()
    }

    @Test("§5.1 half-closed (remote): DATA is a stream error STREAM_CLOSED, and the connection goes on (h2spec 5.1/5)")
    func dataOnHalfClosedRemote() {
        var peer = Peer.server()
        openStream(&peer, endStream: true)
        #expect(peer.feed(Peer.data(1, [1, 2, 3, 4], endStream: true)).map(\.description) == ["streamError 1 streamClosed"])
        #expect(peer.written().map(\.description) == ["rstStream stream 1 flags 0 streamClosed"])
        #expect(peer.feed(peer.headers(3)).map(\.description) == ["headers 3 end"])
    }

    @Test("§5.1 closed: DATA after the client's RST_STREAM is a stream error STREAM_CLOSED (h2spec 5.1/8)")
    func dataAfterClientReset() {
        var peer = Peer.server()
        openStream(&peer, endStream: false)
        #expect(peer.feed(Peer.reset(1)).map(\.description) == ["streamReset 1 8"])
        #expect(peer.feed(Peer.data(1, [1], endStream: true)).map(\.description) == ["streamError 1 streamClosed"])
        #expect(peer.written().last?.code == .streamClosed)
    }

    @Test("§5.1 closed, §6.1: DATA on a stream closed by END_STREAM both ways is refused with STREAM_CLOSED (h2spec 5.1/11, 6.1/2)")
    func dataOnClosedStream() {
        var peer = Peer.server()
        openStream(&peer, endStream: true)
        answer(&peer)
        #expect(!peer.connection.isOpen(1))
        #expect(peer.feed(Peer.data(1, Array("test".utf8), endStream: true)).map(\.description) == ["streamError 1 streamClosed"])
        #expect(peer.written().map(\.description) == ["rstStream stream 1 flags 0 streamClosed"])
    }

    @Test("§5.1 closed: HEADERS on a stream closed by END_STREAM is a connection error STREAM_CLOSED (h2spec 5.1/12)")
    func headersOnClosedStream() {
        var peer = Peer.server()
        openStream(&peer, endStream: true)
        answer(&peer)
        #expect(peer.feed(peer.headers(1)).map(\.description) == ["connectionError streamClosed"])
        #expect(peer.written().last?.description == "goAway stream 0 flags 0 streamClosed")
    }

    @Test("§5.1 half-closed (remote): HEADERS is a stream error STREAM_CLOSED; the block is still decoded, so HPACK stays in step (h2spec 5.1/6)")
    func headersOnHalfClosedRemote() {
        var peer = Peer.server()
        openStream(&peer, endStream: true)
        // This block inserts into the dynamic table; the next request refers to what it inserted.
        let fields = Peer.request + [("x-extra", "one")]
        #expect(peer.feed(peer.headers(1, fields)).map(\.description) == ["streamError 1 streamClosed"])
        let events = peer.feed(peer.headers(3, fields))
        guard case .headers(3, let head, true) = events.first else { Issue.record("no request on stream 3: \(events)"); return }
        #expect(head.field("x-extra") == "one")
    }

    @Test("§5.1 closed: frames on a stream this side reset are dropped quietly (they may have crossed the RST_STREAM)")
    func framesAfterOwnReset() {
        var peer = Peer.server()
        openStream(&peer, endStream: false)
        peer.connection.resetStream(1, code: .cancel)
        _ = peer.written()
        #expect(peer.feed([Peer.data(1, [1, 2]), Peer.windowUpdate(1, 10), Peer.reset(1)]).isEmpty)
        #expect(peer.written().isEmpty)
    }

    @Test("§5.1 idle: DATA, RST_STREAM, WINDOW_UPDATE and CONTINUATION are connection errors PROTOCOL_ERROR (h2spec 5.1/1-4)",
          arguments: ["data", "rst", "window", "continuation"])
    func idleStream(frame: String) {
        var peer = Peer.server()
        let bytes: ByteBuffer = switch frame {
        case "data": Peer.data(1, [1])
        case "rst": Peer.reset(1)
        case "window": Peer.windowUpdate(1, 1)
        default: Peer.frame(.continuation, flags: HTTP2Flag.endHeaders, stream: 1, [0x82])
        }
        #expect(peer.feed(bytes).map(\.description) == ["connectionError protocolError"])
        #expect(peer.written().last?.code == .protocolError)
    }

    @Test("§5.1.1: an even stream, and a stream below the last one opened, are connection errors PROTOCOL_ERROR (h2spec 5.1.1/1-2)")
    func streamIdentifiers() {
        var even = Peer.server()
        #expect(even.feed(even.headers(2)).map(\.description) == ["connectionError protocolError"])
        var lower = Peer.server()
        #expect(lower.feed(lower.headers(5)).map(\.description) == ["headers 5 end"])
        #expect(lower.feed(lower.headers(3)).map(\.description) == ["connectionError protocolError"])
    }

    @Test("§5.1.2: streams past SETTINGS_MAX_CONCURRENT_STREAMS are refused with REFUSED_STREAM (h2spec 5.1.2/1)")
    func concurrency() {
        var configuration = Peer.apnsLike
        configuration.settings.append((.maxConcurrentStreams, 2))
        var peer = Peer.server(configuration)
        let events = peer.feed([peer.headers(1, endStream: false), peer.headers(3, endStream: false), peer.headers(5, endStream: false)])
        #expect(events.map(\.description) == ["headers 1", "headers 3", "streamError 5 refusedStream"])
        // The peer's RST_STREAM or DATA on the refused stream crossed ours: dropped.
        #expect(peer.feed(Peer.data(5, [1], endStream: true)).isEmpty)
    }

    @Test("§5.3.1: HEADERS and PRIORITY that make a stream depend on itself are stream errors PROTOCOL_ERROR (h2spec 5.3.1/1-2)")
    func selfDependency() {
        var peer = Peer.server()
        #expect(peer.feed(peer.headers(1, dependsOn: 1)).map(\.description) == ["streamError 1 protocolError"])
        #expect(peer.written().map(\.description) == ["rstStream stream 1 flags 0 protocolError"])
        #expect(peer.feed(Peer.priority(3, dependsOn: 3)).map(\.description) == ["streamError 3 protocolError"])
        // A dependency on another stream is advice, and the connection goes on.
        #expect(peer.feed(Peer.priority(5, dependsOn: 1)).isEmpty)
        #expect(peer.feed(peer.headers(7, dependsOn: 5)).map(\.description) == ["headers 7 end"])
    }

    @Test("§6.3: PRIORITY of the wrong length is a stream error FRAME_SIZE_ERROR; on stream 0 a connection error (h2spec 6.3/1-2)")
    func priorityFrame() {
        var peer = Peer.server()
        #expect(peer.feed(Peer.frame(.priority, stream: 1, [0, 0, 0, 3])).map(\.description) == ["streamError 1 frameSizeError"])
        #expect(peer.feed(Peer.priority(0, dependsOn: 1)).map(\.description) == ["connectionError protocolError"])
    }

    @Test("§8.1.1: content-length that does not match the DATA is a stream error PROTOCOL_ERROR (h2spec 8.1.2.6/1-2)")
    func contentLength() {
        var peer = Peer.server()
        let fields = Peer.request + [("content-length", "5")]
        _ = peer.feed(peer.headers(1, fields, endStream: false))
        #expect(peer.feed([Peer.data(1, [1, 2]), Peer.data(1, [3], endStream: true)]).map(\.description) == ["data 1 2", "streamError 1 protocolError"])
        _ = peer.feed(peer.headers(3, fields, endStream: false))
        #expect(peer.feed(Peer.data(3, [1, 2, 3, 4, 5, 6])).map(\.description) == ["streamError 3 protocolError"])
        #expect(peer.feed(peer.headers(5, fields, endStream: true)).map(\.description) == ["streamError 5 protocolError"])
        _ = peer.feed(peer.headers(7, fields, endStream: false))
        #expect(peer.feed(Peer.data(7, [1, 2, 3, 4, 5], endStream: true)).map(\.description) == ["data 7 5 end"])
    }

    @Test("§8.1: a second header block must end the stream and hold no pseudo-header (h2spec 8.1/1, 8.1.2.1/3)")
    func trailers() {
        var peer = Peer.server()
        _ = peer.feed(peer.headers(1, endStream: false))
        #expect(peer.feed(peer.headers(1, [("x-trailer", "1")], endStream: false)).map(\.description) == ["streamError 1 protocolError"])
        _ = peer.feed(peer.headers(3, endStream: false))
        #expect(peer.feed(peer.headers(3, [(":path", "/")], endStream: true)).map(\.description) == ["streamError 3 protocolError"])
        _ = peer.feed(peer.headers(5, endStream: false))
        #expect(peer.feed(peer.headers(5, [("x-trailer", "1")], endStream: true)).map(\.description) == ["trailers 5"])
    }

    @Test("§8.3.1: a malformed request is a stream error PROTOCOL_ERROR and the connection goes on (h2spec 8.1.2.x)",
          arguments: [
              [(":method", "POST"), (":scheme", "https"), (":path", "/"), (":unknown", "x")],
              [(":method", "POST"), (":scheme", "https"), (":path", "/"), (":status", "200")],
              [(":method", "POST"), (":scheme", "https"), ("x-a", "1"), (":path", "/")],
              [(":method", "POST"), (":scheme", "https"), (":path", "/"), ("connection", "keep-alive")],
              [(":method", "POST"), (":scheme", "https"), (":path", "/"), ("te", "gzip")],
              [(":method", "POST"), (":scheme", "https"), (":path", "")],
              [(":scheme", "https"), (":path", "/")],
              [(":method", "POST"), (":path", "/")],
              [(":method", "POST"), (":scheme", "https")],
              [(":method", "POST"), (":method", "POST"), (":scheme", "https"), (":path", "/")],
              [(":method", "POST"), (":scheme", "https"), (":scheme", "https"), (":path", "/")],
              [(":method", "POST"), (":scheme", "https"), (":path", "/"), (":path", "/")],
              [(":method", "POST"), (":scheme", "https"), (":path", "/"), ("X-Upper", "1")],
          ] as [[(String, String)]])
    func malformedRequest(fields: [(String, String)]) {
        var peer = Peer.server()
        #expect(peer.feed(peer.headers(1, fields)).map(\.description) == ["streamError 1 protocolError"])
        #expect(peer.feed(peer.headers(3)).map(\.description) == ["headers 3 end"])
    }

    @Test("§6.10, §4.3: anything but the header block's CONTINUATION in the middle of it is a connection error PROTOCOL_ERROR (h2spec 4.3/2-3, 5.5/2, 6.10/2)",
          arguments: ["priority", "other stream", "unknown type", "data"])
    func interruptedHeaderBlock(interruption: String) {
        var peer = Peer.server()
        let second: ByteBuffer = switch interruption {
        case "priority": Peer.priority(1, dependsOn: 0)
        case "other stream": peer.headers(3)
        case "unknown type": Peer.rawFrame(0x16, stream: 0, [1, 2])
        default: Peer.data(1, [1])
        }
        #expect(peer.feed([peer.headers(1, endStream: false, endHeaders: false), second]).map(\.description) == ["connectionError protocolError"])
    }

    @Test("§6.10: a header block in several CONTINUATIONs is one request; a CONTINUATION after END_HEADERS is a connection error (h2spec 6.10/1, 6.10/4-5)")
    func continuations() {
        var peer = Peer.server()
        let block = peer.block(Peer.request)
        let events = peer.feed([Peer.frame(.headers, flags: HTTP2Flag.endStream, stream: 1, Array(block[..<3])),
                                Peer.frame(.continuation, stream: 1, Array(block[3..<6])),
                                Peer.frame(.continuation, flags: HTTP2Flag.endHeaders, stream: 1, Array(block[6...]))])
        #expect(events.map(\.description) == ["headers 1 end"])
        #expect(peer.feed(Peer.frame(.continuation, flags: HTTP2Flag.endHeaders, stream: 1, [0x82])).map(\.description) == ["connectionError protocolError"])
    }

    @Test("§4.1, §5.5: unknown frame types, unknown flags and the reserved bit are ignored (h2spec 4.1/1-3, 5.5/1)")
    func ignored() {
        var peer = Peer.server()
        #expect(peer.feed(Peer.rawFrame(0x16, stream: 0, [1, 2, 3])).isEmpty)
        var request = peer.headers(1)
        request.setInteger(UInt8(HTTP2Flag.endStream | HTTP2Flag.endHeaders | 0x10), at: 4)
        request.setInteger(UInt32(0x8000_0001), at: 5)
        #expect(peer.feed(request).map(\.description) == ["headers 1 end"])
    }
}
