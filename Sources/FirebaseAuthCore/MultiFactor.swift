import Foundation
import IdentityToolkitAPI
import Utilities
import Synchronization

// Phone multi-factor, with the SDK's names and behaviour (FirebaseAuth 12.19
// `MultiFactor/MultiFactor.swift`, `MultiFactorSession.swift`, `MultiFactorResolver.swift`,
// `MultiFactorInfo.swift`, `Phone/PhoneMultiFactor*.swift`). The second factor's code goes out
// behind the same app verification as a first factor's (``PhoneAuthProvider``), so a token-type
// mismatch or forgotten forwarding breaks it the same way.

/// One enrolled second factor: `uid` (the enrollment ID), `displayName`, `enrollmentDate`,
/// `factorID` (`phone`).
///
/// `@unchecked Sendable` because the compiler does not check a class with subclasses: every stored
/// property here and in ``PhoneMultiFactorInfo`` is a `let` of a Sendable type, and the class is
/// not `open`, so no subclass outside this module can add mutable state.
public class MultiFactorInfo: NSObject, NSSecureCoding, @unchecked Sendable {
    /// The enrollment ID (`mfaEnrollmentId`), which `unenroll(withFactorUID:)` and the sign-in use.
    public let uid: String
    public let displayName: String?
    public let enrollmentDate: Date
    /// ``PhoneMultiFactorInfo/PhoneMultiFactorID`` or ``PhoneMultiFactorInfo/TOTPMultiFactorID``.
    public let factorID: String

    init(uid: String, displayName: String?, enrollmentDate: Date, factorID: String) {
        self.uid = uid
        self.displayName = displayName
        self.enrollmentDate = enrollmentDate
        self.factorID = factorID
    }

    override public var description: String { "\(type(of: self))(\(factorID) \(uid.prefix(8))…\(displayName.map { " \"\($0)\"" } ?? ""))" }

    // MARK: NSSecureCoding, with the SDK's keys (MultiFactorInfo.swift 50–80)

    public class var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(uid, forKey: "uid")
        coder.encode(displayName, forKey: "displayName")
        coder.encode(enrollmentDate, forKey: "enrollmentDate")
        coder.encode(factorID, forKey: "factorID")
    }

    /// Nil for an archive without an ID, a factor or a date, as the SDK's.
    public required init?(coder: NSCoder) {
        guard let uid = coder.decodeIfPresent(of: NSString.self, forKey: "uid"), let factorID = coder.decodeIfPresent(of: NSString.self, forKey: "factorID"),
              let enrollmentDate = coder.decodeIfPresent(of: NSDate.self, forKey: "enrollmentDate") else { return nil }
        self.uid = uid as String
        self.factorID = factorID as String
        self.enrollmentDate = enrollmentDate as Date
        displayName = coder.decodeIfPresent(of: NSString.self, forKey: "displayName").map { $0 as String }
    }

    /// The factors of a service answer (`mfaInfo`): phone and TOTP ones (MultiFactor.swift
    /// 253–262); another kind is left out, as the SDK logs and skips an unsupported type.
    static func factors(from enrollments: [MFAEnrollment]) -> [MultiFactorInfo] {
        enrollments.compactMap { PhoneMultiFactorInfo(enrollment: $0) ?? TOTPMultiFactorInfo(enrollment: $0) }
    }
}

/// A phone second factor: `phoneNumber` is the whole number once signed in, and only its last
/// four digits (`+*******1234`) in the hints of a ``MultiFactorResolver``.
public final class PhoneMultiFactorInfo: MultiFactorInfo, @unchecked Sendable {
    /// `FIRPhoneMultiFactorID`.
    public static let PhoneMultiFactorID = "phone"
    /// `FIRTOTPMultiFactorID`.
    public static let TOTPMultiFactorID = "totp"
    public let phoneNumber: String

    override public class var supportsSecureCoding: Bool { true }

