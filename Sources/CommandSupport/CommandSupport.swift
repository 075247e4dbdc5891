import APNsWire
import ArgumentParser
import Foundation
import Logging
import Utilities

/// Writes a line to standard output at once (no stdio buffering: a script or test reading the
/// output sees each line as it is said).
public func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension APNsEnvironment: ExpressibleByArgument {}

/// `--log-level trace|debug|info|notice|warning|error|critical`.
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Sends every library's log to standard error (what `say` prints goes to standard output) and
/// returns the command's logger at `level`.
public func bootstrapLogging(_ label: String, level: Logger.Level) -> Logger {
    LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
    var logger = Logger(label: label)
    logger.logLevel = level
    return logger
}

/// A command that cannot go on: ArgumentParser prints `Error: <description>` and the program
/// exits with status 1.
public struct CommandFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Starts a server; when it cannot listen, the failure says why and names `option`, the
/// command's option that moves it (`--ui-port`). For a part with several ports (push-receiver's
/// sandbox and production), `options` maps each port to its option.
public func starting<T>(_ options: [(option: String, port: Int)], _ start: () async throws -> T) async throws -> T {
    do { return try await start() } catch let error as any CarriesListenError {
        guard let listen = error.listenError else { throw error }
        throw CommandFailure(listen.advice(option: options.first { $0.port == listen.port }?.option))
    }
}

/// Starts a server whose port `option` sets (see ``starting(_:_:)-([(String,Int)],_)``).
public func starting<T>(_ option: String, port: Int, _ start: () async throws -> T) async throws -> T {
    try await starting([(option, port)], start)
}

/// Refuses ports that are not ports (0 to 65535; 0 asks for any free one), naming the option: a
/// port of 70000 would otherwise be taken modulo 65536.
public func checkPorts(_ ports: [(option: String, port: Int?)]) throws {
    for (option, port) in ports {
        guard let port, !(0...65_535).contains(port) else { continue }
        throw ValidationError("\(option) \(port) is not a port: 0 to 65535 (0: any free port)")
    }
}

/// How to run `program` (authsim, push-receiver, apns-sender, redirect-interceptor) from here, for
/// advice in messages: `swift run push-receiver` from a source checkout's build, the bare name when
/// the release's `bin/` is on PATH (the wheel), else the path of the release's link (the tarball).
/// Never a build folder's path.
public func invocation(of program: String, executable: String? = nil, path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String {
    let exe = executable ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? program
    let folder = URL(fileURLWithPath: exe).deletingLastPathComponent().standardizedFileURL.path
    if folder.contains("/.build/") { return "swift run \(program)" }
    let onPath = (path ?? "").split(separator: ":").contains { URL(fileURLWithPath: String($0)).standardizedFileURL.path == folder }
    return onPath ? program : folder + "/" + program
}
