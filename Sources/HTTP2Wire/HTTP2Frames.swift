import NIOCore

// HTTP/2's wire format (RFC 9113) and HPACK's primitives (RFC 7541), shared by push-receiver's
// server side and apns-sender's client side, which both work on the connection's bytes directly.


/// A frame's 9-byte header (RFC 9113 §4.1).
package struct HTTP2FrameHeader: Sendable, Hashable {
    package var length: Int
    /// The raw type: unknown types are ignored, not errors.
    package var type: UInt8
    package var flags: UInt8
    package var stream: UInt32
}

/// HTTP/2 frame types (RFC 9113 §6).
package enum HTTP2FrameType: UInt8, Sendable {
    case data = 0x0, headers = 0x1, priority = 0x2, rstStream = 0x3, settings = 0x4, pushPromise = 0x5,
         ping = 0x6, goAway = 0x7, windowUpdate = 0x8, continuation = 0x9
}

/// Frame flags (RFC 9113 §6).
package enum HTTP2Flag {
    package static let endStream: UInt8 = 0x1
    package static let ack: UInt8 = 0x1
    package static let endHeaders: UInt8 = 0x4
    package static let padded: UInt8 = 0x8
    package static let priority: UInt8 = 0x20
}

/// Error codes of RST_STREAM and GOAWAY (RFC 9113 §7).
package enum HTTP2Code: UInt32, Sendable {
    case noError = 0x0, protocolError = 0x1, internalError = 0x2, flowControlError = 0x3, settingsTimeout = 0x4,
         streamClosed = 0x5, frameSizeError = 0x6, refusedStream = 0x7, cancel = 0x8, compressionError = 0x9,
         connectError = 0xa, enhanceYourCalm = 0xb, inadequateSecurity = 0xc, http11Required = 0xd
}

/// SETTINGS parameters (RFC 9113 §6.5.2).
package enum HTTP2SettingID: UInt16, Sendable {
    case headerTableSize = 0x1, enablePush = 0x2, maxConcurrentStreams = 0x3, initialWindowSize = 0x4,
         maxFrameSize = 0x5, maxHeaderListSize = 0x6
}

package enum HTTP2Limits {
    /// The client connection preface.
    package static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    package static let frameHeaderLength = 9
    package static let defaultWindow = 65_535
    package static let maximumWindow = Int(Int32.max)
    package static let defaultMaxFrameSize = 16_384
    package static let largestMaxFrameSize = 16_777_215
}

/// Reading and writing frames.
extension ByteBuffer {
    /// The header of the next frame, when its 9 bytes are here (nothing is consumed).
    func peekHTTP2FrameHeader() -> HTTP2FrameHeader? {
        // (One read of the 9 bytes and one write of them below, not one per field: every access to
        // a ByteBuffer's storage pays a uniqueness and an exclusivity check, and these run per frame.)
        guard let (high, low, type, flags, stream) = getMultipleIntegers(
            at: readerIndex, as: (UInt8, UInt16, UInt8, UInt8, UInt32).self) else { return nil }
        return HTTP2FrameHeader(length: Int(high) << 16 | Int(low), type: type, flags: flags, stream: stream & 0x7fff_ffff)
    }

    package mutating func writeFrameHeader(length: Int, type: HTTP2FrameType, flags: UInt8 = 0, stream: UInt32) {
        // The 9 bytes as one 8-byte word and one byte, written together (writeMultipleIntegers
        // still reaches the storage once per integer).
        let stream = stream & 0x7fff_ffff
        let word = UInt64(truncatingIfNeeded: length & 0xff_ffff) << 40 | UInt64(type.rawValue) << 32 | UInt64(flags) << 24 | UInt64(stream >> 8)
        let bytes = (word.bigEndian, UInt8(truncatingIfNeeded: stream))
        withUnsafeBytes(of: bytes) { writeBytes($0) }
    }

    package mutating func writeSettingsFrame(_ settings: [(HTTP2SettingID, UInt32)]) {
        writeFrameHeader(length: settings.count * 6, type: .settings, stream: 0)
        for (id, value) in settings {
            writeInteger(id.rawValue)
            writeInteger(value)
        }
    }

    package mutating func writeWindowUpdate(stream: UInt32, increment: Int) {
        writeFrameHeader(length: 4, type: .windowUpdate, stream: stream)
        writeInteger(UInt32(increment) & 0x7fff_ffff)
    }

    package mutating func writeResetStream(stream: UInt32, code: HTTP2Code) {
        writeFrameHeader(length: 4, type: .rstStream, stream: stream)
        writeInteger(code.rawValue)
    }

    /// DATA frames for as much of `body` as both windows allow, each at most `maxFrameSize`, the
    /// last with END_STREAM; what went out is taken off `body` and off both windows. True when all
    /// of it went out.
    package mutating func writeDataFrames(_ body: inout [UInt8], stream: UInt32, connectionWindow: inout Int,
                                         streamWindow: inout Int, maxFrameSize: Int) -> Bool {
        var offset = 0
        while offset < body.count {
            let rest = body.count - offset
            let length = min(rest, connectionWindow, streamWindow, maxFrameSize)
            guard length > 0 else { break }
            connectionWindow -= length
            streamWindow -= length
            writeFrameHeader(length: length, type: .data, flags: length == rest ? HTTP2Flag.endStream : 0, stream: stream)
            writeBytes(body[offset..<(offset + length)])
            offset += length
        }
        // (Taking the sent bytes off only at the end, and not at all when everything went: a body
        // that fits in one frame, as every push does, is never copied.)
        if offset == body.count {
            body = []
            return true
        }
        if offset > 0 { body.removeFirst(offset) }
        return false
    }

