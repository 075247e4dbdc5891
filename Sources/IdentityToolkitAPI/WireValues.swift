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

/// A provider's ID as Identity Toolkit writes it (`providerUserInfo[].providerId`, the ID token's
/// `firebase.sign_in_provider`, `deleteProvider`): the SDK's `AuthProviderID` spelling.
public struct ProviderID: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let password = Self(rawValue: "password")
    public static let phone = Self(rawValue: "phone")
    public static let apple = Self(rawValue: "apple.com")
    public static let gameCenter = Self(rawValue: "gc.apple.com")
    /// Sign-in providers only (the ID token's `sign_in_provider`), never linked.
    public static let anonymous = Self(rawValue: "anonymous")
    public static let custom = Self(rawValue: "custom")
}

/// How an address signs in, as `createAuthUri`'s `signinMethods` names it: a provider's ID, or
/// `emailLink` (the SDK's `EmailLinkAuthSignInMethod`).
public struct SignInMethod: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A provider's sign-in (`password`, `apple.com`, `anonymous`).
    public init(_ provider: ProviderID) { self.rawValue = provider.rawValue }
    public static let password = Self(.password)
    public static let emailLink = Self(rawValue: "emailLink")
    public static let anonymous = Self(.anonymous)
    public static let custom = Self(.custom)
}

/// `accounts:update`'s `deleteAttribute`: a profile field to remove.
public struct UserAttributeName: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let displayName = Self(rawValue: "DISPLAY_NAME")
    public static let photoURL = Self(rawValue: "PHOTO_URL")
    public static let email = Self(rawValue: "EMAIL")
    public static let password = Self(rawValue: "PASSWORD")
    public static let unspecified = Self(rawValue: "USER_ATTRIBUTE_NAME_UNSPECIFIED")
}

/// `accounts:query`'s `order`.
public struct QueryOrder: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let ascending = Self(rawValue: "ASC")
    public static let descending = Self(rawValue: "DESC")
    public static let unspecified = Self(rawValue: "ORDER_UNSPECIFIED")
}

/// `accounts:query`'s `sortBy`.
public struct QuerySortField: WireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let userID = Self(rawValue: "USER_ID")
    public static let name = Self(rawValue: "NAME")
    public static let userEmail = Self(rawValue: "USER_EMAIL")
    public static let createdAt = Self(rawValue: "CREATED_AT")
    public static let lastLoginAt = Self(rawValue: "LAST_LOGIN_AT")
    public static let unspecified = Self(rawValue: "SORT_BY_FIELD_UNSPECIFIED")
}
