import Utilities
import AuthBackend
import FirebaseAuthCore
import Foundation
import Scenarios
import TestSupport
import Testing


/// Runs `body` in a fresh world (receiver, backend over HTTP, keys made for this test).
func withWorld<T>(configuration: BackendConfiguration = BackendConfiguration(), backendClock: any WallClock = SystemWallClock(),
                  pushLatency: Duration = .zero, backendObserver: (@Sendable (BackendEvent, SignInID?) -> Void)? = nil, name: String = #function,
                  _ body: (PhoneAuthWorld, URL) async throws -> T) async throws -> T {
    let folder = temporaryDirectory(name)
    // 500 ms of APNs latency by default, as real APNs might take. A push never reaches an app
    // before it has read verifyClient's answer, whatever the latency: the device orders the two
    // by event (AppHost.readingAnswerBeforePush). The apps' clock never moves unless a test gives an app its own and advances it: every SDK
    // wait (the push's suggestedTimeout above all) ends by its event, however loaded the machine.
    // On the real clock a push 2 s late under load once became a reCAPTCHA fallback.
    let world = try await PhoneAuthWorld.start(certs: folder.appendingPathComponent("Certs"),
                                               state: folder.appendingPathComponent("State"),
                                               configuration: configuration, backendClock: backendClock,
                                               pushLatency: pushLatency, appClock: ManualClock(), backendObserver: backendObserver)
    do {
        let result = try await body(world, folder)
        await world.shutdown()
        try? FileManager.default.removeItem(at: folder)
        return result
    } catch {
        await world.shutdown()
        try? FileManager.default.removeItem(at: folder)
        throw error
    }
}

/// Waits until `clock` has `count` sleepers (a timeout has started), so advancing it is not a race:
/// woken by the clock when a task starts sleeping on it (this polled every 1 ms for 2 s until issue 26).
/// The limit only bounds a test that went wrong.
func waitForSleepers(_ clock: ManualClock, count: Int = 1) async throws {
    if await withLimit(.seconds(120), { await clock.waitForSleepers(count) }) == nil {
        Issue.record("nobody started waiting on the clock")
    }
}

let phone = "+16505551234"
