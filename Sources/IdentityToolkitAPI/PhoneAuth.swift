import Foundation

// Phone sign-in and the app verification before it. Fields and wire names as the SDK's RPC types
// (FirebaseAuth 12.19 `Backend/VerifyClientRequest.swift`, `Backend/RPC/SendVerificationTokenRequest.swift`,
// `VerifyPhoneNumberRequest.swift`, `GetProjectConfigRequest.swift`, `GetRecaptchaConfigRequest.swift`
// and their responses).

/// `verifyClient`: the app's APNs token; the backend answers with a receipt and pushes the matching
/// secret to the device.
package struct VerifyClientRequest: AuthRPCRequest, Hashable {
    package typealias Response = VerifyClientResponse
    package static let endpoint = IdentityToolkitEndpoint.verifyClient
    /// The APNs token, uppercase hex.
    package var appToken: String?
    /// Sent (as `true`) only for a sandbox token; absent means production.
    package var isSandbox: Bool?

    package init(appToken: String?, isSandbox: Bool) {
        self.appToken = appToken
        self.isSandbox = isSandbox ? true : nil
    }
}

package struct VerifyClientResponse: Codable, Sendable, Hashable {
    package var receipt: String?
    /// Seconds to wait for the push, as a string (the SDK reads it with `Double(_:)`).
    package var suggestedTimeout: String?
    package init(receipt: String?, suggestedTimeout: String?) {
        self.receipt = receipt
        self.suggestedTimeout = suggestedTimeout
    }
}

