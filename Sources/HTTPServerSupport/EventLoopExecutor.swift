import NIOCore
import Synchronization

/// A Swift task executor that runs its jobs on one SwiftNIO event loop.
///
/// A task that prefers it (`withTaskExecutorPreference`, `addTask(executorPreference:)`) runs
/// on the loop's thread, and so do the nonisolated async functions and default actors it calls:
/// a write to a channel of that loop is made at once, and the answer's future, completed on the
/// loop, resumes the task there, with no hand-off to another thread and back. Work that blocks
/// for long (password hashing) leaves it for the global executor (`globalConcurrentExecutor`).
package final class EventLoopExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `eventLoop` is immutable and event loops are Sendable.
    package let eventLoop: any EventLoop

    private init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    private static let made = Mutex<[ObjectIdentifier: EventLoopExecutor]>([:])

    /// The executor of `eventLoop`: one per loop, kept for the process's life (as loops are).
    package static func of(_ eventLoop: any EventLoop) -> EventLoopExecutor {
        made.withLock { made in
            let key = ObjectIdentifier(eventLoop)
            if let executor = made[key] { return executor }
            let executor = EventLoopExecutor(eventLoop)
            made[key] = executor
            return executor
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
