import APNsWire
import ArgumentParser
import CommandSupport
import FirebaseAuthCore
import FirebaseCore
import Foundation
import Lifecycle
import LocalPKI
import Scenarios
import Synchronization
import Utilities

/// `authsim exec -- swift test`: the channel of `authsim serve`, and a test command run against it
/// with an XCTest test host, as `firebase emulators:exec` runs a script against the emulators.
struct Exec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a test command (swift test) against the whole channel, with its test host app; exit with the command's status.",
        discussion: """
            As `firebase emulators:exec` does for the Auth Emulator: every part of `authsim serve` starts (any free ports but \
            the backend's 9099, a new state folder, removed after), the command runs with AUTHSIM_TEST_HOST, \
            FIREBASE_AUTH_EMULATOR_HOST and GCLOUD_PROJECT set, and everything stops when it ends. AUTHSIM_TEST_HOST names the \
            test host: the app an XCTest suite runs in on a device, whose delegate configured Firebase before the first test. \
            The first `Auth.auth()` or `FirebaseApp.app()` of the test process launches it, so test methods call `Auth.auth()` \
            as they do in Xcode. Seed the project with --import (an Auth Emulator export: users with passwords and second \
            factors) and --test-number. docs/xctest.md says more.
            """)

    @OptionGroup var serve: Serve
    @Option(help: ArgumentHelp("The test host app's folder (Info.plist, GoogleService-Info.plist, embedded.mobileprovision), as in Payload/<Name>.app (default: one written from --bundle-id and --project-id, signed for development).",
                               valueName: "folder"))
    var app: String?
    @Flag(help: "The host app's delegate also calls Auth.auth().useEmulator(withHost:port:), which turns app verification off as on iOS: for suites written against the Auth Emulator. Without it the app talks to the backend as to its project and proves itself by silent push, as on a phone.")
    var usesEmulator = false
    @Argument(parsing: .postTerminator, help: ArgumentHelp("The test command, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("give the test command after --, as in: authsim exec -- swift test") }
        if let app, !FileManager.default.fileExists(atPath: URL(fileURLWithPath: app).appendingPathComponent("Info.plist").path) {
            throw ValidationError("--app \(app) has no Info.plist: give the app's folder, as in Payload/<Name>.app")
        }
    }

    func run() async throws {
        let given = serve.state.map { URL(fileURLWithPath: $0) }
        let folder = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("authsim-exec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { if given == nil { try? FileManager.default.removeItem(at: folder) } }
        let status = CommandStatus()
        let (command, app, usesEmulator, certs) = (command, app, usesEmulator, serve.certs ?? folder.appendingPathComponent("Certs").path)
        try await serve.run(then: { addresses, state, parts in
            let hostFile = state.appendingPathComponent("test-host.json")
            let hostApp = try app ?? Self.writeHostApp(addresses: addresses, in: state, certs: certs).path
            let backend = try TestHost.Address(authority: addresses.emulatorHost)
            let gateway = URL(string: addresses.deviceGateway).flatMap { url in url.host.map { TestHost.Address(host: $0, port: url.port ?? 80) } }
            // The build's APNs environment, from its provisioning profile, as the device registers it.
            let profile = URL(fileURLWithPath: hostApp).appendingPathComponent("embedded.mobileprovision")
            let apns = ProvisioningProfile.apsEnvironment(at: profile).flatMap { APNsEnvironment(apsEnvironment: $0) }
            do throws(FileStoreError) {
                try TestHost(app: URL(fileURLWithPath: hostApp).standardizedFileURL.path, backend: backend,
                             delegate: usesEmulator ? .usesEmulator : .configures, deviceGateway: gateway,
                             apnsEnvironment: apns?.rawValue, caFile: addresses.caFile).write(to: hostFile)
            } catch { throw CommandFailure("cannot write the test host file: \(error.message)") }
            let pushes = apns.map { "its device gets APNs \($0.rawValue) pushes" } ?? "no aps-environment in its profile: APNs registration fails, as on a phone"
            say("  test host:       \(hostFile.path) (app \(hostApp); \(usesEmulator ? "its delegate calls useEmulator: app verification off" : pushes))")
            // The backend pushes to its own bundle ID: another app's device refuses the push (DeviceTokenNotForTopic).
            if let bundleID = (try? AppBundle(directory: URL(fileURLWithPath: hostApp)))?.info.bundleID, bundleID != addresses.bundleID {
                say("  note: the host app is \(bundleID) and the backend pushes to \(addresses.bundleID): silent pushes will be refused as DeviceTokenNotForTopic and reCAPTCHA take over; pass --bundle-id \(bundleID)")
            }
            say("authsim exec: \(command.joined(separator: " "))")
            var environment = ProcessInfo.processInfo.environment
            environment[TestHost.environmentVariable] = hostFile.path
            environment["FIREBASE_AUTH_EMULATOR_HOST"] = addresses.emulatorHost
            environment["GCLOUD_PROJECT"] = addresses.projectID
            let child: ChildProcess
            do { child = try ChildProcess(command, environment: environment) } catch {
                throw CommandFailure("cannot start \(command[0]): \(error)")
            }
            // The command's end stops the channel; a signal that stops the channel stops the command first.
            await parts.add(ShutdownStep("the test command") {
                child.send(SIGTERM)
                status.set(await child.wait())
            })
            Task { [status, child, parts] in
                status.set(await child.wait())
                try? await parts.shutdown()
            }
        }, stateFolder: folder)
        let code = status.code ?? 1
        say("authsim exec: the test command exited with status \(code)")
        if code != 0 { throw ExitCode(code) }
    }

    /// The default host app: the plists of an app whose bundle ID, project and API key are the
    /// channel's, and a development provisioning profile signed with the channel's keys.
    static func writeHostApp(addresses: ServeAddresses, in state: URL, certs: String) throws -> URL {
        var sample = SampleApp()
        sample.bundleID = addresses.bundleID
        sample.projectID = addresses.projectID
        sample.apiKey = addresses.apiKey
        let folder = state.appendingPathComponent("test-host/\(addresses.bundleID).app")
        try sample.write(to: folder)
        let credentials = try CertsDirectory(URL(fileURLWithPath: certs)).ensure()
        try ProvisioningProfileFile.make(apsEnvironment: "development", bundleID: sample.bundleID, teamID: credentials.authKey.teamID,
                                         credentials: credentials).write(to: folder.appendingPathComponent("embedded.mobileprovision"))
        return folder
    }
}

/// The test command's exit status, once it has ended.
private final class CommandStatus: Sendable {
    private let value = Mutex<Int32?>(nil)
    func set(_ code: Int32) { value.withLock { $0 = code } }
    var code: Int32? { value.withLock { $0 } }
}

extension TestHost.Address {
    /// From `host:port` or `[v6]:port`.
    init(authority: String) throws {
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else {
            throw CommandFailure("\(authority) is not host:port")
        }
        self.init(host: String(authority[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
    }
}