    package mutating func writeGoAway(lastStreamID: UInt32, code: HTTP2Code, debugData: [UInt8]) {
        writeFrameHeader(length: 8 + debugData.count, type: .goAway, stream: 0)
        writeInteger(lastStreamID & 0x7fff_ffff)
        writeInteger(code.rawValue)
        writeBytes(debugData)
    }
}


/// HPACK's primitive encodings (RFC 7541 §5).
package enum HPACK {
    /// An integer with an N-bit prefix; `pattern` holds the representation's leading bits.
    package static func writeInteger(_ value: Int, prefixBits: Int, pattern: UInt8, into block: inout ByteBuffer) {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else {
            block.writeInteger(pattern | UInt8(value))
            return
        }
        block.writeInteger(pattern | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            block.writeInteger(UInt8(rest & 0x7f | 0x80))
            rest >>= 7
        }
        block.writeInteger(UInt8(rest))
    }

    /// A string literal as plain octets (no Huffman coding, which every decoder accepts).
    package static func writeString(_ value: String, into block: inout ByteBuffer) {
        writeInteger(value.utf8.count, prefixBits: 7, pattern: 0x00, into: &block)
        block.writeString(value)
    }

    /// Reads an integer with an N-bit prefix (at most 2^28); nil when it is cut short or too large.
    package static func readInteger(_ block: inout ByteBuffer, prefixBits: Int) -> Int? {
        guard let first = block.readInteger(as: UInt8.self) else { return nil }
        let limit = (1 << prefixBits) - 1
        var value = Int(first) & limit
        guard value == limit else { return value }
        var shift = 0
        while let byte = block.readInteger(as: UInt8.self) {
            value += Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 28 { return nil }
        }
        return nil
    }
}

/// The receiving side of one flow-control window, a connection's or a stream's (RFC 9113 §5.2):
/// DATA takes from it, and once half of it is used a WINDOW_UPDATE gives that back.
package struct HTTP2InboundWindow: Sendable {
    package private(set) var available: Int
    private let size: Int
    private var unacknowledged = 0

    package init(size: Int = HTTP2Limits.defaultWindow) {
        self.size = size
        self.available = size
    }

    /// Counts a DATA frame's whole payload (padding included) against the window; false when it
    /// does not fit (a FLOW_CONTROL_ERROR).
    package mutating func receive(_ length: Int) -> Bool {
        guard length <= available else { return false }
        available -= length
        unacknowledged += length
        return true
    }

    /// The WINDOW_UPDATE increment due now, if half the window is used; the window is whole again after it.
    package mutating func dueUpdate() -> Int? {
        guard unacknowledged >= size / 2 else { return nil }
        defer { unacknowledged = 0 }
        available += unacknowledged
        return unacknowledged
    }
}

extension ByteBuffer {
    /// Takes a DATA or HEADERS frame's padding (flag PADDED) off its payload, and with
    /// `priorityFields` (HEADERS with flag PRIORITY) the five priority bytes; false when the frame
    /// is too short for them (a PROTOCOL_ERROR).
    package mutating func stripHTTP2Padding(flags: UInt8, priorityFields: Bool) -> Bool {
        var padding = 0
        if flags & HTTP2Flag.padded != 0 {
            guard let length = readInteger(as: UInt8.self) else { return false }
            padding = Int(length)
        }
        if priorityFields {
            guard readableBytes >= 5 else { return false }
            moveReaderIndex(forwardBy: 5)
        }
        guard padding <= readableBytes else { return false }
        moveWriterIndex(to: writerIndex - padding)
        return true
    }
}

/// What a connection has read and not yet used, cut into frames: the bytes of several reads
/// are joined until a whole frame is there.
package struct HTTP2FrameReader {
    package enum Next {
        case frame(HTTP2FrameHeader, payload: ByteBuffer)
        /// Not a whole frame yet.
        case needMore
        /// A frame longer than the maximum announced (a FRAME_SIZE_ERROR).
        case tooLarge(HTTP2FrameHeader)
    }

    package enum Preface { case complete, needMore, invalid }

    private var pending: ByteBuffer?

    package init() {}

    package mutating func append(_ bytes: inout ByteBuffer) {
        if pending == nil { pending = bytes } else { pending!.writeBuffer(&bytes) }
    }

    /// Takes the client connection preface (servers only), or says it is not there.
    package mutating func readClientPreface() -> Preface {
        guard let buffer = pending else { return .needMore }
        guard buffer.readableBytes >= HTTP2Limits.preface.count else {
            // A partial preface must at least be the start of the real one.
            return HTTP2Limits.preface.starts(with: buffer.readableBytesView) ? .needMore : .invalid
        }
        return pending!.readBytes(length: HTTP2Limits.preface.count) == HTTP2Limits.preface ? .complete : .invalid
    }

    /// The next whole frame, whose payload is at most `maxLength` bytes.
    package mutating func next(maxLength: Int = HTTP2Limits.defaultMaxFrameSize) -> Next {
        guard var buffer = pending, let header = buffer.peekHTTP2FrameHeader() else { return .needMore }
        guard header.length <= maxLength else { return .tooLarge(header) }
        guard buffer.readableBytes >= HTTP2Limits.frameHeaderLength + header.length else { return .needMore }
        buffer.moveReaderIndex(forwardBy: HTTP2Limits.frameHeaderLength)
        let payload = buffer.readSlice(length: header.length)!
        pending = buffer
        return .frame(header, payload: payload)
    }

    /// After a read: lets go of what was used.
    package mutating func compact() {
        guard let buffer = pending else { return }
        if buffer.readableBytes == 0 { pending = nil } else if buffer.readerIndex > 64 * 1024 { pending!.discardReadBytes() }
    }
}
