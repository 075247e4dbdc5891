import HTTP2Wire
import NIOCore
import Testing

/// SETTINGS, PING, GOAWAY and flow control on both ends. Before the core, apns-sender checked
/// none of a WINDOW_UPDATE of 0, a window overflow, a SETTINGS ACK with a payload, nor a stream
/// window overflow; the same code now answers for both, and these run on both.
@Suite("HTTP/2 core: connection rules and flow control, both roles")
struct ConnectionRuleTests {
    enum Role: String, CaseIterable, CustomTestStringConvertible {
        case server, client
        var testDescription: String { rawValue }
    }

    /// A connection in the role, with stream 1 open and its body still to come either way.
    private func withOpenStream(_ role: Role) -> Peer {
        switch role {
        case .server:
            var peer = Peer.server()
            _ = peer.feed(peer.headers(1, endStream: false))
            return peer
        case .client:
            var peer = Peer.client()
            let id = peer.connection.openStream()!
            var block = ByteBuffer(bytes: [0x83, 0x87, 0x84])  // POST, https, /
            peer.connection.writeHeaders(&block, stream: id, endStream: false)
            _ = peer.written()
            return peer
        }
    }

    @Test("§6.9: a WINDOW_UPDATE of 0 on the connection is a connection error PROTOCOL_ERROR; on a stream a stream error (h2spec 6.9/1-2)", arguments: Role.allCases)
    func zeroIncrement(role: Role) {
        var peer = withOpenStream(role)
        #expect(peer.feed(Peer.windowUpdate(1, 0)).map(\.description) == ["streamError 1 protocolError"])
        #expect(peer.feed(Peer.windowUpdate(0, 0)).map(\.description) == ["connectionError protocolError"])
        #expect(peer.written().last?.code == .protocolError)
    }

    @Test("§6.9.1: a window past 2^31-1 is FLOW_CONTROL_ERROR: a connection error on the connection, a stream error on a stream (h2spec 6.9.1/2-3)", arguments: Role.allCases)
    func windowOverflow(role: Role) {
        var peer = withOpenStream(role)
        #expect(peer.feed([Peer.windowUpdate(1, 0x7fff_ffff)]).map(\.description) == ["streamError 1 flowControlError"])
        #expect(peer.feed([Peer.windowUpdate(0, 0x7fff_ffff)]).map(\.description) == ["connectionError flowControlError"])
    }

    @Test("§6.5: a SETTINGS ACK with a payload is FRAME_SIZE_ERROR; SETTINGS off stream 0 and bad lengths are errors (h2spec 6.5/1-3)", arguments: Role.allCases)
    func settingsFrames(role: Role) {
        var ack = withOpenStream(role)
        #expect(ack.feed(Peer.frame(.settings, flags: HTTP2Flag.ack, stream: 0, [0, 0, 0, 0, 0, 0])).map(\.description) == ["connectionError frameSizeError"])
        var stream = withOpenStream(role)
        #expect(stream.feed(Peer.frame(.settings, stream: 1, [])).map(\.description) == ["connectionError protocolError"])
        var length = withOpenStream(role)
        #expect(length.feed(Peer.frame(.settings, stream: 0, [0, 3, 0, 0])).map(\.description) == ["connectionError frameSizeError"])
    }

    @Test("§6.5.2: out-of-range values are connection errors with the RFC's codes (h2spec 6.5.2/1-4)",
          arguments: [(HTTP2SettingID.enablePush, UInt32(2), HTTP2Code.protocolError), (.initialWindowSize, 0x8000_0000, .flowControlError),
                      (.maxFrameSize, 16_383, .protocolError), (.maxFrameSize, 16_777_216, .protocolError)])
    func settingValues(setting: HTTP2SettingID, value: UInt32, code: HTTP2Code) {
        for role in Role.allCases {
            var peer = withOpenStream(role)
            #expect(peer.feed(Peer.settings([(setting, value)])).map(\.description) == ["connectionError \(code)"])
        }
    }

    @Test("§6.5.2: a server that turns server push on is a PROTOCOL_ERROR for the client")
    func serverEnablesPush() {
        var peer = Peer.client()
        #expect(peer.feed(Peer.settings([(.enablePush, 1)])).map(\.description) == ["connectionError protocolError"])
    }

    @Test("§6.5.3: SETTINGS are acknowledged at once, unknown ones ignored, repeated ones applied in order (h2spec 6.5.3/1-2, 6.5.2/5)", arguments: Role.allCases)
    func settingsApplied(role: Role) {
        var peer = withOpenStream(role)
        let events = peer.feed(Peer.settings([(.initialWindowSize, 100), (.initialWindowSize, 1), (.maxConcurrentStreams, 7)]) + Peer.rawFrame(4, stream: 0, [0, 0x99, 0, 0, 0, 1]))
        #expect(events.map(\.description) == ["settings", "settings"])
        #expect(peer.connection.peerSettings.initialWindowSize == 1)
        #expect(peer.connection.peerSettings.maxConcurrentStreams == 7)
        #expect(peer.written().map(\.description) == ["settings stream 0 flags 1", "settings stream 0 flags 1"])
    }

