import HTTP2Wire
import NIOCore

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
        HPACK.writeInteger(nameIndex, prefixBits: 4, pattern: 0x00, into: &block)
        HPACK.writeString(value, into: &block)
    }

    /// A literal field without indexing with a literal (lowercase) name.
    static func writeLiteral(name: String, value: String, into block: inout ByteBuffer) {
        block.writeInteger(UInt8(0x00))
        HPACK.writeString(name, into: &block)
        HPACK.writeString(value, into: &block)
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
                guard HPACK.readInteger(&block, prefixBits: 7) != nil else { return true }
            } else if first & 0xC0 == 0x40 || first & 0xE0 == 0x20 {
                return true
            } else {
                guard let nameIndex = HPACK.readInteger(&block, prefixBits: 4) else { return true }
                if nameIndex == 0, !skipString(&block) { return true }
                guard skipString(&block) else { return true }
            }
        }
        return false
    }

    private static func skipString(_ block: inout ByteBuffer) -> Bool {
        guard let length = HPACK.readInteger(&block, prefixBits: 7), length <= block.readableBytes else { return false }
        block.moveReaderIndex(forwardBy: length)
        return true
    }
}
