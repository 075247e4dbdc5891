import Utilities
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A new folder under the system's temporary directory, named after the test.
package func temporaryDirectory(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("authsim-tests-\(name.filter(\.isLetter).prefix(40))-\(UUID().uuidString.prefix(8))")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs a program to its end and returns its standard output and exit status (standard error
/// goes to the test's). `arguments[0]` is looked up in `PATH`; leading `NAME=value` words set the
/// environment, as with env(1). Never blocks a thread of the (2-thread, on this machine)
/// cooperative pool: waiting there starves every other test running in parallel.
package func runProgram(_ arguments: [String]) async throws -> (output: String, status: Int32) {
    let child = try ChildProcess(["/usr/bin/env"] + arguments, output: .pipe)
    async let output = child.readOutput()
    let status = await child.wait()
    return (String(decoding: await output, as: UTF8.self), status)
}

/// Whether a tool an external-client test needs is here. On CI (`CI` set) a missing tool fails
/// the test: `.ci/run` installs them. Elsewhere the test is skipped with a note.
package func toolAvailable(_ check: [String]) async -> Bool {
    let ok = (try? await runProgram(check).status) == 0
    if !ok {
        if ProcessInfo.processInfo.environment["CI"] != nil {
            Issue.record("\(check.joined(separator: " ")) failed: .ci/run must install it")
        } else {
            print("skipping: \(check.joined(separator: " ")) is not available here")
        }
    }
    return ok
}

/// The path of one of the package's executables (built beside the test bundle).
package func executable(_ name: String) throws -> String {
    var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if folder.lastPathComponent.hasSuffix(".xctest") { folder = folder.deletingLastPathComponent() }
    let path = folder.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    return path
}

/// Runs `operation` and returns what it returns, or `nil` if `limit` passes first. The limit is a
/// bound on a test that went wrong (a process that never prints, never exits), never a wait the
/// test relies on: the answer comes from the event `operation` waits for. An operation still
/// running at the limit is cancelled and left to end on its own.
package func withLimit<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
    let gate = ResumeOnce<T?>()
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        gate.arm(continuation)
        let work = Task { _ = gate.resume(await operation()) }
        let timer = Task {
            try? await Task.sleep(for: limit)
            if gate.resume(nil) { work.cancel() }
        }
        gate.onResume { timer.cancel() }
    }
}

/// A continuation resumed by the first of several racers.
final class ResumeOnce<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, value: T?, done: Bool, after: [@Sendable () -> Void])>((nil, nil, false, []))
    func arm(_ continuation: CheckedContinuation<T, Never>) {
        let early = state.withLock { state -> T? in
            if state.done { return state.value }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }
    /// Whether this call was the first.
    @discardableResult
    func resume(_ value: T) -> Bool {
        let (first, continuation, after) = state.withLock { state -> (Bool, CheckedContinuation<T, Never>?, [@Sendable () -> Void]) in
            guard !state.done else { return (false, nil, []) }
            state.done = true
            state.value = value
            defer { state.continuation = nil; state.after = [] }
            return (true, state.continuation, state.after)
        }
        continuation?.resume(returning: value)
        for body in after { body() }
        return first
    }
    func onResume(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.done { return true }
            state.after.append(body)
            return false
        }
        if now { body() }
    }
}