    @Test("§6.7: PING is answered with the same 8 bytes; a PING ACK is not answered; bad PINGs are connection errors (h2spec 6.7/1-4)", arguments: Role.allCases)
    func ping(role: Role) {
        var peer = withOpenStream(role)
        #expect(peer.feed([Peer.ping(), Peer.ping(ack: true)]).isEmpty)
        let written = peer.written()
        #expect(written.map(\.description) == ["ping stream 0 flags 1"])
        #expect(Array(written[0].payload.readableBytesView) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(peer.feed(Peer.frame(.ping, stream: 1, [1, 2, 3, 4, 5, 6, 7, 8])).map(\.description) == ["connectionError protocolError"])
        var short = withOpenStream(role)
        #expect(short.feed(Peer.frame(.ping, stream: 0, [1, 2, 3])).map(\.description) == ["connectionError frameSizeError"])
    }

    @Test("§6.8: GOAWAY is reported with its code (unknown codes too); off stream 0 it is a connection error (h2spec 6.8/1, 7/1)", arguments: Role.allCases)
    func goAway(role: Role) {
        var peer = withOpenStream(role)
        let events = peer.feed(Peer.frame(.goAway, stream: 0, bigEndian(1) + bigEndian(0xff) + Array("bye".utf8)))
        guard case .goAway(1, 0xff, let debug) = events.first else { Issue.record("\(events)"); return }
        #expect(debug == Array("bye".utf8))
        #expect(!peer.connection.acceptsNewStreams)
        var bad = withOpenStream(role)
        #expect(bad.feed(Peer.frame(.goAway, stream: 1, bigEndian(0) + bigEndian(0))).map(\.description) == ["connectionError protocolError"])
    }

    @Test("§6.9.1, §6.9.2: a body waits for window, goes out as WINDOW_UPDATEs come, and a negative window from SETTINGS is tracked (h2spec 6.9.1/1, 6.9.2/1-2)", arguments: Role.allCases)
    func flowControl(role: Role) {
        var peer = withOpenStream(role)
        _ = peer.feed(Peer.settings([(.initialWindowSize, 3)]))
        _ = peer.written()
        peer.connection.writeBody(Array(repeating: 7, count: 10), stream: 1)
        #expect(peer.written().map { $0.payload.readableBytes } == [3])
        #expect(peer.connection.isSendingBody(1))
        // The window shrinks below zero: nothing more until it is positive again.
        _ = peer.feed(Peer.settings([(.initialWindowSize, 1)]))
        _ = peer.written()
        _ = peer.feed(Peer.windowUpdate(1, 2))
        #expect(peer.written().isEmpty)
        _ = peer.feed(Peer.windowUpdate(1, 4))
        let frames = peer.written()
        #expect(frames.map { $0.payload.readableBytes } == [4])
        _ = peer.feed(Peer.windowUpdate(1, 100))
        let last = peer.written()
        #expect(last.map { $0.payload.readableBytes } == [3])
        #expect(last.first?.flags == HTTP2Flag.endStream)
        #expect(!peer.connection.isSendingBody(1))
    }

    @Test("§6.9: DATA past the stream's window is a stream error FLOW_CONTROL_ERROR, past the connection's a connection error; DATA received is given back once half a window is used", arguments: Role.allCases)
    func receiveWindow(role: Role) {
        let configuration = HTTP2Connection.Configuration(settings: [(.initialWindowSize, 100), (.maxFrameSize, 100_000)])
        func open() -> Peer {
            switch role {
            case .server:
                var peer = Peer.server(configuration)
                _ = peer.feed(peer.headers(1, endStream: false))
                return peer
            case .client:
                var peer = Peer(role: .client, configuration: configuration)
                _ = peer.feed(Peer.settings([]))
                let id = peer.connection.openStream()!
                var block = ByteBuffer(bytes: [0x83, 0x87, 0x84])
                peer.connection.writeHeaders(&block, stream: id, endStream: true)
                _ = peer.feed(Peer.frame(.headers, flags: HTTP2Flag.endHeaders, stream: 1, [0x88]))
                _ = peer.written()
                return peer
            }
        }
        var peer = open()
        #expect(peer.feed(Peer.data(1, [UInt8](repeating: 1, count: 60))).map(\.description) == ["data 1 60"])
        #expect(peer.written().map(\.description) == ["windowUpdate stream 1 flags 0"])
        #expect(peer.feed(Peer.data(1, [UInt8](repeating: 1, count: 101))).map(\.description) == ["streamError 1 flowControlError"])
        var connection = open()
        #expect(connection.feed(Peer.data(1, [UInt8](repeating: 1, count: 65_536))).map(\.description) == ["connectionError flowControlError"])
    }

    @Test("§6.9.2: a SETTINGS_INITIAL_WINDOW_SIZE that takes an open stream's window past 2^31-1 is a connection error FLOW_CONTROL_ERROR", arguments: Role.allCases)
    func settingsWindowOverflow(role: Role) {
        var peer = withOpenStream(role)
        _ = peer.feed(Peer.windowUpdate(1, 0x7fff_ffff - 65_535))
        #expect(peer.connection.isOpen(1))
        #expect(peer.feed(Peer.settings([(.initialWindowSize, 65_536)])).map(\.description) == ["connectionError flowControlError"])
    }