    /// The factor's archive and `phoneNumber` (PhoneMultiFactorInfo.swift 47–63).
    override public func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(phoneNumber, forKey: "phoneNumber")
    }

    public required init?(coder: NSCoder) {
        guard let phoneNumber = coder.decodeIfPresent(of: NSString.self, forKey: "phoneNumber") else { return nil }
        self.phoneNumber = phoneNumber as String
        super.init(coder: coder)
    }

    /// The SDK stops with `fatalError` on an enrollment without an ID or a number; this skips it.
    package init?(enrollment: MFAEnrollment) {
        guard let id = enrollment.mfaEnrollmentId, !id.isEmpty, let phone = enrollment.phoneInfo else { return nil }
        phoneNumber = phone
        super.init(uid: id, displayName: enrollment.displayName,
                   enrollmentDate: enrollment.enrolledAt.flatMap(RFC3339.date) ?? Date(),
                   factorID: Self.PhoneMultiFactorID)
    }
}

/// Proof of a second factor, for ``MultiFactor/enroll(with:displayName:)`` and
/// ``MultiFactorResolver/resolveSignIn(with:)``.
///
/// `@unchecked Sendable`: see ``MultiFactorInfo``; the subclass adds only a `let`.
open class MultiFactorAssertion: NSObject {
    public let factorID: String
    init(factorID: String) { self.factorID = factorID }
}

/// A phone second factor's proof: the credential of its SMS code.
public final class PhoneMultiFactorAssertion: MultiFactorAssertion {
    let authCredential: PhoneAuthCredential
    init(credential: PhoneAuthCredential) {
        authCredential = credential
        super.init(factorID: PhoneMultiFactorInfo.PhoneMultiFactorID)
    }
}

/// `PhoneMultiFactorGenerator.assertion(with:)`.
open class PhoneMultiFactorGenerator: NSObject {
    public static func assertion(with phoneAuthCredential: PhoneAuthCredential) -> PhoneMultiFactorAssertion {
        PhoneMultiFactorAssertion(credential: phoneAuthCredential)
    }
}

/// What a second factor's code is requested for: enrolling one (a signed-in user's ID token) or
/// finishing a sign-in (the first factor's pending credential). Made by
/// ``MultiFactor/session()`` and by a ``MultiFactorResolver``; passed to
/// `verifyPhoneNumber(_:uiDelegate:multiFactorSession:)`.
public final class MultiFactorSession: NSObject {
    /// The user's ID token when the session was made (enrollment).
    let idToken: String?
    /// The first factor's pending credential (sign-in).
    let mfaPendingCredential: String?
    /// The user enrolling (the SDK's `currentUser`), held weakly; nil for a sign-in.
    private let enrolling: WeakUser
    /// The factor chosen for a sign-in: `verifyPhoneNumber(with:uiDelegate:multiFactorSession:)`
    /// sets it, as the SDK does, and its `uid` goes out as `mfaEnrollmentId`.
    private let chosen = Mutex<MultiFactorInfo?>(nil)

    init(idToken: String?, mfaPendingCredential: String?, user: User? = nil) {
        self.idToken = idToken
        self.mfaPendingCredential = mfaPendingCredential
        enrolling = WeakUser(user: user)
    }

    /// The user an enrollment session was made for, while it lives.
    var currentUser: User? { enrolling.user }

    var multiFactorInfo: MultiFactorInfo? {
        get { chosen.withLock { $0 } }
        set { chosen.withLock { $0 = newValue } }
    }

    override public var description: String {
        idToken != nil ? "MultiFactorSession(enrollment)" : "MultiFactorSession(sign-in\(multiFactorInfo.map { ", factor \($0.uid.prefix(8))…" } ?? ""))"
    }
}

/// `user.multiFactor`: the user's second factors, and enrolling or removing one.
public final class MultiFactor: NSObject, NSSecureCoding {
    private let factors: Mutex<[MultiFactorInfo]>
    /// The user this belongs to (weakly, as in the SDK).
    private let owner = Mutex<WeakUser>(WeakUser(user: nil))

    package init(factors: [MultiFactorInfo] = []) { self.factors = Mutex(factors) }

