import Foundation
import HTTPTransport
import Logging
import Synchronization
import Utilities

/// The app around Firebase, as the SDK sees it on a device: bundle ID, the URL schemes in
/// `Info.plist`, the provisioning profile it was signed with, whether it runs in a simulator, the
/// app delegate (and whether it forwards notifications and URLs to Auth when swizzling is off),
/// `UserDefaults`, and the clock every timeout comes from.
public final class AppHost: Sendable {
    /// The app as built (``Configuration``); the properties below read it.
    package let configuration: Configuration
    package var bundleID: String { configuration.bundleID }
    /// `CFBundleURLTypes` → `CFBundleURLSchemes`.
    package var urlSchemes: [String] { configuration.urlSchemes }
    package var isSimulator: Bool { configuration.isSimulator }
    /// Whether the process runs an XCTest suite (`XCTestConfigurationFilePath` in its environment).
    package var runsUnderXCTest: Bool { configuration.runsUnderXCTest }
    /// `embedded.mobileprovision`, if the build has one.
    package var provisioningProfile: URL? { configuration.provisioningProfile }
    /// With swizzling off, the delegate must pass remote notifications to `Auth.canHandleNotification`.
    package var forwardsNotifications: Bool { configuration.forwardsNotifications }
    /// …and opened URLs to `Auth.canHandle(_:)`.
    package var forwardsURLs: Bool { configuration.forwardsURLs }
    package let userDefaults: UserDefaultsStore
    /// The app's keychain: where `Auth` keeps the app credential, pending receipts and the user.
    package let keychain: Keychain
    /// The device's keychain items in access groups, shared by the apps of a team that have a
    /// group in ``keychainAccessGroups``: two apps given the same one share them, as on a device.
    package let sharedKeychain: Keychain
    /// The `keychain-access-groups` entitlement: the groups whose items this app may read and write.
    package let keychainAccessGroups: [String]

    /// The shared keychain, for an item in `group`; a group the app is not entitled to is
    /// `errSecMissingEntitlement` (-34018), as the Security framework answers it.
    package func sharedKeychain(for group: String, function: String) throws(KeychainError) -> Keychain {
        guard keychainAccessGroups.contains(group) else {
            throw KeychainError("\(function) (-34018): errSecMissingEntitlement: the app's keychain-access-groups entitlement (\(keychainAccessGroups.isEmpty ? "none" : keychainAccessGroups.joined(separator: ", "))) does not include \(group)")
        }
        return sharedKeychain
    }
    /// The RecaptchaEnterprise SDK, if the app links it (SMS defense in AUDIT or ENFORCE needs it).
    package let recaptchaEnterprise: RecaptchaEnterpriseSDK?
    /// `CFBundleShortVersionString`, as GTMSessionFetcher puts it in the user agent.
    package var appVersion: String { configuration.appVersion }
    /// The device as GTMSessionFetcher's `GTMFetcherSystemVersionString` names it (`iPhone/18.1 hw/iPhone17_3`).
    package let systemVersion: String
    package let clock: any Clock<Duration>
    /// `Bundle.main.preferredLocalizations`: the first goes out as `Accept-Language`.
    package var preferredLocalizations: [String] { configuration.preferredLocalizations }
    /// `Locale.preferredLanguages`: the device's languages (Settings → General → Language & Region),
    /// which `Auth.useAppLanguage()` reads.
    package var preferredLanguages: [String] { configuration.preferredLanguages }
    /// The device's wall clock: when ID tokens expire (the SDK compares against `Date()`).
    package let wallClock: any WallClock
    /// The app's log: what its `Auth` did that a user debugging the app wants to see (why app
    /// verification fell back to reCAPTCHA, what the backend refused). Silent by default.
    package let logger: Logger
    /// The device's network, as the app's `Auth` and its web views use it: the transport given
    /// (one shared by every app a simulation hosts), or one of the app's own, made on first use.
    package var transport: any HTTPTransport {
        ownTransport.withLock { own in
            if let own { return own }
            let made = SocketTransport()
            own = made
            return made
        }
    }
    private let ownTransport: Mutex<(any HTTPTransport)?>
    /// The app-delegate interceptors (the app's `Auth`s), weakly: one nobody holds is gone, and no
    /// longer gets notifications.
    private let interceptors = Mutex<[WeakInterceptor]>([])
    /// Answers the app is reading that a push may follow, and the pushes held until it has read them.
    let pushOrder = Mutex(PushOrder())

