import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation

/// A user the backend knows: by phone number, by Apple ID, or both (linked); with the second
/// factors they enrolled, and what the Admin SDKs set (disabled, custom claims, revocation).
public struct BackendUser: Sendable, Hashable, Codable {
    public var localId: String
    public var phoneNumber: String?
    public var createdAt: Date
    /// The linked Apple ID (`sub`), if any.
    public var appleSub: String?
    public var email: String?
    /// Whether the email was verified (Apple's are); multi-factor enrollment needs it.
    public var emailVerified: Bool?
    public var displayName: String?
    /// Enrolled second factors (phone numbers), oldest first.
    public var mfaEnrollments: [MFAEnrollmentRecord]?
    public var photoUrl: String?
    /// A disabled user cannot sign in or refresh a token (USER_DISABLED).
    public var disabled: Bool?
    /// Custom claims, a JSON object as text (at most 1,000 characters), as the Admin SDKs set them.
    public var customAttributes: String?
    /// Tokens issued before this (seconds since 1970) are revoked: refresh tokens stop working,
    /// ID tokens issued earlier are TOKEN_EXPIRED here and revoked for `verify_id_token(check_revoked=True)`.
    public var validSince: Int64?
    /// The last sign-in (not a refresh).
    public var lastLoginAt: Date?
    /// Whether the user signed in with a custom token.
    public var customAuth: Bool?
    /// Providers this backend does not sign in with (google.com, password, …), kept from an import
    /// so that an export gives them back.
    public var otherProviders: [ProviderUserInfo]?
    /// An email/password user's hash and salt from an import, kept as given, never checked.
    public var passwordHash: String?
    public var salt: String?
    public var passwordUpdatedAt: Double?

    public init(localId: String, phoneNumber: String? = nil, createdAt: Date, appleSub: String? = nil, email: String? = nil,
                emailVerified: Bool? = nil, displayName: String? = nil, mfaEnrollments: [MFAEnrollmentRecord]? = nil) {
        self.localId = localId
        self.phoneNumber = phoneNumber
        self.createdAt = createdAt
        self.appleSub = appleSub
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.mfaEnrollments = mfaEnrollments
    }

    /// Whether a second factor stands between a first factor and a session.
    public var hasSecondFactor: Bool { !(mfaEnrollments ?? []).isEmpty }

    /// The custom claims as values (empty when none; the text was checked when it was set).
    public var customClaims: [String: JSONValue] { Self.claims(customAttributes) }

    /// Claims kept as JSON text (custom attributes, a custom token's claims) as values; empty for
    /// none or for text that is not a JSON object.
    static func claims(_ text: String?) -> [String: JSONValue] {
        guard let text, !text.isEmpty,
              let claims = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) else { return [:] }
        return claims
    }
}

/// One enrolled phone second factor.
public struct MFAEnrollmentRecord: Sendable, Hashable, Codable {
    public var id: String
    public var phoneNumber: String
    public var displayName: String?
    public var enrolledAt: Date
    public init(id: String, phoneNumber: String, displayName: String?, enrolledAt: Date) {
        self.id = id
        self.phoneNumber = phoneNumber
        self.displayName = displayName
        self.enrolledAt = enrolledAt
    }
}
