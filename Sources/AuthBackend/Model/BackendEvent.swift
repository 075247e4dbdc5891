import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation

/// Something the backend did, for timelines. Codable so that a fleet's nodes can keep their
/// events in the shared store for every node's inspector (``BackendEventSink``); the coding is
/// Swift's own for enums, read back only by the same authsim (the store's schema is versioned).
public enum BackendEvent: Sendable, Codable {
    /// verifyClient made a receipt and is about to push its secret.
    case pushing(appToken: String, environment: APNsEnvironment, receipt: String)
    /// …and APNs answered.
    case verifyClient(appToken: String, environment: APNsEnvironment, receipt: String, push: PushResult)
    case smsSent(SMSMessage)
    case codeReused(phoneNumber: String)
    case signedIn(uid: String, phoneNumber: String, isNewUser: Bool)
    /// signInWithIdp for apple.com: signed in, linked or reauthenticated.
    case appleSignIn(uid: String, sub: String, isNewUser: Bool, linked: Bool)
    /// The user's Apple grant was revoked, or the account deleted.
    case appleRevoked(uid: String?, sub: String)
    case accountDeleted(uid: String)
    /// A first factor for a user with a second factor: a pending credential, not a session.
    case secondFactorRequired(uid: String, provider: String)
    /// A phone was enrolled as a second factor.
    case secondFactorEnrolled(uid: String, enrollmentID: String, phoneNumber: String)
    /// A second factor completed a sign-in.
    case secondFactorSignedIn(uid: String, enrollmentID: String)
    /// The app asked for the project's reCAPTCHA config (SMS defense's state).
    case recaptchaConfig(phone: RecaptchaEnforcement)
    /// reCAPTCHA SMS defense assessed a code request's token.
    case recaptchaAssessment(endpoint: BackendOperation, enforcement: RecaptchaEnforcement, RecaptchaAssessment)
    /// A request refused with `error`; `cause` where one wire error has several causes a user
    /// fixes differently.
    case rejected(endpoint: BackendOperation, IdentityToolkitError, cause: RejectionCause?)
    /// Google's front end refused a request before Identity Toolkit saw it (a missing, invalid or
    /// iOS-restricted API key): the request's path and the error.
    case frontendRefused(path: String, IdentityToolkitError)
    /// A queued ``BackendFault`` answered a request instead of the toolkit.
    case faultAnswered(path: String, BackendFault)
    /// A sign-in or sign-up without a phone or an identity provider: `provider` `password`,
    /// `anonymous` or `custom`.
    case accountSignIn(uid: String, provider: String, email: String?, isNewUser: Bool)
    /// An email went out with a single-use code (the email outbox).
    case emailSent(OobEmail)
    /// A code was asked for `phoneNumber` and the app proved itself this way (what the inspector's
    /// sign-ins show as the verification path).
    /// `receipt` is the app credential's, when a silent push proved the app.
    case codeRequested(phoneNumber: String, proof: AppVerification, receipt: String?, endpoint: BackendOperation)
}

/// Why the backend refused a request, where one wire error has several causes that a user fixes
/// differently (the service's message says which; the app sees only the error's code). Kept as a
/// code, so that `explain` and the inspector never read the message.
public enum RejectionCause: String, Sendable, Codable, CaseIterable {
    /// `INVALID_MFA_PENDING_CREDENTIAL`: not one this backend issued.
    case pendingCredentialUnknown
    /// …already used for a second factor.
    case pendingCredentialSpent
    /// …older than its lifetime (10 minutes by default).
    case pendingCredentialExpired
    /// `INVALID_IDP_RESPONSE`: Apple's identity token is for an audience the project's Apple
    /// provider does not accept (neither the bundle ID nor a configured services ID).
    case appleTokenAudience
    /// …issued by someone else than `https://appleid.apple.com`.
    case appleTokenIssuer
    /// …past its `exp`.
    case appleTokenExpired
    /// …empty, not a JWT, or without a subject.
    case appleTokenMalformed
}

/// The backend's operations, as timelines and explanations name them.
public enum BackendOperation: String, Sendable, Hashable, Codable, CaseIterable {
    case verifyClient, sendVerificationCode, signInWithPhoneNumber, signInWithIdp, revokeToken, deleteAccount, setAccountInfo
    case getAccountInfo, secureToken, mfaEnrollmentStart, mfaEnrollmentFinalize, mfaEnrollmentWithdraw, mfaSignInStart, mfaSignInFinalize
    case recaptchaConfig, signInWithCustomToken, signUp, signInWithPassword, sendOobCode, resetPassword

    /// The second factor's operations.
    public static let secondFactorOperations: Set<BackendOperation> = [
        .mfaEnrollmentStart, .mfaEnrollmentFinalize, .mfaEnrollmentWithdraw, .mfaSignInStart, .mfaSignInFinalize,
    ]
}
