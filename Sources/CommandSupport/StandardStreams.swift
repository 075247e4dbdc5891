import Glibc
import Synchronization

/// Writes a line to standard output at once (no stdio buffering: a script or test reading the
/// output sees each line as it is said). When the reader has gone (`authsim explain run.jsonl |
/// head -1`), the program ends as Unix programs do: see ``StandardStreams/write(_:to:)``.
package func say(_ line: String) {
    StandardStreams.write(line + "\n", to: STDOUT_FILENO)
}

/// Writes a line to standard error at once, with ``say(_:)``'s manners.
package func sayError(_ line: String) {
    StandardStreams.write(line + "\n", to: STDERR_FILENO)
}

/// The programs' standard output and error, written with write(2).
///
/// Foundation's `FileHandle.write(_:)` traps on a closed pipe (`try!` on EPIPE, a stack trace and
/// status 132), and SwiftNIO ignores SIGPIPE process-wide once a socket exists, so a write to a
/// pipe whose reader left returns EPIPE instead of ending the program. Here EPIPE ends it the way
/// `head` expects of `cat`: SIGPIPE restored to its default and raised, so the shell sees the
/// signal (status 141), quietly, and a pipeline with `pipefail` fails as it would for any program.
package enum StandardStreams {
    package static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { write($0, to: descriptor) }
    }

    package static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBufferPointer { write($0, to: descriptor) }
    }

    private static func write(_ bytes: UnsafeBufferPointer<UInt8>, to descriptor: Int32) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if written >= 0 {
                offset += written
            } else if errno == EINTR || errno == EAGAIN {
                continue
            } else if errno == EPIPE {
                endOnClosedPipe()
            } else {
                return  // EBADF, EIO: nowhere to say it; the program goes on, as with stdio.
            }
        }
    }

    /// Ends the program as SIGPIPE would have, had SwiftNIO not ignored it.
    package static func endOnClosedPipe() -> Never {
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
        _exit(128 + SIGPIPE)  // Only if the signal is blocked in this thread.
    }
}

/// Lines for standard output written in batches: one write(2) per 64 KiB and at ``flush()``, for a
/// program that says many lines (a bulk send's result per push). A write per line, as ``say(_:)``
/// does, woke the reader (a pipe, a test) 200,000 times for as many pushes. Safe from concurrent
/// tasks; lines keep their order. A closed pipe ends the program as ``say(_:)``'s does.
package final class BufferedLines: Sendable {
    private let pending = Mutex<[UInt8]>([])
    private let descriptor: Int32
    private static let batch = 64 * 1024

    package init(descriptor: Int32 = STDOUT_FILENO) { self.descriptor = descriptor }

    package func say(_ line: String) {
        pending.withLock { bytes in
            bytes.append(contentsOf: line.utf8)
            bytes.append(UInt8(ascii: "\n"))
            guard bytes.count >= Self.batch else { return }
            StandardStreams.write(bytes, to: descriptor)
            bytes.removeAll(keepingCapacity: true)
        }
    }

    /// Writes what is pending: before a line said otherwise (a summary), and at the end.
    package func flush() {
        pending.withLock { bytes in
            guard !bytes.isEmpty else { return }
            StandardStreams.write(bytes, to: descriptor)
            bytes.removeAll(keepingCapacity: true)
        }
    }
}
