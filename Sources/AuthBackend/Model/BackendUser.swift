import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation

/// A user the backend knows: by phone number, by Apple ID, or both (linked); with the second
/// factors they enrolled, and what the Admin SDKs set (disabled, custom claims, revocation).
@dynamicMemberLookup
package struct BackendUser: Sendable, Hashable, Codable {
    /// The fields, behind one reference (copied on write): a dictionary of users then holds 8
    /// bytes per bucket rather than the fields' 230, which matters because its buckets are at
    /// most three-quarters full and a growing table briefly holds both its old and new buckets.
    /// A user costs what its fields cost. Written and read as the fields themselves.
    private var storage: Storage

    private final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    /// What a user is made of; each is read and set on the user itself (`user.phoneNumber`).
    package struct Fields: Sendable, Hashable, Codable {
        package var localId: String
        package var phoneNumber: String? = nil
        package var createdAt: Date
        /// The linked Apple ID (`sub`), if any.
        package var appleSub: String? = nil
        package var email: String? = nil
        /// Whether the email was verified (Apple's are); multi-factor enrollment needs it.
        package var emailVerified: Bool? = nil
        package var displayName: String? = nil
        /// Enrolled second factors (phone numbers), oldest first.
        package var mfaEnrollments: [MFAEnrollmentRecord]? = nil
        package var photoUrl: String? = nil
        /// A disabled user cannot sign in or refresh a token (USER_DISABLED).
        package var disabled: Bool? = nil
        /// Custom claims, a JSON object as text (at most 1,000 characters), as the Admin SDKs set them.
        package var customAttributes: String? = nil
        /// Tokens issued before this (seconds since 1970) are revoked: refresh tokens stop working,
        /// ID tokens issued earlier are TOKEN_EXPIRED here and revoked for `verify_id_token(check_revoked=True)`.
        package var validSince: Int64? = nil
        /// The last sign-in (not a refresh).
        package var lastLoginAt: Date? = nil
        /// Whether the user signed in with a custom token.
        package var customAuth: Bool? = nil
        /// Providers this backend does not sign in with (google.com, password, …), kept from an import
        /// so that an export gives them back.
        package var otherProviders: [ProviderUserInfo]? = nil
        /// An email/password user's hash and salt from an import, kept as given, never checked.
        package var passwordHash: String? = nil
        package var salt: String? = nil
        package var passwordUpdatedAt: Double? = nil
        /// Whether the user signs in with an email link (`accounts:signInWithEmailLink`): the
        /// `password` provider without a password, and `emailLink` among their sign-in methods.
        package var emailLinkSignin: Bool? = nil
        /// The tenant the user belongs to (nil: the project's own users); its ID tokens say so
        /// (`firebase.tenant`), and `accounts:lookup` gives it back (`tenantId`).
        package var tenantId: String? = nil
    }

    private mutating func mutate(_ change: (inout Fields) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        change(&storage.fields)
    }

    package subscript<Value>(dynamicMember field: WritableKeyPath<Fields, Value>) -> Value {
        get { storage.fields[keyPath: field] }
        set { mutate { $0[keyPath: field] = newValue } }
    }

    package init(from decoder: any Decoder) throws { storage = Storage(try Fields(from: decoder)) }
    package func encode(to encoder: any Encoder) throws { try storage.fields.encode(to: encoder) }
    package static func == (lhs: BackendUser, rhs: BackendUser) -> Bool { lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields }
    package func hash(into hasher: inout Hasher) { storage.fields.hash(into: &hasher) }

    package init(localId: String, phoneNumber: String? = nil, createdAt: Date, appleSub: String? = nil, email: String? = nil,
                emailVerified: Bool? = nil, displayName: String? = nil, mfaEnrollments: [MFAEnrollmentRecord]? = nil) {
        storage = Storage(Fields(localId: localId, phoneNumber: phoneNumber, createdAt: createdAt, appleSub: appleSub, email: email,
                                 emailVerified: emailVerified, displayName: displayName, mfaEnrollments: mfaEnrollments))
    }

    /// Whether a second factor stands between a first factor and a session.
    package var hasSecondFactor: Bool { !(self.mfaEnrollments ?? []).isEmpty }

    /// The custom claims as values (empty when none; the text was checked when it was set).
    package var customClaims: [String: JSONValue] { Self.claims(self.customAttributes) }

    /// Claims kept as JSON text (custom attributes, a custom token's claims) as values; empty for
    /// none or for text that is not a JSON object.
    static func claims(_ text: String?) -> [String: JSONValue] {
        guard let text, !text.isEmpty,
              let claims = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) else { return [:] }
        return claims
    }
}

/// One enrolled second factor: a phone (its number), or a TOTP app (its secret).
package struct MFAEnrollmentRecord: Sendable, Hashable, Codable {
    package var id: String
    /// A phone factor's number; nil for a TOTP factor.
    package var phoneNumber: String?
    package var displayName: String?
    package var enrolledAt: Date
    /// A TOTP factor's shared secret (Base32); nil for a phone factor.
    package var totpSecret: String?
    /// The time step of the TOTP code last spent: that code, and any earlier, does not sign in again.
    package var totpLastStep: Int64?
    package init(id: String, phoneNumber: String?, displayName: String?, enrolledAt: Date, totpSecret: String? = nil, totpLastStep: Int64? = nil) {
        self.id = id
        self.phoneNumber = phoneNumber
        self.displayName = displayName
        self.enrolledAt = enrolledAt
        self.totpSecret = totpSecret
        self.totpLastStep = totpLastStep
    }

    /// Whether it is a TOTP factor.
    package var isTOTP: Bool { totpSecret != nil }

    /// How the first factor's answer lists it: a phone's number hidden but for its last four
    /// digits, a TOTP factor as `totpInfo: {}`.
    var hint: MFAEnrollment {
        MFAEnrollment(mfaEnrollmentId: id, displayName: displayName, phoneInfo: phoneNumber.map(PhoneNumbers.obfuscated),
                      enrolledAt: RFC3339.string(enrolledAt), totpInfo: isTOTP ? TOTPInfo() : nil)
    }

    /// How `accounts:lookup` describes it: the whole number.
    var described: MFAEnrollment {
        MFAEnrollment(mfaEnrollmentId: id, displayName: displayName, phoneInfo: phoneNumber, enrolledAt: RFC3339.string(enrolledAt),
                      totpInfo: isTOTP ? TOTPInfo() : nil)
    }
}
