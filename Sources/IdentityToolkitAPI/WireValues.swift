import Foundation

/// A value of one of the API's string enums, kept as its text so that a value this side does not
/// know still travels (and is refused by name) as itself; the known ones are constants of the type,
/// so that the rules compare constants, never spellings. On the wire, a JSON string.
public protocol WireValue: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension WireValue {
    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }
}

/// `signInWithPhoneNumber`'s `operation` (the v1 document's `VerifyPhoneNumberRequest.operation`).
public struct PhoneSignInOperation: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let signUpOrIn = Self(rawValue: "SIGN_UP_OR_IN")
    /// Never creates a user (`USER_NOT_FOUND` for an unknown number).
    public static let reauth = Self(rawValue: "REAUTH")
    public static let link = Self(rawValue: "LINK")
    public static let update = Self(rawValue: "UPDATE")
}

/// `recaptchaVersion` of a request with a reCAPTCHA token, and `recaptchaConfig`'s `version`.
public struct RecaptchaVersion: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let recaptchaEnterprise = Self(rawValue: "RECAPTCHA_ENTERPRISE")
}

/// The provider of a `recaptchaConfig` enforcement state.
public struct RecaptchaProvider: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let phone = Self(rawValue: "PHONE_PROVIDER")
    public static let emailPassword = Self(rawValue: "EMAIL_PASSWORD_PROVIDER")
}

/// `accounts:revokeToken`'s `tokenType`: what `token` is.
public struct RevokedTokenType: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An authorization code (the document's name).
    public static let code = Self(rawValue: "CODE")
    /// The same, as FirebaseAuth 12.19 sends it: its `TokenType.authorizationCode`'s raw value
    /// (RevokeTokenRequest.swift 30–40).
    public static let sdkAuthorizationCode = Self(rawValue: "3")
}

/// What a reCAPTCHA toll-fraud managed rule does with the scores it covers.
public struct RecaptchaRuleAction: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let block = Self(rawValue: "BLOCK")
}
