import Foundation
import Utilities

/// A JSON Web Key (RFC 7517) as Google and Apple publish them: EC keys (`crv`, `x`, `y`) or RSA
/// keys (`n`, `e`).
package struct JSONWebKey: Codable, Sendable, Hashable {
    package var kty: String
    package var kid: String?
    package var alg: String?
    package var use: String?
    package var crv: String?
    package var x: String?
    package var y: String?
    package var n: String?
    package var e: String?
    package init(kty: String, kid: String?, alg: String?, use: String? = "sig", crv: String? = nil, x: String? = nil,
                y: String? = nil, n: String? = nil, e: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.alg = alg
        self.use = use
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }
}

/// `{"keys":[…]}`.
package struct JSONWebKeySet: Codable, Sendable, Hashable {
    package var keys: [JSONWebKey]
    package init(keys: [JSONWebKey]) { self.keys = keys }

    /// Where Google publishes the keys of Firebase ID tokens, emulator-style:
    /// `https://www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com`.
    package static let firebaseIDTokenKeysPath = "/www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com"

    /// The key named `kid`.
    package func key(id: String) -> JSONWebKey? { keys.first { $0.kid == id } }
}

/// A JWT's header.
package struct JWTHeader: Codable, Sendable, Hashable {
    package var alg: String
    package var kid: String?
    package var typ: String?
    package init(alg: String, kid: String?, typ: String? = "JWT") {
        self.alg = alg
        self.kid = kid
        self.typ = typ
    }
}

/// The claims of a Firebase ID token, as the service writes them: `iss`
/// `https://securetoken.google.com/<project>`, `aud` the project, `sub` = `user_id` = the user's
/// local ID, `auth_time` the sign-in (kept across refreshes), `firebase.sign_in_provider` and the
/// identities per provider, and the user's custom claims (the Admin SDK's
/// `set_custom_user_claims`, a custom token's `claims`) at the top level beside them.
package struct FirebaseIDTokenClaims: Codable, Sendable, Hashable {
    package struct Firebase: Codable, Sendable, Hashable {
        /// `{"phone": ["+1…"], "apple.com": ["001234.…"], "email": ["…"]}`.
        package var identities: [String: [String]]
        /// `phone`, `apple.com`, `custom`, …
        package var signInProvider: ProviderID
        /// `phone` when a second factor completed the sign-in.
        package var signInSecondFactor: ProviderID?
        /// The enrollment ID of that second factor.
        package var secondFactorIdentifier: String?
        /// The tenant of the user (absent for the project's own users).
        package var tenant: String?
        package init(identities: [String: [String]], signInProvider: ProviderID, signInSecondFactor: ProviderID? = nil,
                    secondFactorIdentifier: String? = nil, tenant: String? = nil) {
            self.tenant = tenant
            self.identities = identities
            self.signInProvider = signInProvider
            self.signInSecondFactor = signInSecondFactor
            self.secondFactorIdentifier = secondFactorIdentifier
        }
        enum CodingKeys: String, CodingKey {
            case identities, signInProvider = "sign_in_provider", signInSecondFactor = "sign_in_second_factor"
            case secondFactorIdentifier = "second_factor_identifier", tenant
        }
    }
    package var iss: String
    package var aud: String
    package var sub: String
    package var userId: String
    package var iat: Int
    package var exp: Int
    package var authTime: Int
    package var phoneNumber: String?
    package var email: String?
    package var emailVerified: Bool?
    package var name: String?
    package var picture: String?
    package var firebase: Firebase
    /// Custom claims: written at the top level, never over a reserved claim
    /// (``reservedClaimNames``).
    package var customClaims: [String: JSONValue]

    /// What custom claims may not be named (firebase-tools `FORBIDDEN_CUSTOM_CLAIMS`, the Admin SDKs'
    /// `RESERVED_CLAIMS`).
    package static let reservedClaimNames: Set<String> = [
        "iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr", "amr", "cnf", "auth_time", "firebase", "at_hash", "c_hash",
    ]

    package init(projectID: String, uid: String, issuedAt: Int, lifetime: Int = 3600, authTime: Int? = nil, phoneNumber: String? = nil,
                email: String? = nil, emailVerified: Bool? = nil, name: String? = nil, picture: String? = nil,
                customClaims: [String: JSONValue] = [:], firebase: Firebase) {
        iss = "https://securetoken.google.com/\(projectID)"
        aud = projectID
        sub = uid
        userId = uid
        iat = issuedAt
        exp = issuedAt + lifetime
        self.authTime = authTime ?? issuedAt
        self.phoneNumber = phoneNumber
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.picture = picture
        self.customClaims = customClaims
        self.firebase = firebase
    }

    /// The claims this type writes itself: a custom claim never takes their place.
    static let ownClaimNames = Set(CodingKeys.allCases.map(\.stringValue))

    enum CodingKeys: String, CodingKey, CaseIterable {
        case iss, aud, sub, iat, exp, email, name, picture, firebase
        case userId = "user_id", authTime = "auth_time", phoneNumber = "phone_number", emailVerified = "email_verified"
    }

    /// Any claim name, for the custom ones.
    struct ClaimName: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        aud = try container.decode(String.self, forKey: .aud)
        sub = try container.decode(String.self, forKey: .sub)
        userId = try container.decode(String.self, forKey: .userId)
        iat = try container.decode(Int.self, forKey: .iat)
        exp = try container.decode(Int.self, forKey: .exp)
        authTime = try container.decode(Int.self, forKey: .authTime)
        phoneNumber = try container.decodeIfPresent(String.self, forKey: .phoneNumber)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try container.decodeIfPresent(Bool.self, forKey: .emailVerified)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        picture = try container.decodeIfPresent(String.self, forKey: .picture)
        firebase = try container.decode(Firebase.self, forKey: .firebase)
        let all = try decoder.container(keyedBy: ClaimName.self)
        var custom: [String: JSONValue] = [:]
        for key in all.allKeys where !Self.ownClaimNames.contains(key.stringValue) {
            custom[key.stringValue] = try all.decode(JSONValue.self, forKey: key)
        }
        customClaims = custom
    }

    package func encode(to encoder: any Encoder) throws {
        // Custom claims first, then the service's own over them (as firebase-tools' generateJwt
        // spreads them): a custom `email` cannot pass for the verified one.
        var all = encoder.container(keyedBy: ClaimName.self)
        for (name, value) in customClaims where !Self.ownClaimNames.contains(name) && !Self.reservedClaimNames.contains(name) {
            try all.encode(value, forKey: ClaimName(stringValue: name))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(aud, forKey: .aud)
        try container.encode(sub, forKey: .sub)
        try container.encode(userId, forKey: .userId)
        try container.encode(iat, forKey: .iat)
        try container.encode(exp, forKey: .exp)
        try container.encode(authTime, forKey: .authTime)
        try container.encodeIfPresent(phoneNumber, forKey: .phoneNumber)
        try container.encodeIfPresent(email, forKey: .email)
        try container.encodeIfPresent(emailVerified, forKey: .emailVerified)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(picture, forKey: .picture)
        try container.encode(firebase, forKey: .firebase)
    }
}
