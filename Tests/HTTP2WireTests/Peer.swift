import HTTP2Wire
import NIOCore
import NIOHPACK
import Synchronization

/// A frame as the tests see one.
struct Frame: CustomStringConvertible {
    var type: UInt8
    var flags: UInt8
    var stream: UInt32
    var payload: ByteBuffer

    var kind: HTTP2FrameType? { HTTP2FrameType(rawValue: type) }
    /// The code of a RST_STREAM or a GOAWAY.
    var code: HTTP2Code? {
        switch kind {
        case .rstStream: return payload.getInteger(at: payload.readerIndex, as: UInt32.self).flatMap(HTTP2Code.init(rawValue:))
        case .goAway: return payload.getInteger(at: payload.readerIndex + 4, as: UInt32.self).flatMap(HTTP2Code.init(rawValue:))
        default: return nil
        }
    }
    var description: String {
        "\(kind.map { "\($0)" } ?? "type \(type)") stream \(stream) flags \(flags)\(code.map { " \($0)" } ?? "")"
    }
}

/// The other end of an ``HTTP2Connection`` under test: writes frames by hand (header blocks by
/// NIOHPACK's encoder, which we did not write), feeds them in, and reads back what the
/// connection wrote. Time is a number the test moves.
struct Peer {
    var connection: HTTP2Connection
    var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
    let clock: TestClock

    /// Nanoseconds on the connection's clock (the abuse limits' buckets); the test moves it.
    var now: UInt64 {
        get { clock.now }
        nonmutating set { clock.now = newValue }
    }

    init(role: HTTP2Connection.Role, configuration: HTTP2Connection.Configuration) {
        let clock = TestClock()
        var configuration = configuration
        configuration.clock = { clock.now }
        self.clock = clock
        self.connection = HTTP2Connection(role: role, configuration: configuration)
    }

    /// A server that has read a client's preface and SETTINGS; what it wrote so far is dropped.
    static func server(_ configuration: HTTP2Connection.Configuration = Peer.apnsLike) -> Peer {
        var peer = Peer(role: .server, configuration: configuration)
        var bytes = ByteBuffer(bytes: HTTP2Limits.preface)
        bytes.writeSettingsFrame([])
        _ = peer.feed(bytes)
        _ = peer.written()
        return peer
    }

    /// A client whose server has sent its SETTINGS (with `settings`).
    static func client(serverSettings settings: [(HTTP2SettingID, UInt32)] = [(.maxConcurrentStreams, 1000)]) -> Peer {
        var peer = Peer(role: .client, configuration: .init(settings: [(.enablePush, 0)]))
        var bytes = ByteBuffer()
        bytes.writeSettingsFrame(settings)
        _ = peer.feed(bytes)
        _ = peer.written()
        return peer
    }

    /// push-receiver's configuration.
    static let apnsLike = HTTP2Connection.Configuration(
        settings: [(.headerTableSize, 4096), (.maxConcurrentStreams, 1000), (.initialWindowSize, 65_535), (.maxFrameSize, 16_384),
                   (.maxHeaderListSize, 8000)],
        connectionWindow: 1 << 20)

    /// Feeds bytes in and returns every event they made.
    mutating func feed(_ bytes: ByteBuffer) -> [HTTP2Event] {
        var bytes = bytes
        connection.receive(&bytes)
        var events: [HTTP2Event] = []
        while let event = connection.nextEvent() { events.append(event) }
        return events
    }

    mutating func feed(_ frames: [ByteBuffer]) -> [HTTP2Event] {
        var all = ByteBuffer()
        for var frame in frames { all.writeBuffer(&frame) }
        return feed(all)
    }

    /// The frames the connection wrote since the last call.
    mutating func written() -> [Frame] {
        guard var bytes = connection.takeOutput(allocator: ByteBufferAllocator()) else { return [] }
        if bytes.readableBytesView.starts(with: HTTP2Limits.preface) { bytes.moveReaderIndex(forwardBy: HTTP2Limits.preface.count) }
        var reader = HTTP2FrameReader()
        reader.append(&bytes)
        var frames: [Frame] = []
        while case .frame(let header, let payload) = reader.next(maxLength: HTTP2Limits.largestMaxFrameSize) {
            frames.append(Frame(type: header.type, flags: header.flags, stream: header.stream, payload: payload))
        }
        return frames
    }

