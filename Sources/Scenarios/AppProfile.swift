import APNsWire
import DeviceLink
import DeviceOS
@_spi(Authsim) import FirebaseCore
@_spi(Authsim) import FirebaseAuthCore
import Foundation
import RedirectInterceptor

/// The simulated app: how it is built, what its code does, and what happens to it while it runs.
/// The one description of an app: a scenario file's `app` section, `authsim phone`'s options and a
/// test set it, and the world installs it on a device (``PhoneAuthWorld/install(_:clock:wallClock:userDefaults:keychain:appName:device:setToken:onURL:onPush:onRegistration:)``).
public struct AppProfile: Sendable {
    // MARK: As built

    public var bundleID = SampleApp.defaultBundleID
    public var googleAppID = SampleApp.defaultGoogleAppID
    /// The URL schemes in Info.plist (nil: the encoded app ID, as the guide says).
    public var urlSchemes: [String]? = nil
    /// The APNs environment its build gets tokens from: debug builds sandbox; release builds
    /// (TestFlight, App Store, ad hoc) production.
    public var buildEnvironment: APNsEnvironment = .sandbox
    /// A simulator build (the SDK takes its tokens as production).
    public var isSimulator = false
    /// `embedded.mobileprovision`.
    public var provisioningProfile: ProvisioningProfileSource = .none
    /// The app's files (`Info.plist`, `GoogleService-Info.plist`, `embedded.mobileprovision`): when
    /// set, the bundle ID, URL schemes, Firebase options and provisioning profile come from them.
    public var bundle: AppBundle? = nil
    /// Whether (and how) the app links the RecaptchaEnterprise SDK (SMS defense in AUDIT or ENFORCE needs it).
    public var recaptchaEnterprise: RecaptchaEnterpriseLinkage = .notLinked

    // MARK: What its code does

    /// The type the app's code passes to `setAPNSToken(_:type:)`.
    public var declaredTokenType: AuthAPNSTokenType = .sandbox
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
    public var uiDelegate: (any AuthUIDelegate)? = nil
    /// Claim the app's URL schemes here while it runs, so that `redirect-interceptor` can hand it URLs.
    public var schemeDirectory: SchemeDirectory? = nil

    public init() {}

    /// The app as the device's OS and the SDK read it (``AppHost``): from its files when it has
    /// some, else from this profile, its URL schemes defaulting to `options`' encoded app ID.
    public func host(options: FirebaseOptions) -> AppHost.Configuration {
        if let bundle {
            return AppHost.Configuration(bundle: bundle, isSimulator: isSimulator, forwardsNotifications: forwardsNotifications,
                                         forwardsURLs: forwardsURLs)
        }
        return AppHost.Configuration(bundleID: bundleID, urlSchemes: urlSchemes ?? [options.encodedAppIDScheme], isSimulator: isSimulator,
                                     provisioningProfile: provisioningProfile.file, forwardsNotifications: forwardsNotifications,
                                     forwardsURLs: forwardsURLs)
    }

    /// How the app was built, which decides its profile's `aps-environment` and so its tokens.
    public enum Build: String, Sendable, Hashable, CaseIterable {
        /// A debug build: `development`, sandbox tokens.
        case debug
        /// A release (TestFlight, App Store, ad hoc) build: `production`, production tokens.
        case release

        /// The APNs environment its profile's `aps-environment` names: the one rule.
        public var environment: APNsEnvironment { self == .debug ? .sandbox : .production }
    }

    /// Where the app's `embedded.mobileprovision` comes from.
    public enum ProvisioningProfileSource: Sendable, Hashable {
        /// None (a simulator build, or an app without one).
        case none
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
        /// Linked, but the service cannot be reached: every token is `NO_RECAPTCHA`.
        case unreachable
    }

    /// How the OS answers an app's registration for remote notifications (the device's rule).
    public typealias APNsRegistrationOutcome = DeviceLink.APNsRegistrationOutcome

    /// iOS's error for a build signed without the Push Notifications capability.
    public static let noEntitlementError = APNsRegistrationOutcome.noEntitlementError
}
