import CZlib
import Foundation

/// A zip archive (an `.ipa`) read through its central directory, every read bounded by the sizes
/// the archive states: an entry's data is its compressed size and no byte more, its output its
/// uncompressed size and no byte more, and a deflate stream that has not ended when its bytes run
/// out is a damaged entry, not a wait for more. Only what `authsim doctor` needs: listing, and
/// stored or deflated entries (ZIP64 sizes and offsets included); no encryption, no writing.
package final class ZipArchive {
    /// What kind of thing an entry is, from its path and its Unix mode when the archive has one.
    package enum Kind: Sendable, Equatable { case file, directory, symbolicLink }

    /// One entry of the central directory.
    package struct Entry: Sendable {
        package let path: String
        package let kind: Kind
        package let method: UInt16
        package let flags: UInt16
        package let crc32: UInt32
        package let compressedSize: UInt64
        package let uncompressedSize: UInt64
        package let localHeaderOffset: UInt64
    }

    /// Why the archive, or one entry of it, cannot be read.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The largest central directory read (about 600,000 entries of 100-byte names).
    package static let maximumDirectorySize: UInt64 = 64 << 20
    private static let chunkSize = 64 << 10

    package let entries: [Entry]
    private let descriptor: Int32
    /// Where the central directory starts: every entry's data ends before it.
    private let dataEnd: UInt64

    /// Opens the archive at `file` and reads its central directory.
    package init(file: URL) throws(Failure) {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure("cannot open it (\(String(cString: strerror(errno))))") }
        do {
            (entries, dataEnd) = try Self.readDirectory(descriptor)
        } catch {
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The first entry whose path is `path`.
    package subscript(path: String) -> Entry? { entries.first { $0.path == path } }

    /// Hands `entry`'s uncompressed bytes to `consumer` in chunks, checking its size and CRC-32.
    /// - Throws: ``Failure`` when the entry is larger than `limit`, encrypted, compressed by a
    ///   method other than deflate, or damaged; or what `consumer` throws.
    package func extract(_ entry: Entry, limit: UInt64, consumer: ([UInt8]) throws -> Void) throws {
        guard entry.uncompressedSize <= limit else {
            throw Failure("\(entry.path) is \(entry.uncompressedSize) bytes, more than the \(limit) read")
        }
        guard entry.flags & 1 == 0 else { throw Failure("\(entry.path) is encrypted") }
        let header = try read(at: entry.localHeaderOffset, count: 30)
        guard header.u32(0) == 0x0403_4B50 else { throw Failure("\(entry.path): no local header where the directory says") }
        let start = entry.localHeaderOffset + 30 + UInt64(header.u16(26)) + UInt64(header.u16(28))
        guard start <= dataEnd, entry.compressedSize <= dataEnd - start else {
            throw Failure("\(entry.path): its \(entry.compressedSize) bytes run past the entries' end")
        }
        try withoutActuallyEscaping(consumer) { consumer in
            var checked = Checked(entry: entry, consumer: consumer)
            try unpack(entry, from: start, into: &checked)
            try checked.finish()
        }
    }

    private func unpack(_ entry: Entry, from start: UInt64, into checked: inout Checked) throws {
        switch entry.method {
        case 0:
            guard entry.compressedSize == entry.uncompressedSize else {
                throw Failure("\(entry.path) is stored but its sizes differ (\(entry.compressedSize), \(entry.uncompressedSize))")
            }
            var offset = start
            while offset < start + entry.compressedSize {
                let chunk = try read(at: offset, count: Int(min(UInt64(Self.chunkSize), start + entry.compressedSize - offset)))
                offset += UInt64(chunk.bytes.count)
                try checked.take(chunk.bytes)
            }
        case 8:
            try inflate(entry, from: start, into: &checked)
        default:
            throw Failure("\(entry.path) is compressed by method \(entry.method), which doctor does not read (stored or deflate)")
        }
    }

    /// Writes `entry`'s bytes to a new file at `url`, readable only by its user.
    package func extract(_ entry: Entry, to url: URL, limit: UInt64) throws {
        let out = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw Failure("cannot create \(url.path) (\(String(cString: strerror(errno))))") }
        defer { close(out) }
        try extract(entry, limit: limit) { bytes in
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { Foundation.write(out, $0.baseAddress! + written, $0.count - written) }
                guard n > 0 else { throw Failure("cannot write \(url.path) (\(String(cString: strerror(errno))))") }
                written += n
            }
        }
    }

    /// Raw deflate, fed at most the entry's compressed bytes.
    private func inflate(_ entry: Entry, from start: UInt64, into checked: inout Checked) throws {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure("zlib could not start inflating \(entry.path)")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Self.chunkSize)
        var offset = start
        var ended = false
        while !ended {
            guard offset < start + entry.compressedSize else {
                throw Failure("\(entry.path): its deflate stream does not end within its \(entry.compressedSize) bytes")
            }
            var input = try read(at: offset, count: Int(min(UInt64(Self.chunkSize), start + entry.compressedSize - offset))).bytes
            offset += UInt64(input.count)
            try input.withUnsafeMutableBufferPointer { source in
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                while !ended {
                    let before = stream.avail_in
                    let (status, produced) = output.withUnsafeMutableBufferPointer { target in
                        stream.next_out = target.baseAddress
                        stream.avail_out = UInt32(target.count)
                        let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                        return (status, target.count - Int(stream.avail_out))
                    }
                    switch status {
                    case Z_STREAM_END: ended = true
                    case Z_OK, Z_BUF_ERROR: break
                    default: throw Failure("\(entry.path): its deflate stream is damaged (zlib \(status))")
                    }
                    if produced > 0 { try checked.take(output[..<produced]) }
                    // More output may wait while the buffer came back full; otherwise more input is needed.
                    if produced < output.count && stream.avail_in == 0 { break }
                    if produced == 0 && stream.avail_in == before && !ended {
                        throw Failure("\(entry.path): its deflate stream makes no progress")
                    }
                }
            }
        }
    }

    /// The entry's output counted against its stated size and summed into its CRC-32.
    private struct Checked {
        let entry: Entry
        let consumer: ([UInt8]) throws -> Void
        var count: UInt64 = 0
        var crc: UInt = crc32(0, nil, 0)

        mutating func take(_ bytes: some Collection<UInt8>) throws {
            count += UInt64(bytes.count)
            guard count <= entry.uncompressedSize else {
                throw Failure("\(entry.path) unpacks to more than its stated \(entry.uncompressedSize) bytes")
            }
            let array = Array(bytes)
            crc = array.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, UInt32($0.count)) }
            try consumer(array)
        }

        func finish() throws {
            guard count == entry.uncompressedSize else {
                throw Failure("\(entry.path) unpacks to \(count) bytes, not its stated \(entry.uncompressedSize)")
            }
            guard UInt32(truncatingIfNeeded: crc) == entry.crc32 else { throw Failure("\(entry.path) fails its CRC-32 check") }
        }
    }

    // MARK: Reading the directory

    private func read(at offset: UInt64, count: Int) throws(Failure) -> LittleEndian {
        try Self.read(descriptor, at: offset, count: count)
    }

    private static func read(_ descriptor: Int32, at offset: UInt64, count: Int) throws(Failure) -> LittleEndian {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw Failure(n == 0 ? "the archive ends before byte \(offset + UInt64(count))" : "cannot read it (\(String(cString: strerror(errno))))")
            }
            done += n
        }
        return LittleEndian(bytes: bytes)
    }

    private static func readDirectory(_ descriptor: Int32) throws(Failure) -> ([Entry], UInt64) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Failure("cannot read it (\(String(cString: strerror(errno))))") }
        let size = UInt64(info.st_size)
        // The end record (22 bytes and a comment of up to 65,535) is in the file's last bytes.
        let tailSize = min(size, 22 + 0xFFFF)
        let tail = try read(descriptor, at: size - tailSize, count: Int(tailSize))
        guard let end = tail.lastEndRecord() else { throw Failure("no end of central directory record: not a whole zip archive") }
        let endOffset = size - tailSize + UInt64(end)
        var count = UInt64(tail.u16(end + 10))
        var directorySize = UInt64(tail.u32(end + 12))
        var directoryOffset = UInt64(tail.u32(end + 16))
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            // ZIP64: a locator just before the end record points to the ZIP64 end record.
            guard endOffset >= 20 else { throw Failure("no ZIP64 end of central directory locator") }
            let locator = try read(descriptor, at: endOffset - 20, count: 20)
            guard locator.u32(0) == 0x0706_4B50 else { throw Failure("no ZIP64 end of central directory locator") }
            let record = try read(descriptor, at: locator.u64(8), count: 56)
            guard record.u32(0) == 0x0606_4B50 else { throw Failure("no ZIP64 end of central directory record") }
            (count, directorySize, directoryOffset) = (record.u64(32), record.u64(40), record.u64(48))
        }
        guard directoryOffset <= endOffset, directorySize <= endOffset - directoryOffset else {
            throw Failure("its central directory runs past the archive's end")
        }
        guard directorySize <= maximumDirectorySize else {
            throw Failure("its central directory is \(directorySize >> 20) MB, more than the \(maximumDirectorySize >> 20) MB read")
        }
        let directory = try read(descriptor, at: directoryOffset, count: Int(directorySize))
        var entries: [Entry] = []
        var at = 0
        while UInt64(entries.count) < count {
            guard at + 46 <= directory.bytes.count, directory.u32(at) == 0x0201_4B50 else {
                throw Failure("its central directory holds \(entries.count) entries, not \(count)")
            }
            let nameLength = Int(directory.u16(at + 28)), extraLength = Int(directory.u16(at + 30))
            let commentLength = Int(directory.u16(at + 32))
            let next = at + 46 + nameLength + extraLength + commentLength
            guard next <= directory.bytes.count else { throw Failure("its central directory's entry \(entries.count + 1) is cut short") }
            let path = String(decoding: directory.bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            var uncompressed = UInt64(directory.u32(at + 24)), compressed = UInt64(directory.u32(at + 20))
            var local = UInt64(directory.u32(at + 42))
            try directory.zip64(from: at + 46 + nameLength, length: extraLength, uncompressed: &uncompressed,
                                compressed: &compressed, localHeader: &local, path: path)
            // A Unix mode (made by host 3) tells links and folders; a trailing slash tells folders anywhere.
            let mode = directory.u16(at + 4) >> 8 == 3 ? (directory.u32(at + 38) >> 16) & 0o170000 : 0
            let kind: Kind = mode == 0o120000 ? .symbolicLink : (path.hasSuffix("/") || mode == 0o040000 ? .directory : .file)
            entries.append(Entry(path: path, kind: kind, method: directory.u16(at + 10), flags: directory.u16(at + 8),
                                 crc32: directory.u32(at + 16), compressedSize: compressed, uncompressedSize: uncompressed,
                                 localHeaderOffset: local))
            at = next
        }
        return (entries, directoryOffset)
    }
}