    /// The app `configuration` describes, running with these defaults, keychain, clocks, network and log.
    package init(_ configuration: Configuration, userDefaults: UserDefaultsStore = UserDefaultsStore(), keychain: Keychain = Keychain(),
                sharedKeychain: Keychain = Keychain(), keychainAccessGroups: [String] = [], recaptchaEnterprise: RecaptchaEnterpriseSDK? = nil, clock: any Clock<Duration> = ContinuousClock(),
                wallClock: any WallClock = SystemWallClock(), transport: (any HTTPTransport)? = nil,
                logger: Logger = Logger(label: "authsim.app", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.configuration = configuration
        self.userDefaults = userDefaults
        self.keychain = keychain
        self.sharedKeychain = sharedKeychain
        self.keychainAccessGroups = keychainAccessGroups
        self.recaptchaEnterprise = recaptchaEnterprise
        self.systemVersion = configuration.systemVersion ?? (configuration.isSimulator ? "iPhone/18.1 hw/sim" : "iPhone/18.1 hw/iPhone17_3")
        self.clock = clock
        self.wallClock = wallClock
        ownTransport = Mutex(transport)
        self.logger = logger
    }

    /// The app as built, as the OS and the SDK read it: its bundle ID and `Info.plist`, its
    /// provisioning profile, the device it runs on, and whether its delegate forwards
    /// notifications and URLs to Auth (with swizzling off).
    package struct Configuration: Sendable, Hashable {
        package var bundleID: String
        /// `CFBundleURLTypes` → `CFBundleURLSchemes`.
        package var urlSchemes: [String]
        package var isSimulator: Bool
        /// `embedded.mobileprovision`, if the build has one.
        package var provisioningProfile: URL?
        package var forwardsNotifications: Bool
        package var forwardsURLs: Bool
        /// `CFBundleShortVersionString`.
        package var appVersion: String
        /// The device as GTMSessionFetcher names it (nil: an iPhone 16 Pro on iOS 18.1, or a simulator).
        package var systemVersion: String?
        /// `Bundle.main.preferredLocalizations`.
        package var preferredLocalizations: [String]
        /// `Locale.preferredLanguages`.
        package var preferredLanguages: [String]
        /// Xcode runs a test target in this app's process: `XCTestConfigurationFilePath` is in its
        /// environment (the SDK then takes the silent-push path even on a simulator).
        package var runsUnderXCTest = false

        package init(bundleID: String, urlSchemes: [String], isSimulator: Bool = false, provisioningProfile: URL? = nil,
                    forwardsNotifications: Bool = true, forwardsURLs: Bool = true, appVersion: String = "1.0", systemVersion: String? = nil,
                    preferredLocalizations: [String] = ["en"], preferredLanguages: [String] = ["en-US"]) {
            self.bundleID = bundleID
            self.urlSchemes = urlSchemes
            self.isSimulator = isSimulator
            self.provisioningProfile = provisioningProfile
            self.forwardsNotifications = forwardsNotifications
            self.forwardsURLs = forwardsURLs
            self.appVersion = appVersion
            self.systemVersion = systemVersion
            self.preferredLocalizations = preferredLocalizations
            self.preferredLanguages = preferredLanguages
        }
    }

    /// GoogleUtilities' `GULAppDelegateSwizzler.registerAppDelegateInterceptor(_:)`, as each `Auth`
    /// calls it when made: from now on the delegate's calls reach `interceptor` too. Not retained.
    package func registerAppDelegateInterceptor(_ interceptor: any AppDelegateInterceptor) {
        interceptors.withLock { interceptors in
            interceptors.removeAll { $0.interceptor == nil }
            interceptors.append(WeakInterceptor(interceptor: interceptor))
        }
    }

    /// The live interceptors, in the order they registered.
    private var liveInterceptors: [any AppDelegateInterceptor] { interceptors.withLock { $0.compactMap(\.interceptor) } }

    /// The OS hands the app a URL opened with its scheme (`application(_:open:options:)` or the
    /// scene delegate's `openURLContexts`). A delegate that forwards gives it to Auth.
    /// - Returns: whether Auth handled it.
    @discardableResult
    package func open(_ url: URL) -> Bool { handleOpen(url).isHandled }

    /// `open(_:)` with the reason a URL was not handled (for the redirect interceptor and timelines).
    package func handleOpen(_ url: URL) -> URLHandling {
        if isTerminated {
            return .refused(URLRefusal(.noActivePresentation, "the app's process was killed: nothing waits for this redirect"))
        }
        guard forwardsURLs else {
            return .refused(URLRefusal(.notForwarded, """
                the app delegate does not pass opened URLs to Auth: with swizzling off, call \
                Auth.auth().canHandle(url) from application(_:open:options:) (or the scene delegate's scene(_:openURLContexts:))
                """))
        }
        var first: URLHandling?
        for interceptor in liveInterceptors {
            let handling = interceptor.handle(url)
            if handling.isHandled { return handling }
            first = first ?? handling
        }
        return first ?? .refused(URLRefusal(.noActivePresentation, "no Firebase app is configured in this app"))
    }

    /// The OS hands a remote notification to the app delegate
    /// (`application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`). A delegate that
    /// forwards gives it to Auth; one that does not (swizzling off, forwarding forgotten) drops it.
    /// - Returns: whether Auth handled it.
    @discardableResult
    package func didReceiveRemoteNotification(_ userInfo: [AnyHashable: Any]) -> Bool {
        guard forwardsNotifications, !isTerminated else { return false }
        for interceptor in liveInterceptors where interceptor.canHandleNotification(userInfo) { return true }
        return false
    }

    // MARK: The process

    private let terminated = Mutex(false)

    /// Whether iOS killed the app's process.
    package var isTerminated: Bool { terminated.withLock { $0 } }

    /// iOS kills the app's process (memory pressure, a crash, the user swiping it away): its
    /// `Auth`s stop where they are (every wait ends, nothing more is sent) and it takes no more
    /// notifications or URLs. What it wrote to the keychain and UserDefaults stays for the next
    /// process, which the device network starts again on the same device (`DeviceNetwork.relaunch`).
    package func terminate() {
        let wasRunning = terminated.withLock { terminated in
            defer { terminated = true }
            return !terminated
        }
        // Taken out under the lock, let go after it: their deinits run outside it.
        let released = kept.withLock { kept in
            defer { kept = [:] }
            return kept
        }
        _ = consume released
        guard wasRunning else { return }
        for interceptor in liveInterceptors { interceptor.processWasKilled() }
        releaseHeldPushes()  // they reach a dead process: the delegate takes none
    }

    /// What the process keeps until it ends: the Firebase apps its code made (the SDK's registry
    /// keeps each until `delete()`), and through them their `Auth`s and users. Let go when the
    /// process is killed (``terminate()``), as its memory is.
    private let kept = Mutex<[ObjectIdentifier: any AnyObject & Sendable]>([:])

    /// Keeps `object` for as long as the process runs (a `FirebaseApp` made for this app).
    package func keepWhileRunning(_ object: some AnyObject & Sendable) {
        guard !isTerminated else { return }
        kept.withLock { $0[ObjectIdentifier(object)] = object }
    }

    /// No longer keeps `object` (a `FirebaseApp` deleted).
    package func stopKeeping(_ object: some AnyObject & Sendable) {
        _ = kept.withLock { $0.removeValue(forKey: ObjectIdentifier(object)) }
    }

    // MARK: Registering for remote notifications

    /// What `registerForRemoteNotifications()` gets from the OS: the device's token, or why
    /// registration failed (no `aps-environment` entitlement, …).
    package enum RemoteNotificationRegistration: Sendable {
        case token(Data)
        case failed(String)
    }

    /// The device's side of `registerForRemoteNotifications()`, set by the device network that
    /// installed the app: asks APNs and answers, or never answers (`nil`: no network to APNs).
    package typealias Registrar = @Sendable () async -> RemoteNotificationRegistration?
    /// The app delegate's `didRegisterForRemoteNotificationsWithDeviceToken` and
    /// `didFailToRegisterForRemoteNotificationsWithError`.
    package typealias RegistrationDelegate = @Sendable (RemoteNotificationRegistration) -> Void

    private let registration = Mutex<(registrar: Registrar?, delegate: RegistrationDelegate?)>((nil, nil))

    /// Installs the device's side of registration (done by the device network).
    package func setRegistrar(_ registrar: @escaping Registrar) {
        registration.withLock { $0.registrar = registrar }
    }

    /// Installs the app delegate's two registration callbacks. Without one, the SDK's app-delegate
    /// proxy (swizzling on) passes the outcome to each `Auth`: the token as `.unknown`, its type
    /// from the provisioning profile (Auth.swift 47–57).
    package func setRegistrationDelegate(_ delegate: @escaping RegistrationDelegate) {
        registration.withLock { $0.delegate = delegate }
    }

    /// `UIApplication.registerForRemoteNotifications()`: asks the device for the app's token and
    /// hands the outcome to the app delegate, later, as iOS does. An app on no device (nothing
    /// installed its registrar) gets a failure, as a simulator without push support once did.
    @discardableResult
    package func registerForRemoteNotifications() -> Task<Void, Never> {
        let (registrar, delegate) = registration.withLock { ($0.registrar, $0.delegate) }
        return Task { [weak self] in
            let outcome: RemoteNotificationRegistration?
            if let registrar { outcome = await registrar() } else { outcome = .failed("the app is on no device: nothing can issue an APNs token") }
            guard let self, let outcome else { return }
            if let delegate {
                delegate(outcome)
                return
            }
            for interceptor in self.liveInterceptors {
                switch outcome {
                case .token(let data): interceptor.application(self, didRegisterForRemoteNotificationsWithDeviceToken: data)
                case .failed(let reason): interceptor.application(self, didFailToRegisterForRemoteNotificationsWithError: RegistrationFailure(reason))
                }
            }
        }
    }
}

/// Why the OS could not register the app for remote notifications (iOS's `NSError`, here a message).
package struct RegistrationFailure: Error, LocalizedError, Sendable {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
    package var errorDescription: String? { reason }
}

/// An interceptor the host does not keep alive (GoogleUtilities: "The interceptor is NOT retained").
private struct WeakInterceptor: Sendable {
    weak let interceptor: (any AppDelegateInterceptor)?
}
