import NIOCore

/// HTTP/2 frame types (RFC 9113 §6).
enum HTTP2FrameType: UInt8 {
    case data = 0x0, headers = 0x1, priority = 0x2, rstStream = 0x3, settings = 0x4, pushPromise = 0x5,
         ping = 0x6, goAway = 0x7, windowUpdate = 0x8, continuation = 0x9
}

/// Frame flags (RFC 9113 §6).
enum HTTP2Flag {
    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let padded: UInt8 = 0x8
    static let priority: UInt8 = 0x20
}

/// Error codes of RST_STREAM and GOAWAY (RFC 9113 §7).
enum HTTP2Code: UInt32 {
    case noError = 0x0, protocolError = 0x1, internalError = 0x2, flowControlError = 0x3, settingsTimeout = 0x4,
         streamClosed = 0x5, frameSizeError = 0x6, refusedStream = 0x7, cancel = 0x8, compressionError = 0x9,
         connectError = 0xa, enhanceYourCalm = 0xb, inadequateSecurity = 0xc, http11Required = 0xd
}

/// SETTINGS parameters (RFC 9113 §6.5.2).
enum HTTP2SettingID: UInt16 {
    case headerTableSize = 0x1, enablePush = 0x2, maxConcurrentStreams = 0x3, initialWindowSize = 0x4,
         maxFrameSize = 0x5, maxHeaderListSize = 0x6
}

enum HTTP2Limits {
    /// The client connection preface.
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let frameHeaderLength = 9
    static let defaultWindow = 65_535
    static let maximumWindow = Int(Int32.max)
    static let defaultMaxFrameSize = 16_384
    static let largestMaxFrameSize = 16_777_215
}

/// Writing frames into an outgoing buffer.
extension ByteBuffer {
    mutating func writeFrameHeader(length: Int, type: HTTP2FrameType, flags: UInt8 = 0, stream: UInt32) {
        writeInteger(UInt8(truncatingIfNeeded: length >> 16))
        writeInteger(UInt16(truncatingIfNeeded: length))
        writeInteger(type.rawValue)
        writeInteger(flags)
        writeInteger(stream & 0x7fff_ffff)
    }

    mutating func writeSettingsFrame(_ settings: [(HTTP2SettingID, UInt32)]) {
        writeFrameHeader(length: settings.count * 6, type: .settings, stream: 0)
        for (id, value) in settings {
            writeInteger(id.rawValue)
            writeInteger(value)
        }
    }

    mutating func writeWindowUpdate(stream: UInt32, increment: Int) {
        writeFrameHeader(length: 4, type: .windowUpdate, stream: stream)
        writeInteger(UInt32(increment) & 0x7fff_ffff)
    }

    mutating func writeResetStream(stream: UInt32, code: HTTP2Code) {
        writeFrameHeader(length: 4, type: .rstStream, stream: stream)
        writeInteger(code.rawValue)
    }

    mutating func writeGoAway(lastStreamID: UInt32, code: HTTP2Code, debugData: [UInt8]) {
        writeFrameHeader(length: 8 + debugData.count, type: .goAway, stream: 0)
        writeInteger(lastStreamID & 0x7fff_ffff)
        writeInteger(code.rawValue)
        writeBytes(debugData)
    }
}

/// The few HPACK representations an APNs answer needs (RFC 7541), written without the dynamic
/// table: indexed `:status` where the static table has it, literals "without indexing" otherwise.
/// Header values go out as plain octets (no Huffman), which every decoder accepts.
enum HPACKAnswer {
    /// Static-table indexes of `:status` values (RFC 7541 Appendix A).
    private static let indexedStatus: [Int: UInt8] = [200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14]
    private static let statusNameIndex = 8
    private static let contentTypeNameIndex = 31

    static func writeStatus(_ status: Int, into block: inout ByteBuffer) {
        if let index = indexedStatus[status] {
            block.writeInteger(0x80 | index)
        } else {
            writeLiteral(nameIndex: statusNameIndex, value: String(status), into: &block)
        }
    }

    static func writeContentType(_ value: String, into block: inout ByteBuffer) {
        writeLiteral(nameIndex: contentTypeNameIndex, value: value, into: &block)
    }

    /// A literal field without indexing whose name is in the static table.
    static func writeLiteral(nameIndex: Int, value: String, into block: inout ByteBuffer) {
        writeInteger(nameIndex, prefixBits: 4, pattern: 0x00, into: &block)
        writeString(value, into: &block)
    }

    /// A literal field without indexing with a literal (lowercase) name.
    static func writeLiteral(name: String, value: String, into block: inout ByteBuffer) {
        block.writeInteger(UInt8(0x00))
        writeString(name, into: &block)
        writeString(value, into: &block)
    }

    private static func writeString(_ value: String, into block: inout ByteBuffer) {
        writeInteger(value.utf8.count, prefixBits: 7, pattern: 0x00, into: &block)
        block.writeString(value)
    }

    /// An HPACK integer with an N-bit prefix (RFC 7541 §5.1).
    static func writeInteger(_ value: Int, prefixBits: Int, pattern: UInt8, into block: inout ByteBuffer) {
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
}

/// Reads the shape of an HPACK header block without decoding it.
enum HPACKBlockShape {
    /// Whether decoding `block` would change the decoder's dynamic table: true when it holds a
    /// literal "with incremental indexing" or a dynamic table size update (RFC 7541 §6.2.1, §6.3),
    /// or when it cannot be read (the real decoder then says what is wrong).
    ///
    /// A block that leaves the table alone decodes to the same fields every time it is sent while
    /// the table is unchanged: that is how ``APNsConnectionHandler`` skips decoding a provider's
    /// repeated requests (nghttp2-based clients, curl among them, never index `authorization`, so
    /// every push would otherwise Huffman-decode the whole JWT again).
    static func mutatesTable(_ block: ByteBuffer) -> Bool {
        var block = block
        while let first = block.getInteger(at: block.readerIndex, as: UInt8.self) {
            if first & 0x80 != 0 {
                guard readInteger(&block, prefixBits: 7) != nil else { return true }
            } else if first & 0xC0 == 0x40 || first & 0xE0 == 0x20 {
                return true
            } else {
                guard let nameIndex = readInteger(&block, prefixBits: 4) else { return true }
                if nameIndex == 0, !skipString(&block) { return true }
                guard skipString(&block) else { return true }
            }
        }
        return false
    }

    private static func skipString(_ block: inout ByteBuffer) -> Bool {
        guard let length = readInteger(&block, prefixBits: 7), length <= block.readableBytes else { return false }
        block.moveReaderIndex(forwardBy: length)
        return true
    }

    /// An HPACK integer (RFC 7541 §5.1), at most 2^28.
    private static func readInteger(_ block: inout ByteBuffer, prefixBits: Int) -> Int? {
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