/// Little-endian fields of bytes read from an archive, every access bounded by the caller.
private struct LittleEndian {
    let bytes: [UInt8]

    func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
    func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }

    /// Where the last end-of-central-directory record whose comment fits in the bytes starts.
    func lastEndRecord() -> Int? {
        guard bytes.count >= 22 else { return nil }
        for at in stride(from: bytes.count - 22, through: 0, by: -1)
        where u32(at) == 0x0605_4B50 && at + 22 + Int(u16(at + 20)) <= bytes.count {
            return at
        }
        return nil
    }

    /// The ZIP64 extra field (id 1): the 8-byte values of the fields the entry set to 0xFFFFFFFF, in order.
    func zip64(from start: Int, length: Int, uncompressed: inout UInt64, compressed: inout UInt64,
               localHeader: inout UInt64, path: String) throws(ZipArchive.Failure) {
        var at = start
        while at + 4 <= start + length {
            let id = u16(at), size = Int(u16(at + 2))
            guard at + 4 + size <= start + length else { break }
            if id == 1 {
                var values = [uncompressed, compressed, localHeader]
                var field = at + 4
                for slot in values.indices where values[slot] == 0xFFFF_FFFF {
                    guard field + 8 <= at + 4 + size else { throw ZipArchive.Failure("\(path): its ZIP64 field is cut short") }
                    values[slot] = u64(field)
                    field += 8
                }
                (uncompressed, compressed, localHeader) = (values[0], values[1], values[2])
                return
            }
            at += 4 + size
        }
    }
}
