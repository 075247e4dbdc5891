import Testing
import Utilities

/// The clock of a scenario's apps and network (`ScenarioRunner`): the shipped scenario
/// `push-too-slow` (APNs 4 s, the app waits 1 s) once signed in with the push on a loaded machine,
/// where the app read verifyClient's answer more than 3 s after the receiver took the push.
@Suite("A clock whose time passes only while somebody waits on it")
struct WaitingClockTests {
    typealias Instant = WaitingClock.Instant

    @Test("the network's delay alone never ends; the app's wait ends first and time stops there; then the push arrives")
    func networkWaitsForTheApp() async throws {
        let clock = WaitingClock()
        #expect(!clock.isRunning)
        // The push's latency: registered first, ends last, whatever the machine does meanwhile.
        let push = Task { () -> Instant in
            try await clock.passive.sleep(until: Instant(offset: .milliseconds(40)))
            return clock.now
        }
        try await clock.sleep(until: Instant(offset: .milliseconds(10)))
        // Woken at its deadline exactly, with nobody else holding time: it stands still.
        #expect(clock.now == Instant(offset: .milliseconds(10)))
        #expect(!clock.isRunning)
        // A second wait holds time again and still ends before the push.
        try await clock.sleep(for: .milliseconds(5))
        #expect(clock.now == Instant(offset: .milliseconds(15)))
        #expect(!clock.isRunning)
        clock.runFreely()
        #expect(clock.isRunning)
        let arrived = try await push.value
        #expect(arrived >= Instant(offset: .milliseconds(40)))
    }

    @Test("each waiter wakes once time reached its deadline; time stops at the last one")
    func inOrder() async throws {
        let clock = WaitingClock()
        let woken = try await withThrowingTaskGroup(of: (Int, Instant).self) { group in
            for millis in [30, 10, 20] {
                group.addTask {
                    try await clock.sleep(until: Instant(offset: .milliseconds(millis)))
                    return (millis, clock.now)
                }
            }
            var woken: [(Int, Instant)] = []
            for try await one in group { woken.append(one) }
            return woken
        }
        // Time runs on while the others wait, so a waiter slow to run finds it later than its
        // deadline; it never finds it earlier. Nobody holds it after the last: it stops there.
        for (millis, now) in woken {
            #expect(now >= Instant(offset: .milliseconds(millis)))
        }
        #expect(!clock.isRunning)
        #expect(clock.now == Instant(offset: .milliseconds(30)))
    }

    @Test("a wait cancelled stops time with it, and its sleeper is gone")
    func cancelled() async throws {
        let clock = WaitingClock()
        let wait = Task { try await clock.sleep(for: .seconds(3600)) }
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.value }
        #expect(!clock.isRunning)
        #expect(clock.now < Instant(offset: .seconds(3600)))
    }
}
