import APNsWire
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

/// Every launch goes through the toolkit's one launch lock (see `ProcessLaunch`).
func launch(_ process: Process) throws {
    try ProcessLaunch.run(process)
}

/// Collects a pipe's bytes as they come, without blocking a thread.
final class PipeCollector: Sendable {
    private let bytes = Mutex(Data())
    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                self.bytes.withLock { $0.append(data) }
            }
        }
    }
    var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
}

/// Runs a program to its end and returns its standard output and exit status. Never blocks a
/// thread of the (2-thread, on this machine) cooperative pool: waiting on `Process` there starves
/// every other test running in parallel.
public func runProgram(_ arguments: [String]) async throws -> (output: String, status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.standardError
    let collector = PipeCollector(pipe)
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try launch(process) } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    // The last bytes may still be in flight after the exit; wait for the pipe's end briefly.
    for _ in 0..<50 where pipe.fileHandleForReading.readabilityHandler != nil {
        try await Task.sleep(for: .milliseconds(10))
    }
    return (collector.text, status)
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

/// A server process started for a test: its output is read line by line; it is stopped with SIGTERM.
public final class ServerProcess: Sendable {
    public let process: Process
    private final class Lines: Sendable {
        let state = Mutex<(complete: [String], partial: String)>(([], ""))
    }
    private let lines = Lines()

    /// Starts `arguments[0]` with the rest as arguments.
    public init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        self.process = process
        pipe.fileHandleForReading.readabilityHandler = { [lines] handle in
            let data = handle.availableData
            guard !data.isEmpty else { return }
            lines.state.withLock { state in
                state.partial += String(decoding: data, as: UTF8.self)
                while let newline = state.partial.firstIndex(of: "\n") {
                    state.complete.append(String(state.partial[..<newline]))
                    state.partial.removeSubrange(...newline)
                }
            }
        }
        try launch(process)
    }

    public var output: [String] { lines.state.withLock { $0.complete } }

    /// Waits (up to `timeout`) for a line containing `text`, and returns every line so far.
    public func waitFor(_ text: String, timeout: Duration = .seconds(20)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = output
            if current.contains(where: { $0.contains(text) }) { return current }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "no line with \"\(text)\" in \(output)"])
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

    /// SIGKILL, without waiting (safe in a `defer`). A child started from a thread that blocks
    /// signals, as Foundation's `Process` may be, inherits the block: Python servers never see SIGTERM.
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// SIGTERM, then waits (without blocking a thread) up to `timeout` for the exit.
    /// - Returns: the exit status, or `nil` if it is still running.
    public func terminate(timeout: Duration = .seconds(10)) async throws -> Int32? {
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return process.isRunning ? nil : process.terminationStatus
    }
}
