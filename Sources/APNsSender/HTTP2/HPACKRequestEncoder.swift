import HTTP2Wire
import NIOCore

/// HPACK for requests (RFC 7541), with a dynamic table: a header sent before is one byte the next
/// time. Provider pushes repeat almost everything (method, scheme, authority, the provider
/// token, topic, push type, priority, often the path), so after the first push a request is a
/// dozen bytes. `apns-id` is unique per push and goes out "without indexing", so it does not
/// push useful entries out of the table.
///
/// The encoder mirrors the peer decoder's table exactly: it alone decides what is inserted, and it
/// evicts as the decoder will (RFC 7541 §4). Strings go out as plain octets.
struct HPACKRequestEncoder {
    private struct Field: Hashable {
        let name: String
        let value: String
    }

    /// Static-table entries a request uses (RFC 7541 Appendix A).
    private static let staticFields: [Field: Int] = [
        Field(name: ":method", value: "GET"): 2, Field(name: ":method", value: "POST"): 3, Field(name: ":path", value: "/"): 4,
        Field(name: ":scheme", value: "http"): 6, Field(name: ":scheme", value: "https"): 7,
    ]
    private static let staticNames: [String: Int] = [
        ":authority": 1, ":method": 2, ":path": 4, ":scheme": 6, "authorization": 23, "content-length": 28, "content-type": 31,
    ]
    /// Headers whose values are new on every request.
    private static let neverIndexed: Set<String> = ["apns-id"]

    /// Oldest first; the newest is dynamic index 62.
    private var entries: [(field: Field, size: Int)] = []
    private var serials: [Field: Int] = [:]
    /// How many entries were ever inserted; an entry's serial is its insertion number.
    private var inserted = 0
    private var size = 0
    private(set) var maximumSize = 4096
    private var pendingSizeUpdate: Int?
    /// The previous request's fields and how each went out: requests repeat their fields in the
    /// same order, so comparing with the previous one (the provider token is usually the very same
    /// string) skips hashing it. Kept in place: an entry is rewritten only when its field changed.
    private var previous: [(name: String, value: String, sent: Sent)] = []

    /// How a field went out, as far as the next request may reuse it.
    private enum Sent {
        /// Dynamic-table entry with this serial (still there if not evicted since).
        case dynamic(Int)
        /// Static-table index.
        case fixed(Int)
        /// As a literal not indexed: it is written afresh each time.
        case literal
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: the table may not grow past it (nor past 4 KiB).
    mutating func setPeerTableSize(_ peerSize: Int) {
        let newSize = min(peerSize, 4096)
        guard newSize != maximumSize else { return }
        maximumSize = newSize
        evict(toFit: 0)
        pendingSizeUpdate = newSize
    }

    mutating func encode(_ fields: [(name: String, value: String)], into block: inout ByteBuffer) {
        if let update = pendingSizeUpdate {
            HPACK.writeInteger(update, prefixBits: 5, pattern: 0x20, into: &block)
            pendingSizeUpdate = nil
        }
        if previous.count != fields.count {
            previous = fields.map { ($0.name, $0.value, .literal) }
        }
        // One-byte indexes are gathered and written eight at a time: every write reaches the
        // buffer's storage and pays its checks, and a repeated request is mostly such bytes.
        var run = ByteRun()
        for position in fields.indices {
            if previous[position].value == fields[position].value, previous[position].name == fields[position].name {
                switch previous[position].sent {
                case .dynamic(let serial) where serial >= inserted - entries.count:
                    run.index(62 + (inserted - 1 - serial), into: &block)
                    continue
                case .fixed(let index):
                    run.index(index, into: &block)
                    continue
                default:
                    break
                }
            } else {
                previous[position] = (fields[position].name, fields[position].value, .literal)
            }
            run.flush(into: &block)
            previous[position].sent = encodeAfresh(Field(name: fields[position].name, value: fields[position].value), into: &block)
        }
        run.flush(into: &block)
    }

    /// A field the previous request did not have at this place (or whose entry was evicted).
    private mutating func encodeAfresh(_ field: Field, into block: inout ByteBuffer) -> Sent {
        if let index = Self.staticFields[field] {
            HPACK.writeInteger(index, prefixBits: 7, pattern: 0x80, into: &block)
            return .fixed(index)
        }
        if let serial = serials[field] {
            HPACK.writeInteger(62 + (inserted - 1 - serial), prefixBits: 7, pattern: 0x80, into: &block)
            return .dynamic(serial)
        }
        if Self.neverIndexed.contains(field.name) {
            writeLiteral(field, pattern: 0x00, prefixBits: 4, into: &block)
            return .literal
        }
        writeLiteral(field, pattern: 0x40, prefixBits: 6, into: &block)
        insert(field)
        return serials[field].map { .dynamic($0) } ?? .literal
    }

    /// Indexed representations whose index fits the one-byte prefix, held until eight are ready.
    private struct ByteRun {
        private var word: UInt64 = 0
        private var count = 0

        mutating func index(_ index: Int, into block: inout ByteBuffer) {
            guard index < 0x7f else {
                flush(into: &block)
                return HPACK.writeInteger(index, prefixBits: 7, pattern: 0x80, into: &block)
            }
            word = word << 8 | UInt64(0x80 | index)
            count += 1
            if count == 8 { flush(into: &block) }
        }

        mutating func flush(into block: inout ByteBuffer) {
            guard count > 0 else { return }
            let bytes = (word << (64 - 8 * UInt64(count))).bigEndian
            let count = self.count
            _ = withUnsafeBytes(of: bytes) { block.writeBytes(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            word = 0
            self.count = 0
        }
    }

    private func writeLiteral(_ field: Field, pattern: UInt8, prefixBits: Int, into block: inout ByteBuffer) {
        if let nameIndex = Self.staticNames[field.name] {
            HPACK.writeInteger(nameIndex, prefixBits: prefixBits, pattern: pattern, into: &block)
        } else {
            block.writeInteger(pattern)
            HPACK.writeString(field.name, into: &block)
        }
        HPACK.writeString(field.value, into: &block)
    }

    private mutating func insert(_ field: Field) {
        let entrySize = field.name.utf8.count + field.value.utf8.count + 32
        // An entry larger than the table empties it and is not added (RFC 7541 §4.4).
        guard entrySize <= maximumSize else {
            evict(toFit: maximumSize + 1)
            return
        }
        evict(toFit: entrySize)
        entries.append((field, entrySize))
        serials[field] = inserted
        inserted += 1
        size += entrySize
    }

    /// Drops the oldest entries until `room` more bytes fit.
    private mutating func evict(toFit room: Int) {
        var dropped = 0
        while size + room > maximumSize, dropped < entries.count {
            let oldest = entries[dropped]
            size -= oldest.size
            // The same field may have been inserted again later; only its newest serial counts.
            if let serial = serials[oldest.field], serial == inserted - entries.count + dropped {
                serials.removeValue(forKey: oldest.field)
            }
            dropped += 1
        }
        if dropped > 0 { entries.removeFirst(dropped) }
    }
}
