import Foundation
import IdentityToolkitAPI
import Utilities

// reCAPTCHA SMS defense (reCAPTCHA Enterprise on the phone provider), as Identity Platform runs it
// (cloud.google.com/identity-platform/docs/recaptcha-sms and the v2 `getRecaptchaConfig`
// reference), and the reCAPTCHA Enterprise service the app's RecaptchaEnterprise SDK talks to,
// simulated here as Apple's side of Sign in with Apple is.
//
// - OFF: no assessment; a code needs an app credential (the silent push) or a reCAPTCHA v2 token.
// - AUDIT: a request with a reCAPTCHA Enterprise token that passes the assessment (a real token
//   for the right action and site key, a toll-fraud risk under the threshold) gets its code with no
//   app credential. One that fails it is INVALID_APP_CREDENTIAL unless it also carries an app
//   credential or a v2 token (the SDK's fallback: it clears its credential and verifies the app by
//   silent push, sending `NO_RECAPTCHA`, as the docs describe "fallback verification methods").
// - ENFORCE: only a passing reCAPTCHA Enterprise token gets a code; MISSING_RECAPTCHA_TOKEN,
//   INVALID_RECAPTCHA_TOKEN, INVALID_RECAPTCHA_ACTION, MISSING_/INVALID_RECAPTCHA_VERSION,
//   MISSING_CLIENT_TYPE otherwise (the codes the Firebase JS SDK maps). A risk over the threshold
//   is refused with INVALID_RECAPTCHA_TOKEN and the score in the detail: the service's code for a
//   blocked score is not documented (the SDK answers 17999 for any of these).

/// What one reCAPTCHA Enterprise assessment found (for timelines and `explain`).
package struct RecaptchaAssessment: Sendable, Hashable, Codable {
    package enum Verdict: String, Sendable, Hashable, CaseIterable, Codable {
        /// A real token, for the right action and key, and a toll-fraud risk under the threshold.
        case passed
        /// No token, or the SDK's `NO_RECAPTCHA` (its client could not get one).
        case missing
        /// A token the service never issued, expired (2 minutes) or already used.
        case invalid
        /// A token minted for another action.
        case wrongAction
        /// The toll-fraud risk score is over the project's threshold.
        case tollFraud
    }
    package var verdict: Verdict
    package var action: String?
    package var riskScore: Double?
    package var detail: String

    package init(verdict: Verdict, action: String?, riskScore: Double?, detail: String) {
        self.verdict = verdict
        self.action = action
        self.riskScore = riskScore
        self.detail = detail
    }
}

/// The project's SMS defense as it stands: the configuration's at start, then the project config's.
struct SMSDefenseSettings: Sendable, Codable, Hashable {
    var phone: RecaptchaEnforcement
    var useSmsTollFraudProtection: Bool
    var useSmsBotScore: Bool
    /// Scores above this are blocked (the toll-fraud managed rule's start score).
    var tollFraudThreshold: Double
    /// What every assessment finds (the simulation's, not the project's).
    var tollFraudRiskScore: Double

    init(_ configuration: BackendConfiguration) {
        phone = configuration.phoneRecaptchaEnforcement
        useSmsTollFraudProtection = configuration.useSmsTollFraudProtection
        useSmsBotScore = configuration.useSmsBotScore
        tollFraudThreshold = configuration.tollFraudThreshold
        tollFraudRiskScore = configuration.tollFraudRiskScore
    }
}

extension CoreCall {

    /// The fake answer the SDK sends when its reCAPTCHA Enterprise client gave no token.
    static let noRecaptcha = "NO_RECAPTCHA"

