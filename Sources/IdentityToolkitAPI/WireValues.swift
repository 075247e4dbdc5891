import Foundation

/// A value of one of the API's string enums, kept as its text so that a value this side does not
/// know still travels (and is refused by name) as itself; the known ones are constants of the type,
/// so that the rules compare constants, never spellings. On the wire, a JSON string.
package protocol WireValue: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension WireValue {
    package init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    package var description: String { rawValue }
}

/// `signInWithPhoneNumber`'s `operation` (the v1 document's `VerifyPhoneNumberRequest.operation`).
package struct PhoneSignInOperation: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let signUpOrIn = Self(rawValue: "SIGN_UP_OR_IN")
    /// Never creates a user (`USER_NOT_FOUND` for an unknown number).
    package static let reauth = Self(rawValue: "REAUTH")
    package static let link = Self(rawValue: "LINK")
    package static let update = Self(rawValue: "UPDATE")
}

/// `recaptchaVersion` of a request with a reCAPTCHA token, and `recaptchaConfig`'s `version`.
package struct RecaptchaVersion: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let recaptchaEnterprise = Self(rawValue: "RECAPTCHA_ENTERPRISE")
}

/// The provider of a `recaptchaConfig` enforcement state.
package struct RecaptchaProvider: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let phone = Self(rawValue: "PHONE_PROVIDER")
    package static let emailPassword = Self(rawValue: "EMAIL_PASSWORD_PROVIDER")
}

/// `accounts:revokeToken`'s `tokenType`: what `token` is.
package struct RevokedTokenType: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    /// An authorization code (the document's name).
    package static let code = Self(rawValue: "CODE")
    /// The same, as FirebaseAuth 12.19 sends it: its `TokenType.authorizationCode`'s raw value
    /// (RevokeTokenRequest.swift 30–40).
    package static let sdkAuthorizationCode = Self(rawValue: "3")
}

/// What a reCAPTCHA toll-fraud managed rule does with the scores it covers.
package struct RecaptchaRuleAction: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let block = Self(rawValue: "BLOCK")
}

/// A provider's ID as Identity Toolkit writes it (`providerUserInfo[].providerId`, the ID token's
/// `firebase.sign_in_provider`, `deleteProvider`): the SDK's `AuthProviderID` spelling.
package struct ProviderID: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let password = Self(rawValue: "password")
    package static let phone = Self(rawValue: "phone")
    /// A TOTP second factor (`sign_in_second_factor`).
    package static let totp = Self(rawValue: "totp")
    package static let apple = Self(rawValue: "apple.com")
    package static let gameCenter = Self(rawValue: "gc.apple.com")
    package static let google = Self(rawValue: "google.com")
    /// Sign-in providers only (the ID token's `sign_in_provider`), never linked.
    package static let anonymous = Self(rawValue: "anonymous")
    package static let custom = Self(rawValue: "custom")
}

/// How an address signs in, as `createAuthUri`'s `signinMethods` names it: a provider's ID, or
/// `emailLink` (the SDK's `EmailLinkAuthSignInMethod`).
package struct SignInMethod: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    /// A provider's sign-in (`password`, `apple.com`, `anonymous`).
    package init(_ provider: ProviderID) { self.rawValue = provider.rawValue }
    package static let password = Self(.password)
    package static let emailLink = Self(rawValue: "emailLink")
    package static let anonymous = Self(.anonymous)
    package static let custom = Self(.custom)
}

/// `accounts:update`'s `deleteAttribute`: a profile field to remove.
package struct UserAttributeName: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let displayName = Self(rawValue: "DISPLAY_NAME")
    package static let photoURL = Self(rawValue: "PHOTO_URL")
    package static let email = Self(rawValue: "EMAIL")
    package static let password = Self(rawValue: "PASSWORD")
    package static let unspecified = Self(rawValue: "USER_ATTRIBUTE_NAME_UNSPECIFIED")
}

/// `accounts:query`'s `order`.
package struct QueryOrder: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let ascending = Self(rawValue: "ASC")
    package static let descending = Self(rawValue: "DESC")
    package static let unspecified = Self(rawValue: "ORDER_UNSPECIFIED")
}

/// `accounts:query`'s `sortBy`.
package struct QuerySortField: WireValue {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let userID = Self(rawValue: "USER_ID")
    package static let name = Self(rawValue: "NAME")
    package static let userEmail = Self(rawValue: "USER_EMAIL")
    package static let createdAt = Self(rawValue: "CREATED_AT")
    package static let lastLoginAt = Self(rawValue: "LAST_LOGIN_AT")
    package static let unspecified = Self(rawValue: "SORT_BY_FIELD_UNSPECIFIED")
}
