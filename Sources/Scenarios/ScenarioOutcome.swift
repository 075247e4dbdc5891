import FirebaseAuthCore
import IdentityToolkitAPI

/// How an app's flow in a scenario (or `authsim phone`) ended: what `authsim phone` and `authsim scenario` judge. Its
/// text (``description``) is what a scenario file's `expectedOutcome` and `--expect` name:
/// "signed in", "signed in via reCAPTCHA", "17054 notificationNotForwarded".
package enum ScenarioOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Signed in by phone, the code request proved as the backend saw it (nil: not asked).
    case signedIn(via: AppVerification?)
    /// A phone second factor enrolled.
    case enrolledSecondFactor(via: AppVerification?)
    /// Signed in through a multi-factor resolver.
    case signedInWithSecondFactor(via: AppVerification?)
    case signedInWithApple
    /// Signed in on an identity provider's web page (`OAuthProvider`).
    case signedInWithProvider(String)
    case reauthenticated
    /// A provider linked to the signed-in user.
    case linked
    /// The account deleted.
    case deleted
    /// The SDK's error that ended the flow.
    case authError(AuthErrorCode)
    /// Anything else that ended it (the world could not start, a file could not be written).
    case failed(String)

    /// Signed in by phone, as a first factor or with a second one.
    package var isSignedIn: Bool {
        switch self {
        case .signedIn, .signedInWithSecondFactor: true
        default: false
        }
    }

    /// The SDK's error, when one ended the flow.
    package var authErrorCode: AuthErrorCode? {
        if case .authError(let code) = self { code } else { nil }
    }

    package var description: String {
        switch self {
        case .signedIn(let proof): "signed in\(Self.suffix(proof))"
        case .enrolledSecondFactor(let proof): "enrolled second factor\(Self.suffix(proof))"
        case .signedInWithSecondFactor(let proof): "signed in with second factor\(Self.suffix(proof))"
        case .signedInWithApple: "signed in with Apple"
        case .signedInWithProvider(let provider): "signed in with \(provider)"
        case .reauthenticated: "reauthenticated"
        case .linked: "linked"
        case .deleted: "deleted"
        case .authError(let code): "\(code.rawValue) \(code)"
        case .failed(let message): "error: \(message)"
        }
    }

    /// " via reCAPTCHA" for a fallback's proof; nothing for the silent push, test mode or none.
    static func suffix(_ proof: AppVerification?) -> String {
        switch proof {
        case let proof? where proof == .reCAPTCHA || proof == .recaptchaEnterprise: " via \(proof)"
        default: ""
        }
    }
}
