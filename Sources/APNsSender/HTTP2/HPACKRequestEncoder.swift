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
    /// The previous request's fields and the serials they had: requests repeat their fields in
    /// the same order, so comparing with the previous one (the provider token is usually the very
    /// same string) skips hashing it.
    private var previous: [(field: Field, serial: Int)] = []

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
        var current: [(field: Field, serial: Int)] = []
        current.reserveCapacity(fields.count)
        defer { previous = current }
        for (position, (name, value)) in fields.enumerated() {
            let field = Field(name: name, value: value)
            let oldest = inserted - entries.count
            if position < previous.count, previous[position].serial >= oldest,
               previous[position].field.value == value, previous[position].field.name == name {
                let serial = previous[position].serial
                HPACK.writeInteger(62 + (inserted - 1 - serial), prefixBits: 7, pattern: 0x80, into: &block)
                current.append((field, serial))
            } else if let index = Self.staticFields[field] {
                HPACK.writeInteger(index, prefixBits: 7, pattern: 0x80, into: &block)
            } else if let serial = serials[field] {
                HPACK.writeInteger(62 + (inserted - 1 - serial), prefixBits: 7, pattern: 0x80, into: &block)
                current.append((field, serial))
            } else if Self.neverIndexed.contains(name) {
                writeLiteral(field, pattern: 0x00, prefixBits: 4, into: &block)
            } else {
                writeLiteral(field, pattern: 0x40, prefixBits: 6, into: &block)
                insert(field)
                if let serial = serials[field] { current.append((field, serial)) }
            }
            if current.count == position { current.append((field, -1)) }
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
