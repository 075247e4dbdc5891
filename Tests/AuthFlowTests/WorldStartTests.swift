import Foundation
import Scenarios
import TestSupport
import Testing
import Utilities

/// A world is several servers started one after another; one that fails to start must not leave
/// the ones before it running (a test that retries, or a long-lived process that starts worlds,
/// would pile up receivers, threads and open files).
@Suite("A world whose start fails leaves nothing running")
struct WorldStartTests {
    @Test("the backend cannot open its state: the receiver that had started is stopped, its delivery log closed")
    func failedStartStopsTheReceiver() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appendingPathComponent("State")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        // A file where the backend's state folder goes: the backend fails after the receiver started.
        try Data().write(to: state.appendingPathComponent("backend"))
        await #expect(throws: (any Error).self) {
            try await PhoneAuthWorld.start(certs: folder.appendingPathComponent("Certs"), state: state, appClock: ManualClock())
        }
        let log = state.appendingPathComponent("deliveries.jsonl").resolvingSymlinksInPath().path
        #expect(FileManager.default.fileExists(atPath: log), "the receiver never started, so this test shows nothing")
        #expect(descriptors(openOn: log) == 0, "the receiver started before the backend is still running")

        // And with the state in order, a world starts there and stops.
        try FileManager.default.removeItem(at: state.appendingPathComponent("backend"))
        let world = try await PhoneAuthWorld.start(certs: folder.appendingPathComponent("Certs"), state: state, appClock: ManualClock())
        #expect(descriptors(openOn: log) == 1)
        await world.shutdown()
    }

    /// How many of this process's file descriptors are open on `path`.
    func descriptors(openOn path: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }.count
    }
}
