import APNsReceiver
import APNsSender
import APNsWire
import AuthBackend
import FirebaseAuthCore
import Foundation
import LocalPKI

/// A Firebase app on a simulated device, as the OS sees it: its pushes go to the app delegate.
public struct HostedApp: SimulatedApp {
    public let host: AppHost
    public var bundleID: String { host.bundleID }
    public init(host: AppHost) { self.host = host }

    public func didReceiveRemoteNotification(_ payload: [UInt8], push: AcceptedPush) async {
        guard let userInfo = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] else { return }
        host.didReceiveRemoteNotification(userInfo)
    }
}

/// How a simulated app is built and behaves.
public struct AppProfile: Sendable {
    public var bundleID = "com.example.authsim"
    public var googleAppID = "1:123456789012:ios:a1b2c3d4e5f60718"
    /// The URL schemes in Info.plist (default: the encoded app ID, as the guide says).
    public var urlSchemes: [String]? = nil
    /// The APNs environment its build gets tokens from (debug builds: sandbox).
    public var buildEnvironment: APNsEnvironment = .sandbox
    /// The type the app's code passes to `setAPNSToken(_:type:)`.
    public var declaredTokenType: AuthAPNSTokenType = .sandbox
    public var isSimulator = false
    public var provisioningProfile: URL? = nil
    public var forwardsNotifications = true
    public var languageCode: String? = nil
    public var appVerificationDisabledForTesting = false
    public init() {}
}

/// Every part of silent-push phone sign-in on loopback: push-receiver, the backend (over HTTP,
/// sending its pushes with apns-sender's client), and apps on devices whose delegate feeds the
/// auth core.
public final class PhoneAuthWorld: Sendable {
    public let channel: LocalAPNsChannel
    public let backend: BackendServer
    public let toolkit: IdentityToolkit
    private let pusher: APNsPusher

    private init(channel: LocalAPNsChannel, backend: BackendServer, toolkit: IdentityToolkit, pusher: APNsPusher) {
        self.channel = channel
        self.backend = backend
        self.toolkit = toolkit
        self.pusher = pusher
    }

    public static func start(certs: URL, state: URL, configuration: BackendConfiguration = BackendConfiguration(),
                             backendClock: any WallClock = SystemWallClock(), pushLatency: Duration = .milliseconds(50),
                             receiverObserver: (@Sendable (ReceiverEvent) -> Void)? = nil,
                             backendObserver: (@Sendable (BackendEvent) -> Void)? = nil) async throws -> PhoneAuthWorld {
        let channel = try await LocalAPNsChannel.start(certs: certs, state: state, observer: receiverObserver,
                                                       deliveryLatency: pushLatency)
        let pusher = APNsPusher(sandbox: try channel.client(environment: .sandbox),
                                production: try channel.client(environment: .production))
        let toolkit = try IdentityToolkit(configuration: configuration, pusher: pusher, clock: backendClock,
                                          usersFile: state.appendingPathComponent("users.json"), observer: backendObserver)
        let backend = try await BackendServer.start(toolkit: toolkit)
        return PhoneAuthWorld(channel: channel, backend: backend, toolkit: toolkit, pusher: pusher)
    }

    /// An app installed on a new device: registers for remote notifications (APNs issues a token in
    /// the build's environment) and passes the token to Auth with the type its code declares.
    public func install(_ profile: AppProfile, clock: any Clock<Duration> = ContinuousClock(),
                        userDefaults: UserDefaultsStore = UserDefaultsStore(), setToken: Bool = true) async throws -> (Auth, DeviceToken) {
        var options = FirebaseOptions(googleAppID: profile.googleAppID, gcmSenderID: "123456789012")
        options.apiKey = toolkit.configuration.apiKey
        options.projectID = toolkit.configuration.projectID
        options.bundleID = profile.bundleID
        let host = AppHost(bundleID: profile.bundleID, urlSchemes: profile.urlSchemes ?? [options.encodedAppIDScheme],
                           isSimulator: profile.isSimulator, provisioningProfile: profile.provisioningProfile,
                           forwardsNotifications: profile.forwardsNotifications, userDefaults: userDefaults, clock: clock)
        let auth = Auth.auth(app: FirebaseApp(name: "app-\(UUID().uuidString.prefix(8))", options: options, host: host))
        auth.useEmulator(withHost: backend.host, port: backend.port)
        auth.languageCode = profile.languageCode
        auth.settings.isAppVerificationDisabledForTesting = profile.appVerificationDisabledForTesting
        let token = DeviceToken.random()
        try channel.register(token, environment: profile.buildEnvironment, bundleID: profile.bundleID)
        await channel.hub.install(HostedApp(host: host), token: token, environment: profile.buildEnvironment)
        if setToken { auth.setAPNSToken(Data(token.bytes), type: profile.declaredTokenType) }
        return (auth, token)
    }

    /// The last code texted to `phoneNumber`.
    public func lastCode(for phoneNumber: String) async -> String? {
        await toolkit.messages.last { $0.phoneNumber == phoneNumber }?.code
    }

    public func shutdown() async {
        await backend.shutdown()
        await pusher.shutdown()
        await channel.shutdown()
    }
}
