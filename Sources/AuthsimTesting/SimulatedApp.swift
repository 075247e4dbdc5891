@_spi(Authsim) import FirebaseAuthCore
import Foundation
import APNsWire
import Scenarios

/// The app a test's code runs in, as its Xcode project would build it: what `Info.plist`,
/// `GoogleService-Info.plist` and `embedded.mobileprovision` say, and what its app delegate does.
/// ``Simulation/run(_:app:_:)`` writes these files into the simulated app's bundle, where
/// `FirebaseApp.configure()` reads them.
public struct SimulatedApp: Sendable {
    /// `CFBundleIdentifier` (and `BUNDLE_ID`); the APNs topic of its pushes.
    public var bundleID = SampleApp.defaultBundleID
    /// `GOOGLE_APP_ID`; its encoded form is the reCAPTCHA callback scheme.
    public var googleAppID = SampleApp.defaultGoogleAppID
    /// `CLIENT_ID` (nil: a newer plist without it, as the console writes today).
    public var clientID: String? = nil
    /// `CFBundleURLSchemes` (nil: the encoded app ID, as the phone-auth guide says to add).
    public var urlSchemes: [String]? = nil

    /// The build's APNs environment, from its provisioning profile's `aps-environment`.
    public typealias Build = AppProfile.Build
    public var build = Build.debug
    /// A simulator build (the SDK takes its tokens as production).
    public var isSimulator = false

    /// The environment of the device tokens the app gets: its build's, but production on a
    /// simulator (the SDK takes a simulator's tokens as production).
    public var tokenEnvironment: APNsEnvironment { isSimulator ? .production : build.environment }

    /// What the app delegate's own `didRegisterForRemoteNotificationsWithDeviceToken` passes to
    /// `Auth.auth().setAPNSToken(_:type:)`. nil: the app delegate does not; the SDK's proxy hands
    /// the token to Auth as `.unknown` and the profile decides its type.
    public var declaredTokenType: AuthAPNSTokenType? = nil
    /// Whether notifications reach Auth (the SDK's app-delegate proxy, or the delegate forwarding
    /// them to `canHandleNotification`).
    public var forwardsNotifications = true
    /// Whether opened URLs reach Auth (the proxy, or `canHandle(_:)` called by the delegate).
    public var forwardsURLs = true
    /// Whether the app links the reCAPTCHA Enterprise SDK (RecaptchaEnterprise), which projects
    /// with SMS defense need.
    public var linksRecaptchaEnterprise = false

    public init() {}
}

/// What the world outside the app does: APNs, the reCAPTCHA page, the project's settings.
public struct SimulatedWorld: Sendable {
    /// What becomes of the backend's silent push.
    public enum Push: Sendable, Hashable {
        /// APNs delivers it and the app hands it to Auth: no reCAPTCHA.
        case delivered
        /// APNs accepts it and the device never gets it: the SDK waits `suggestedTimeout`, then
        /// falls back to reCAPTCHA.
        case lost
        /// The app's code passes the other token type (`.prod` on a debug build, `.sandbox` on a
        /// release one): the backend pushes to the wrong APNs host, which answers
        /// `BadDeviceToken`, and reCAPTCHA takes over.
        case tokenTypeMismatch
    }
    public var push = Push.delivered

    /// What the user does on the reCAPTCHA page, when it is shown.
    public enum ReCAPTCHA: Sendable, Hashable {
        /// Solves it: the page redirects to the app with a token.
        case passes
        /// Closes it: the SDK's `verifyPhoneNumber` ends in `webContextCancelled`.
        case cancelled
    }
    public var recaptcha = ReCAPTCHA.passes

    /// The project's SMS defense (reCAPTCHA Enterprise for phone, `phoneEnforcementState`).
    public enum SMSDefense: Sendable, Hashable {
        case off, audit, enforce
    }
    public var smsDefense = SMSDefense.off

    /// Seconds the backend tells the SDK to wait for the push (`suggestedTimeout`). In a world
    /// where the push does not come, the app waits this long in real time (plus the SDK's 1 s
    /// forwarding probe on the first request); where it comes, the wait never times out, however
    /// slow the machine.
    public var suggestedTimeout = 1

    public init(push: Push = .delivered, recaptcha: ReCAPTCHA = .passes, smsDefense: SMSDefense = .off) {
        self.push = push
        self.recaptcha = recaptcha
        self.smsDefense = smsDefense
    }

    /// The push arrives: the phone number is verified without reCAPTCHA.
    public static let silentPushWorks = SimulatedWorld()
    /// The push is lost; the user solves reCAPTCHA.
    public static let pushLost = SimulatedWorld(push: .lost)
    /// The app declares the wrong token type; the user solves reCAPTCHA.
    public static let tokenTypeMismatch = SimulatedWorld(push: .tokenTypeMismatch)
    /// The push is lost and the user closes the reCAPTCHA page.
    public static let recaptchaCancelled = SimulatedWorld(push: .lost, recaptcha: .cancelled)
    /// The project enforces SMS defense: the app needs the reCAPTCHA Enterprise SDK.
    public static let smsDefenseEnforced = SimulatedWorld(smsDefense: .enforce)
}
