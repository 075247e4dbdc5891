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
}
