import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file of lines could not be opened or appended to.
package struct FileStoreError: CodedError {
    package enum Code: String, Sendable, Hashable {
        case create, open, write
        /// The file is of a format version this build does not read (``StateFormatError``).
        case format
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A file of lines, opened once for appending: each line goes in whole with `write(2)` (looping
/// over short writes, under a lock, so lines never interleave), optionally `fsync`ed. Once
/// ``append(_:sync:)`` returns, the line is the kernel's: it survives the process being killed.
///
/// The delivery and rejection logs of push-receiver and the backend's journal are such files. Each
/// starts with its ``FormatStamp``.
package final class AppendOnlyFile: Sendable {
    package let file: URL
    /// The length in bytes of a last line a killed writer cut short, found when the file was
    /// opened (and ended there, so readers skip it as unreadable); `nil` when there was none.
    package let cutLine: Int?
    /// The open file, and where it ended after this writer's last ``appendLocating(_:sync:)``
    /// with the file's ``Location/generation`` then (nil before the first).
    private let descriptor: Mutex<(fd: Int32, end: (offset: Int64, generation: Int)?)>

    /// Opens (creating, with `mode`) `file` of `format` for appending; `what` names it in errors.
    ///
    /// A new or empty file gets the format's stamp as its first line. A file of an older version
    /// (or without a stamp: version 1) is migrated first: rewritten beside itself with the stamp
    /// and each record through `upgrade(version, line)` (the same bytes by default), then renamed
    /// over it, so a kill leaves the old file or the new one. A file of a newer version is refused
    /// (``FileStoreError/Code/format``) and left as it is. Openers take turns on `flock(2)`, so two
    /// processes opening a new file stamp it once.
    package init(file: URL, what: String, mode: mode_t = 0o644, format: StateFormat,
                 upgrade: (_ version: Int, _ line: Data) throws -> Data = { $1 }) throws(FileStoreError) {
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw FileStoreError(.create, "cannot create \(file.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
        var fd = try Self.openLocked(file, what: what, mode: mode)
        var cut: Int?
        do throws(FileStoreError) {
            var size = stat()
            guard fstat(fd, &size) == 0 else { throw FileStoreError(.open, "cannot read \(what) \(file.path): \(String(cString: strerror(errno)))") }
            if size.st_size == 0 {
                if let failure = Self.writeAll(fd, Array(format.stamp.line.utf8), sync: false) {
                    throw FileStoreError(.write, "cannot write \(what) \(file.path): \(failure)")
                }
            } else {
                let first = Self.firstLine(of: file)
                let version: Int
                do { version = try format.version(of: first.flatMap(FormatStamp.parse(line:)), in: file.path) } catch {
                    throw FileStoreError(.format, error.message)
                }
                if version == format.current {
                    cut = Self.endCutLine(fd, file: file, size: size.st_size)
                } else {
                    try Self.migrate(file, what: what, mode: mode, format: format, from: version, upgrade: upgrade)
                    let migrated = try Self.openLocked(file, what: what, mode: mode)
                    close(fd)
                    fd = migrated
                    var migratedSize = stat()
                    if fstat(fd, &migratedSize) == 0 { cut = Self.endCutLine(fd, file: file, size: migratedSize.st_size) }
                }
            }
        } catch {
            close(fd)
            throw error
        }
        flock(fd, LOCK_UN)
        self.file = file
        cutLine = cut
        descriptor = Mutex((fd, nil))
    }

    /// Empties `file` of `format` down to its stamp (`push-receiver reset`). A writer that has it
    /// open goes on appending after the stamp.
    package static func empty(_ file: URL, what: String, format: StateFormat) throws(FileStoreError) {
        let fd = open(file.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw FileStoreError(.open, "cannot open \(what) \(file.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        flock(fd, LOCK_EX)
        guard ftruncate(fd, 0) == 0 else { throw FileStoreError(.write, "cannot empty \(what) \(file.path): \(String(cString: strerror(errno)))") }
        if let failure = writeAll(fd, Array(format.stamp.line.utf8), sync: false) {
            throw FileStoreError(.write, "cannot write \(what) \(file.path): \(failure)")
        }
    }

    /// `file` opened for appending and locked (`flock`), once the lock is held on the file the
    /// path names: an opener that waited while another migrated the file (renaming a new one over
    /// it) opens the new one.
    private static func openLocked(_ file: URL, what: String, mode: mode_t) throws(FileStoreError) -> Int32 {
        while true {
            let fd = try openForAppending(file, what: what, mode: mode)
            flock(fd, LOCK_EX)
            var opened = stat(), named = stat()
            if fstat(fd, &opened) == 0, stat(file.path, &named) == 0, opened.st_ino == named.st_ino, opened.st_dev == named.st_dev {
                return fd
            }
            close(fd)
        }
    }

    private static func openForAppending(_ file: URL, what: String, mode: mode_t) throws(FileStoreError) -> Int32 {
        // Read and write: the writer reads back what it appended (``read(at:count:)``).
        let fd = open(file.path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw FileStoreError(.open, "cannot open \(what) \(file.path): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// A last line cut short (the writer was killed mid-write) is ended here, so the next line
    /// starts on a line of its own and readers skip only the torn one. Returns its length (up to
    /// 64 KiB is looked at), or `nil` when the file ended with its newline.
    private static func endCutLine(_ fd: Int32, file: URL, size: off_t) -> Int? {
        guard size > 0 else { return nil }
        let reader = open(file.path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return nil }
        defer { close(reader) }
        let span = Int(min(size, 1 << 16))
        var tail = [UInt8](repeating: 0, count: span)
        guard pread(reader, &tail, span, size - off_t(span)) == span, tail.last != UInt8(ascii: "\n") else { return nil }
        _ = write(fd, "\n", 1)
        return tail.lastIndex(of: UInt8(ascii: "\n")).map { span - 1 - $0 } ?? span
    }

    /// The first line of `file` (without its newline), read up to 64 KiB; `nil` when unreadable.
    package static func firstLine(of file: URL) -> Data? {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return nil }
        defer { try? handle.close() }
        guard let start = try? handle.read(upToCount: 1 << 16) else { return nil }
        return start.firstIndex(of: UInt8(ascii: "\n")).map { start[..<$0] } ?? start
    }

    /// `file`, of `format` version `version`, rewritten in the current version.
    private static func migrate(_ file: URL, what: String, mode: mode_t, format: StateFormat, from version: Int,
                                upgrade: (Int, Data) throws -> Data) throws(FileStoreError) {
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw FileStoreError(.open, "cannot read \(what) \(file.path): \(error.localizedDescription)")
        }
        var out = Data(format.stamp.line.utf8)
        out.reserveCapacity(data.count + out.count)
        var start = data.startIndex
        var first = true
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            let line = data[start..<end]
            defer { start = end < data.endIndex ? data.index(after: end) : end; first = false }
            if first, FormatStamp.parse(line: line) != nil { continue }
            // A cut last line and blank lines are kept as they are: readers skip them.
            if end == data.endIndex || line.isEmpty {
                out.append(line)
            } else {
                do { out.append(try upgrade(version, Data(line))) } catch {
                    throw FileStoreError(.format, "cannot migrate \(what) \(file.path) from \(format.kind) format \(version): \(error)")
                }
            }
            if end < data.endIndex { out.append(UInt8(ascii: "\n")) }
        }
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).migrating")
        guard FileManager.default.createFile(atPath: temporary.path, contents: out, attributes: [.posixPermissions: Int(mode)]) else {
            throw FileStoreError(.create, "cannot write \(temporary.path) to migrate \(what): is the folder writable, the disk not full?")
        }
        guard rename(temporary.path, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw FileStoreError(.write, "cannot move \(temporary.lastPathComponent) over \(file.path): \(reason)")
        }
    }

    deinit { descriptor.withLock { if $0.fd >= 0 { close($0.fd) } } }

    /// Appends `line` (which should end with a newline) in one piece.
    package func append(_ line: String, sync: Bool = false) throws(FileStoreError) {
        var line = line
        let failure = line.withUTF8 { writeAll(UnsafeRawBufferPointer($0), sync: sync) }
        if let failure { throw FileStoreError(.write, "cannot append to \(file.path): \(failure)") }
    }

    /// Appends `lines` (each ending with a newline) in one piece.
    package func append(_ lines: [UInt8], sync: Bool = false) throws(FileStoreError) {
        let failure = lines.withUnsafeBytes { writeAll($0, sync: sync) }
        if let failure { throw FileStoreError(.write, "cannot append to \(file.path): \(failure)") }
    }

    /// Where an append put its bytes: the offset they begin at, in the file as it was between two
    /// empties (``generation``).
    package struct Location: Sendable, Hashable {
        package let offset: Int64
        /// How many times this writer found the file emptied under it (`push-receiver reset`
        /// truncates it while the writer runs): bytes appended before are no longer where they were.
        package let generation: Int

        /// `bytes` further into the same append.
        package func advanced(by bytes: Int) -> Location { Location(offset: offset + Int64(bytes), generation: generation) }
    }

    /// ``append(_:sync:)``, and says where in the file `lines` begin (for ``read(at:count:)``):
    /// one more system call than an append.
    package func appendLocating(_ lines: [UInt8], sync: Bool = false) throws(FileStoreError) -> Location {
        let outcome = lines.withUnsafeBytes { buffer in
            descriptor.withLock { state -> Result<Location, FileStoreError> in
                if let failure = Self.writeAll(state.fd, buffer, sync: sync) {
                    return .failure(FileStoreError(.write, "cannot append to \(file.path): \(failure)"))
                }
                // An append leaves the file's offset at its end, where the bytes end.
                let after = Int64(lseek(state.fd, 0, SEEK_CUR))
                let at = after - Int64(buffer.count)
                // Another writer changed the file since this one's last append: emptied it.
                let generation = state.end.map { $0.offset == at ? $0.generation : $0.generation + 1 } ?? 0
                state.end = (after, generation)
                return .success(Location(offset: at, generation: generation))
            }
        }
        return try outcome.get()
    }

    /// `count` bytes at `location` (``appendLocating(_:sync:)``'s), as the file holds them now;
    /// `nil` once they are gone: the file emptied since (`push-receiver reset`).
    package func read(at location: Location, count: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = descriptor.withLock { state -> Int in
            // An empty since the last append is seen here: the file is shorter than that append left it.
            guard let end = state.end, end.generation == location.generation else { return -1 }
            var size = stat()
            guard fstat(state.fd, &size) == 0, Int64(size.st_size) >= end.offset else { return -1 }
            return bytes.withUnsafeMutableBytes { pread(state.fd, $0.baseAddress, count, off_t(location.offset)) }
        }
        return read == count ? bytes : nil
    }

    /// Writes all of `buffer` under the lock; the error text when a write fails.
    private func writeAll(_ buffer: UnsafeRawBufferPointer, sync: Bool) -> String? {
        guard buffer.count > 0 else { return nil }
        return descriptor.withLock { Self.writeAll($0.fd, buffer, sync: sync) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], sync: Bool) -> String? {
        bytes.withUnsafeBytes { writeAll(fd, $0, sync: sync) }
    }

    /// All of `buffer` at the file's end, or none of it: a write that fails part way (a disk that
    /// fills up mid-line) is cut back to where it began, so that no half line is left for the
    /// lines after it to follow (a reader would take it for damage, not for a kill's torn tail).
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, sync: Bool) -> String? {
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                // The part written ends the file (its one writer holds the lock): cut it off. Asked
                // only on failure, so a write that succeeds costs no more system calls than before.
                if offset > 0 {
                    let end = lseek(fd, 0, SEEK_END)
                    if end >= off_t(offset) { _ = ftruncate(fd, end - off_t(offset)) }
                }
                return reason
            }
            offset += written
        }
        if sync { fsync(fd) }
        return nil
    }
}

/// A complete line of a JSON-lines file that did not decode: cut by a writer's kill (a restarted
/// writer ends the cut line before it appends), or not this file's kind at all.
package struct UnreadableLine: Sendable, Hashable {
    /// 1-based.
    package let line: Int
    /// Its first 80 bytes.
    package let start: String
}

/// What a file of JSON lines held: the records read, the lines that are not records, and the
/// file's stamp (`nil` when written before stamps).
package struct JSONLinesRead<Record> {
    package var records: [Record]
    package var unreadable: [UnreadableLine]
    package var stamp: FormatStamp?
}

extension AppendOnlyFile {
    /// Reads a file of JSON lines of `format` back, each through `decode` with the file's version.
    /// A first line that is the file's stamp is checked (a newer version is refused,
    /// ``FileStoreError/Code/format``) and is not a record. A last line without its newline is
    /// left out (a writer killed mid-line leaves one); any other line `decode` refuses is kept in
    /// ``JSONLinesRead/unreadable``, so that a reader can say so rather than report nothing.
    package static func lines<T>(in file: URL, what: String, format: StateFormat,
                                 _ decode: (_ version: Int, _ line: Data) throws -> T) throws(FileStoreError) -> JSONLinesRead<T> {
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw FileStoreError(.open, "cannot read \(what) \(file.path): \(error.localizedDescription)")
        }
        var read = JSONLinesRead<T>(records: [], unreadable: [], stamp: nil)
        var start = data.startIndex
        var number = 0
        var version = 1
        while let newline = data[start...].firstIndex(of: UInt8(ascii: "\n")) {
            number += 1
            let line = data[start..<newline]
            start = data.index(after: newline)
            if number == 1, let stamp = FormatStamp.parse(line: line) { read.stamp = stamp }
            if number == 1 {
                do { version = try format.version(of: read.stamp, in: file.path) } catch { throw FileStoreError(.format, error.message) }
                if read.stamp != nil { continue }
            }
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
            do { read.records.append(try decode(version, Data(line))) } catch {
                read.unreadable.append(UnreadableLine(line: number, start: String(decoding: line.prefix(80), as: UTF8.self)))
            }
        }
        return read
    }
}
