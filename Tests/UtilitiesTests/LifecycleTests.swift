import Lifecycle
import Synchronization
import Testing

/// The one lifecycle the servers and worlds share: parts stop in the reverse of the order they
/// were listed in (each after the parts that depend on it), all of them even when one fails.
@Suite("Parts run as one ServiceGroup")
struct LifecycleTests {
    struct StopFailed: Error {}

    @Test("a group stops its parts last-listed first; a second shutdown does nothing more")
    func reverseOrder() async throws {
        let stopped = Mutex<[String]>([])
        let group = PartGroup(["receiver", "backend", "inspector"].map { name in
            StartedPart(name) { stopped.withLock { $0.append(name) } }
        })
        try await group.shutdown()
        #expect(stopped.withLock { $0 } == ["inspector", "backend", "receiver"])
        try await group.shutdown()
        #expect(stopped.withLock { $0.count } == 3)
    }

    @Test("a part whose stop fails: the others stop all the same, and the error comes out")
    func failureStopsTheRest() async {
        let stopped = Mutex<[String]>([])
        let group = PartGroup([
            StartedPart("receiver") { stopped.withLock { $0.append("receiver") } },
            StartedPart("backend") { throw StopFailed() },
            StartedPart("inspector") { stopped.withLock { $0.append("inspector") } },
        ])
        await #expect(throws: StopFailed.self) { try await group.shutdown() }
        #expect(Set(stopped.withLock { $0 }) == ["receiver", "inspector"])
    }

    struct StartFailed: Error {}

    @Test("a start that fails half-way stops what it started, last first, even past a part that fails to stop, and throws its own error")
    func failedStart() async {
        let stopped = Mutex<[String]>([])
        await #expect(throws: StartFailed.self) {
            let _: Int = try await startingParts { starting in
                _ = starting.started("receiver", as: "receiver") { name in stopped.withLock { $0.append(name) } }
                _ = starting.started("pusher", as: "pusher") { _ in throw StopFailed() }
                _ = starting.started("backend", as: "backend") { name in stopped.withLock { $0.append(name) } }
                throw StartFailed()
            }
        }
        #expect(stopped.withLock { $0 } == ["backend", "receiver"])
    }

    @Test("a start that succeeds stops nothing and returns what it made")
    func successfulStart() async throws {
        let stopped = Mutex<[String]>([])
        let made = try await startingParts { starting in
            starting.started(7, as: "seven") { _ in stopped.withLock { $0.append("seven") } }
        }
        #expect(made == 7 && stopped.withLock { $0 }.isEmpty)
    }
}
