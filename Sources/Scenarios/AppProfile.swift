import APNsWire
import DeviceLink
import DeviceOS
import FirebaseCore
import FirebaseAuthCore
import Foundation
import LocalPKI
import RedirectInterceptor

/// The simulated app: how it is built, what its code does, and what happens to it while it runs.
/// The one description of an app, and its defaults: a scenario file's `app` section, `authsim
/// phone`'s options and a test set it; the world installs it on a device (``PhoneAuthWorld/install(_:clock:wallClock:userDefaults:keychain:appName:device:setToken:onURL:onPush:onRegistration:)``),
/// and `AuthsimTesting`'s `Simulation` runs an app's own code in it (there as `SimulatedApp`).
/// Its defaults are an app as the phone-auth guide builds it: a debug build with the
/// development profile Xcode signs it with, its app delegate leaving the token's type to the SDK.
public struct AppProfile: Sendable {
    // MARK: As built

    /// `CFBundleIdentifier` (and `BUNDLE_ID`); the APNs topic of its pushes.
    public var bundleID = SampleApp.defaultBundleID
    /// `GOOGLE_APP_ID`; its encoded form is the reCAPTCHA callback scheme.
    public var googleAppID = SampleApp.defaultGoogleAppID
    /// `CLIENT_ID` in `GoogleService-Info.plist` (nil: a newer plist without it, as the console
    /// writes today).
    public var clientID: String? = nil
    /// `CFBundleURLSchemes` in Info.plist (nil: the encoded app ID, as the guide says to add).
    public var urlSchemes: [String]? = nil
    /// How it was built, which decides the `aps-environment` of the profile made for it and the
    /// APNs environment that issues its tokens (``Build/environment``, on a simulator too: what
    /// the SDK assumes there is its own rule).
    public var build = Build.debug
    /// A simulator build (the SDK takes its tokens as production).
    public var isSimulator = false
    /// The app's process runs an XCTest suite (Xcode's test host): on a simulator the SDK then
    /// tries the silent push rather than going straight to reCAPTCHA.
    package var runsUnderXCTest = false
    /// `embedded.mobileprovision`: by default one made for its build.
    public var provisioningProfile = ProvisioningProfileSource.forBuild
    /// The app's files (`Info.plist`, `GoogleService-Info.plist`, `embedded.mobileprovision`): when
    /// set, the bundle ID, URL schemes, Firebase options and provisioning profile come from them.
    package var bundle: AppBundle? = nil
    /// Whether (and how) the app links the RecaptchaEnterprise SDK (SMS defense in AUDIT or ENFORCE needs it).
    public var recaptchaEnterprise: RecaptchaEnterpriseLinkage = .notLinked

    // MARK: What its code does

    /// What the app delegate's own `didRegisterForRemoteNotificationsWithDeviceToken` passes to
    /// `setAPNSToken(_:type:)`. nil: it does not; the SDK's app-delegate proxy hands the token to
    /// Auth as `.unknown`, and the provisioning profile decides its type.
    public var declaredTokenType: AuthAPNSTokenType? = nil
    /// Whether the delegate passes remote notifications to `Auth.canHandleNotification`.
    public var forwardsNotifications = true
    /// Whether the delegate passes opened URLs to `Auth.canHandle(url)`.
    public var forwardsURLs = true
    /// `Auth.languageCode`: the SMS's language.
    public var languageCode: String? = nil
    /// `auth.settings.isAppVerificationDisabledForTesting`.
    public var appVerificationDisabledForTesting = false
    /// How the app registers for remote notifications, and what the OS answers.
    public var apnsRegistration: APNsRegistration = .atLaunch

    // MARK: What happens to it

    /// The app is killed after the SMS and started again; it restores the verification ID from UserDefaults.
    public var restartAfterSMS = false
    /// iOS kills the app after verifyClient answered and before the push: the push starts it
    /// again, and the user asks for the code once more.
    public var killedBeforePush = false

    // MARK: Where it runs

    /// The reCAPTCHA presenter (nil: the SDK's default, a ``HeadlessPresenter`` handing the redirect to the app).
    public var uiDelegate: (any AuthUIDelegate & Sendable)? = nil
    /// Claim the app's URL schemes here while it runs, so that `redirect-interceptor` can hand it URLs.
    package var schemeDirectory: SchemeDirectory? = nil

    public init() {}

    /// An app as a scenario file describes it when its `app` section is silent (the format's
    /// defaults, Scenarios/README.md): its code declares `.sandbox` itself, and it carries no
    /// provisioning profile.
    public static var scenarioFormat: AppProfile {
        var app = AppProfile()
        app.declaredTokenType = .sandbox
        app.provisioningProfile = .none
        return app
    }

    /// The type the app's token reaches Auth with: the delegate's, or `.unknown` through the SDK's proxy.
    public var tokenTypePassed: AuthAPNSTokenType { declaredTokenType ?? .unknown }

