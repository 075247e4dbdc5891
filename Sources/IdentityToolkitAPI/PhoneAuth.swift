import Foundation

// Phone sign-in and the app verification before it. Fields and wire names as the SDK's RPC types
// (FirebaseAuth 12.19 `Backend/VerifyClientRequest.swift`, `Backend/RPC/SendVerificationTokenRequest.swift`,
// `VerifyPhoneNumberRequest.swift`, `GetProjectConfigRequest.swift`, `GetRecaptchaConfigRequest.swift`
// and their responses).

/// `verifyClient`: the app's APNs token; the backend answers with a receipt and pushes the matching
/// secret to the device.
public struct VerifyClientRequest: AuthRPCRequest, Hashable {
    public typealias Response = VerifyClientResponse
    public static let endpoint = IdentityToolkitEndpoint.verifyClient
    /// The APNs token, uppercase hex.
    public var appToken: String?
    /// Sent (as `true`) only for a sandbox token; absent means production.
    public var isSandbox: Bool?

    public init(appToken: String?, isSandbox: Bool) {
        self.appToken = appToken
        self.isSandbox = isSandbox ? true : nil
    }
}

public struct VerifyClientResponse: Codable, Sendable, Hashable {
    public var receipt: String?
    /// Seconds to wait for the push, as a string (the SDK reads it with `Double(_:)`).
    public var suggestedTimeout: String?
    public init(receipt: String?, suggestedTimeout: String?) {
        self.receipt = receipt
        self.suggestedTimeout = suggestedTimeout
    }
}

/// `sendVerificationCode`: the number, and the proof that the app is real (an app credential or a
/// reCAPTCHA token; neither in test mode).
public struct SendVerificationCodeRequest: AuthRPCRequest, Hashable {
    public typealias Response = SendVerificationCodeResponse
    public static let endpoint = IdentityToolkitEndpoint.sendVerificationCode
    public var phoneNumber: String?
    /// The app credential: the receipt from verifyClient…
    public var iosReceipt: String?
    /// …and the secret its silent push carried.
    public var iosSecret: String?
    /// The reCAPTCHA v2 token from the fallback page.
    public var recaptchaToken: String?
    /// A reCAPTCHA Enterprise token, or `NO_RECAPTCHA` (SMS defense in AUDIT or ENFORCE).
    public var captchaResponse: String?
    /// `RECAPTCHA_ENTERPRISE` with `captchaResponse`.
    public var recaptchaVersion: RecaptchaVersion?
    /// `CLIENT_TYPE_IOS` from the SDK.
    public var clientType: String?
    public var tenantId: String?
    /// Android's proofs, accepted in the shape only.
    public var playIntegrityToken: String?
    public var safetyNetToken: String?

    public init(phoneNumber: String?, iosReceipt: String? = nil, iosSecret: String? = nil, recaptchaToken: String? = nil,
                captchaResponse: String? = nil, recaptchaVersion: RecaptchaVersion? = nil, clientType: String? = nil, tenantId: String? = nil) {
        self.phoneNumber = phoneNumber
        self.iosReceipt = iosReceipt
        self.iosSecret = iosSecret
        self.recaptchaToken = recaptchaToken
        self.captchaResponse = captchaResponse
        self.recaptchaVersion = recaptchaVersion
        self.clientType = clientType
        self.tenantId = tenantId
    }
}

public struct SendVerificationCodeResponse: Codable, Sendable, Hashable {
    /// The verification ID the app keeps until the user types the code.
    public var sessionInfo: String?
    public init(sessionInfo: String?) { self.sessionInfo = sessionInfo }
}

/// `verifyPhoneNumber` (v1 `accounts:signInWithPhoneNumber`): the code for a session, or a
/// temporary proof; with `idToken` to link or reauthenticate.
public struct VerifyPhoneNumberRequest: AuthRPCRequest, Hashable {
    public typealias Response = VerifyPhoneNumberResponse
    public static let endpoint = IdentityToolkitEndpoint.verifyPhoneNumber
    /// The verification ID.
    public var sessionInfo: String?
    public var code: String?
    /// The signed-in user's ID token, when linking or reauthenticating.
    public var idToken: String?
    public var temporaryProof: String?
    public var phoneNumber: String?
    /// `SIGN_UP_OR_IN`, `REAUTH`, `LINK`, `UPDATE` (`VERIFY_OP_UNSPECIFIED`).
    public var operation: PhoneSignInOperation?
    public var tenantId: String?

