import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation

/// How the local backend is set up: the Firebase project and iOS app it plays, and its rules.
package struct BackendConfiguration: Sendable {
    package var projectID = "authsim-demo"
    /// The key apps are given (GoogleService-Info.plist `API_KEY`, the banner's).
    package var apiKey = "AIzaSyA-authsim-local-api-key-0000000"
    /// Which keys the front end takes: any non-empty key by default, as the Firebase Auth Emulator
    /// takes them (so suites that send `fake-api-key` work unchanged); ``APIKeyCheck/projectKey``
    /// for a project configured with its key (`--api-key`), as Google's front end checks it.
    package var apiKeyCheck = APIKeyCheck.anyKey
    /// The iOS app registered in the project: silent pushes go to this topic.
    package var bundleID = "com.example.authsim"
    /// Fictional numbers with fixed 6-digit codes: no SMS, no app verification needed (at most 10).
    package var testPhoneNumbers: [String: String] = [:]
    /// The code every SMS carries (6 digits) instead of a random one: what a CI run that reads no
    /// outbox needs (firebase-tools#4290). `nil`: random codes.
    package var fixedSMSCode: String?
    /// Derive new users' local IDs from this seed and their phone number or Apple ID instead of
    /// at random, so the same user has the same ID in every run (firebase-tools#3421). `nil`: random.
    package var idSeed: String?
    /// Take a code request that carries no app verification at all (no receipt and secret, no
    /// reCAPTCHA token) for any number, as the Firebase Auth Emulator does: what a test suite
    /// written against the emulator needs. Off by default: a device's request without proof is
    /// MISSING_APP_CREDENTIAL, and that is what authsim is for.
    package var acceptUnverifiedCodeRequests = false
    /// What verifyClient tells the app to wait for the push, in seconds.
    package var suggestedTimeout = 5
    /// How long after a sign-in (the ID token's `auth_time`) a user may delete the account, change
    /// the email or password, or unlink a provider with their ID token: later, Google answers
    /// CREDENTIAL_TOO_OLD_LOGIN_AGAIN and the SDK `requiresRecentLogin` (17014) until the user
    /// reauthenticates. Five minutes, as Google's; 0: no limit, as the Auth Emulator.
    package var recentLoginSeconds = 300
    /// How long an SMS code (a session) stays valid.
    package var codeLifetime: TimeInterval = 300
    /// How long an app credential (receipt and secret) stays valid.
    package var receiptLifetime: TimeInterval = 3600
    /// How long a reCAPTCHA token stays valid (each is good for one sendVerificationCode).
    package var recaptchaTokenLifetime: TimeInterval = 120
    /// Wrong codes allowed per session before TOO_MANY_ATTEMPTS_TRY_LATER.
    package var maximumCodeAttempts = 5
    /// The SMS region policy; `nil`: every region.
    package var smsRegionPolicy: SMSRegionPolicy?
    /// SMS a single number may get per day (test numbers do not count); `nil`: no limit.
    package var smsPerNumberPerDay: Int?
    /// SMS the project may send per day; `nil`: no limit.
    package var smsPerProjectPerDay: Int?
    /// Whether SMS multi-factor authentication is on for the project (Firebase console →
    /// Authentication → Sign-in method → Multi-factor); off, its calls are OPERATION_NOT_ALLOWED.
    package var multiFactorEnabled = true
    /// TOTP second factors (Identity Platform's `mfa.providerConfigs` `totpProviderConfig`): the
    /// time steps either side of now whose codes are taken (`adjacentIntervals`, 0 to 10); nil:
    /// TOTP is off (OPERATION_NOT_ALLOWED). On, with Google's default of 5, as phone is.
    package var totpAdjacentIntervals: Int? = 5
    /// Second factors a user may enroll.
    package var maximumSecondFactors = 5
    /// How long a first factor's `mfaPendingCredential` stays good for its second factor.
    package var mfaPendingCredentialLifetime: TimeInterval = 600
    /// How long an email's code (password reset, email verification) stays good: an hour, as
    /// Firebase's password reset links.
    package var oobCodeLifetime: TimeInterval = 3600
    /// How long a temporary proof (linking a number another account holds) stays good.
    package var temporaryProofLifetime: TimeInterval = 3600
    /// How long what a sign-in leaves behind (a session, a receipt, a reCAPTCHA token, a pending
    /// credential, an SMS or email in the outbox) is kept once its lifetime is over, so that it
    /// still answers with its own error (SESSION_EXPIRED, reCAPTCHA's EXPIRED) before it is
    /// dropped; after that it is unknown (INVALID_SESSION_INFO, MALFORMED). An SMS is kept a day
    /// while an SMS quota is set (quotas count the day's).
    package var expiredRetention: TimeInterval = 600
    /// A journal (`--state`) that has gained this many lines since it was last written, and holds
    /// twice the state's records, is rewritten with the state's records: the file follows the state,
    /// not the history, and a state whose records are all live is not rewritten for nothing.
    var journalCompactionLines = 20_000
    /// How the reCAPTCHA page's challenge ends.
    package var recaptchaOutcome: ReCAPTCHAOutcome = .pass
    /// Who the user signs in as on an identity provider's page (`OAuthProvider`'s web flow).
    package var providerPageOutcome: ProviderPageOutcome = .firstAccount
    /// reCAPTCHA SMS defense on the phone provider (Firebase console → Authentication → Settings
    /// → reCAPTCHA): OFF, AUDIT or ENFORCE.
    package var phoneRecaptchaEnforcement: RecaptchaEnforcement = .off
    /// The project's reCAPTCHA Enterprise key for iOS (the last part of `projects/<p>/keys/<key>`).
    package var recaptchaSiteKey = "6LcAuthsimLocalIOSSiteKey000000000000000"
    /// Whether the toll-fraud risk score decides (the project's `useSmsTollFraudProtection`).
    package var useSmsTollFraudProtection = true
    /// The project's `useSmsBotScore`, reported by `recaptchaConfig`.
    package var useSmsBotScore = false
    /// The SMS toll-fraud risk every assessment finds (0 = surely legitimate, 1 = surely fraud):
    /// what a scenario sets to play an attacker's number.
    package var tollFraudRiskScore = 0.1
    /// Scores above this are blocked (the project's toll-fraud managed rule).
    package var tollFraudThreshold = 0.5
    /// Services IDs accepted as identity-token audiences beside the bundle ID (Sign in with Apple on the web).
    package var appleServicesIDs: [String] = []
    /// The project number (`GCM_SENDER_ID` in GoogleService-Info.plist): the consumer named in
    /// the front end's API-key errors.
    package var projectNumber = "123456789012"
    /// The API key's application restriction, as the Google Cloud console sets it (Credentials →
    /// the key → Application restrictions → iOS apps): the bundle IDs whose requests
    /// (`X-Ios-Bundle-Identifier`) it accepts. Empty: no restriction.
    package var apiKeyIOSBundleIDs: [String] = []
    /// `getProjectConfig`'s authorized domains (the first `firebaseapp.com` one is the auth domain).
    package var authorizedDomains: [String] { ["localhost", "\(projectID).firebaseapp.com", "\(projectID).web.app"] }
    package init() {}

    /// Whether the front end takes `given` (a request's `?key=` or `x-goog-api-key`, the reCAPTCHA
    /// page's `apiKey`); empty and missing keys are never taken.
    package func accepts(apiKey given: String) -> Bool {
        guard !given.isEmpty else { return false }
        switch apiKeyCheck {
        case .anyKey: return true
        case .projectKey: return ConstantTime.equals(given, apiKey)
        }
    }

    /// Checks the test numbers (E.164, at most 10, 6-digit codes) and the recent-login window.
    package func validated() throws(IdentityToolkitError) -> BackendConfiguration {
        guard recentLoginSeconds >= 0 else {
            throw IdentityToolkitError(.invalidConfig, "the recent-login window is seconds, 0 or more, not \(recentLoginSeconds)")
        }
        if let intervals = totpAdjacentIntervals, !(0...10).contains(intervals) {
            throw IdentityToolkitError(.invalidConfig, "TOTP's adjacent intervals are 0 to 10 (Identity Platform's range), not \(intervals)")
        }
        guard testPhoneNumbers.count <= 10 else {
            throw IdentityToolkitError(.invalidConfig, "at most 10 test phone numbers, \(testPhoneNumbers.count) given")
        }
        var normalized: [String: String] = [:]
        for (number, code) in testPhoneNumbers {
            guard code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw IdentityToolkitError(.invalidConfig, "test code for \(number) must be 6 digits")
            }
            normalized[try PhoneNumbers.validate(number)] = code
        }
        if let code = fixedSMSCode, code.count != 6 || !code.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw IdentityToolkitError(.invalidConfig, "the fixed SMS code must be 6 digits, not \(code)")
        }
        var copy = self
        copy.testPhoneNumbers = normalized
        return copy
    }
}

/// Which API keys the backend's front end takes (docs/auth-emulator.md, "API keys").
package enum APIKeyCheck: String, Sendable, CaseIterable {
    /// Any non-empty key: the Firebase Auth Emulator's rule (`server.ts`, `getProjectIdByApiKey`:
    /// "any non-empty string as a valid key for the default projectId").
    case anyKey
    /// Only the project's ``BackendConfiguration/apiKey``; another is 400 `API_KEY_INVALID`, as
    /// Google's front end answers.
    case projectKey
}
