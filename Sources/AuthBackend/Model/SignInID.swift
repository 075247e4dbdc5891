import Foundation

/// Which sign-in an event is a step of, as a trace ID ties a trace's spans: made by the call
/// that starts a sign-in (verifyClient, a code request without an app credential, a first factor)
/// and carried by what that call leaves for the next one (the receipt, the session, the pending
/// credential, the reCAPTCHA token), so that every later call that names it continues the same
/// sign-in. The timelines' `--json` lines and the inspector group a sign-in's events by it.
///
/// The backend's own: nothing on the wire carries it, and the SDK sees none.
public struct SignInID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }

    /// A new one, for a sign-in that ends where it starts, outside the rules (a refusal by Google's
    /// front end, an injected fault): the rules draw theirs from the call's random source.
    static func random() -> SignInID {
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<16).map { _ in CoreCall.idAlphabet.randomElement(using: &generator)! }
        return SignInID(rawValue: String(decoding: characters, as: UTF8.self))
    }
}

extension BackendEvent {
    /// Whether the event is a step of a sign-in (and so carries a ``SignInID``). The project's
    /// reCAPTCHA config (read at launch as often as before a sign-in), the sign-in methods of an
    /// address, and what happens to an account apart from signing in (deleted, a second factor
    /// withdrawn, an Apple grant revoked) are not.
    package var isSignInStep: Bool {
        switch self {
        case .recaptchaConfig, .signInMethodsAsked, .accountDeleted, .appleRevoked, .secondFactorWithdrawn, .emailSent, .emailLinkGenerated, .providerPage: false
        default: true
        }
    }
}
