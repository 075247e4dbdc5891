import Foundation
import IdentityToolkitAPI
import Utilities

// Rules decided from the backend's state alone: whether a proof that the request comes from the
// app (the silent push's receipt and secret, a solved reCAPTCHA's token) or a temporary proof of
// a number is good. `IdentityToolkit` commits what they decide and answers; these values are
// tested without it (Tests/BackendRouteTests/BackendRuleTests.swift).

extension BackendState {
    /// What an app credential (`iosReceipt`, `iosSecret`) is.
    enum AppCredentialCheck: Hashable {
        /// Issued here by verifyClient, its secret matches, in time.
        case valid
        case refuse(IdentityToolkitError)
    }

    /// - Parameter secretDigest: the request's secret's SHA-256 (how the state keeps secrets),
    ///   compared in constant time.
    func checkAppCredential(receipt: String, secretDigest: String?, now: Date, lifetime: TimeInterval) -> AppCredentialCheck {
        guard let secretDigest else { return .refuse(IdentityToolkitError(.missingAppCredential, "the iOS secret is missing")) }
        guard let stored = receipts[receipt], ConstantTime.equals(stored.secretSHA256, secretDigest) else {
            return .refuse(IdentityToolkitError(.invalidAppCredential, "the receipt and secret do not match a credential this backend issued"))
        }
        guard now.timeIntervalSince(stored.issuedAt) <= lifetime else {
            return .refuse(IdentityToolkitError(.invalidAppCredential, "the app credential has expired"))
        }
        return .valid
    }

    /// What a reCAPTCHA v2 token (`recaptchaToken`) is.
    enum RecaptchaTokenCheck: Hashable {
        /// Issued here, unused, in time: spend it (`recaptchaUsed`).
        case spend(digest: String)
        case refuse(IdentityToolkitError)
    }

    /// Single-use and short-lived: unknown is `MALFORMED`; used before, or too old, `EXPIRED`
    /// (the service's `CAPTCHA_CHECK_FAILED` messages).
    /// - Parameter digest: the token's SHA-256.
    func checkRecaptchaToken(digest: String, now: Date, lifetime: TimeInterval) -> RecaptchaTokenCheck {
        guard let stored = recaptchaTokens[digest] else {
            return .refuse(IdentityToolkitError(.captchaCheckFailed, "Recaptcha verification failed - MALFORMED"))
        }
        guard !stored.used, now.timeIntervalSince(stored.issuedAt) <= lifetime else {
            return .refuse(IdentityToolkitError(.captchaCheckFailed, "Recaptcha verification failed - EXPIRED"))
        }
        return .spend(digest: digest)
    }

    /// What a temporary proof (the answer to linking a number another account holds) is.
    enum TemporaryProofCheck: Hashable {
        /// Issued here for `phoneNumber`, unused, in time: spend it (`temporaryProofUsed`) when the sign-in commits.
        case spend(digest: String, phoneNumber: String)
        case refuse(IdentityToolkitError)
    }

    /// Single-use, for the number it was issued for, within its lifetime.
    func checkTemporaryProof(digest: String, claimedNumber: String?, now: Date, lifetime: TimeInterval) -> TemporaryProofCheck {
        guard let claimedNumber, !claimedNumber.isEmpty else { return .refuse(IdentityToolkitError(.missingPhoneNumber)) }
        guard let stored = temporaryProofs[digest], !stored.used, stored.phoneNumber == claimedNumber,
              now.timeIntervalSince(stored.at) <= lifetime else {
            return .refuse(IdentityToolkitError(.invalidTemporaryProof))
        }
        return .spend(digest: digest, phoneNumber: stored.phoneNumber)
    }
}