    // MARK: Frames

    static func frame(_ type: HTTP2FrameType, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8] = []) -> ByteBuffer {
        rawFrame(type.rawValue, flags: flags, stream: stream, payload)
    }

    static func rawFrame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(truncatingIfNeeded: payload.count >> 16))
        buffer.writeInteger(UInt16(truncatingIfNeeded: payload.count))
        buffer.writeInteger(type)
        buffer.writeInteger(flags)
        buffer.writeInteger(stream)
        buffer.writeBytes(payload)
        return buffer
    }

    static let request: [(String, String)] = [(":method", "POST"), (":scheme", "https"), (":path", "/3/device/abc"),
                                              (":authority", "api.sandbox.push.apple.com"), ("apns-topic", "com.example")]

    mutating func block(_ fields: [(String, String)]) -> [UInt8] {
        var buffer = ByteBuffer()
        try! encoder.encode(headers: HPACKHeaders(fields), to: &buffer)
        return Array(buffer.readableBytesView)
    }

    mutating func headers(_ stream: UInt32, _ fields: [(String, String)] = Peer.request, endStream: Bool = true,
                          endHeaders: Bool = true, dependsOn: UInt32? = nil) -> ByteBuffer {
        var flags: UInt8 = (endStream ? HTTP2Flag.endStream : 0) | (endHeaders ? HTTP2Flag.endHeaders : 0)
        var payload: [UInt8] = []
        if let dependsOn {
            flags |= HTTP2Flag.priority
            payload += bigEndian(dependsOn) + [15]
        }
        payload += block(fields)
        return Self.frame(.headers, flags: flags, stream: stream, payload)
    }

    static func data(_ stream: UInt32, _ bytes: [UInt8] = [], endStream: Bool = false) -> ByteBuffer {
        frame(.data, flags: endStream ? HTTP2Flag.endStream : 0, stream: stream, bytes)
    }

    static func reset(_ stream: UInt32, _ code: HTTP2Code = .cancel) -> ByteBuffer {
        frame(.rstStream, stream: stream, bigEndian(code.rawValue))
    }

    static func windowUpdate(_ stream: UInt32, _ increment: UInt32) -> ByteBuffer {
        frame(.windowUpdate, stream: stream, bigEndian(increment))
    }

    static func settings(_ entries: [(HTTP2SettingID, UInt32)]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeSettingsFrame(entries)
        return buffer
    }

    static func ping(ack: Bool = false) -> ByteBuffer {
        frame(.ping, flags: ack ? HTTP2Flag.ack : 0, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8])
    }

    static func priority(_ stream: UInt32, dependsOn: UInt32) -> ByteBuffer {
        frame(.priority, stream: stream, bigEndian(dependsOn) + [15])
    }
}

func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

extension HTTP2Event: CustomStringConvertible {
    /// A short form the tests compare: "headers 1 end", "streamError 3 streamClosed", …
    public var description: String {
        switch self {
        case .settings(_, let first): return first ? "settings first" : "settings"
        case .headers(let stream, _, let end): return "headers \(stream)\(end ? " end" : "")"
        case .data(let stream, let payload, let end): return "data \(stream) \(payload.readableBytes)\(end ? " end" : "")"
        case .trailers(let stream): return "trailers \(stream)"
        case .streamReset(let stream, let code): return "streamReset \(stream) \(code)"
        case .streamError(let stream, let code, _): return "streamError \(stream) \(code)"
        case .goAway(let last, let code, _): return "goAway \(last) \(code)"
        case .connectionError(let code, _): return "connectionError \(code)"
        }
    }
}

/// A clock the test sets.
final class TestClock: Sendable {
    private let value = Mutex<UInt64>(1_000_000_000)
    var now: UInt64 {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