/// `sendVerificationCode`: the number, and the proof that the app is real (an app credential or a
/// reCAPTCHA token; neither in test mode).
package struct SendVerificationCodeRequest: AuthRPCRequest, Hashable {
    package typealias Response = SendVerificationCodeResponse
    package static let endpoint = IdentityToolkitEndpoint.sendVerificationCode
    package static let sdkSendsTenantID = true
    package var phoneNumber: String?
    /// The app credential: the receipt from verifyClient…
    package var iosReceipt: String?
    /// …and the secret its silent push carried.
    package var iosSecret: String?
    /// The reCAPTCHA v2 token from the fallback page.
    package var recaptchaToken: String?
    /// A reCAPTCHA Enterprise token, or `NO_RECAPTCHA` (SMS defense in AUDIT or ENFORCE).
    package var captchaResponse: String?
    /// `RECAPTCHA_ENTERPRISE` with `captchaResponse`.
    package var recaptchaVersion: RecaptchaVersion?
    /// `CLIENT_TYPE_IOS` from the SDK.
    package var clientType: String?
    package var tenantId: String?
    /// Android's proofs, accepted in the shape only.
    package var playIntegrityToken: String?
    package var safetyNetToken: String?

    package init(phoneNumber: String?, iosReceipt: String? = nil, iosSecret: String? = nil, recaptchaToken: String? = nil,
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

package struct SendVerificationCodeResponse: Codable, Sendable, Hashable {
    /// The verification ID the app keeps until the user types the code.
    package var sessionInfo: String?
    package init(sessionInfo: String?) { self.sessionInfo = sessionInfo }
}

/// `verifyPhoneNumber` (v1 `accounts:signInWithPhoneNumber`): the code for a session, or a
/// temporary proof; with `idToken` to link or reauthenticate.
package struct VerifyPhoneNumberRequest: AuthRPCRequest, Hashable {
    package typealias Response = VerifyPhoneNumberResponse
    package static let endpoint = IdentityToolkitEndpoint.verifyPhoneNumber
    package static let sdkSendsTenantID = true
    /// The verification ID.
    package var sessionInfo: String?
    package var code: String?
    /// The signed-in user's ID token, when linking or reauthenticating.
    package var idToken: String?
    package var temporaryProof: String?
    package var phoneNumber: String?
    /// `SIGN_UP_OR_IN`, `REAUTH`, `LINK`, `UPDATE` (`VERIFY_OP_UNSPECIFIED`).
    package var operation: PhoneSignInOperation?
    package var tenantId: String?

    package init(sessionInfo: String?, code: String?, idToken: String? = nil, temporaryProof: String? = nil,
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

package struct VerifyPhoneNumberResponse: Codable, Sendable, Hashable {
    package var idToken: String?
    package var refreshToken: String?
    /// Seconds, as a string ("3600").
    package var expiresIn: String?
    package var localId: String?
    package var isNewUser: Bool?
    package var phoneNumber: String?
    /// With `phoneNumber`, instead of a session: the number belongs to another account.
    package var temporaryProof: String?
    package var temporaryProofExpiresIn: String?

    package init(idToken: String? = nil, refreshToken: String? = nil, expiresIn: String? = nil, localId: String? = nil,
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
package struct GetProjectConfigRequest: AuthRPCQueryRequest, Hashable {
    package typealias Response = GetProjectConfigResponse
    package static let endpoint = IdentityToolkitEndpoint.getProjectConfig
    package init() {}
    package init(queryItems: [URLQueryItem]) {}
}

package struct GetProjectConfigResponse: Codable, Sendable, Hashable {
    package var projectId: String?
    /// The first one ending in `firebaseapp.com` (else `web.app`) hosts the reCAPTCHA page.
    package var authorizedDomains: [String]?
    package init(projectId: String?, authorizedDomains: [String]?) {
        self.projectId = projectId
        self.authorizedDomains = authorizedDomains
    }

    private enum CodingKeys: String, CodingKey { case projectId, authorizedDomains }

    /// `authorizedDomains` as a list, or as a string holding a JSON list, as the SDK reads it
    /// (GetProjectConfigResponse.swift 24–34); a string that is not a list of strings leaves it nil there too.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        projectId = try container.decodeIfPresent(String.self, forKey: .projectId)
        if let text = try? container.decodeIfPresent(String.self, forKey: .authorizedDomains) {
            authorizedDomains = try? JSONDecoder().decode([String].self, from: Data(text.utf8))
        } else {
            authorizedDomains = try container.decodeIfPresent([String].self, forKey: .authorizedDomains)
        }
    }
}

/// `GET …/v2/recaptchaConfig?key=…&clientType=CLIENT_TYPE_IOS&version=RECAPTCHA_ENTERPRISE[&tenantId=…]`:
/// the project's reCAPTCHA Enterprise site key and enforcement state per provider.
package struct GetRecaptchaConfigRequest: AuthRPCQueryRequest, Hashable {
    package typealias Response = GetRecaptchaConfigResponse
    package static let endpoint = IdentityToolkitEndpoint.getRecaptchaConfig
    package static let sdkSendsTenantID = true
    package var clientType: String?
    package var version: RecaptchaVersion?
    package var tenantId: String?

    package init(clientType: String? = "CLIENT_TYPE_IOS", version: RecaptchaVersion? = .recaptchaEnterprise, tenantId: String? = nil) {
        self.clientType = clientType
        self.version = version
        self.tenantId = tenantId
    }

    package init(queryItems: [URLQueryItem]) {
        func value(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }
        self.init(clientType: value("clientType"), version: value("version").map(RecaptchaVersion.init(rawValue:)), tenantId: value("tenantId"))
    }

    /// In the SDK's order: clientType, version, then tenantId when there is one.
    package var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let clientType { items.append(URLQueryItem(name: "clientType", value: clientType)) }
        if let version { items.append(URLQueryItem(name: "version", value: version.rawValue)) }
        if let tenantId { items.append(URLQueryItem(name: "tenantId", value: tenantId)) }
        return items
    }
}

package struct GetRecaptchaConfigResponse: Codable, Sendable, Hashable {
    /// One provider's enforcement: `provider` `EMAIL_PASSWORD_PROVIDER` or `PHONE_PROVIDER`,
    /// `enforcementState` `OFF`, `AUDIT` or `ENFORCE`.
    package struct EnforcementState: Codable, Sendable, Hashable {
        package var provider: RecaptchaProvider
        package var enforcementState: String
        package init(provider: RecaptchaProvider, enforcementState: String) {
            self.provider = provider
            self.enforcementState = enforcementState
        }
    }
    /// `projects/<project>/keys/<site key>`.
    package var recaptchaKey: String?
    package var recaptchaEnforcementState: [EnforcementState]?
    package var useSmsTollFraudProtection: Bool?
    package var useSmsBotScore: Bool?

    package init(recaptchaKey: String?, recaptchaEnforcementState: [EnforcementState]?, useSmsTollFraudProtection: Bool? = nil,
                useSmsBotScore: Bool? = nil) {
        self.recaptchaKey = recaptchaKey
        self.recaptchaEnforcementState = recaptchaEnforcementState
        self.useSmsTollFraudProtection = useSmsTollFraudProtection
        self.useSmsBotScore = useSmsBotScore
    }
}

/// One SMS in the Auth Emulator's outbox.
package struct VerificationCode: Codable, Sendable, Hashable {
    package var code: String
    package var phoneNumber: String
    package var sessionInfo: String
    package init(code: String, phoneNumber: String, sessionInfo: String) {
        self.code = code
        self.phoneNumber = phoneNumber
        self.sessionInfo = sessionInfo
    }
}

/// `GET /emulator/v1/projects/{project}/verificationCodes`.
package struct VerificationCodesResponse: Codable, Sendable, Hashable {
    package var verificationCodes: [VerificationCode]
    package init(verificationCodes: [VerificationCode]) { self.verificationCodes = verificationCodes }
}

/// The silent push `verifyClient` sends: `{"aps":{"content-available":1},"com.google.firebase.auth":{"receipt":…,"secret":…}}`,
/// which the app hands to `Auth.canHandleNotification(_:)`.
package struct FirebaseAuthPush: Codable, Sendable, Hashable {
    package struct APS: Codable, Sendable, Hashable {
        package var contentAvailable: Int
        enum CodingKeys: String, CodingKey { case contentAvailable = "content-available" }
    }
    package struct Credential: Codable, Sendable, Hashable {
        package var receipt: String
        package var secret: String
    }
    package var aps: APS
    package var firebaseAuth: Credential
    enum CodingKeys: String, CodingKey { case aps, firebaseAuth = "com.google.firebase.auth" }

    package init(receipt: String, secret: String) {
        aps = APS(contentAvailable: 1)
        firebaseAuth = Credential(receipt: receipt, secret: secret)
    }

    /// The payload's JSON bytes (keys sorted).
    package var payload: [UInt8] {
        // Strings and an integer always encode.
        (try? IdentityToolkitJSON.encode(self)) ?? []
    }
}

/// The error the reCAPTCHA page reports in its redirect (`firebaseError`, as the web widget writes
/// it): `{"code":"auth/network-request-failed","message":"…"}`. The SDK maps `code`
/// (FirebaseAuth 12.19 `PhoneAuthProvider.swift`, `AuthWebUtils.swift`).
package struct FirebaseWebError: Codable, Sendable, Hashable {
    package var code: String
    package var message: String
    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

/// The project's reCAPTCHA config as the Admin API writes it (`projects/{p}/config`
/// `recaptchaConfig`; `updateProjectConfig` in the Admin SDKs), and as `authsim backend` takes it at
/// `GET`/`PATCH /emulator/v1/projects/{p}/config`.
package struct ProjectRecaptchaConfig: Codable, Sendable, Hashable {
    /// One managed rule for SMS toll fraud: scores from `startScore` up get `action` (`BLOCK`).
    package struct TollFraudRule: Codable, Sendable, Hashable {
        package var startScore: Double
        package var action: RecaptchaRuleAction
        package init(startScore: Double, action: RecaptchaRuleAction = .block) {
            self.startScore = startScore
            self.action = action
        }
    }
    /// `OFF`, `AUDIT` or `ENFORCE`.
    package var phoneEnforcementState: String?
    /// Always `OFF` here (email/password is not modelled).
    package var emailPasswordEnforcementState: String?
    package var useSmsTollFraudProtection: Bool?
    package var useSmsBotScore: Bool?
    package var tollFraudManagedRules: [TollFraudRule]?
    package init(phoneEnforcementState: String? = nil, emailPasswordEnforcementState: String? = nil, useSmsTollFraudProtection: Bool? = nil,
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
package struct EmulatorProjectConfig: Codable, Sendable, Hashable {
    package struct SignIn: Codable, Sendable, Hashable {
        package struct PhoneNumber: Codable, Sendable, Hashable {
            package var enabled: Bool?
            /// Fictional numbers and their fixed 6-digit codes (at most 10).
            package var testPhoneNumbers: [String: String]?
            package init(enabled: Bool? = nil, testPhoneNumbers: [String: String]? = nil) {
                self.enabled = enabled
                self.testPhoneNumbers = testPhoneNumbers
            }
        }
        /// The emulator's setting; kept and echoed (there is no email sign-in here).
        package var allowDuplicateEmails: Bool?
        package var phoneNumber: PhoneNumber?
        package init(allowDuplicateEmails: Bool? = nil, phoneNumber: PhoneNumber? = nil) {
            self.allowDuplicateEmails = allowDuplicateEmails
            self.phoneNumber = phoneNumber
        }
    }
    package struct EmailPrivacyConfig: Codable, Sendable, Hashable {
        package var enableImprovedEmailPrivacy: Bool?
        package init(enableImprovedEmailPrivacy: Bool?) { self.enableImprovedEmailPrivacy = enableImprovedEmailPrivacy }
    }
    /// The silent-push channel, as the backend was started.
    package struct Channel: Codable, Sendable, Hashable {
        package var bundleID: String?
        package var suggestedTimeoutSeconds: Int?
        package var receiptLifetimeSeconds: Int?
        package var codeLifetimeSeconds: Int?
        package var fixedSMSCode: String?
        package var idSeed: Bool?
        package init(bundleID: String?, suggestedTimeoutSeconds: Int?, receiptLifetimeSeconds: Int?, codeLifetimeSeconds: Int?,
                    fixedSMSCode: String?, idSeed: Bool?) {
            self.bundleID = bundleID
            self.suggestedTimeoutSeconds = suggestedTimeoutSeconds
            self.receiptLifetimeSeconds = receiptLifetimeSeconds
            self.codeLifetimeSeconds = codeLifetimeSeconds
            self.fixedSMSCode = fixedSMSCode
            self.idSeed = idSeed
        }
    }
    package var signIn: SignIn?
    package var emailPrivacyConfig: EmailPrivacyConfig?
    package var recaptchaConfig: ProjectRecaptchaConfig?
    package var authsim: Channel?
    package init(signIn: SignIn? = nil, emailPrivacyConfig: EmailPrivacyConfig? = nil, recaptchaConfig: ProjectRecaptchaConfig? = nil,
                authsim: Channel? = nil) {
        self.signIn = signIn
        self.emailPrivacyConfig = emailPrivacyConfig
        self.recaptchaConfig = recaptchaConfig
        self.authsim = authsim
    }
}

extension EmulatorProjectConfig: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["signIn", "emailPrivacyConfig", "recaptchaConfig", "authsim"]
    package static var unsupportedFields: [String: String] {
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