    // MARK: NSSecureCoding: the enrolled factors, not the user (MultiFactor.swift 273–292)

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encode(enrolledFactors as NSArray, forKey: "enrolledFactors") }

    public required init?(coder: NSCoder) {
        // TOTP factors too, as the SDK's list (MultiFactor.swift 283–284).
        let factors = coder.decodeIfPresent(of: [NSArray.self, MultiFactorInfo.self, PhoneMultiFactorInfo.self, TOTPMultiFactorInfo.self],
                                            forKey: "enrolledFactors")
        self.factors = Mutex(factors as? [MultiFactorInfo] ?? [])
    }

    /// The second factors enrolled, as the last `getAccountInfo` listed them.
    public var enrolledFactors: [MultiFactorInfo] { factors.withLock { $0 } }

    var user: User? {
        get { owner.withLock { $0.user } }
        set { owner.withLock { $0 = WeakUser(user: newValue) } }
    }

    func replace(with enrollments: [MFAEnrollment]) { factors.withLock { $0 = MultiFactorInfo.factors(from: enrollments) } }

    /// A session for enrolling a second factor: carries the user's ID token of this moment.
    public func session() async throws -> MultiFactorSession {
        return try AuthError.forApp {
            guard let user else { throw AuthError(.nullUser, "this MultiFactor's user is gone (signed out and released)") }
            return MultiFactorSession(idToken: user.rawIDToken, mfaPendingCredential: nil, user: user)
        }
    }

    /// Enrolls the second factor `assertion` proves (the code of
    /// `verifyPhoneNumber(_:uiDelegate:multiFactorSession:)` with this user's session): the
    /// backend's `accounts/mfaEnrollment:finalize`, then, as the SDK does (`MultiFactor.swift`
    /// `enroll`), a **new** `User` is made from the answer's tokens (`completeSignIn`: a token
    /// refresh and `getAccountInfo`) and becomes the current user. A `User` the app held before
    /// keeps its old tokens and its old `enrolledFactors`: read `Auth.auth().currentUser` after
    /// enrolling, as on a device.
    public func enroll(with assertion: MultiFactorAssertion, displayName: String?) async throws {
        try await AuthError.forApp {
            guard let user else { throw AuthError(.nullUser, "this MultiFactor's user is gone (signed out and released)") }
            let request: FinalizeMFAEnrollmentRequest
            if let phone = assertion as? PhoneMultiFactorAssertion {
                request = FinalizeMFAEnrollmentRequest(
                    idToken: user.rawIDToken, displayName: displayName,
                    phoneVerificationInfo: FinalizeMFAPhoneRequestInfo(sessionInfo: phone.authCredential.verificationID,
                                                                       code: phone.authCredential.verificationCode))
            } else if let totp = assertion as? TOTPMultiFactorAssertion {
                // The SDK stops with fatalError on a sign-in assertion here (MultiFactor.swift 119).
                guard case .secret(let secret) = totp.secretOrID else {
                    throw AuthError(.internalError, "a TOTP enrollment needs assertionForEnrollment(with:oneTimePassword:), not a sign-in assertion")
                }
                request = FinalizeMFAEnrollmentRequest(idToken: user.rawIDToken, displayName: displayName,
                                                       totpVerificationInfo: MFATOTPVerificationInfo(sessionInfo: secret.sessionInfo,
                                                                                                     verificationCode: totp.oneTimePassword))
            } else {
                // The SDK returns without calling the completion for a factor it does not know.
                throw AuthError(.internalError, "this auth core enrolls phone and TOTP second factors, not \(assertion.factorID)")
            }
            let auth = try user.owner()
            let response = try await auth.backend.call(request)
            let renewed = try await auth.completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: nil)
            try auth.makeCurrent(renewed)
        }
    }

    /// Removes the second factor `factorInfo`: `accounts/mfaEnrollment:withdraw`, then a new `User`
    /// from the answer's tokens becomes the current user, as after ``enroll(with:displayName:)``.
    /// If loading it fails (the tokens were revoked with the factor), the user is signed out, as
    /// the SDK does.
    public func unenroll(with factorInfo: MultiFactorInfo) async throws {
        try await unenroll(withFactorUID: factorInfo.uid)
    }

    /// ``unenroll(with:)`` by enrollment ID.
    public func unenroll(withFactorUID factorUID: String) async throws {
        try await AuthError.forApp {
            guard let user else { throw AuthError(.nullUser, "this MultiFactor's user is gone (signed out and released)") }
            let auth = try user.owner()
            let response = try await auth.backend.call(WithdrawMFARequest(idToken: user.rawIDToken, mfaEnrollmentId: factorUID))
            do {
                let renewed = try await auth.completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: nil)
                try auth.makeCurrent(renewed)
            } catch {
                try? auth.signOut()
                throw error
            }
        }
    }
}