/// A server process started for a test: its output is read line by line, and waits for a line,
/// a number of lines or the exit are woken by the output and the exit themselves (no polling);
/// it is stopped with SIGKILL or SIGTERM.
package final class ServerProcess: Sendable {
    package let child: ChildProcess
    private final class Lines: Sendable {
        struct State {
            var complete: [String] = []
            var partial = ""
            /// The output pipe is closed: no line will come.
            var ended = false
            var waiters: [(condition: @Sendable ([String]) -> Bool, gate: ResumeOnce<Bool>)] = []
        }
        let state = Mutex(State())

        /// Adds `text`; returns the waits it ends.
        func append(_ text: String) {
            let ready = state.withLock { state -> [ResumeOnce<Bool>] in
                state.partial += text
                guard let last = state.partial.lastIndex(of: "\n") else { return [] }
                state.complete += state.partial[..<last].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                state.partial = String(state.partial[state.partial.index(after: last)...])
                let lines = state.complete
                let met = state.waiters.filter { $0.condition(lines) }
                state.waiters.removeAll { $0.condition(lines) }
                return met.map(\.gate)
            }
            for gate in ready { gate.resume(true) }
        }

        func end() {
            let waiting = state.withLock { state -> [ResumeOnce<Bool>] in
                if !state.partial.isEmpty { state.complete.append(state.partial) }
                state.partial = ""
                state.ended = true
                defer { state.waiters = [] }
                return state.waiters.map(\.gate)
            }
            for gate in waiting { gate.resume(false) }
        }

        /// Waits until `condition` holds (true) or the output ends without it (false).
        func wait(until condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
            let gate = ResumeOnce<Bool>()
            let now = state.withLock { state -> Bool? in
                if condition(state.complete) { return true }
                if state.ended { return false }
                state.waiters.append((condition, gate))
                return nil
            }
            if let now { return now }
            return await withCheckedContinuation { gate.arm($0) }
        }
    }
    private let lines = Lines()
    /// Its standard error, kept in a file of its own so that a failure can say what the process said.
    private let errorFile: String

    /// Starts `arguments[0]` with the rest as arguments.
    package init(_ arguments: [String]) throws {
        errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-test-\(UUID().uuidString).stderr").path
        child = try ChildProcess(arguments, output: .pipe, errors: .file(errorFile))
        child.readOutputChunks({ [lines] data in lines.append(String(decoding: data, as: UTF8.self)) }, ended: { [lines] in lines.end() })
    }

    deinit { try? FileManager.default.removeItem(atPath: errorFile) }

    package var output: [String] { lines.state.withLock { $0.complete } }

    /// Everything the process wrote to standard error so far (its log).
    package var errorText: String { (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "" }

    /// The last lines of what the process wrote to standard error, for failure messages.
    package var errorTail: String {
        guard let text = try? String(contentsOfFile: errorFile, encoding: .utf8), !text.isEmpty else { return "nothing on stderr" }
        return "stderr: " + String(text.suffix(1500))
    }

    /// Waits for a line containing `text`, and returns every line so far. Throws when the process
    /// closes its output without printing it, or (a bound on a hung process) after `limit`.
    package func waitFor(_ text: String, limit: Duration = .seconds(120)) async throws -> [String] {
        let found = await withLimit(limit) { [lines] in await lines.wait { $0.contains { $0.contains(text) } } }
        guard found == true else {
            let why = found == nil ? "still running after \(limit)" : "its output ended\(child.exitStatus.map { " (exit \($0))" } ?? "")"
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "no line with \"\(text)\" (\(why)) in \(output); \(errorTail)"])
        }
        return output
    }

    /// Waits until at least `count` lines have come. Throws as ``waitFor(_:limit:)`` does.
    package func waitForLines(_ count: Int, limit: Duration = .seconds(120)) async throws {
        let found = await withLimit(limit) { [lines] in await lines.wait { $0.count >= count } }
        guard found == true else {
            let why = found == nil ? "still running after \(limit)" : "its output ended\(child.exitStatus.map { " (exit \($0))" } ?? "")"
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "fewer than \(count) lines (\(why)): \(output.suffix(5)); \(errorTail)"])
        }
    }

    /// Waits for the process to exit (woken by the exit) and for its output to end, so that
    /// ``output`` then holds every line it wrote (the exit can be seen before the pipe's last
    /// bytes are read: the stress runs found `output` still empty after a one-push apns-sender
    /// exited); its status, or `nil` if it still runs after `limit` (a bound on a hung process).
    package func exit(limit: Duration = .seconds(120)) async throws -> Int32? {
        await withLimit(limit) { [child, lines] in
            let status = await child.wait()
            _ = await lines.wait { _ in false }
            return status
        }
    }

    /// The port in the first line containing `marker`, written `…:PORT` (optionally followed by a space).
    package func port(after marker: String) throws -> Int {
        guard let line = output.first(where: { $0.contains(marker) }),
              let range = line.range(of: marker) else { throw CocoaError(.fileReadUnknown) }
        let rest = line[range.upperBound...]
        let digits = rest.split(separator: ":").dropFirst().first { $0.first?.isNumber == true }?.prefix { $0.isNumber }
        guard let digits, let port = Int(digits) else { throw CocoaError(.fileReadUnknown) }
        return port
    }

    /// SIGKILL, without waiting (safe in a `defer`).
    package func stop() { child.send(SIGKILL) }

    /// SIGTERM, then waits (woken by the exit) for the process to end.
    /// - Returns: the exit status, or `nil` if it is still running after `limit`.
    package func terminate(limit: Duration = .seconds(120)) async throws -> Int32? {
        child.send(SIGTERM)
        return try await exit(limit: limit)
    }
}

/// A gate that tasks wait on until it is opened, once: for a test that waits for something to
/// have happened (a page presented, a callback called) without polling.
package final class Latch: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    package init() {}

    package var isOpen: Bool { state.withLock { $0.open } }

    package func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// Waits until `file`'s text satisfies `condition` and returns the text: woken by inotify(7) on the
/// file's folder (each create, write, close or rename there), not by reading it again and again.
/// Another process's record is an event like any other. `nil` if `limit` passes first (a bound
/// on a test that went wrong).
package func waitForFile(_ file: URL, limit: Duration = .seconds(120),
                        until condition: @escaping @Sendable (String) -> Bool) async -> String? {
    let watcher = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
    guard watcher >= 0 else { return nil }
    // The watch comes before the first read, so no write falls between them unseen.
    let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)
    guard inotify_add_watch(watcher, file.deletingLastPathComponent().path, mask) >= 0 else {
        close(watcher)
        return nil
    }
    // A pipe to wake the thread when the limit passes.
    var wake: [Int32] = [-1, -1]
    guard pipe(&wake) == 0 else {
        close(watcher)
        return nil
    }
    let (wakeRead, wakeWrite) = (wake[0], wake[1])
    let gate = ResumeOnce<String?>()
    let timer = Task {
        try? await Task.sleep(for: limit)
        if gate.resume(nil) { _ = write(wakeWrite, [UInt8(1)], 1) }
    }
    Thread.detachNewThread {
        defer {
            close(watcher)
            close(wakeRead)
            close(wakeWrite)
        }
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            if let text = try? String(contentsOf: file, encoding: .utf8), condition(text) {
                if gate.resume(text) { timer.cancel() }
                return
            }
            var entries = [pollfd(fd: watcher, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno != EINTR { _ = gate.resume(nil); return }
            if entries[1].revents != 0 { return }
            while read(watcher, &buffer, buffer.count) > 0 {}  // the events themselves say nothing more
        }
    }
    return await withCheckedContinuation { gate.arm($0) }
}
