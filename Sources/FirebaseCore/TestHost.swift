import DeviceOS
import Foundation
import HTTPTransport
import Synchronization
import Utilities

/// The app an XCTest suite runs in. On a device, Xcode launches the suite inside its test host
/// app, whose delegate has already called `FirebaseApp.configure()` (and, for the Auth Emulator,
/// `Auth.auth().useEmulator(withHost:port:)`) before the first test calls `Auth.auth()`. Here the
/// test command's environment names a host file (`AUTHSIM_TEST_HOST`, written by `authsim exec`)
/// and the first use of Firebase in the process launches that app as its delegate would: its
/// bundle's `Info.plist` and `GoogleService-Info.plist`, its device, the backend its requests go to.
/// The test files stay as they are.
///
/// The file is JSON with a format name and version, so a newer authsim's host is refused by an
/// older one, naming both, rather than half read.
package struct TestHost: Codable, Sendable, Equatable {
    /// The environment variable that names the host file.
    package static let environmentVariable = "AUTHSIM_TEST_HOST"
    package static let formatName = "authsim-test-host"
    /// The version this authsim writes and reads.
    package static let currentVersion = 1

    /// What the host app's delegate does at launch, after `FirebaseApp.configure()`.
    package enum Delegate: String, Codable, Sendable {
        /// Nothing more: the app talks to its project (here the backend plays it), and proves itself
        /// by silent push or reCAPTCHA as on a phone. For suites written against a real project.
        case configures
        /// `Auth.auth().useEmulator(withHost:port:)` as well, which on iOS also turns app
        /// verification off (Auth.swift 1427–1438). For suites written against the Auth Emulator.
        case usesEmulator
    }

    /// A host and port.
    package struct Address: Codable, Sendable, Equatable {
        package var host: String
        package var port: Int
        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    package var format = TestHost.formatName
    package var version = TestHost.currentVersion
    /// The authsim that wrote the file.
    package var writtenBy = AuthsimVersion.current
    /// The host app's folder, as in `Payload/<Name>.app/`: `Info.plist`, `GoogleService-Info.plist`,
    /// and `embedded.mobileprovision` for a device build.
    package var app: String
    /// Where the app's Firebase requests go.
    package var backend: Address
    package var delegate: Delegate
    /// The device gateway the host app's device joins to get an APNs token and its pushes.
    package var deviceGateway: Address?
    /// The APNs environment the app's build registers in (`sandbox` for an `aps-environment` of
    /// `development`, `production`); nil when the build has no `aps-environment` entitlement, and
    /// registration fails as iOS fails it.
    package var apnsEnvironment: String?
    /// A CA the device trusts, as a profile installed on a test device: the backend's reCAPTCHA
    /// page is HTTPS under it.
    package var caFile: String?

    package init(app: String, backend: Address, delegate: Delegate, deviceGateway: Address? = nil, apnsEnvironment: String? = nil,
                 caFile: String? = nil) {
        self.app = app
        self.backend = backend
        self.delegate = delegate
        self.deviceGateway = deviceGateway
        self.apnsEnvironment = apnsEnvironment
        self.caFile = caFile
    }

    /// Reads and checks a host file.
    package static func read(_ file: URL) throws(TestHostError) -> TestHost {
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw TestHostError(.unreadable, "cannot read the test host file \(file.path): \(error.localizedDescription)")
        }
        struct Header: Decodable {
            var format: String?
            var version: Int?
            var writtenBy: String?
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: data), header.format == formatName, let version = header.version else {
            throw TestHostError(.notAHostFile, "\(file.path) is not an authsim test host file (a JSON object with \"format\": \"\(formatName)\")")
        }
        guard version <= currentVersion else {
            throw TestHostError(.newerVersion, """
                \(file.path) is a test host of version \(version) (written by authsim \(header.writtenBy ?? "?")); this authsim \
                (\(AuthsimVersion.current)) reads version \(currentVersion): run the tests with the authsim that ran `authsim exec`
                """)
        }
        do { return try JSONDecoder().decode(TestHost.self, from: data) } catch {
            throw TestHostError(.notAHostFile, "\(file.path): \(error)")
        }
    }

    /// Writes the file whole, readable by its user only.
    package func write(to file: URL) throws(FileStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let bytes = try? encoder.encode(self) else { throw FileStoreError(.write, "cannot encode the test host") }
        try PrivateFile.replace(file, with: bytes)
    }

    // MARK: Launching

    /// The process the environment's host file describes, launched on first use; nil when the
    /// environment names none. A host file that cannot be read stops the program saying why, as a
    /// test host app that fails to launch stops the run on a device.
    static let launched: AppProcess? = {
        guard let path = ProcessInfo.processInfo.environment[environmentVariable], !path.isEmpty else { return nil }
        do throws(TestHostError) {
            return try read(URL(fileURLWithPath: path)).launch()
        } catch {
            fatalError("authsim: the test host named by \(environmentVariable) did not launch: \(error.message)")
        }
    }()

    /// Launches the host app: its process installed for every task, and `FirebaseApp.configure()`
    /// as its delegate calls it.
    package func launch() throws(TestHostError) -> AppProcess {
        let folder = URL(fileURLWithPath: app)
        let info: AppInfo
        do { info = try AppInfo(contentsOf: folder.appendingPathComponent("Info.plist")) } catch {
            throw TestHostError(.badApp, "the host app \(app): \(error.message)")
        }
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("GoogleService-Info.plist").path) else {
            throw TestHostError(.badApp, "the host app \(app) has no GoogleService-Info.plist")
        }
        var transport = SocketTransport()
        if let caFile {
            guard let pem = try? String(contentsOfFile: caFile, encoding: .utf8) else {
                throw TestHostError(.unreadable, "cannot read the CA the device trusts, \(caFile)")
            }
            transport = SocketTransport(trustingCAPEM: pem)
        }
        let profile = folder.appendingPathComponent("embedded.mobileprovision")
        var configuration = AppHost.Configuration(bundleID: info.bundleID, urlSchemes: info.urlSchemes,
                                                  provisioningProfile: FileManager.default.fileExists(atPath: profile.path) ? profile : nil)
        configuration.runsUnderXCTest = true
        let host = AppHost(configuration, transport: transport)
        if let gateway = deviceGateway {
            let device = GatewayDevice(gateway: "\(gateway.host.contains(":") ? "[\(gateway.host)]" : gateway.host):\(gateway.port)",
                                       environment: apnsEnvironment, bundleID: info.bundleID, transport: transport)
            host.setRegistrar { [weak host] in
                guard let host else { return nil }
                return await device.registration(for: host)
            }
        }
        let process = AppProcess(host: host, bundle: folder,
                                 backend: AppProcess.Backend(host: backend.host, port: backend.port, delegateUsesEmulator: delegate == .usesEmulator))
        process.install()
        FirebaseApp.configure()
        return process
    }
}

