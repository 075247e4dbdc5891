import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawnp`, waited for without blocking the concurrency pool.
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` entries with a fixed
/// 256-byte copy and can crash when a short entry ends near an unmapped page
/// (swift-corelibs-foundation#5472; serialising launches does not help). It also starts children
/// with the launching thread's signal mask, so a child may never see SIGTERM. Children here get an
/// empty signal mask and default handlers for SIGTERM, SIGINT and SIGPIPE.
package final class ChildProcess: Sendable {
    /// Where a child's standard output or error goes.
    package enum Output: Sendable {
        /// The parent's.
        case inherit
        /// `/dev/null`.
        case discard
        /// A pipe the parent reads (``ChildProcess/readOutput()`` or ``ChildProcess/lines(_:)``).
        case pipe
        /// Appended to a file.
        case file(String)
    }

    private static let spawnLock = Mutex(())

    package let pid: pid_t
    /// The read end of the output pipe, when one was asked for.
    let outputFD: Int32?
    private let status = Mutex<(code: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    /// Starts `arguments[0]` (looked up in `PATH` when it has no slash) with the rest as arguments.
    /// Standard output and error go where `output` and `errors` say (`.pipe` for errors means the
    /// same pipe as output); standard input is `/dev/null`.
    package init(_ arguments: [String], environment: [String: String]? = nil, output: Output = .inherit,
                errors: Output = .inherit) throws {
        guard let program = arguments.first else { throw POSIXError(.EINVAL) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var pipeEnds: [Int32] = [-1, -1]
        var child: pid_t = 0
        let wantsPipe: Bool = {
            if case .pipe = output { return true }
            if case .pipe = errors { return true }
            return false
        }()
        // pipe() then FD_CLOEXEC is not atomic: spawns are serialised (below), so no other child
        // of ours can inherit the pipe in between.
        try Self.spawnLock.withLock { _ throws in
        if wantsPipe {
            guard pipe(&pipeEnds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        }
        for (descriptor, destination) in [(Int32(1), output), (Int32(2), errors)] {
            switch destination {
            case .inherit: break
            case .discard: posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            case .pipe: posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], descriptor)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            }
        }
        // Only 0, 1 and 2 go to the child. Sockets opened without close-on-exec (SwiftNIO accepts and
        // connects without it) would otherwise live on in every child, and a connection this process
        // closes would stay open for its peer as long as, say, a browser we started runs.
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let pairs = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var spawned: pid_t = 0
        let result = posix_spawnp(&spawned, program, &actions, &attributes, argv, envp)
        if wantsPipe { close(pipeEnds[1]) }
        guard result == 0 else {
            if wantsPipe { close(pipeEnds[0]) }
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT)
        }
        child = spawned
        }
        pid = child
        outputFD = wantsPipe ? pipeEnds[0] : nil
        // One thread per child waits in waitpid, off the concurrency pool.
        let waited = child
        let thread = Thread { [self] in
            var raw: Int32 = 0
            while waitpid(waited, &raw, 0) < 0 && errno == EINTR {}
            let code: Int32 = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            let waiters = status.withLock { state in
                state.code = code
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: code) }
        }
        thread.start()
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// The exit status once the child has ended (128 + the signal if a signal ended it).
    package var exitStatus: Int32? { status.withLock { $0.code } }
    package var isRunning: Bool { exitStatus == nil }

    /// Waits for the end, without blocking a thread.
    package func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let code = status.withLock { state -> Int32? in
                if let code = state.code { return code }
                state.waiters.append(continuation)
                return nil
            }
            if let code { continuation.resume(returning: code) }
        }
    }

    package func send(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Everything the child writes to its output pipe, until it closes it (read on a thread of its own).
    package func readOutput() async -> Data {
        guard let descriptor = outputFD else { return Data() }
        return await withCheckedContinuation { continuation in
            Thread {
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let count = read(descriptor, &buffer, buffer.count)
                    if count > 0 { data.append(contentsOf: buffer[0..<count]) } else if count < 0 && errno == EINTR { continue } else { break }
                }
                close(descriptor)
                continuation.resume(returning: data)
            }.start()
        }
    }

    /// Calls `body` with each chunk the child writes to its output pipe, on a thread of its own,
    /// until it closes it; then `ended`.
    package func readOutputChunks(_ body: @escaping @Sendable (Data) -> Void, ended: (@Sendable () -> Void)? = nil) {
        guard let descriptor = outputFD else { ended?(); return }
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count > 0 { body(Data(buffer[0..<count])) } else if count < 0 && errno == EINTR { continue } else { break }
            }
            close(descriptor)
            ended?()
        }.start()
    }
}