/// What finishes a sign-in that needs a second factor: `hints` (the user's factors, numbers
/// masked), the `session` to request a code with, and `resolveSignIn(with:)`. It arrives in the
/// `secondFactorRequired` (17078) error's `userInfo[AuthErrorUserInfoMultiFactorResolverKey]`.
public final class MultiFactorResolver: NSObject {
    public let session: MultiFactorSession
    public let hints: [MultiFactorInfo]
    public let auth: Auth
    let mfaPendingCredential: String?

    init(mfaPendingCredential: String?, hints: [MultiFactorInfo], auth: Auth) {
        self.mfaPendingCredential = mfaPendingCredential
        self.hints = hints
        self.auth = auth
        session = MultiFactorSession(idToken: nil, mfaPendingCredential: mfaPendingCredential)
    }

    override public var description: String { "MultiFactorResolver(\(hints.count) hint\(hints.count == 1 ? "" : "s"): \(hints))" }

    /// Finishes the sign-in with the second factor's proof: `accounts/mfaSignIn:finalize`, then the
    /// user is loaded (a token refresh and `getAccountInfo`) and becomes the current user.
    public func resolveSignIn(with assertion: MultiFactorAssertion) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            let request: FinalizeMFASignInRequest
            if let phone = assertion as? PhoneMultiFactorAssertion {
                request = FinalizeMFASignInRequest(
                    mfaPendingCredential: mfaPendingCredential,
                    phoneVerificationInfo: FinalizeMFAPhoneRequestInfo(sessionInfo: phone.authCredential.verificationID,
                                                                       code: phone.authCredential.verificationCode))
            } else if let totp = assertion as? TOTPMultiFactorAssertion {
                // The SDK stops with fatalError on an enrollment assertion here (MultiFactorResolver.swift 45).
                guard case .enrollmentID(let enrollmentID) = totp.secretOrID else {
                    throw AuthError(.internalError, "a TOTP sign-in needs assertionForSignIn(withEnrollmentID:oneTimePassword:), not an enrollment assertion")
                }
                request = FinalizeMFASignInRequest(mfaPendingCredential: mfaPendingCredential,
                                                   totpVerificationInfo: MFATOTPSignInInfo(verificationCode: totp.oneTimePassword),
                                                   mfaEnrollmentId: enrollmentID)
            } else {
                throw AuthError(.internalError, "this auth core resolves phone and TOTP second factors, not \(assertion.factorID)")
            }
            let response = try await auth.backend.call(request)
            let user = try await auth.completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: nil)
            try auth.makeCurrent(user)
            return AuthDataResult(user: user, additionalUserInfo: nil)
        }
    }
}

/// A user held weakly (a `MultiFactor` does not keep its user alive). `@unchecked Sendable`: the
/// reference is read and replaced whole; the `User` is the SDK's, not `Sendable`.
struct WeakUser: @unchecked Sendable {
    weak var user: User?
}

extension Auth {
    /// The SDK's `generateMFAError` (AuthBackend.swift 114–137): an answer with enrollments and no
    /// ID token is `secondFactorRequired` (17078) with a ``MultiFactorResolver`` for its pending
    /// credential; nil for any other answer.
    func secondFactorRequired(idToken: String?, pending: String?, enrollments: [MFAEnrollment]?) -> AuthError? {
        guard idToken == nil, let enrollments else { return nil }
        let hints = MultiFactorInfo.factors(from: enrollments)
        return AuthError(.secondFactorRequired,
                         "the account has \(hints.count) second factor\(hints.count == 1 ? "" : "s"): finish with the resolver in userInfo[AuthErrorUserInfoMultiFactorResolverKey]",
                         resolver: MultiFactorResolver(mfaPendingCredential: pending, hints: hints, auth: self))
    }
}
