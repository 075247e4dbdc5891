import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file of lines could not be opened or appended to.
package struct FileStoreError: CodedError {
    package enum Code: String, Sendable, Hashable { case create, open, write }
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
/// The delivery and rejection logs of push-receiver and the backend's journal are such files.
package final class AppendOnlyFile: Sendable {
    package let file: URL
    private let descriptor: Mutex<Int32>

    /// Opens (creating, with `mode`) `file` for appending; `what` names it in errors.
    package init(file: URL, what: String, mode: mode_t = 0o644) throws(FileStoreError) {
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw FileStoreError(.create, "cannot create \(file.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
        let fd = open(file.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw FileStoreError(.open, "cannot open \(what) \(file.path): \(String(cString: strerror(errno)))")
        }
        // A last line cut short (the writer was killed mid-write) is ended here, so the next line
        // starts on a line of its own and readers skip only the torn one.
        var size = stat()
        if fstat(fd, &size) == 0, size.st_size > 0 {
            let reader = open(file.path, O_RDONLY | O_CLOEXEC)
            var last: UInt8 = 0
            if reader >= 0 {
                if pread(reader, &last, 1, size.st_size - 1) == 1, last != UInt8(ascii: "\n") { _ = write(fd, "\n", 1) }
                close(reader)
            }
        }
        self.file = file
        descriptor = Mutex(fd)
    }

    deinit { descriptor.withLock { if $0 >= 0 { close($0) } } }

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

    /// Writes all of `buffer` under the lock; the error text when a write fails.
    private func writeAll(_ buffer: UnsafeRawBufferPointer, sync: Bool) -> String? {
        guard buffer.count > 0 else { return nil }
        return descriptor.withLock { fd -> String? in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += written
            }
            if sync { fsync(fd) }
            return nil
        }
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

/// What a file of JSON lines held: the records read, and the lines that are not records.
package struct JSONLinesRead<Record> {
    package var records: [Record]
    package var unreadable: [UnreadableLine]
}

extension AppendOnlyFile {
    /// Reads a file of JSON lines back, each through `decode`. A last line without its newline
    /// is left out (a writer killed mid-line leaves one); any other line `decode` refuses is kept
    /// in ``JSONLinesRead/unreadable``, so that a reader can say so rather than report nothing.
    package static func lines<T>(in file: URL, what: String, _ decode: (Data) throws -> T) throws(FileStoreError) -> JSONLinesRead<T> {
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw FileStoreError(.open, "cannot read \(what) \(file.path): \(error.localizedDescription)")
        }
        var read = JSONLinesRead<T>(records: [], unreadable: [])
        var start = data.startIndex
        var number = 0
        while let newline = data[start...].firstIndex(of: UInt8(ascii: "\n")) {
            number += 1
            let line = data[start..<newline]
            start = data.index(after: newline)
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
            do { read.records.append(try decode(Data(line))) } catch {
                read.unreadable.append(UnreadableLine(line: number, start: String(decoding: line.prefix(80), as: UTF8.self)))
            }
        }
        return read
    }
}
