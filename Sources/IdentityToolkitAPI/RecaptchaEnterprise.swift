import Foundation

// reCAPTCHA Enterprise as the iOS SDK uses it for SMS defense: the enforcement states
// `getRecaptchaConfig` reports, the actions the SDK names its tokens with, and the call the app's
// RecaptchaEnterprise SDK makes to Google's reCAPTCHA service, which `authsim backend` simulates.

/// The reCAPTCHA enforcement state of a provider (`OFF`, `AUDIT`, `ENFORCE`).
package enum RecaptchaEnforcement: String, Sendable, Hashable, Codable, CaseIterable {
    case off = "OFF", audit = "AUDIT", enforce = "ENFORCE"

    /// `off`, `audit`, `enforce` in any case.
    package init?(argument: String) { self.init(rawValue: argument.uppercased()) }
}

/// The actions the SDK names its reCAPTCHA Enterprise tokens with (`AuthRecaptchaAction`).
package enum RecaptchaAction: String, Sendable, Hashable, Codable, CaseIterable {
    case sendVerificationCode, mfaSmsEnrollment, mfaSmsSignIn, signInWithPassword, getOobCode, signUpPassword, defaultAction
}

/// The simulated reCAPTCHA Enterprise service: what the RecaptchaEnterprise SDK asks it.
package struct RecaptchaEnterpriseExecuteRequest: Codable, Sendable, Hashable {
    package var siteKey: String
    package var action: String
    /// The app's bundle ID (keys for iOS are restricted to bundle IDs).
    package var bundleID: String
    package init(siteKey: String, action: String, bundleID: String) {
        self.siteKey = siteKey
        self.action = action
        self.bundleID = bundleID
    }
}

package struct RecaptchaEnterpriseExecuteResponse: Codable, Sendable, Hashable {
    package var token: String
    package init(token: String) { self.token = token }
}

/// What the RecaptchaEnterprise SDK's `Recaptcha.fetchClient(withSiteKey:)` asks the simulated
/// service: whether the key is one of the project's, for this app.
package struct RecaptchaEnterpriseFetchClientRequest: Codable, Sendable, Hashable {
    package var siteKey: String
    package var bundleID: String
    package init(siteKey: String, bundleID: String) {
        self.siteKey = siteKey
        self.bundleID = bundleID
    }
}

package struct RecaptchaEnterpriseFetchClientResponse: Codable, Sendable, Hashable {
    package var siteKey: String
    package init(siteKey: String) { self.siteKey = siteKey }
}

/// Where the simulated reCAPTCHA Enterprise service answers (on the backend's port). The paths
/// are authsim's: the RecaptchaEnterprise SDK's own traffic with Google is not documented.
package enum RecaptchaEnterpriseService {
    package static let executePath = "/recaptchaenterprise.googleapis.com/v1/ios:execute"
    package static let fetchClientPath = "/recaptchaenterprise.googleapis.com/v1/ios:fetchClient"
}

/// The RecaptchaEnterprise SDK's errors (`RecaptchaError`, an `NSError` whose `code` is a
/// `RecaptchaErrorCode`), as FirebaseAuth passes a `fetchClient` failure on to the app.
package enum RecaptchaEnterpriseErrors {
    /// authsim's name for the simulated SDK's error domain.
    package static let domain = "RecaptchaEnterprise.RecaptchaError"
    /// `RecaptchaErrorCode` (the RecaptchaEnterprise framework reference).
    package enum Code: Int, Sendable {
        case unknown = 0, networkError = 1, invalidSiteKey = 2, invalidKeyType = 3, invalidPackageName = 4, invalidAction = 5
        case internalError = 100
    }
}
