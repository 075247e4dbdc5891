import NIOCore

/// Reads the shape of an HPACK header block without decoding it.
package enum HPACKBlockShape {
    /// Whether decoding `block` would change the decoder's dynamic table: true when it holds a
    /// literal "with incremental indexing" or a dynamic table size update (RFC 7541 §6.2.1, §6.3),
    /// or when it cannot be read (the real decoder then says what is wrong).
    ///
    /// A block that leaves the table alone decodes to the same fields every time it is sent while
    /// the table is unchanged: that is how ``HTTP2Connection`` skips decoding a provider's
    /// repeated requests (nghttp2-based clients, curl among them, never index `authorization`, so
    /// every push would otherwise Huffman-decode the whole JWT again).
    package static func mutatesTable(_ block: ByteBuffer) -> Bool {
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