    @Test("a body waiting for window is dropped when its stream is reset; the window it would have used goes to the others", arguments: Role.allCases)
    func waitingBodyDropped(role: Role) {
        var peer = withOpenStream(role)
        _ = peer.feed(Peer.settings([(.initialWindowSize, 0)]))
        _ = peer.written()
        peer.connection.writeBody([1, 2, 3], stream: 1)
        #expect(peer.connection.isSendingBody(1))
        #expect(peer.written().isEmpty)
        #expect(peer.feed(Peer.reset(1)).map(\.description) == ["streamReset 1 8"])
        #expect(!peer.connection.isSendingBody(1))
        _ = peer.feed(Peer.settings([(.initialWindowSize, 100)]))
        #expect(peer.written().map(\.description) == ["settings stream 0 flags 1"])
    }

    @Test("§6.1, §6.2: padding longer than the frame is a connection error PROTOCOL_ERROR (h2spec 6.1/3, 6.2/4)")
    func padding() {
        var data = Peer.server()
        _ = data.feed(data.headers(1, endStream: false))
        #expect(data.feed(Peer.frame(.data, flags: HTTP2Flag.padded, stream: 1, [9, 1, 2])).map(\.description) == ["connectionError protocolError"])
        var headers = Peer.server()
        #expect(headers.feed(Peer.frame(.headers, flags: HTTP2Flag.padded | HTTP2Flag.endHeaders, stream: 1, [9, 0x82])).map(\.description) == ["connectionError protocolError"])
    }

    @Test("§4.2: a frame over SETTINGS_MAX_FRAME_SIZE is a connection error FRAME_SIZE_ERROR; 2^14 bytes is fine (h2spec 4.2/1-3)")
    func frameSize() {
        var peer = Peer.server()
        _ = peer.feed(peer.headers(1, endStream: false))
        #expect(peer.feed(Peer.data(1, [UInt8](repeating: 0, count: 16_384))).map(\.description) == ["data 1 16384"])
        #expect(peer.feed(Peer.data(1, [UInt8](repeating: 0, count: 16_385))).map(\.description) == ["connectionError frameSizeError"])
    }

    @Test("§3.4: a server needs the client preface, then SETTINGS first (h2spec 3.5/2)")
    func preface() {
        var wrong = Peer(role: .server, configuration: Peer.apnsLike)
        #expect(wrong.feed(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n")).map(\.description) == ["connectionError protocolError"])
        var notSettings = Peer(role: .server, configuration: Peer.apnsLike)
        #expect(notSettings.feed(ByteBuffer(bytes: HTTP2Limits.preface) + Peer.ping()).map(\.description) == ["connectionError protocolError"])
        var right = Peer(role: .server, configuration: Peer.apnsLike)
        #expect(right.feed(ByteBuffer(bytes: HTTP2Limits.preface) + Peer.settings([])).map(\.description) == ["settings first"])
        #expect(right.written().map(\.description) == ["settings stream 0 flags 0", "windowUpdate stream 0 flags 0", "settings stream 0 flags 1"])
    }

    @Test("client: PUSH_PROMISE, HEADERS on a stream it never opened and DATA before the answer's HEADERS are refused")
    func clientRefusals() {
        var push = Peer.client()
        #expect(push.feed(Peer.frame(.pushPromise, flags: HTTP2Flag.endHeaders, stream: 1, bigEndian(2) + [0x88])).map(\.description) == ["connectionError protocolError"])
        var unopened = Peer.client()
        #expect(unopened.feed(Peer.frame(.headers, flags: HTTP2Flag.endHeaders, stream: 3, [0x88])).map(\.description) == ["connectionError protocolError"])
        var early = withOpenStream(.client)
        #expect(early.feed(Peer.data(1, [1])).map(\.description) == ["streamError 1 protocolError"])
    }

    @Test("client: an interim 1xx answer is skipped, the final one reported; after GOAWAY no stream opens")
    func clientAnswers() {
        var peer = withOpenStream(.client)
        peer.connection.writeBody([1, 2], stream: 1)
        let events = peer.feed([Peer.frame(.headers, flags: HTTP2Flag.endHeaders, stream: 1, [0x08, 0x03] + Array("100".utf8)),
                                Peer.frame(.headers, flags: HTTP2Flag.endHeaders | HTTP2Flag.endStream, stream: 1, [0x88])])
        #expect(events.map(\.description) == ["headers 1 end"])
        #expect(!peer.connection.isOpen(1))
        _ = peer.feed(Peer.frame(.goAway, stream: 0, bigEndian(1) + bigEndian(0)))
        #expect(peer.connection.openStream() == nil)
    }
}

func + (lhs: ByteBuffer, rhs: ByteBuffer) -> ByteBuffer {
    var joined = lhs
    var rhs = rhs
    joined.writeBuffer(&rhs)
    return joined
}
