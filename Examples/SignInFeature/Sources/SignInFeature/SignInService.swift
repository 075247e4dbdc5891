import FirebaseAuth
import FirebaseCore
import Foundation

/// The sign-in logic of an iOS app, as its team writes it for the real SDK: phone numbers, Sign in
/// with Apple, email and password, a provider's web page (Microsoft, Yahoo, OIDC), with a phone or
/// authenticator-app (TOTP) second factor. It imports FirebaseAuth and FirebaseCore only, and runs unchanged on a
/// phone and, through authsim, in tests on Linux.
public final class SignInService: Sendable {
    /// How a sign-in with a code ended.
    public enum SignInResult: Sendable {
        /// Signed in; the user's ID.
        case signedIn(uid: String)
        /// The account has a second factor: choose a hint, send its code, finish with it.
        case secondFactorRequired(SecondFactorChallenge)
    }

    /// The multi-factor resolver and what the UI shows of it.
    public struct SecondFactorChallenge: @unchecked Sendable {
        public let resolver: MultiFactorResolver
        /// The hints' display names (or their phone numbers), in order.
        public var hintNames: [String] {
            resolver.hints.map { $0.displayName ?? ($0 as? PhoneMultiFactorInfo)?.phoneNumber ?? $0.uid }
        }
    }

    /// What the UI says when a sign-in fails.
    public enum Failure: Error, Equatable {
        case wrongCode
        case codeExpired
        case cancelled
        /// An admin disabled the account: the SDK signed the user out.
        case disabled
        /// The email or the password is wrong (one answer for both, as Firebase gives it).
        case wrongEmailOrPassword
        case emailInUse
        case weakPassword
        /// The reset link was used already, or is not one.
        case linkInvalid
        case other(code: Int, message: String)
    }

    public init() {}

