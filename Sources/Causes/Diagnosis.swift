import Foundation

/// A run's root cause in one sentence, and the fix.
package struct Diagnosis: Sendable, Hashable {
    /// Every cause a diagnosis can name: the `code` of `authsim explain --json` and of the
    /// inspector's flows. Each is decided in one place: `Explainer.causes` (a run's timeline),
    /// ``PushRefusals`` (one push APNs refused), ``BackendRefusals`` (one refused request) or
    /// ``ReceiverStateExplainer`` (a receiver's logs).
    package enum Code: String, Sendable, Hashable, CaseIterable, Codable {
        case ok, unknown
        // The app's configuration and Google's front end.
        case apiKeyIOSAppBlocked, apiKeyInvalid, blockingFunction, schemeNotRegistered, notificationsNotForwarded
        case recaptchaSDKNotLinked, recaptchaActionMissing, smsDefenseTollFraud, smsDefenseRefused
        case redirectNotForwarded, redirectRefused, redirectToOtherApp
        // Sign in with Apple.
        case appleTokenReplayed, appleNonceMissing, appleNonceMismatch, appleTokenExpired, appleAudience
        case appleIDAlreadyLinked, appleUserMismatch, appleError
        // The APNs channel.
        case tokenTypeMismatch, badDeviceToken, keyAndTeamSwapped, invalidProviderToken, untrustedProviderKey
        case expiredProviderToken, pushRejected, pushUnanswered, pushLost, auditFallbackPushLost, pushTooSlow
        case pushNotHandled, pushNotDelivered, droppedByFault, allAccepted, nothingReceived, unreadableLines
        case auditFallback
        // The backend's refusals.
        case wrongSecondFactorCode, mfaPendingCredentialExpired, mfaPendingCredentialInvalid
        case phoneFirstFactorForMultiFactorUser, unsupportedFirstFactor, secondFactorAlreadyEnrolled, secondFactorNotFound
        case wrongCode, sessionExpired, regionBlocked, quotaExceeded, realNumberInTestMode, userDisabled
        case missingAppCredential, invalidAppCredential, captchaCheckFailed, backendRefused
        // The user, and what no push proved.
        case userCancelled, authError, apnsRegistrationFailed, noAPNsToken, simulator, fallback
    }

    package let code: Code
    package let cause: String
    package let fix: String

    /// `cause` and `fix` are sentences without their final period (a reason's meaning quoted at
    /// the end keeps Apple's, which is dropped here): whoever shows them ends them.
    package init(_ code: Code, cause: String, fix: String) {
        self.code = code
        self.cause = Self.unstopped(cause)
        self.fix = Self.unstopped(fix)
    }

    private static func unstopped(_ sentence: String) -> String {
        var text = Substring(sentence)
        while text.last == "." || text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