    public init(sessionInfo: String?, code: String?, idToken: String? = nil, temporaryProof: String? = nil,
                phoneNumber: String? = nil, operation: PhoneSignInOperation? = nil, tenantId: String? = nil) {
        self.sessionInfo = sessionInfo
        self.code = code
        self.idToken = idToken
        self.temporaryProof = temporaryProof
        self.phoneNumber = phoneNumber
        self.operation = operation
        self.tenantId = tenantId
    }
}

public struct VerifyPhoneNumberResponse: Codable, Sendable, Hashable {
    public var idToken: String?
    public var refreshToken: String?
    /// Seconds, as a string ("3600").
    public var expiresIn: String?
    public var localId: String?
    public var isNewUser: Bool?
    public var phoneNumber: String?
    /// With `phoneNumber`, instead of a session: the number belongs to another account.
    public var temporaryProof: String?
    public var temporaryProofExpiresIn: String?

    public init(idToken: String? = nil, refreshToken: String? = nil, expiresIn: String? = nil, localId: String? = nil,
                isNewUser: Bool? = nil, phoneNumber: String? = nil, temporaryProof: String? = nil,
                temporaryProofExpiresIn: String? = nil) {
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.localId = localId
        self.isNewUser = isNewUser
        self.phoneNumber = phoneNumber
        self.temporaryProof = temporaryProof
        self.temporaryProofExpiresIn = temporaryProofExpiresIn
    }
}

/// `getProjectConfig`: a GET without parameters; the answer names the auth domains.
public struct GetProjectConfigRequest: AuthRPCQueryRequest, Hashable {
    public typealias Response = GetProjectConfigResponse
    public static let endpoint = IdentityToolkitEndpoint.getProjectConfig
    public init() {}
    public init(queryItems: [URLQueryItem]) {}
}

public struct GetProjectConfigResponse: Codable, Sendable, Hashable {
    public var projectId: String?
    /// The first one ending in `firebaseapp.com` (else `web.app`) hosts the reCAPTCHA page.
    public var authorizedDomains: [String]?
    public init(projectId: String?, authorizedDomains: [String]?) {
        self.projectId = projectId
        self.authorizedDomains = authorizedDomains
    }
}

/// `GET …/v2/recaptchaConfig?key=…&clientType=CLIENT_TYPE_IOS&version=RECAPTCHA_ENTERPRISE[&tenantId=…]`:
/// the project's reCAPTCHA Enterprise site key and enforcement state per provider.
public struct GetRecaptchaConfigRequest: AuthRPCQueryRequest, Hashable {
    public typealias Response = GetRecaptchaConfigResponse
    public static let endpoint = IdentityToolkitEndpoint.getRecaptchaConfig
    public var clientType: String?
    public var version: RecaptchaVersion?
    public var tenantId: String?

    public init(clientType: String? = "CLIENT_TYPE_IOS", version: RecaptchaVersion? = .recaptchaEnterprise, tenantId: String? = nil) {
        self.clientType = clientType
        self.version = version
        self.tenantId = tenantId
    }

    public init(queryItems: [URLQueryItem]) {
        func value(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }
        self.init(clientType: value("clientType"), version: value("version").map(RecaptchaVersion.init(rawValue:)), tenantId: value("tenantId"))
    }

    /// In the SDK's order: clientType, version, then tenantId when there is one.
    public var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let clientType { items.append(URLQueryItem(name: "clientType", value: clientType)) }
        if let version { items.append(URLQueryItem(name: "version", value: version.rawValue)) }
        if let tenantId { items.append(URLQueryItem(name: "tenantId", value: tenantId)) }
        return items
    }
}

public struct GetRecaptchaConfigResponse: Codable, Sendable, Hashable {
    /// One provider's enforcement: `provider` `EMAIL_PASSWORD_PROVIDER` or `PHONE_PROVIDER`,
    /// `enforcementState` `OFF`, `AUDIT` or `ENFORCE`.
    public struct EnforcementState: Codable, Sendable, Hashable {
        public var provider: RecaptchaProvider
        public var enforcementState: String
        public init(provider: RecaptchaProvider, enforcementState: String) {
            self.provider = provider
            self.enforcementState = enforcementState
        }
    }
    /// `projects/<project>/keys/<site key>`.
    public var recaptchaKey: String?
    public var recaptchaEnforcementState: [EnforcementState]?
    public var useSmsTollFraudProtection: Bool?
    public var useSmsBotScore: Bool?