/// The host app's device, linked to push-receiver's device gateway: the app's first
/// `registerForRemoteNotifications()` gets its token there, once, and from then on the token's
/// pushes reach the app's delegate (Auth's interceptor among them), as on a phone.
final class GatewayDevice: Sendable {
    let gateway: String
    let environment: String?
    let bundleID: String
    private let transport: SocketTransport
    private let joined = Mutex<Task<AppHost.RemoteNotificationRegistration, Never>?>(nil)
    /// The notification stream, open for the life of the process.
    private let stream = Mutex<(any LineStreaming)?>(nil)

    init(gateway: String, environment: String?, bundleID: String, transport: SocketTransport) {
        self.transport = transport
        self.gateway = gateway
        self.environment = environment
        self.bundleID = bundleID
    }

    /// The outcome of the device's registration, the same for every call.
    func registration(for host: AppHost) async -> AppHost.RemoteNotificationRegistration {
        let task = joined.withLock { joined in
            if let task = joined { return task }
            let task = Task { await join(host) }
            joined = task
            return task
        }
        return await task.value
    }

    private func join(_ host: AppHost) async -> AppHost.RemoteNotificationRegistration {
        // iOS's answer to a build signed without the Push Notifications capability.
        guard let environment else { return .failed("no valid \u{201C}aps-environment\u{201D} entitlement string found for application") }
        let bundleID = bundleID
        do throws(GatewayLinkError) {
            let token = try await GatewayClient.register(gateway: gateway, environment: environment, bundleID: bundleID, transport: transport)
            let opened = try await GatewayClient.connect(gateway: gateway, token: token, environment: environment, transport: transport) { [weak host] push in
                guard push.bundleID == bundleID, let payload = try? JSONEncoder().encode(push.payload) else { return }
                host?.deliverRemoteNotification(Array(payload))
            }
            stream.withLock { $0 = opened }
            guard let bytes = Hex.decode(token) else { return .failed("the device gateway gave \(token), not a device token") }
            return .token(Data(bytes))
        } catch {
            return .failed("the test host's device could not join the device gateway: \(error.message)")
        }
    }
}

/// Why the test host did not launch.
package struct TestHostError: CodedError {
    package enum Code: String, Sendable {
        case unreadable, notAHostFile, newerVersion, badApp
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
