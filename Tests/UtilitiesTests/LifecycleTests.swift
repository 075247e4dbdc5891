import Lifecycle
import ServiceLifecycle
import Synchronization
import Testing

/// The one lifecycle programs, worlds and lone servers share (`PartGroup`): parts stop in the
/// reverse of the order they were added (each after the parts that depend on it), all of them
/// even when one fails, and a part that ends on its own stops the rest.
@Suite("Parts run as one ServiceGroup")
struct LifecycleTests {
    struct StopFailed: Error {}
    struct PartFailed: Error {}

    /// The names of the parts that stopped, in the order they stopped.
    final class Stops: Sendable {
        private let names = Mutex<[String]>([])
        var all: [String] { names.withLock { $0 } }
        /// A part that notes its name here when it stops.
        func part(_ name: String) -> ShutdownStep { ShutdownStep(name) { self.names.withLock { $0.append(name) } } }
    }

    @Test("a group stops its parts last-added first; a second shutdown does nothing more")
    func reverseOrder() async throws {
        let stopped = Stops()
        let group = PartGroup()
        for name in ["receiver", "backend", "inspector"] { await group.add(stopped.part(name)) }
        try await group.shutdown()
        #expect(stopped.all == ["inspector", "backend", "receiver"])
        try await group.shutdown()
        #expect(stopped.all.count == 3)
    }

    @Test("a part whose stop fails: the others stop all the same, and the error comes out")
    func failureStopsTheRest() async {
        let stopped = Stops()
        let group = PartGroup()
        await group.add(stopped.part("receiver"))
        await group.add(ShutdownStep("backend") { throw StopFailed() })
        await group.add(stopped.part("inspector"))
        await #expect(throws: StopFailed.self) { try await group.shutdown() }
        #expect(stopped.all == ["inspector", "receiver"])
    }

    /// A part that fails while it runs (a server whose listener died).
    struct Failing: Service {
        func run() async throws { throw PartFailed() }
    }

    @Test("a part that fails while running stops the others, last-added first, and the group ends with its error")
    func failingPartStopsTheGroup() async {
        let stopped = Stops()
        let group = PartGroup()
        await group.add(stopped.part("receiver"))
        await group.add(stopped.part("backend"))
        await group.add(Failing())
        await #expect(throws: PartFailed.self) { try await group.stopped() }
        #expect(stopped.all == ["backend", "receiver"])
    }

    struct StartFailed: Error {}

    @Test("a start that fails half-way and shuts its group stops what it had added, even past a part that fails to stop")
    func failedStart() async {
        let stopped = Stops()
        let group = PartGroup()
        await #expect(throws: StartFailed.self) {
            do {
                await group.add(stopped.part("receiver"))
                await group.add(ShutdownStep("pusher") { throw StopFailed() })
                await group.add(stopped.part("backend"))
                throw StartFailed()
            } catch {
                try? await group.shutdown()
                throw error
            }
        }
        #expect(stopped.all == ["backend", "receiver"])
    }

    @Test("a group with no parts runs until it is shut down")
    func emptyGroupHoldsOpen() async throws {
        let group = PartGroup()
        let ended = Mutex(false)
        let watcher = Task { try await group.stopped(); ended.withLock { $0 = true } }
        // The group's own task is still running: a part added now still runs and stops with it.
        let stopped = Stops()
        await group.add(stopped.part("late"))
        #expect(!ended.withLock { $0 })
        try await group.shutdown()
        try await watcher.value
        #expect(ended.withLock { $0 } && stopped.all == ["late"])
    }
}
