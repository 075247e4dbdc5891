import Utilities
import Foundation
import Synchronization
import Testing

/// A new folder under the system's temporary directory, named after the test.
public func temporaryDirectory(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("authsim-tests-\(name.filter(\.isLetter).prefix(40))-\(UUID().uuidString.prefix(8))")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs a program to its end and returns its standard output and exit status (standard error
/// goes to the test's). `arguments[0]` is looked up in `PATH`; leading `NAME=value` words set the
/// environment, as with env(1). Never blocks a thread of the (2-thread, on this machine)
/// cooperative pool: waiting there starves every other test running in parallel.
public func runProgram(_ arguments: [String]) async throws -> (output: String, status: Int32) {
    let child = try ChildProcess(["/usr/bin/env"] + arguments, output: .pipe)
    async let output = child.readOutput()
    let status = await child.wait()
    return (String(decoding: await output, as: UTF8.self), status)
}

/// Whether a tool an external-client test needs is here. On CI (`CI` set) a missing tool fails
/// the test: `.ci/run` installs them. Elsewhere the test is skipped with a note.
public func toolAvailable(_ check: [String]) async -> Bool {
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
public func executable(_ name: String) throws -> String {
    var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if folder.lastPathComponent.hasSuffix(".xctest") { folder = folder.deletingLastPathComponent() }
    let path = folder.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    return path
}

/// A server process started for a test: its output is read line by line; it is stopped with SIGKILL or SIGTERM.
public final class ServerProcess: Sendable {
    public let child: ChildProcess
    private final class Lines: Sendable {
        let state = Mutex<(complete: [String], partial: String)>(([], ""))
    }
    private let lines = Lines()
    /// Its standard error, kept in a file of its own so that a failure can say what the process said.
    private let errorFile: String

    /// Starts `arguments[0]` with the rest as arguments.
    public init(_ arguments: [String]) throws {
        errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-test-\(UUID().uuidString).stderr").path
        child = try ChildProcess(arguments, output: .pipe, errors: .file(errorFile))
        child.readOutputChunks { [lines] data in
            lines.state.withLock { state in
                state.partial += String(decoding: data, as: UTF8.self)
                guard let last = state.partial.lastIndex(of: "\n") else { return }
                state.complete += state.partial[..<last].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                state.partial = String(state.partial[state.partial.index(after: last)...])
            }
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: errorFile) }

    public var output: [String] { lines.state.withLock { $0.complete } }

    /// The last lines of what the process wrote to standard error, for failure messages.
    public var errorTail: String {
        guard let text = try? String(contentsOfFile: errorFile, encoding: .utf8), !text.isEmpty else { return "nothing on stderr" }
        return "stderr: " + String(text.suffix(1500))
    }

    /// Waits (up to `timeout`) for a line containing `text`, and returns every line so far.
    public func waitFor(_ text: String, timeout: Duration = .seconds(20)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = output
            if current.contains(where: { $0.contains(text) }) { return current }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "no line with \"\(text)\" in \(output); \(errorTail)"])
    }

    /// Waits (up to `timeout`) until at least `count` lines have come.
    public func waitForLines(_ count: Int, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while lines.state.withLock({ $0.complete.count }) < count {
            guard ContinuousClock.now < deadline else {
                throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "fewer than \(count) lines: \(output.suffix(5)); \(errorTail)"])
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits (up to `timeout`) for the process to exit; its status, or `nil` if it still runs.
    public func exit(timeout: Duration = .seconds(60)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while child.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return child.exitStatus
    }

    /// The port in the first line containing `marker`, written `…:PORT` (optionally followed by a space).
    public func port(after marker: String) throws -> Int {
        guard let line = output.first(where: { $0.contains(marker) }),
              let range = line.range(of: marker) else { throw CocoaError(.fileReadUnknown) }
        let rest = line[range.upperBound...]
        let digits = rest.split(separator: ":").dropFirst().first { $0.first?.isNumber == true }?.prefix { $0.isNumber }
        guard let digits, let port = Int(digits) else { throw CocoaError(.fileReadUnknown) }
        return port
    }

    /// SIGKILL, without waiting (safe in a `defer`).
    public func stop() { child.send(SIGKILL) }

    /// SIGTERM, then waits (without blocking a thread) up to `timeout` for the exit.
    /// - Returns: the exit status, or `nil` if it is still running.
    public func terminate(timeout: Duration = .seconds(10)) async throws -> Int32? {
        child.send(SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while child.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return child.exitStatus
    }
}