    public init(recaptchaKey: String?, recaptchaEnforcementState: [EnforcementState]?, useSmsTollFraudProtection: Bool? = nil,
                useSmsBotScore: Bool? = nil) {
        self.recaptchaKey = recaptchaKey
        self.recaptchaEnforcementState = recaptchaEnforcementState
        self.useSmsTollFraudProtection = useSmsTollFraudProtection
        self.useSmsBotScore = useSmsBotScore
    }
}

/// One SMS in the Auth Emulator's outbox.
public struct VerificationCode: Codable, Sendable, Hashable {
    public var code: String
    public var phoneNumber: String
    public var sessionInfo: String
    public init(code: String, phoneNumber: String, sessionInfo: String) {
        self.code = code
        self.phoneNumber = phoneNumber
        self.sessionInfo = sessionInfo
    }
}

/// `GET /emulator/v1/projects/{project}/verificationCodes`.
public struct VerificationCodesResponse: Codable, Sendable, Hashable {
    public var verificationCodes: [VerificationCode]
    public init(verificationCodes: [VerificationCode]) { self.verificationCodes = verificationCodes }
}

/// The silent push `verifyClient` sends: `{"aps":{"content-available":1},"com.google.firebase.auth":{"receipt":…,"secret":…}}`,
/// which the app hands to `Auth.canHandleNotification(_:)`.
public struct FirebaseAuthPush: Codable, Sendable, Hashable {
    public struct APS: Codable, Sendable, Hashable {
        public var contentAvailable: Int
        enum CodingKeys: String, CodingKey { case contentAvailable = "content-available" }
    }
    public struct Credential: Codable, Sendable, Hashable {
        public var receipt: String
        public var secret: String
    }
    public var aps: APS
    public var firebaseAuth: Credential
    enum CodingKeys: String, CodingKey { case aps, firebaseAuth = "com.google.firebase.auth" }

    public init(receipt: String, secret: String) {
        aps = APS(contentAvailable: 1)
        firebaseAuth = Credential(receipt: receipt, secret: secret)
    }

    /// The payload's JSON bytes (keys sorted).
    public var payload: [UInt8] {
        // Strings and an integer always encode.
        (try? IdentityToolkitJSON.encode(self)) ?? []
    }
}