    /// Sends the SMS: the SDK proves the app (silent push, else reCAPTCHA) on the way.
    /// Returns the verification ID to keep until the user types the code.
    public func sendCode(to phoneNumber: String) async throws(Failure) -> String {
        do {
            return try await PhoneAuthProvider.provider().verifyPhoneNumber(phoneNumber, uiDelegate: nil)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Signs in with the code the user typed.
    public func signIn(verificationID: String, code: String) async throws(Failure) -> SignInResult {
        try await signIn(with: PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: code))
    }

    private func signIn(with credential: AuthCredential) async throws(Failure) -> SignInResult {
        try await signingIn { try await Auth.auth().signIn(with: credential) }
    }

    /// Signs in on a provider's web page (`microsoft.com`, `yahoo.com`, `oidc.…`): the SDK presents
    /// it, the user signs in there, the page returns to the app. `loginHint` pre-fills the account.
    public func signIn(withProvider providerID: String, loginHint: String? = nil) async throws(Failure) -> SignInResult {
        let provider = OAuthProvider(providerID: providerID)
        if let loginHint { provider.customParameters = ["login_hint": loginHint] }
        return try await signingIn { try await Auth.auth().signIn(with: provider, uiDelegate: nil) }
    }

    private func signingIn(_ work: () async throws -> AuthDataResult) async throws(Failure) -> SignInResult {
        do {
            let result = try await work()
            return .signedIn(uid: result.user.uid)
        } catch {
            let nsError = error as NSError
            if nsError.code == AuthErrorCode.secondFactorRequired.rawValue,
               let resolver = nsError.userInfo[AuthErrorUserInfoMultiFactorResolverKey] as? MultiFactorResolver {
                return .secondFactorRequired(SecondFactorChallenge(resolver: resolver))
            }
            throw Self.failure(error)
        }
    }

    /// Signs in with what Sign in with Apple gave the app (`ASAuthorizationAppleIDCredential`'s
    /// identity token, the raw nonce the app kept, the name on the first authorization).
    public func signInWithApple(idToken: String, rawNonce: String, fullName: PersonNameComponents?) async throws(Failure) -> SignInResult {
        let credential = OAuthProvider.appleCredential(withIDToken: idToken, rawNonce: rawNonce, fullName: fullName)
        return try await signIn(with: credential)
    }

    /// Creates an account with an email and a password, signs it in, and sends the verification email.
    public func signUp(email: String, password: String) async throws(Failure) -> String {
        do {
            let result = try await Auth.auth().createUser(withEmail: email, password: password)
            try await result.user.sendEmailVerification()
            return result.user.uid
        } catch {
            throw Self.failure(error)
        }
    }

    /// Signs in with an email and a password.
    public func signIn(email: String, password: String) async throws(Failure) -> SignInResult {
        try await signIn(with: EmailAuthProvider.credential(withEmail: email, password: password))
    }

    /// "Forgot password": sends the reset email (the same answer whether or not the address has an account).
    public func sendPasswordReset(to email: String) async throws(Failure) {
        do { try await Auth.auth().sendPasswordReset(withEmail: email) } catch { throw Self.failure(error) }
    }

    /// The reset link was opened in the app: the new password for the code it carried.
    public func resetPassword(code: String, newPassword: String) async throws(Failure) -> String {
        do {
            let email = try await Auth.auth().verifyPasswordResetCode(code)
            try await Auth.auth().confirmPasswordReset(withCode: code, newPassword: newPassword)
            return email
        } catch {
            throw Self.failure(error)
        }
    }

    /// The verification link was opened: the email is verified, and the user reloaded to see it.
    public func verifyEmail(code: String) async throws(Failure) -> Bool {
        do {
            try await Auth.auth().applyActionCode(code)
            try await Auth.auth().currentUser?.reload()
            return Auth.auth().currentUser?.isEmailVerified ?? false
        } catch {
            throw Self.failure(error)
        }
    }

    /// Signs the user out.
    public func signOut() throws(Failure) {
        do { try Auth.auth().signOut() } catch { throw Self.failure(error) }
    }

    /// Sends the second factor's code to the chosen hint.
    public func sendSecondFactorCode(_ challenge: SecondFactorChallenge, hint index: Int) async throws(Failure) -> String {
        guard let hint = challenge.resolver.hints[index] as? PhoneMultiFactorInfo else {
            throw .other(code: -1, message: "hint \(index) is not a phone factor")
        }
        do {
            return try await PhoneAuthProvider.provider()
                .verifyPhoneNumber(with: hint, uiDelegate: nil, multiFactorSession: challenge.resolver.session)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Finishes a multi-factor sign-in with the second factor's code.
    public func finishSecondFactor(_ challenge: SecondFactorChallenge, verificationID: String, code: String) async throws(Failure) -> String {
        let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: code)
        let assertion = PhoneMultiFactorGenerator.assertion(with: credential)
        do {
            return try await challenge.resolver.resolveSignIn(with: assertion).user.uid
        } catch {
            throw Self.failure(error)
        }
    }

    // MARK: An authenticator app as the second factor (TOTP)

    /// A TOTP enrollment begun: the key the user types into the authenticator app, or the QR code's URL.
    public struct TOTPEnrollment: @unchecked Sendable {
        let secret: TOTPSecret
        public let key: String
        public let qrCodeURL: String
    }

    /// Makes the signed-in user's TOTP secret for the enrollment screen.
    public func startTOTPEnrollment(accountName: String, issuer: String) async throws(Failure) -> TOTPEnrollment {
        guard let user = Auth.auth().currentUser else { throw .other(code: AuthErrorCode.nullUser.rawValue, message: "no user") }
        do {
            let secret = try await TOTPMultiFactorGenerator.generateSecret(with: try await user.multiFactor.session())
            return TOTPEnrollment(secret: secret, key: secret.sharedSecretKey(),
                                  qrCodeURL: secret.generateQRCodeURL(withAccountName: accountName, issuer: issuer))
        } catch {
            throw Self.failure(error)
        }
    }

    /// Enrolls the authenticator app with the code it shows.
    public func finishTOTPEnrollment(_ enrollment: TOTPEnrollment, code: String, displayName: String) async throws(Failure) {
        guard let user = Auth.auth().currentUser else { throw .other(code: AuthErrorCode.nullUser.rawValue, message: "no user") }
        let assertion = TOTPMultiFactorGenerator.assertionForEnrollment(with: enrollment.secret, oneTimePassword: code)
        do { try await user.multiFactor.enroll(with: assertion, displayName: displayName) } catch { throw Self.failure(error) }
    }

    /// Finishes a multi-factor sign-in with the authenticator app's code for the chosen hint.
    public func finishTOTPSecondFactor(_ challenge: SecondFactorChallenge, hint index: Int, code: String) async throws(Failure) -> String {
        let hint = challenge.resolver.hints[index]
        guard hint.factorID == TOTPMultiFactorID else {
            throw .other(code: -1, message: "hint \(index) is not an authenticator app")
        }
        let assertion = TOTPMultiFactorGenerator.assertionForSignIn(withEnrollmentID: hint.uid, oneTimePassword: code)
        do {
            return try await challenge.resolver.resolveSignIn(with: assertion).user.uid
        } catch {
            throw Self.failure(error)
        }
    }

    /// The signed-in user's ID, if any.
    public var currentUserID: String? { Auth.auth().currentUser?.uid }

    // MARK: The session, as the screen follows it

    /// Calls `onChange` with the signed-in user's ID (nil: signed out) now and whenever another
    /// user signs in or the user signs out, on the main queue: what drives the app's root screen.
    public func observeSession(_ onChange: @escaping @MainActor (String?) -> Void) -> AuthStateDidChangeListenerHandle {
        // FirebaseAuth 12.19's listener is a plain closure that it calls on the main queue: Swift 6
        // code says so to reach main-actor code from it.
        Auth.auth().addStateDidChangeListener { _, user in
            let uid = user?.uid
            MainActor.assumeIsolated { onChange(uid) }
        }
    }

    /// Stops the calls of ``observeSession(_:)``.
    public func stopObserving(_ handle: AuthStateDidChangeListenerHandle) {
        Auth.auth().removeStateDidChangeListener(handle)
    }

    /// Asks for a fresh ID token, as the app does when it comes back to the foreground: a user an
    /// admin disabled or deleted meanwhile is signed out by the SDK (the session observer hears it).
    public func refreshSession() async throws(Failure) {
        guard let user = Auth.auth().currentUser else { return }
        do { _ = try await user.getIDToken(forcingRefresh: true) } catch { throw Self.failure(error) }
    }

    // MARK: The profile screen

    /// Sets the user's display name.
    public func updateDisplayName(_ name: String) async throws(Failure) {
        guard let user = Auth.auth().currentUser else { throw .other(code: AuthErrorCode.nullUser.rawValue, message: "no user") }
        let change = user.createProfileChangeRequest()
        change.displayName = name
        do { try await change.commitChanges() } catch { throw Self.failure(error) }
    }

    /// The signed-in user's display name and linked providers (`phone`, `apple.com`).
    public var profile: (name: String?, providers: [String])? {
        Auth.auth().currentUser.map { ($0.displayName, $0.providerData.map(\.providerID).sorted()) }
    }

    /// Links Sign in with Apple to the signed-in user.
    public func linkApple(idToken: String, rawNonce: String) async throws(Failure) {
        guard let user = Auth.auth().currentUser else { throw .other(code: AuthErrorCode.nullUser.rawValue, message: "no user") }
        let credential = OAuthProvider.appleCredential(withIDToken: idToken, rawNonce: rawNonce, fullName: nil)
        do { _ = try await user.link(with: credential) } catch { throw Self.failure(error) }
    }

    /// Unlinks Sign in with Apple from the signed-in user.
    public func unlinkApple() async throws(Failure) {
        guard let user = Auth.auth().currentUser else { throw .other(code: AuthErrorCode.nullUser.rawValue, message: "no user") }
        do { _ = try await user.unlink(fromProvider: "apple.com") } catch { throw Self.failure(error) }
    }

    static func failure(_ error: any Error) -> Failure {
        let nsError = error as NSError
        switch AuthErrorCode(rawValue: nsError.code) {
        case .invalidVerificationCode: return .wrongCode
        case .sessionExpired: return .codeExpired
        case .webContextCancelled: return .cancelled
        case .userDisabled: return .disabled
        case .invalidCredential, .wrongPassword, .userNotFound: return .wrongEmailOrPassword
        case .emailAlreadyInUse: return .emailInUse
        case .weakPassword: return .weakPassword
        case .invalidActionCode, .expiredActionCode: return .linkInvalid
        default: return .other(code: nsError.code, message: nsError.localizedDescription)
        }
    }
}