    mutating func recaptchaConfig(_ request: GetRecaptchaConfigRequest) throws(IdentityToolkitError) -> GetRecaptchaConfigResponse {
        let endpoint = BackendOperation.recaptchaConfig
        if let version = request.version, version != .recaptchaEnterprise {
            throw reject(endpoint, IdentityToolkitError(.invalidRecaptchaVersion, "The reCAPTCHA version must be RECAPTCHA_ENTERPRISE, not \(version)."))
        }
        let phone = smsDefenseSettings.phone
        let enabled = phone != .off
        emit(.recaptchaConfig(phone: phone))
        return GetRecaptchaConfigResponse(
            recaptchaKey: enabled ? "projects/\(configuration.projectID)/keys/\(configuration.recaptchaSiteKey)" : nil,
            recaptchaEnforcementState: [
                .init(provider: .emailPassword, enforcementState: RecaptchaEnforcement.off.rawValue),
                .init(provider: .phone, enforcementState: phone.rawValue),
            ],
            useSmsTollFraudProtection: enabled ? smsDefenseSettings.useSmsTollFraudProtection : nil,
            useSmsBotScore: enabled ? smsDefenseSettings.useSmsBotScore : nil)
    }

    /// The simulated service's answer to `Recaptcha.fetchClient(withSiteKey:)`: the key must be
    /// the project's (whatever its SMS defense state: the key exists either way) and restricted to
    /// the app's bundle ID. An empty key (what FirebaseAuth passes when the config named none) is
    /// refused as any other.
    func fetchRecaptchaClient(_ request: RecaptchaEnterpriseFetchClientRequest) throws(IdentityToolkitError) -> RecaptchaEnterpriseFetchClientResponse {
        try checkRecaptchaKey(request.siteKey, bundleID: request.bundleID)
        return RecaptchaEnterpriseFetchClientResponse(siteKey: request.siteKey)
    }

    /// The simulated service's key check, for a client and for each token: the project's key
    /// (compared in constant time; an empty one never is), restricted to the app's bundle ID.
    private func checkRecaptchaKey(_ siteKey: String, bundleID: String) throws(IdentityToolkitError) {
        guard !siteKey.isEmpty, ConstantTime.equals(siteKey, configuration.recaptchaSiteKey) else {
            throw IdentityToolkitError(.invalidSiteKey, "\"\(siteKey)\" is not a reCAPTCHA Enterprise key of project \(configuration.projectID).")
        }
        guard bundleID == configuration.bundleID else {
            throw IdentityToolkitError(.invalidSiteKey, "The key \(siteKey) is restricted to bundle ID \(configuration.bundleID), not \(bundleID).")
        }
    }

    mutating func executeRecaptchaEnterprise(_ request: RecaptchaEnterpriseExecuteRequest) throws(IdentityToolkitError) -> RecaptchaEnterpriseExecuteResponse {
        guard smsDefenseSettings.phone != .off else {
            throw IdentityToolkitError(.recaptchaNotEnabled, "reCAPTCHA Enterprise is not enabled for project \(configuration.projectID).")
        }
        try checkRecaptchaKey(request.siteKey, bundleID: request.bundleID)
        let token = "03A" + randomString(bytes: 96)
        commit(.enterpriseToken(digest: BackendCore.digest(token), action: request.action, issuedAt: now))
        return RecaptchaEnterpriseExecuteResponse(token: token)
    }

    /// Assesses a request's reCAPTCHA Enterprise token for `action` (spending it).
    mutating func assess(captchaResponse: String?, action: RecaptchaAction, endpoint: BackendOperation) throws(IdentityToolkitError) -> RecaptchaAssessment {
        guard let token = captchaResponse, !token.isEmpty, token != Self.noRecaptcha else {
            return RecaptchaAssessment(verdict: .missing, action: nil, riskScore: nil,
                                       detail: captchaResponse == Self.noRecaptcha ? "the app sent NO_RECAPTCHA: its reCAPTCHA Enterprise client gave no token"
                                           : "the request carries no reCAPTCHA Enterprise token")
        }
        let digest = BackendCore.digest(token)
        guard let stored = state.enterpriseTokens[digest], !stored.used,
              now.timeIntervalSince(stored.issuedAt) <= BackendCore.enterpriseTokenLifetime else {
            return RecaptchaAssessment(verdict: .invalid, action: nil, riskScore: nil,
                                       detail: "the token is unknown, expired (2 minutes) or already used")
        }
        commit(.enterpriseTokenUsed(digest: digest))
        guard stored.action == action.rawValue else {
            return RecaptchaAssessment(verdict: .wrongAction, action: stored.action, riskScore: nil,
                                       detail: "the token was made for action \(stored.action), not \(action.rawValue)")
        }
        let settings = smsDefenseSettings
        let score = settings.tollFraudRiskScore
        if settings.useSmsTollFraudProtection, score > settings.tollFraudThreshold {
            return RecaptchaAssessment(verdict: .tollFraud, action: stored.action, riskScore: score,
                                       detail: "the SMS toll-fraud risk score \(Self.score(score)) is above the project's threshold \(Self.score(settings.tollFraudThreshold))")
        }
        return RecaptchaAssessment(verdict: .passed, action: stored.action, riskScore: score,
                                   detail: "a valid token for \(action.rawValue), toll-fraud risk \(Self.score(score))")
    }

