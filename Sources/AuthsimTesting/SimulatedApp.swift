import FirebaseAuthCore
import Foundation
import APNsWire
import Scenarios

/// The app a test's code runs in, as its Xcode project would build it: what `Info.plist`,
/// `GoogleService-Info.plist` and `embedded.mobileprovision` say, and what its app delegate does.
/// ``Simulation/run(_:app:_:)`` writes these files into the simulated app's bundle, where
/// `FirebaseApp.configure()` reads them. It is the one description of an app the scenarios and
/// `authsim phone` use too (``AppProfile``), with the same defaults: a debug build, signed with a
/// development profile, whose app delegate leaves the token's type to the SDK's proxy.
///
/// What a scenario scripts about the app's code and its life (``AppProfile/languageCode``,
/// ``AppProfile/appVerificationDisabledForTesting``, ``AppProfile/restartAfterSMS``,
/// ``AppProfile/killedBeforePush``, ``AppProfile/uiDelegate``, ``AppProfile/schemeDirectory``)
/// is the test's own code in a ``Simulation``: set there, it is refused with what to do instead.
public typealias SimulatedApp = AppProfile

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
