import Foundation

/// The RecaptchaEnterprise SDK, as an app links it (CocoaPods or SPM `RecaptchaEnterprise`).
/// FirebaseAuth finds it at run time by class name (`RecaptchaEnterprise.RCARecaptcha`); an
/// `AppHost` without one has not linked it, and a project in AUDIT or ENFORCE then fails
/// `verifyPhoneNumber` with `recaptchaSDKNotLinked` (17208).
package struct RecaptchaEnterpriseSDK: Sendable, Hashable {
    /// Where Google's reCAPTCHA service answers the SDK: in a simulated world, the backend's
    /// `http://host:port` (it plays the service).
    package var service: String
    /// Whether the linked version has `RCAAction` (older ones do not: `recaptchaActionCreationFailed`, 17210).
    package var hasActionClass: Bool
    /// Whether `execute(withAction:)` gives a token (false: it fails, after a client was fetched).
    package var executeGivesToken: Bool

    package init(service: String, hasActionClass: Bool = true, executeGivesToken: Bool = true) {
        self.service = service
        self.hasActionClass = hasActionClass
        self.executeGivesToken = executeGivesToken
    }
}
