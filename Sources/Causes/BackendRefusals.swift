import AuthBackend
import Foundation
import IdentityToolkitAPI

/// The backend's refusals, each with its cause and its fix: what `authsim explain` says of a run
/// the backend refused and what the inspector shows beside a refused sign-in. The one place that
/// states them.
package enum BackendRefusals {
    /// The causes ``diagnose(endpoint:error:detail:cause:message:testMode:)`` names.
    package static let codes: [Diagnosis.Code] = [
        .wrongSecondFactorCode, .mfaPendingCredentialExpired, .mfaPendingCredentialInvalid, .phoneFirstFactorForMultiFactorUser,
        .unsupportedFirstFactor, .secondFactorAlreadyEnrolled, .secondFactorNotFound, .wrongCode, .sessionExpired, .regionBlocked,
        .quotaExceeded, .realNumberInTestMode, .userDisabled, .missingAppCredential, .invalidAppCredential, .captchaCheckFailed,
        .backendRefused,
    ]

    /// Why `endpoint` answered `error` (with the service's `detail`, and this backend's `cause`
    /// where one error has several), and what fixes it; `message` is the refusal as the run
    /// showed it, for errors without a sentence of their own; `testMode` says whether the app
    /// had app verification disabled for testing.
    package static func diagnose(endpoint: String, error: IdentityToolkitError.Code, detail: String?, cause: RejectionCause?,
                                message: String, testMode: Bool = false) -> Diagnosis {
        let operation = BackendOperation(rawValue: endpoint)
        let secondFactorEndpoint = operation.map(BackendOperation.secondFactorOperations.contains) ?? false
        switch error {
        case .invalidCode where secondFactorEndpoint:
            return Diagnosis(.wrongSecondFactorCode,
                             cause: "the user typed a code for the second factor that is not the one texted to it, so \(endpoint) failed with invalidVerificationCode (17044)",
                             fix: "let the user retry with the resolver's session, or request a new code with verifyPhoneNumber(with: hint, uiDelegate:, multiFactorSession: resolver.session)")
        case .invalidMFAPendingCredential:
            if cause == .pendingCredentialExpired {
                return Diagnosis(.mfaPendingCredentialExpired,
                                 cause: "the first factor's pending credential had expired when the second factor was asked for (\(detail ?? "")), so \(endpoint) failed with invalidMultiFactorSession (17083)",
                                 fix: "finish the second factor within 10 minutes of the first; after that, sign in with the first factor again for a new MultiFactorResolver")
            }
            return Diagnosis(.mfaPendingCredentialInvalid,
                             cause: "the second factor came with a pending credential the backend did not accept (\(detail ?? "malformed or spent")), so \(endpoint) failed with invalidMultiFactorSession (17083)",
                             fix: "use the resolver of the latest secondFactorRequired error, once; sign in with the first factor again for a new one")
        case .unsupportedFirstFactor where operation == .sendVerificationCode || operation == .signInWithPhoneNumber:
            return Diagnosis(.phoneFirstFactorForMultiFactorUser,
                             cause: "the number belongs to an account with a second factor, and a phone number cannot be the first factor of a multi-factor account, so \(endpoint) failed with unsupportedFirstFactor (17089) before any code was sent",
                             fix: "sign this user in with their other provider (Sign in with Apple) and finish with the MultiFactorResolver of the secondFactorRequired (17078) error; the guide's secondFactorRequired branch is never reached with a phone credential")
        case .unsupportedFirstFactor:
            return Diagnosis(.unsupportedFirstFactor,
                             cause: "the user signed in by phone, and Firebase does not allow multi-factor for phone-first-factor accounts, so \(endpoint) failed with unsupportedFirstFactor (17089)",
                             fix: "enroll second factors for users who sign in with Apple (or email), with a verified email")
        case .secondFactorExists:
            return Diagnosis(.secondFactorAlreadyEnrolled, cause: "the number is already one of the account's second factors, so enrolling it again failed with secondFactorAlreadyEnrolled (17087)",
                             fix: "check user.multiFactor.enrolledFactors before enrolling; enroll another number")
        case .mfaEnrollmentNotFound:
            return Diagnosis(.secondFactorNotFound, cause: "the second factor named is not one of the account's (\(detail ?? "")), so \(endpoint) failed with multiFactorInfoNotFound (17084)",
                             fix: "use one of resolver.hints (or user.multiFactor.enrolledFactors) as they are")
        case .invalidCode:
            return Diagnosis(.wrongCode, cause: "the user typed a code that is not the one texted, so signIn failed with invalidVerificationCode (17044)",
                             fix: "let the user retry (5 wrong codes end the session) or resend the code")
        case .sessionExpired:
            return Diagnosis(.sessionExpired, cause: "the code had expired when the user typed it, so signIn failed with sessionExpired (17051)",
                             fix: "call verifyPhoneNumber again for a new code (codes are valid for a few minutes)")
        case .operationNotAllowed:
            return Diagnosis(.regionBlocked, cause: "the project's SMS region policy does not allow this number's region\(detail.map { " (\($0))" } ?? ""), so no code was sent",
                             fix: "allow the region in Firebase console → Authentication → Settings → SMS region policy")
        case .quotaExceeded:
            return Diagnosis(.quotaExceeded, cause: "the project's SMS quota is used up\(detail.map { " (\($0))" } ?? ""), so no code was sent",
                             fix: "raise the quota (Authentication → Settings → SMS quota) or use test phone numbers for testing")
        case .missingAppCredential where testMode:
            return Diagnosis(.realNumberInTestMode,
                             cause: "app verification is disabled for testing but the number is not one of the project's test numbers, so the backend refused to text it (no app credential, no reCAPTCHA token)",
                             fix: "use a fictional test number (Authentication → Sign-in method → Phone → test numbers) with isAppVerificationDisabledForTesting, or turn it off for real numbers")
        case .userDisabled:
            return Diagnosis(.userDisabled,
                             cause: "an admin disabled this user (the Admin SDK's update_user(uid, disabled=True), or the Firebase console): the app verification and the code were fine, but the backend answered USER_DISABLED, which the SDK reports as userDisabled (17005); refreshing the user's token fails the same way",
                             fix: "enable the user again (update_user(uid, disabled=False)), or tell the user their account is disabled: the error is final and retrying does not help")
        case .missingAppCredential:
            return Diagnosis(.missingAppCredential,
                             cause: "the code request carried no proof that it came from the app: no silent-push receipt, no reCAPTCHA token (MISSING_APP_CREDENTIAL)",
                             fix: "let the SDK verify the app (a request made by hand must carry iosReceipt and iosSecret, or a recaptchaToken); for automated tests use test numbers with isAppVerificationDisabledForTesting")
        case .invalidAppCredential:
            return Diagnosis(.invalidAppCredential,
                             cause: "the receipt and secret do not match one this backend pushed, or they expired (INVALID_APP_CREDENTIAL): the SDK drops its credential and verifies the app once more",
                             fix: "nothing to fix if the retry signed in; if it keeps failing, check that the app takes pushes from this project's backend")
        case .captchaCheckFailed:
            return Diagnosis(.captchaCheckFailed, cause: "the reCAPTCHA token was refused (CAPTCHA_CHECK_FAILED: captchaCheckFailed, 17056)",
                             fix: "solve the page again: a token is good for one code request")
        default:
            return Diagnosis(.backendRefused, cause: "\(endpoint) refused: \(message)",
                             fix: "see the error: \(error)")
        }
    }
}
