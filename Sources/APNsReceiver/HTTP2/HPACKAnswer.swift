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