/// The error the reCAPTCHA page reports in its redirect (`firebaseError`, as the web widget writes
/// it): `{"code":"auth/network-request-failed","message":"…"}`. The SDK maps `code`
/// (FirebaseAuth 12.19 `PhoneAuthProvider.swift`, `AuthWebUtils.swift`).
public struct FirebaseWebError: Codable, Sendable, Hashable {
    public var code: String
    public var message: String
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

/// The project's reCAPTCHA config as the Admin API writes it (`projects/{p}/config`
/// `recaptchaConfig`; `updateProjectConfig` in the Admin SDKs), and as `authsim backend` takes it at
/// `GET`/`PATCH /emulator/v1/projects/{p}/config`.
public struct ProjectRecaptchaConfig: Codable, Sendable, Hashable {
    /// One managed rule for SMS toll fraud: scores from `startScore` up get `action` (`BLOCK`).
    public struct TollFraudRule: Codable, Sendable, Hashable {
        public var startScore: Double
        public var action: RecaptchaRuleAction
        public init(startScore: Double, action: RecaptchaRuleAction = .block) {
            self.startScore = startScore
            self.action = action
        }
    }
    /// `OFF`, `AUDIT` or `ENFORCE`.
    public var phoneEnforcementState: String?
    /// Always `OFF` here (email/password is not modelled).
    public var emailPasswordEnforcementState: String?
    public var useSmsTollFraudProtection: Bool?
    public var useSmsBotScore: Bool?
    public var tollFraudManagedRules: [TollFraudRule]?
    public init(phoneEnforcementState: String? = nil, emailPasswordEnforcementState: String? = nil, useSmsTollFraudProtection: Bool? = nil,
                useSmsBotScore: Bool? = nil, tollFraudManagedRules: [TollFraudRule]? = nil) {
        self.phoneEnforcementState = phoneEnforcementState
        self.emailPasswordEnforcementState = emailPasswordEnforcementState
        self.useSmsTollFraudProtection = useSmsTollFraudProtection
        self.useSmsBotScore = useSmsBotScore
        self.tollFraudManagedRules = tollFraudManagedRules
    }
}

/// The project config the Auth Emulator exposes and takes (`GET|PATCH /emulator/v1/projects/{p}/config`):
/// its `signIn` and `emailPrivacyConfig`, and what authsim adds: the Admin API's
/// `signIn.phoneNumber.testPhoneNumbers`, its `recaptchaConfig` (SMS defense), and the APNs
/// channel's settings (`authsim`, read-only: flags set them).
public struct EmulatorProjectConfig: Codable, Sendable, Hashable {
    public struct SignIn: Codable, Sendable, Hashable {
        public struct PhoneNumber: Codable, Sendable, Hashable {
            public var enabled: Bool?
            /// Fictional numbers and their fixed 6-digit codes (at most 10).
            public var testPhoneNumbers: [String: String]?
            public init(enabled: Bool? = nil, testPhoneNumbers: [String: String]? = nil) {
                self.enabled = enabled
                self.testPhoneNumbers = testPhoneNumbers
            }
        }
        /// The emulator's setting; kept and echoed (there is no email sign-in here).
        public var allowDuplicateEmails: Bool?
        public var phoneNumber: PhoneNumber?
        public init(allowDuplicateEmails: Bool? = nil, phoneNumber: PhoneNumber? = nil) {
            self.allowDuplicateEmails = allowDuplicateEmails
            self.phoneNumber = phoneNumber
        }
    }
    public struct EmailPrivacyConfig: Codable, Sendable, Hashable {
        public var enableImprovedEmailPrivacy: Bool?
        public init(enableImprovedEmailPrivacy: Bool?) { self.enableImprovedEmailPrivacy = enableImprovedEmailPrivacy }
    }
    /// The silent-push channel, as the backend was started.
    public struct Channel: Codable, Sendable, Hashable {
        public var bundleID: String?
        public var suggestedTimeoutSeconds: Int?
        public var receiptLifetimeSeconds: Int?
        public var codeLifetimeSeconds: Int?
        public var fixedSMSCode: String?
        public var idSeed: Bool?
        public init(bundleID: String?, suggestedTimeoutSeconds: Int?, receiptLifetimeSeconds: Int?, codeLifetimeSeconds: Int?,
                    fixedSMSCode: String?, idSeed: Bool?) {
            self.bundleID = bundleID
            self.suggestedTimeoutSeconds = suggestedTimeoutSeconds
            self.receiptLifetimeSeconds = receiptLifetimeSeconds
            self.codeLifetimeSeconds = codeLifetimeSeconds
            self.fixedSMSCode = fixedSMSCode
            self.idSeed = idSeed
        }
    }
    public var signIn: SignIn?
    public var emailPrivacyConfig: EmailPrivacyConfig?
    public var recaptchaConfig: ProjectRecaptchaConfig?
    public var authsim: Channel?
    public init(signIn: SignIn? = nil, emailPrivacyConfig: EmailPrivacyConfig? = nil, recaptchaConfig: ProjectRecaptchaConfig? = nil,
                authsim: Channel? = nil) {
        self.signIn = signIn
        self.emailPrivacyConfig = emailPrivacyConfig
        self.recaptchaConfig = recaptchaConfig
        self.authsim = authsim
    }
}

extension EmulatorProjectConfig: SchemaCheckedMessage {
    public static let schemaFields: Set<String> = ["signIn", "emailPrivacyConfig", "recaptchaConfig", "authsim"]
    public static var unsupportedFields: [String: String] {
        ["authsim": "the APNs channel's settings are read-only here: start authsim backend with other flags"]
    }
}

/// How a code request proves it comes from the real app: one vocabulary for the app (what
/// FirebaseAuth sent), the backend (what it checked), the timeline and the inspector. The raw
/// values are the timeline's (`app.signedIn`'s `path`).
public enum AppVerification: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The receipt and secret a silent push carried (`iosReceipt`, `iosSecret`).
    case silentPush
    /// A solved reCAPTCHA v2 challenge (`recaptchaToken`): the fallback's page and redirect.
    case reCAPTCHA
    /// A reCAPTCHA Enterprise token that SMS defense assessed (`captchaResponse`): no push, no page.
    case recaptchaEnterprise
    /// No proof: the app's `isAppVerificationDisabledForTesting`, which the backend takes for its
    /// test numbers only.
    case testMode
    /// No proof, taken by a backend run with `--accept-unverified-code-requests` (as the Auth
    /// Emulator takes every request).
    case unverified

    public var description: String {
        switch self {
        case .silentPush: "silent push"
        case .reCAPTCHA: "reCAPTCHA"
        case .recaptchaEnterprise: "reCAPTCHA Enterprise"
        case .testMode: "test number (no proof)"
        case .unverified: "unverified (accepted as the Auth Emulator does)"
        }
    }
}