    /// This profile with its provisioning profile made: ``ProvisioningProfileSource/forBuild``
    /// and ``ProvisioningProfileSource/signed(apsEnvironment:)`` become a file in `folder`, signed
    /// with `credentials` (a world's `Certs/`), as Xcode signs the app; a profile of the app's own
    /// files (``bundle``) or none stays as it is.
    package func withProvisioningProfileMade(in folder: URL, credentials: LocalCredentials?) throws -> AppProfile {
        guard bundle == nil else { return self }
        let aps: String
        switch provisioningProfile {
        case .none, .file: return self
        case .forBuild: aps = build.apsEnvironment
        case .signed(let named): aps = named
        }
        guard let credentials else {
            throw AuthError(.internalError, "the app's provisioning profile (aps-environment \(aps)) needs the Certs/ credentials to sign it: give the app one (.file) or none (.none)")
        }
        let file = folder.appendingPathComponent("\(bundleID)-\(aps).mobileprovision")
        if !FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // Atomic: apps installed at once share the file, and one must never read another's
            // half-written profile.
            try ProvisioningProfileFile.make(apsEnvironment: aps, bundleID: bundleID, teamID: credentials.authKey.teamID, credentials: credentials)
                .write(to: file, options: .atomic)
        }
        var made = self
        made.provisioningProfile = .file(file)
        return made
    }

    /// The reCAPTCHA Enterprise SDK the app links, talking to `service` (nil: none linked).
    package func recaptchaEnterpriseSDK(service: String) -> RecaptchaEnterpriseSDK? {
        switch recaptchaEnterprise {
        case .notLinked: nil
        case .linked: RecaptchaEnterpriseSDK(service: service)
        case .noActionClass: RecaptchaEnterpriseSDK(service: service, hasActionClass: false)
        // A port of the loopback range nothing listens on: the SDK's calls fail at once.
        case .unreachable: RecaptchaEnterpriseSDK(service: "http://127.0.0.1:9")
        case .noToken: RecaptchaEnterpriseSDK(service: service, executeGivesToken: false)
        }
    }

    /// The app as the device's OS and the SDK read it (``AppHost``): from its files when it has
    /// some, else from this profile, its URL schemes defaulting to `options`' encoded app ID.
    package func host(options: FirebaseOptions) -> AppHost.Configuration {
        var configuration = if let bundle {
            AppHost.Configuration(bundle: bundle, isSimulator: isSimulator, forwardsNotifications: forwardsNotifications,
                                  forwardsURLs: forwardsURLs)
        } else {
            AppHost.Configuration(bundleID: bundleID, urlSchemes: urlSchemes ?? [options.encodedAppIDScheme], isSimulator: isSimulator,
                                  provisioningProfile: provisioningProfile.file, forwardsNotifications: forwardsNotifications,
                                  forwardsURLs: forwardsURLs)
        }
        configuration.runsUnderXCTest = runsUnderXCTest
        return configuration
    }

    /// How the app was built, which decides its profile's `aps-environment` and so its tokens.
    public enum Build: String, Sendable, Hashable, CaseIterable {
        /// A debug build: `development`, sandbox tokens.
        case debug
        /// A release (TestFlight, App Store, ad hoc) build: `production`, production tokens.
        case release

        /// The APNs environment its profile's `aps-environment` names: the one rule.
        public var environment: APNsEnvironment { self == .debug ? .sandbox : .production }
        /// The `aps-environment` of the profile its build is signed with.
        public var apsEnvironment: String { environment.apsEnvironment }
        /// The build whose tokens `environment` issues.
        public init(environment: APNsEnvironment) { self = environment == .sandbox ? .debug : .release }
    }

    /// Where the app's `embedded.mobileprovision` comes from.
    public enum ProvisioningProfileSource: Sendable, Hashable {
        /// None (a simulator build, or an App Store build: the SDK then takes tokens as production).
        case none
        /// One made for the app's build (``Build/apsEnvironment``), signed with the world's
        /// credentials when the app is installed.
        case forBuild
        /// One made for the app with this `aps-environment` (`development`, `production`) and
        /// signed with the world's credentials when the app is installed.
        case signed(apsEnvironment: String)
        /// This file.
        case file(URL)

        /// The file, once there is one.
        public var file: URL? { if case .file(let url) = self { url } else { nil } }
    }

    /// How the app registers for remote notifications, and what the OS answers.
    public enum APNsRegistration: String, Sendable, CaseIterable {
        /// The app registers at launch; its delegate passes the token to `setAPNSToken(_:type:)`.
        case atLaunch
        /// The app never registers: the SDK does when it needs a token, and the delegate passes it on.
        case whenAuthAsks
        /// The build lacks the `aps-environment` entitlement: registration fails, and the SDK's
        /// app-delegate proxy tells Auth at once.
        case fails
        /// The OS never answers (the device cannot reach APNs): the SDK waits its 5 s.
        case neverAnswers

        /// What the OS answers each registration.
        public var outcome: APNsRegistrationOutcome {
            switch self {
            case .atLaunch, .whenAuthAsks: .token
            case .fails: .fails
            case .neverAnswers: .neverAnswers
            }
        }
    }

    /// How an app carries the RecaptchaEnterprise SDK.
    public enum RecaptchaEnterpriseLinkage: String, Sendable, CaseIterable {
        /// Not in the app (most apps): AUDIT and ENFORCE fail with 17208.
        case notLinked
        /// Linked, and Google's reCAPTCHA service answers it.
        case linked
        /// Linked, but an old version without `RCAAction` (17210).
        case noActionClass
        /// Linked, but Google's reCAPTCHA service cannot be reached: its `fetchClient` fails with
        /// the RecaptchaEnterprise SDK's network error, which FirebaseAuth throws as it is.
        case unreachable
        /// Linked, its client fetched, but `execute` gives no token: FirebaseAuth sends `NO_RECAPTCHA`.
        case noToken
    }

    /// How the OS answers an app's registration for remote notifications (the device's rule).
    public typealias APNsRegistrationOutcome = DeviceLink.APNsRegistrationOutcome

    /// iOS's error for a build signed without the Push Notifications capability.
    public static let noEntitlementError = APNsRegistrationOutcome.noEntitlementError
}
