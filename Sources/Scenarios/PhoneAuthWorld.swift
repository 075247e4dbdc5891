import APNsReceiver
import APNsSender
import APNsWire
import AuthBackend
import DeviceLink
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import HTTPTransport
import NIOHTTPTransport
import IdentityToolkitAPI
import Lifecycle
import LocalPKI
import RedirectInterceptor
import Synchronization
import Utilities

/// Every part of silent-push phone sign-in on loopback: push-receiver, the backend (over HTTP,
/// sending its pushes with apns-sender's client), and apps on devices whose delegate feeds the
/// auth core. The receiver and backend run in this process (``start(certs:state:configuration:backendClock:pushLatency:receiverObserver:backendObserver:)``)
/// or in others (``connect(backend:devices:apiKey:projectID:)``).
package final class PhoneAuthWorld: Sendable {
    /// The receiver, when it runs in this process.
    package let channel: LocalAPNsChannel?
    /// The backend's state, when it runs in this process.
    package let toolkit: IdentityToolkit?
    package let backendHost: String
    package let backendPort: Int
    package let apiKey: String
    package let projectID: String
    package let devices: any DeviceNetwork
    /// The simulated devices' network: every app this world hosts talks HTTP through it.
    package let transport: NIOHTTP1Transport
    private let listeners = Mutex<[SchemeListener]>([])
    /// The world's parts, each added after those it depends on: they stop in reverse, the devices first.
    private let parts: PartGroup
    /// The clock of the apps this world installs, unless ``install(_:clock:wallClock:userDefaults:keychain:appName:device:setToken:onURL:onPush:onRegistration:)``
    /// is given one: every SDK timeout (the APNs token's 5 s, the push's `suggestedTimeout`) runs on it.
    package let appClock: any Clock<Duration>
    /// The deployment's admin token, for the emulator routes of a backend beyond loopback.
    private let adminToken: String?
    /// Where the provisioning profiles made for the apps it installs go (removed at shutdown).
    let profilesFolder = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-profiles-\(UUID().uuidString)")

    private init(channel: LocalAPNsChannel?, toolkit: IdentityToolkit?, backendHost: String, backendPort: Int, apiKey: String,
                 projectID: String, devices: any DeviceNetwork, transport: NIOHTTP1Transport, parts: PartGroup,
                 appClock: any Clock<Duration>, adminToken: String? = nil) {
        self.adminToken = adminToken
        self.channel = channel
        self.toolkit = toolkit
        self.backendHost = backendHost
        self.backendPort = backendPort
        self.apiKey = apiKey
        self.projectID = projectID
        self.devices = devices
        self.transport = transport
        self.parts = parts
        self.appClock = appClock
    }

    /// The devices' network, trusting the local CA as a simulator does once the developer installs
    /// it (the reCAPTCHA page is at https://<backend>/__/auth/handler, as the SDK opens it with
    /// useEmulator), and the devices on it: the last parts of the world's group, the first to stop.
    private static func addDevices(_ devices: any DeviceNetwork, caPEM: String?, to parts: PartGroup) async -> NIOHTTP1Transport {
        let transport = caPEM.map { NIOHTTP1Transport(trustingCAPEM: $0) } ?? NIOHTTP1Transport()
        await parts.add(ShutdownStep("the devices' network") { transport.shutdown() })
        await parts.add(devices)
        return transport
    }

    /// Everything in this process.
    ///   - providerKey: what the backend signs its provider tokens with (default: the `Certs/` key).
    ///   - providerClock: the clock of the backend's APNs client (its tokens' `iat`).
    ///   - appClock: the apps' clock (see ``appClock``). A test gives a `ManualClock` it never
    ///     advances unless it wants a timeout: the SDK's waits then end by their events alone,
    ///     however busy the machine (a push 2 s late on a loaded CI box must not turn into a
    ///     reCAPTCHA fallback that no device would show).
    ///   - pushClock: what APNs' latency is waited on (default: the wall clock); a scenario gives
    ///     its `WaitingClock`'s passive view, the apps its clock (see ``WaitingClock``).
    package static func start(certs: URL, state: URL, configuration: BackendConfiguration = BackendConfiguration(),
                             backendClock: any WallClock = SystemWallClock(), pushLatency: Duration = .milliseconds(250),
                             providerKey: APNsAuthKey? = nil, providerClock: any WallClock = SystemWallClock(),
                             appClock: any Clock<Duration> = ContinuousClock(), pushClock: (any Clock<Duration>)? = nil,
                             receiverObserver: (@Sendable (ReceiverEvent) -> Void)? = nil,
                             backendObserver: (@Sendable (BackendEvent, SignInID?) -> Void)? = nil) async throws -> PhoneAuthWorld {
        // Each part joins the world's group as it starts; a part that fails to start stops the
        // group, so a failed start leaves no receiver, client or server running.
        let parts = PartGroup()
        do {
            let channel = try await LocalAPNsChannel.start(certs: certs, state: state, observer: receiverObserver,
                                                           deliveryLatency: pushLatency, deliveryClock: pushClock)
            await parts.add(channel)
            let sandbox = try channel.client(environment: .sandbox, key: providerKey, clock: providerClock)
            await parts.add(sandbox)
            let production = try channel.client(environment: .production, key: providerKey, clock: providerClock)
            await parts.add(production)
            let pusher = APNsPusher(sandbox: sandbox, production: production)
            let toolkit = try IdentityToolkit(configuration: configuration, pusher: pusher, clock: backendClock,
                                              stateDirectory: state.appendingPathComponent("backend"), observer: backendObserver)
            let credentials = channel.credentials
            let server = try await BackendServer.start(toolkit: toolkit, tls: (credentials.serverCertificatePEM, credentials.serverKeyPEM),
                                                       hosting: .group(parts))
            let devices = LocalDeviceNetwork(registry: channel.registry, hub: channel.hub)
            let transport = await addDevices(devices, caPEM: credentials.caCertificatePEM, to: parts)
            return PhoneAuthWorld(channel: channel, toolkit: toolkit, backendHost: server.host, backendPort: server.port,
                                  apiKey: configuration.apiKey, projectID: configuration.projectID,
                                  devices: devices, transport: transport, parts: parts, appClock: appClock)
        } catch {
            try? await parts.shutdown()
            throw error
        }
    }

    /// A backend and a push-receiver running as other processes: `backend` is the backend's
    /// `host:port`, `devices` the receiver's device gateway.
    /// - Parameter caPEM: the local CA the devices trust (the backend's HTTPS reCAPTCHA page).
    /// - Parameter adminToken: the deployment's admin token (a backend beyond loopback), for its
    ///   SMS outbox and silent-push results.
    package static func connect(backendHost: String, backendPort: Int, devices: RemoteDeviceNetwork,
                               apiKey: String = BackendConfiguration().apiKey,
                               projectID: String = BackendConfiguration().projectID, caPEM: String? = nil,
                               adminToken: String? = nil) async -> PhoneAuthWorld {
        let parts = PartGroup()
        let transport = await addDevices(devices, caPEM: caPEM, to: parts)
        return PhoneAuthWorld(channel: nil, toolkit: nil, backendHost: backendHost, backendPort: backendPort, apiKey: apiKey,
                              projectID: projectID, devices: devices, transport: transport, parts: parts, appClock: ContinuousClock(),
                              adminToken: adminToken)
    }

    /// `http://host:port` of the backend.
    package var backendURL: String { "http://\(backendHost):\(backendPort)" }

    /// An app installed on a new device, whose registration for remote notifications is answered
    /// as `profile.apnsRegistration` says (APNs issues a token in the build's environment, which
    /// the app delegate passes to Auth with the type its code declares). With `setToken` the app
    /// registers at launch and the token is set before this returns; without it the app never
    /// registers, and the SDK asks for registration when it needs the token (row 11).
    /// `onRegistration` hears every answer the app delegate gets.
    ///
    /// An app killed and started again is installed once more with the same `userDefaults`,
    /// `keychain` and `appName`, on the same `device` (the token the first install returned): its
    /// pushes go to the new process, whose `Auth` finds what the old one kept in the keychain.
    package func install(_ profile: AppProfile, clock: (any Clock<Duration>)? = nil,
                        wallClock: any WallClock = SystemWallClock(), userDefaults: UserDefaultsStore = UserDefaultsStore(), keychain: Keychain = Keychain(),
                        appName: String? = nil, device: DeviceToken? = nil, setToken: Bool = true,
                        onURL: @escaping @Sendable (URL, URLHandling) -> Void = { _, _ in },
                        onPush: @escaping @Sendable (DeviceToken, Bool) -> Void = { _, _ in },
                        onRegistration: @escaping @Sendable (AppHost.RemoteNotificationRegistration) -> Void = { _ in }) async throws -> (Auth, DeviceToken) {
        let clock = clock ?? appClock
        let profile = try profile.withProvisioningProfileMade(in: profilesFolder, credentials: channel?.credentials)
        let recaptchaEnterprise = profile.recaptchaEnterpriseSDK(service: backendURL)
        let options = profile.bundle?.options ?? self.options(for: profile)
        let host = AppHost(profile.host(options: options), userDefaults: userDefaults, keychain: keychain, recaptchaEnterprise: recaptchaEnterprise,
                           clock: clock, wallClock: wallClock, transport: transport)
        let auth = self.auth(options: options, host: host, appName: appName)
        auth.languageCode = profile.languageCode
        auth.settings?.isAppVerificationDisabledForTesting = profile.appVerificationDisabledForTesting
        if let directory = profile.schemeDirectory {
            let listener = try await SchemeListener.claim(for: host, directory: directory, onURL: onURL)
            listeners.withLock { $0.append(listener) }
        }
        let token: DeviceToken
        if let device {
            try await devices.relaunch(host, on: device, environment: profile.build.environment, onPush: onPush)
            token = device
        } else {
            token = try await devices.installDevice(for: host, environment: profile.build.environment, onPush: onPush)
        }
        // registerForRemoteNotifications(): the device gives its token again, or the profile's
        // failure; the app delegate (below) passes the outcome to Auth.
        host.answerRegistrations(on: token, with: profile.apnsRegistration.outcome)
        // The app delegate's own call, or the SDK's proxy's (`.unknown`).
        let declared = profile.tokenTypePassed
        let weakAuth = WeakAuth(auth: auth)
        host.setRegistrationDelegate { [weak host] registration in
            guard let auth = weakAuth.auth, let host else { return }
            switch registration {
            case .token(let data): auth.setAPNSToken(data, type: declared)
            case .failed(let reason): auth.application(host, didFailToRegisterForRemoteNotificationsWithError: RegistrationFailure(reason))
            }
            onRegistration(registration)
        }
        if setToken { await host.registerForRemoteNotifications().value }
        return (auth, token)
    }

    /// The `GoogleService-Info.plist` values of `profile`'s app, in this world's project.
    package func options(for profile: AppProfile) -> FirebaseOptions {
        let options = FirebaseOptions(googleAppID: profile.googleAppID, gcmSenderID: "123456789012")
        options.apiKey = apiKey
        options.projectID = projectID
        options.bundleID = profile.bundleID
        return options
    }

    /// A Firebase app of its own for `host`, its Auth talking to this world's backend.
    /// `useEmulator` turns app verification off for testing, as the SDK's does; the world turns
    /// it back on (an app exercising the channel against a local backend must do the same), and
    /// ``install(_:clock:userDefaults:setToken:onURL:onPush:)`` sets it as the profile says.
    /// - Parameter appName: the `FirebaseApp`'s name (the keychain's user item is named after it);
    ///   by default a new one.
    package func auth(options: FirebaseOptions, host: AppHost, appName: String? = nil) -> Auth {
        let auth = Auth.auth(app: FirebaseApp(name: appName ?? "app-\(UUID().uuidString.prefix(8))", options: options, host: host))
        auth.useEmulator(withHost: backendHost, port: backendPort)
        auth.settings?.isAppVerificationDisabledForTesting = false
        return auth
    }

    private var adminHeaders: [(name: String, value: String)] { adminToken.map { [("Authorization", "Bearer \($0)")] } ?? [] }

    /// The last code texted to `phoneNumber` (from the backend's outbox, over HTTP when it runs elsewhere).
    package func lastCode(for phoneNumber: String) async -> String? {
        if let toolkit { return (try? await toolkit.sentMessages())?.last { $0.phoneNumber == phoneNumber }?.code }
        let endpoint = IdentityToolkitEndpoint.emulatorVerificationCodes
        guard let url = endpoint.url(emulator: "\(backendHost):\(backendPort)", apiKey: nil, projectID: projectID),
              let answer = try? await transport.send(TransportRequest(method: endpoint.method.rawValue, url: url, headers: adminHeaders)),
              answer.status == 200,
              let outbox = try? IdentityToolkitJSON.decode(VerificationCodesResponse.self, from: answer.body)
        else { return nil }
        return outbox.verificationCodes.last { $0.phoneNumber == phoneNumber }?.code
    }

    /// What became of the backend's latest silent pushes (verifyClient's), oldest first; `nil`
    /// when the backend cannot be asked (it is not authsim's).
    package func silentPushResults() async -> [SilentPushRecord]? {
        if let toolkit { return try? await toolkit.silentPushResults() }
        guard let url = URL(string: "http://\(backendHost):\(backendPort)/emulator/v1/projects/\(projectID)/silentPushes"),
              let answer = try? await transport.send(TransportRequest(method: "GET", url: url, headers: adminHeaders)), answer.status == 200,
              let list = try? IdentityToolkitJSON.decode(SilentPushesResponse.self, from: answer.body)
        else { return nil }
        return list.silentPushes
    }

    /// Stops the apps' scheme claims, then the parts, the devices first and the receiver last.
    package func shutdown() async {
        for listener in listeners.withLock({ $0 }) { await listener.stop() }
        // The parts' stops do not throw: nothing is lost here.
        try? await parts.shutdown()
        try? FileManager.default.removeItem(at: profilesFolder)
    }
}