    static func score(_ value: Double) -> String { String(format: "%.2f", value) }

    /// What SMS defense decides for a code request: `true` when a passing assessment alone lets
    /// the code go out (AUDIT, ENFORCE); `false` when the legacy app verification must decide
    /// (OFF, or AUDIT's fallback). Throws ENFORCE's refusals and AUDIT's INVALID_APP_CREDENTIAL.
    mutating func smsDefense(captchaResponse: String?, recaptchaVersion: RecaptchaVersion?, clientType: String?, action: RecaptchaAction,
                    hasLegacyProof: Bool, endpoint: BackendOperation) throws(IdentityToolkitError) -> Bool {
        let state = smsDefenseSettings.phone
        guard state != .off else { return false }
        if state == .enforce {
            guard let clientType, !clientType.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingClientType)) }
            guard let recaptchaVersion, !recaptchaVersion.rawValue.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingRecaptchaVersion)) }
            guard recaptchaVersion == .recaptchaEnterprise else {
                throw reject(endpoint, IdentityToolkitError(.invalidRecaptchaVersion, "The reCAPTCHA version must be RECAPTCHA_ENTERPRISE, not \(recaptchaVersion)."))
            }
            guard let token = captchaResponse, !token.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingRecaptchaToken)) }
        }
        let assessment = try assess(captchaResponse: captchaResponse, action: action, endpoint: endpoint)
        emit(.recaptchaAssessment(endpoint: endpoint, enforcement: state, assessment))
        if assessment.verdict == .passed { return true }
        if state == .audit {
            // The SDK's fallback: a request that also proves the app the legacy way decides there.
            if hasLegacyProof { return false }
            throw reject(endpoint, IdentityToolkitError(
                .invalidAppCredential, "reCAPTCHA SMS defense (AUDIT) did not pass: \(assessment.detail); verify the app by silent push or reCAPTCHA v2"))
        }
        switch assessment.verdict {
        case .wrongAction: throw reject(endpoint, IdentityToolkitError(.invalidRecaptchaAction, assessment.detail))
        default: throw reject(endpoint, IdentityToolkitError(.invalidRecaptchaToken, assessment.detail))
        }
    }
}


/// A fleet's project config, changed at run time (``IdentityToolkit/updateProjectConfig(_:)``):
/// a record of the shared store, so that every node answers with it.
struct SharedProjectConfig: Sendable, Codable, Hashable {
    var testPhoneNumbers: [String: String]
    var smsDefense: SMSDefenseSettings
    var signIn: EmulatorSignInSettings
}

/// The Auth Emulator's own sign-in settings (`signIn.allowDuplicateEmails`, kept so that a config
/// imported from the emulator goes back to it unchanged; `emailPrivacyConfig.enableImprovedEmailPrivacy`,
/// which email and password sign-in and password reset follow). Email enumeration protection is
/// on, as in every Firebase project made since September 2023 (the emulator's default is off; an
/// emulator export's config sets it as it was).
struct EmulatorSignInSettings: Sendable, Hashable, Codable {
    var allowDuplicateEmails = false
    var enableImprovedEmailPrivacy = true
}

extension BackendCore {
    /// How long a reCAPTCHA Enterprise token stays good (the service's two minutes).
    static let enterpriseTokenLifetime: TimeInterval = 120
}
