import DeviceOS
import FirebaseCore
import Foundation
import Scenarios
import Testing
import TestSupport
import Utilities

/// The test host file `authsim exec` writes and the test process reads (FirebaseCore's TestHost):
/// what it keeps, and what it refuses before anything launches.
@Suite struct TestHostFileTests {
    @Test("written and read back whole, readable by its user only")
    func roundTrip() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("test-host.json")
        let host = TestHost(app: "/apps/Example.app", backend: .init(host: "127.0.0.1", port: 9099), delegate: .usesEmulator,
                            deviceGateway: .init(host: "::1", port: 5223), apnsEnvironment: "sandbox")
        try host.write(to: file)
        #expect(try TestHost.read(file) == host)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("a newer version is refused naming both; another file is not a host; a missing file says so")
    func refusals() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let newer = folder.appendingPathComponent("newer.json")
        try Data(#"{"format": "authsim-test-host", "version": 2, "writtenBy": "9.0.0", "app": "/a", "future": true}"#.utf8).write(to: newer)
        let refused = #expect(throws: TestHostError.self) { try TestHost.read(newer) }
        #expect(refused?.code == .newerVersion)
        #expect(refused?.message.contains("version 2 (written by authsim 9.0.0)") == true && refused?.message.contains("reads version 1") == true,
                "\(refused?.message ?? "")")

        let other = folder.appendingPathComponent("other.json")
        try Data(#"{"version": 1, "app": "/a"}"#.utf8).write(to: other)
        #expect(throws: TestHostError(.notAHostFile, "")) { try TestHost.read(other) }
        let broken = folder.appendingPathComponent("broken.json")
        try Data(#"{"format": "authsim-test-host", "version": 1, "app": 3}"#.utf8).write(to: broken)
        #expect(throws: TestHostError(.notAHostFile, "")) { try TestHost.read(broken) }
        #expect(throws: TestHostError(.unreadable, "")) { try TestHost.read(folder.appendingPathComponent("absent.json")) }
    }

    @Test("a host app without Info.plist or GoogleService-Info.plist does not launch, and says which")
    func badApps() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = folder.appendingPathComponent("Example.app")
        let host = TestHost(app: app.path, backend: .init(host: "127.0.0.1", port: 9099), delegate: .configures)
        let noInfo = #expect(throws: TestHostError.self) { _ = try host.launch() }
        #expect(noInfo?.code == .badApp && noInfo?.message.contains("Info.plist") == true, "\(noInfo?.message ?? "")")
        try SampleApp().write(to: app)
        try FileManager.default.removeItem(at: app.appendingPathComponent("GoogleService-Info.plist"))
        let noOptions = #expect(throws: TestHostError.self) { _ = try host.launch() }
        #expect(noOptions?.message.contains("has no GoogleService-Info.plist") == true, "\(noOptions?.message ?? "")")
    }
}
