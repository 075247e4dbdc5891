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

/// Where the simulated reCAPTCHA Enterprise service answers (on the backend's port).
package enum RecaptchaEnterpriseService {
    package static let executePath = "/recaptchaenterprise.googleapis.com/v1/ios:execute"
}