extension PhoneAuthWorld {
    /// Tells `timeline` what the backend's silent pushes met (the app cannot see it; the backend
    /// says), each as soon as the backend has it: after each event the run records, and every
    /// `every` between them, the backend is asked for pushes newer than the first `known`, so a
    /// push's answer lands in the timeline beside the app's steps it explains (the backend keeps
    /// it before verifyClient answers), not after the sign-in. Ends when cancelled; returns how
    /// many pushes are now known (``reportSilentPushes(into:after:)`` tells the rest).
    package func followSilentPushes(into timeline: Timeline, after known: Int, every: Duration = .milliseconds(200)) async -> Int {
        var known = known
        var seen = timeline.all.count
        while !Task.isCancelled {
            let count = seen
            _ = await timeline.wait(until: { $0.count > count }, atMost: every)
            if Task.isCancelled { break }
            known = await reportSilentPushes(into: timeline, after: known)
            seen = timeline.all.count
        }
        return known
    }

    /// Tells `timeline` of the backend's silent pushes after the first `known`; returns how many
    /// it knows now.
    @discardableResult
    package func reportSilentPushes(into timeline: Timeline, after known: Int) async -> Int {
        guard let pushes = await silentPushResults(), pushes.count > known else { return known }
        // The backend's own event for each, as a timeline in its process records it.
        for push in pushes.dropFirst(known) { ScenarioRunner.record(push.event, signIn: push.signIn, into: timeline) }
        return pushes.count
    }
}
