import Foundation

/// A JSON Web Key (RFC 7517) as Google and Apple publish them: EC keys (`crv`, `x`, `y`) or RSA
/// keys (`n`, `e`).
public struct JSONWebKey: Codable, Sendable, Hashable {
    public var kty: String
    public var kid: String?
    public var alg: String?
    public var use: String?
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?
    public init(kty: String, kid: String?, alg: String?, use: String? = "sig", crv: String? = nil, x: String? = nil,
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
public struct JSONWebKeySet: Codable, Sendable, Hashable {
    public var keys: [JSONWebKey]
    public init(keys: [JSONWebKey]) { self.keys = keys }

    /// Where Google publishes the keys of Firebase ID tokens, emulator-style:
    /// `https://www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com`.
    public static let firebaseIDTokenKeysPath = "/www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com"

    /// The key named `kid`.
    public func key(id: String) -> JSONWebKey? { keys.first { $0.kid == id } }
}

/// A JWT's header.
public struct JWTHeader: Codable, Sendable, Hashable {
    public var alg: String
    public var kid: String?
    public var typ: String?
    public init(alg: String, kid: String?, typ: String? = "JWT") {
        self.alg = alg
        self.kid = kid
        self.typ = typ
    }
}

/// The claims of a Firebase ID token, as the service writes them: `iss`
/// `https://securetoken.google.com/<project>`, `aud` the project, `sub` = `user_id` = the user's
/// local ID, `firebase.sign_in_provider` and the identities per provider.
public struct FirebaseIDTokenClaims: Codable, Sendable, Hashable {
    public struct Firebase: Codable, Sendable, Hashable {
        /// `{"phone": ["+1…"], "apple.com": ["001234.…"], "email": ["…"]}`.
        public var identities: [String: [String]]
        /// `phone`, `apple.com`, `custom`, …
        public var signInProvider: String
        /// `phone` when a second factor completed the sign-in.
        public var signInSecondFactor: String?
        /// The enrollment ID of that second factor.
        public var secondFactorIdentifier: String?
        public init(identities: [String: [String]], signInProvider: String, signInSecondFactor: String? = nil,
                    secondFactorIdentifier: String? = nil) {
            self.identities = identities
            self.signInProvider = signInProvider
            self.signInSecondFactor = signInSecondFactor
            self.secondFactorIdentifier = secondFactorIdentifier
        }
        enum CodingKeys: String, CodingKey {
            case identities, signInProvider = "sign_in_provider", signInSecondFactor = "sign_in_second_factor"
            case secondFactorIdentifier = "second_factor_identifier"
        }
    }
    public var iss: String
    public var aud: String
    public var sub: String
    public var userId: String
    public var iat: Int
    public var exp: Int
    public var authTime: Int
    public var phoneNumber: String?
    public var email: String?
    public var emailVerified: Bool?
    public var name: String?
    public var firebase: Firebase

    public init(projectID: String, uid: String, issuedAt: Int, lifetime: Int = 3600, authTime: Int? = nil, phoneNumber: String? = nil,
                email: String? = nil, emailVerified: Bool? = nil, name: String? = nil, firebase: Firebase) {
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
        self.firebase = firebase
    }

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, iat, exp, email, name, firebase
        case userId = "user_id", authTime = "auth_time", phoneNumber = "phone_number", emailVerified = "email_verified"
    }
}
