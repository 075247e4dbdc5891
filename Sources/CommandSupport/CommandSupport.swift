import APNsWire
import ArgumentParser
import Foundation
import Logging

/// Writes a line to standard output at once (no stdio buffering: a script or test reading the
/// output sees each line as it is said).
public func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension String {
    /// Right-aligned in `width` columns.
    public func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
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
