import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation

/// A user the backend knows: by phone number, by Apple ID, or both (linked); with the second
/// factors they enrolled, and what the Admin SDKs set (disabled, custom claims, revocation).
public struct BackendUser: Sendable, Hashable, Codable {
    /// The fields, behind one reference (copied on write): a dictionary of users then holds 8
    /// bytes per bucket rather than the fields' 230, which matters because its buckets are at
    /// most three-quarters full and a growing table briefly holds both its old and new buckets.
    /// A user costs what its fields cost. Written and read as the fields themselves.
    private var storage: Storage

    private final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private struct Fields: Hashable, Codable {
        var localId: String
        var phoneNumber: String? = nil
        var createdAt: Date
        var appleSub: String? = nil
        var email: String? = nil
        var emailVerified: Bool? = nil
        var displayName: String? = nil
        var mfaEnrollments: [MFAEnrollmentRecord]? = nil
        var photoUrl: String? = nil
        var disabled: Bool? = nil
        var customAttributes: String? = nil
        var validSince: Int64? = nil
        var lastLoginAt: Date? = nil
        var customAuth: Bool? = nil
        var otherProviders: [ProviderUserInfo]? = nil
        var passwordHash: String? = nil
        var salt: String? = nil
        var passwordUpdatedAt: Double? = nil
    }

    private mutating func mutate(_ change: (inout Fields) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        change(&storage.fields)
    }

    public var localId: String {
        get { storage.fields.localId }
        set { mutate { $0.localId = newValue } }
    }
    public var phoneNumber: String? {
        get { storage.fields.phoneNumber }
        set { mutate { $0.phoneNumber = newValue } }
    }
    public var createdAt: Date {
        get { storage.fields.createdAt }
        set { mutate { $0.createdAt = newValue } }
    }
    /// The linked Apple ID (`sub`), if any.
    public var appleSub: String? {
        get { storage.fields.appleSub }
        set { mutate { $0.appleSub = newValue } }
    }
    public var email: String? {
        get { storage.fields.email }
        set { mutate { $0.email = newValue } }
    }
    /// Whether the email was verified (Apple's are); multi-factor enrollment needs it.
    public var emailVerified: Bool? {
        get { storage.fields.emailVerified }
        set { mutate { $0.emailVerified = newValue } }
    }
    public var displayName: String? {
        get { storage.fields.displayName }
        set { mutate { $0.displayName = newValue } }
    }
    /// Enrolled second factors (phone numbers), oldest first.
    public var mfaEnrollments: [MFAEnrollmentRecord]? {
        get { storage.fields.mfaEnrollments }
        set { mutate { $0.mfaEnrollments = newValue } }
    }
    public var photoUrl: String? {
        get { storage.fields.photoUrl }
        set { mutate { $0.photoUrl = newValue } }
    }
    /// A disabled user cannot sign in or refresh a token (USER_DISABLED).
    public var disabled: Bool? {
        get { storage.fields.disabled }
        set { mutate { $0.disabled = newValue } }
    }
    /// Custom claims, a JSON object as text (at most 1,000 characters), as the Admin SDKs set them.
    public var customAttributes: String? {
        get { storage.fields.customAttributes }
        set { mutate { $0.customAttributes = newValue } }
    }
    /// Tokens issued before this (seconds since 1970) are revoked: refresh tokens stop working,
    /// ID tokens issued earlier are TOKEN_EXPIRED here and revoked for `verify_id_token(check_revoked=True)`.
    public var validSince: Int64? {
        get { storage.fields.validSince }
        set { mutate { $0.validSince = newValue } }
    }
    /// The last sign-in (not a refresh).
    public var lastLoginAt: Date? {
        get { storage.fields.lastLoginAt }
        set { mutate { $0.lastLoginAt = newValue } }
    }
    /// Whether the user signed in with a custom token.
    public var customAuth: Bool? {
        get { storage.fields.customAuth }
        set { mutate { $0.customAuth = newValue } }
    }
    /// Providers this backend does not sign in with (google.com, password, …), kept from an import
    /// so that an export gives them back.
    public var otherProviders: [ProviderUserInfo]? {
        get { storage.fields.otherProviders }
        set { mutate { $0.otherProviders = newValue } }
    }
    /// An email/password user's hash and salt from an import, kept as given, never checked.
    public var passwordHash: String? {
        get { storage.fields.passwordHash }
        set { mutate { $0.passwordHash = newValue } }
    }
    public var salt: String? {
        get { storage.fields.salt }
        set { mutate { $0.salt = newValue } }
    }
    public var passwordUpdatedAt: Double? {
        get { storage.fields.passwordUpdatedAt }
        set { mutate { $0.passwordUpdatedAt = newValue } }
    }

    public init(from decoder: any Decoder) throws { storage = Storage(try Fields(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try storage.fields.encode(to: encoder) }
    public static func == (lhs: BackendUser, rhs: BackendUser) -> Bool { lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields }
    public func hash(into hasher: inout Hasher) { storage.fields.hash(into: &hasher) }

    public init(localId: String, phoneNumber: String? = nil, createdAt: Date, appleSub: String? = nil, email: String? = nil,
                emailVerified: Bool? = nil, displayName: String? = nil, mfaEnrollments: [MFAEnrollmentRecord]? = nil) {
        storage = Storage(Fields(localId: localId, phoneNumber: phoneNumber, createdAt: createdAt, appleSub: appleSub, email: email,
                                 emailVerified: emailVerified, displayName: displayName, mfaEnrollments: mfaEnrollments))
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
