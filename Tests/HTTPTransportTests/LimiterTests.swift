@testable import HTTPTransport
import Synchronization
import Testing

@Suite("The HTTP client's per-host limiter")
struct LimiterTests {
    final class Gauge: Sendable {
        private let state = Mutex((now: 0, most: 0, done: 0))
        func enter() { state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
        func leave() { state.withLock { $0.now -= 1; $0.done += 1 } }
        var most: Int { state.withLock { $0.most } }
        var done: Int { state.withLock { $0.done } }
    }

    @Test("5,000 callers through a limit of 3: never more than 3 inside, every one gets through")
    func bounded() async {
        let limiter = Limiter(3)
        let gauge = Gauge()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5_000 {
                group.addTask {
                    await limiter.acquire()
                    gauge.enter()
                    await Task.yield()
                    gauge.leave()
                    limiter.release()
                }
            }
        }
        #expect(gauge.most <= 3)
        #expect(gauge.most >= 1)
        #expect(gauge.done == 5_000)
    }
}
