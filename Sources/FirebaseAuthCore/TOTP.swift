import Foundation
import IdentityToolkitAPI
import Logging
import Utilities

// TOTP second factors, with the SDK's names and behaviour (FirebaseAuth 12.19
// `MultiFactor/TOTP/TOTPMultiFactorGenerator.swift`, `TOTPSecret.swift`,
// `TOTPMultFactorAssertion.swift`, `TOTPMultiFactorInfo.swift`): a secret from
// `mfaEnrollment:start` for the user's authenticator app, its code as the enrollment's proof, and
// later codes as a sign-in's second factor.

/// The secret of a TOTP enrollment: what an authenticator app is given (as text or as a QR code).
open class TOTPSecret: NSObject {
    /// The shared secret, Base32.
    private let secretKey: String
    private let hashingAlgorithm: String?
    private let codeLength: Int
    private let codeIntervalSeconds: Int
    /// When the enrollment must be finished by.
    private let enrollmentCompletionDeadline: Date?
    /// The enrollment's session (`mfaEnrollment:finalize` sends it back).
    let sessionInfo: String?

    init(secretKey: String, hashingAlgorithm: String?, codeLength: Int, codeIntervalSeconds: Int, enrollmentCompletionDeadline: Date?,
         sessionInfo: String?) {
        self.secretKey = secretKey
        self.hashingAlgorithm = hashingAlgorithm
        self.codeLength = codeLength
        self.codeIntervalSeconds = codeIntervalSeconds
        self.enrollmentCompletionDeadline = enrollmentCompletionDeadline
        self.sessionInfo = sessionInfo
    }

    /// The shared secret (Base32), to type into an authenticator app.
    open func sharedSecretKey() -> String { secretKey }

    /// `otpauth://totp/ISSUER:ACCOUNT?secret=…&issuer=…&algorithm=…&digits=…`, the Key URI Format
    /// authenticator apps read from a QR code, written as the SDK writes it (TOTPSecret.swift 46–53:
    /// the names as given, not percent-encoded); "" when the service gave no algorithm or length.
    open func generateQRCodeURL(withAccountName accountName: String, issuer: String) -> String {
        guard let hashingAlgorithm, codeLength > 0 else { return "" }
        return "otpauth://totp/\(issuer):\(accountName)?secret=\(secretKey)&issuer=\(issuer)&algorithm=\(hashingAlgorithm)&digits=\(codeLength)"
    }

    /// On a device, opens the URL in the app registered for `otpauth:` (a password manager, iCloud
    /// Keychain). The simulated device has no such app: as the SDK does when the URL cannot be
    /// opened (TOTPSecret.swift 72–74), it logs `I-AUT000019` and nothing opens. A test reads the
    /// secret with ``sharedSecretKey()`` or the URL with ``generateQRCodeURL(withAccountName:issuer:)``.
    @MainActor open func openInOTPApp(withQRCodeURL qrCodeURL: String) {
        Logger(label: "FirebaseAuth").error("I-AUT000019: URL: \(qrCodeURL) cannot be opened (the simulated device has no app for otpauth: URLs)")
    }

    override open var description: String { "TOTPSecret(\(codeLength) digits every \(codeIntervalSeconds) s, \(hashingAlgorithm ?? "no algorithm"))" }
}

/// What an assertion proves: the enrollment's secret, or the enrolled factor.
enum SecretOrID {
    case secret(TOTPSecret)
    case enrollmentID(String)
}

/// Proof of a TOTP second factor: a code of its secret.
open class TOTPMultiFactorAssertion: MultiFactorAssertion {
    let oneTimePassword: String
    let secretOrID: SecretOrID

    init(secretOrID: SecretOrID, oneTimePassword: String) {
        self.oneTimePassword = oneTimePassword
        self.secretOrID = secretOrID
        super.init(factorID: PhoneMultiFactorInfo.TOTPMultiFactorID)
    }
}

/// Makes TOTP secrets and assertions.
open class TOTPMultiFactorGenerator: NSObject {
    /// A new secret for the user of `session` (``MultiFactor/session()``): `mfaEnrollment:start`
    /// with `totpEnrollmentInfo`. A session of a sign-in has no user: `internalError` "Invalid ID
    /// token.", as the SDK answers.
    open class func generateSecret(with session: MultiFactorSession) async throws -> TOTPSecret {
        try await AuthError.forApp {
            guard let user = session.currentUser, let auth = try? user.owner() else {
                throw AuthError(.internalError, "Invalid ID token.")
            }
            let response = try await auth.backend.call(StartMFAEnrollmentRequest(idToken: session.idToken, totpEnrollmentInfo: TOTPInfo()))
            guard let info = response.totpSessionInfo else { throw AuthError(.internalError, "Error generating TOTP secret.") }
            return TOTPSecret(secretKey: info.sharedSecretKey, hashingAlgorithm: info.hashingAlgorithm, codeLength: info.verificationCodeLength ?? 0,
                              codeIntervalSeconds: info.periodSec ?? 0, enrollmentCompletionDeadline: info.finalizeEnrollmentTime.flatMap(RFC3339.date),
                              sessionInfo: info.sessionInfo)
        }
    }

    /// ``generateSecret(with:)`` with a completion, on the main queue.
    open class func generateSecret(with session: MultiFactorSession, completion: @escaping (TOTPSecret?, (any Error)?) -> Void) {
        complete(completion, with: session) { (session: MultiFactorSession) async throws -> TOTPSecret in try await generateSecret(with: session) }
    }

    /// The proof that finishes an enrollment: a code the app computed from `secret`.
    open class func assertionForEnrollment(with secret: TOTPSecret, oneTimePassword: String) -> TOTPMultiFactorAssertion {
        TOTPMultiFactorAssertion(secretOrID: .secret(secret), oneTimePassword: oneTimePassword)
    }

    /// The proof that finishes a sign-in: a code of the enrolled factor `enrollmentID` (a hint's `uid`).
    open class func assertionForSignIn(withEnrollmentID enrollmentID: String, oneTimePassword: String) -> TOTPMultiFactorAssertion {
        TOTPMultiFactorAssertion(secretOrID: .enrollmentID(enrollmentID), oneTimePassword: oneTimePassword)
    }
}

/// An enrolled TOTP factor (`factorID` `totp`). Not public, as in 12.19: apps see a
/// ``MultiFactorInfo`` whose `factorID` is ``PhoneMultiFactorInfo/TOTPMultiFactorID``.
final class TOTPMultiFactorInfo: MultiFactorInfo, @unchecked Sendable {
    init?(enrollment: MFAEnrollment) {
        guard let id = enrollment.mfaEnrollmentId, !id.isEmpty, enrollment.totpInfo != nil else { return nil }
        super.init(uid: id, displayName: enrollment.displayName, enrollmentDate: enrollment.enrolledAt.flatMap(RFC3339.date) ?? Date(),
                   factorID: PhoneMultiFactorInfo.TOTPMultiFactorID)
    }

    required init?(coder: NSCoder) { super.init(coder: coder) }

    override class var supportsSecureCoding: Bool { true }
}
