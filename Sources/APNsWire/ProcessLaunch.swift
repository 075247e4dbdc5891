import Foundation
import Synchronization

/// Foundation's `Process.run()` on Linux is not safe to call from several threads at once (a
/// parallel test run crashed in its memcpy). Every launch in the toolkit, and in its tests, goes
/// through this one lock.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
