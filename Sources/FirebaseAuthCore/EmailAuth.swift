import FirebaseCore
import Foundation
import IdentityToolkitAPI
import Synchronization

// Email and password, anonymous and custom-token sign-in, and the emails (password reset, email
// verification), as FirebaseAuth 12.19 does them (`Auth/Auth.swift` 353–1210, `User/User.swift`
// 110–240 and 860–1060, `AuthProvider/EmailAuthProvider.swift`, `ActionCode/`), and email links
// (`sendSignInLink`, `isSignIn(withEmailLink:)`, `signIn(withEmail:link:)`). reCAPTCHA for email and password: the SDK asks for it only
// when the project's EMAIL_PASSWORD_PROVIDER enforcement is on or the backend answers
// MISSING_RECAPTCHA_TOKEN; authsim's backend keeps that enforcement OFF, so the SDK's plain calls
// are what goes out, as here.

/// `EmailAuthProvider`: email and password credentials.
open class EmailAuthProvider: NSObject {
    /// `password`.
    public static let id = "password"

    /// `EmailAuthProvider.credential(withEmail:password:)`: signs in, reauthenticates, or links
    /// an email and password.
    public static func credential(withEmail email: String, password: String) -> AuthCredential {
        EmailAuthCredential(email: email, password: password)
    }

    /// `EmailAuthProvider.credential(withEmail:link:)`: signs in, reauthenticates, or links an
    /// email by the sign-in link sent to it (``Auth/sendSignInLink(toEmail:actionCodeSettings:)``).
    public static func credential(withEmail email: String, link: String) -> AuthCredential {
        EmailAuthCredential(email: email, link: link)
    }
}

/// The SDK's `EmailAuthCredential` (internal there too): an email and its password, or an email
/// and its sign-in link (`EmailType`).
final class EmailAuthCredential: AuthCredential, @unchecked Sendable {
    enum EmailType {
        case password(String)
        case link(String)
    }
    let email: String
    let emailType: EmailType
    init(email: String, password: String) {
        self.email = email
        emailType = .password(password)
        super.init(provider: EmailAuthProvider.id)
    }
    init(email: String, link: String) {
        self.email = email
        emailType = .link(link)
        super.init(provider: EmailAuthProvider.id)
    }
}

/// `ActionCodeSettings`: where an email's link leads (the continue URL, the app that opens it).
/// authsim's emails carry the continue URL in their link; nothing opens an app from an email here.
public final class ActionCodeSettings: NSObject, @unchecked Sendable {
    private struct Values {
        var url: URL?
        var handleCodeInApp = false
        var iOSBundleID: String?
        var androidPackageName: String?
        var androidMinimumVersion: String?
        var androidInstallIfNotAvailable = false
        var linkDomain: String?
    }
    private let values: Mutex<Values>

    /// The iOS bundle ID starts as the main bundle's, as the SDK's does (ActionCodeSettings.swift
    /// 122–124): the simulated app's when one is bound, else `Bundle.main`'s.
    override public init() {
        var values = Values()
        values.iOSBundleID = AppProcess.current?.host.bundleID ?? Bundle.main.bundleIdentifier
        self.values = Mutex(values)
    }

    public var url: URL? {
        get { values.withLock { $0.url } }
        set { values.withLock { $0.url = newValue } }
    }
    public var handleCodeInApp: Bool {
        get { values.withLock { $0.handleCodeInApp } }
        set { values.withLock { $0.handleCodeInApp = newValue } }
    }
    public var iOSBundleID: String? {
        get { values.withLock { $0.iOSBundleID } }
        set { values.withLock { $0.iOSBundleID = newValue } }
    }
    public var androidPackageName: String? { values.withLock { $0.androidPackageName } }
    public var androidMinimumVersion: String? { values.withLock { $0.androidMinimumVersion } }
    public var androidInstallIfNotAvailable: Bool { values.withLock { $0.androidInstallIfNotAvailable } }
    public var linkDomain: String? {
        get { values.withLock { $0.linkDomain } }
        set { values.withLock { $0.linkDomain = newValue } }
    }

    public func setIOSBundleID(_ bundleID: String) { values.withLock { $0.iOSBundleID = bundleID } }

    public func setAndroidPackageName(_ androidPackageName: String, installIfNotAvailable: Bool, minimumVersion: String?) {
        values.withLock {
            $0.androidPackageName = androidPackageName
            $0.androidInstallIfNotAvailable = installIfNotAvailable
            $0.androidMinimumVersion = minimumVersion
        }
    }

    /// The request's fields the settings fill (`GetOOBConfirmationCodeRequest`'s init).
    func apply(to request: inout GetOOBConfirmationCodeRequest) {
        let v = values.withLock { $0 }
        request.continueUrl = v.url?.absoluteString
        request.iOSBundleId = v.iOSBundleID
        request.androidPackageName = v.androidPackageName
        request.androidMinimumVersion = v.androidMinimumVersion
        if v.androidInstallIfNotAvailable { request.androidInstallApp = true }
        if v.handleCodeInApp { request.canHandleCodeInApp = true }
        request.linkDomain = v.linkDomain
    }
}

/// `ActionCodeOperation`.
public enum ActionCodeOperation: Int, Sendable {
    case unknown = 0, passwordReset = 1, verifyEmail = 2, recoverEmail = 3, emailLink = 4, verifyAndChangeEmail = 5,
         revertSecondFactorAddition = 6
}

/// `ActionCodeInfo`: what `checkActionCode` learned of a code.
public final class ActionCodeInfo: NSObject, Sendable {
    public let operation: ActionCodeOperation
    /// The address the code was sent to; the new one for a change of email.
    public let email: String
    /// The old address, for a change of email.
    public let previousEmail: String?

    init(operation: ActionCodeOperation, email: String, newEmail: String?) {
        self.operation = operation
        if let newEmail {
            self.email = newEmail
            previousEmail = email
        } else {
            self.email = email
            previousEmail = nil
        }
    }

    /// The SDK's `actionCodeOperation(forRequestType:)` (ActionCodeInfo.swift 46–56), as it is:
    /// it knows the action link's `mode` names (`resetPassword`, `verifyEmail`, …), while the
    /// service (and the Auth Emulator, and this backend) answer the request type's enum name
    /// (`PASSWORD_RESET`, `VERIFY_EMAIL`), so on a device `operation` is `.unknown` for codes
    /// the service made. Kept, since that is what an app sees (docs/app-code-on-linux.md).
    static func operation(forRequestType requestType: String?) -> ActionCodeOperation {
        switch requestType {
        case "resetPassword": .passwordReset
        case "verifyEmail": .verifyEmail
        case "recoverEmail": .recoverEmail
        case "signIn": .emailLink
        case "verifyAndChangeEmail": .verifyAndChangeEmail
        case "revertSecondFactorAddition": .revertSecondFactorAddition
        default: .unknown
        }
    }
}

extension Auth {
    // MARK: Email and password

    /// `signIn(withEmail:password:)`: `verifyPassword`, then the user loaded and made current.
    /// An empty password is `wrongPassword` (17009) without a request, as in the SDK. With email
    /// enumeration protection (Firebase's default) a wrong email or password is
    /// `invalidCredential` (17004); without, `userNotFound` (17011) or `wrongPassword` (17009).
    @discardableResult
    public func signIn(withEmail email: String, password: String) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            let result = try await internalSignIn(with: EmailAuthCredential(email: email, password: password), isReauthentication: false)
            try makeCurrent(result.user)
            return result
        }
    }

    /// `signIn(withEmail:password:completion:)`.
    public func signIn(withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws -> AuthDataResult in try await auth.signIn(withEmail: email, password: password) }
    }

    /// The SDK's `internalSignInUser(withEmail:password:)`: `verifyPassword`; a user with a second
    /// factor is `secondFactorRequired` (17078) with its resolver, as the SDK's backend makes of
    /// an answer with `mfaPendingCredential`.
    @inline(never)
    func passwordSignIn(email: String, password: String) async throws(AuthError) -> AuthDataResult {
        if password.isEmpty {
            throw AuthError(.wrongPassword, "The password is invalid or the user does not have a password.")
        }
        let response = try await backend.call(VerifyPasswordRequest(email: email, password: password).fromIOS)
        if let required = secondFactorRequired(idToken: response.idToken, pending: response.mfaPendingCredential, enrollments: response.mfaInfo) {
            throw required
        }
        let user = try await completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn)
        return AuthDataResult(user: user, additionalUserInfo: AdditionalUserInfo(providerID: EmailAuthProvider.id, profile: nil, username: nil, isNewUser: false))
    }

    /// `createUser(withEmail:password:)`: `signupNewUser` with the email and password, the new user
    /// made current. An empty password is `weakPassword` (17026) and an empty email `missingEmail`
    /// (17034), both without a request, as the SDK checks.
    @discardableResult
    public func createUser(withEmail email: String, password: String) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            guard !password.isEmpty else { throw AuthError(.weakPassword, "Missing password") }
            guard !email.isEmpty else { throw AuthError(.missingEmail, "An email address must be provided.") }
            let response = try await backend.call(SignUpNewUserRequest(email: email, password: password, returnSecureToken: true).fromIOS)
            let user = try await completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn)
            try makeCurrent(user)
            return AuthDataResult(user: user, additionalUserInfo: AdditionalUserInfo(providerID: EmailAuthProvider.id, profile: nil, username: nil, isNewUser: true))
        }
    }

    /// `createUser(withEmail:password:completion:)`.
    public func createUser(withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws -> AuthDataResult in try await auth.createUser(withEmail: email, password: password) }
    }

    // MARK: Email links

    /// `sendSignInLink(toEmail:actionCodeSettings:)`: `getOobConfirmationCode` EMAIL_SIGNIN with the
    /// settings (Auth.swift 1221–1250); the email, with its link, is in the backend's email
    /// outbox. `handleCodeInApp` must be true: where the SDK stops with `fatalError`, this throws
    /// `appConfigurationError` (17998) saying so.
    public func sendSignInLink(toEmail email: String, actionCodeSettings: ActionCodeSettings) async throws {
        try await AuthError.forApp {
            guard actionCodeSettings.handleCodeInApp else {
                throw AuthError(.appConfigurationError,
                                "The handleCodeInApp flag in ActionCodeSettings must be true for Email-link Authentication (the SDK stops here with fatalError).")
            }
            var request = GetOOBConfirmationCodeRequest(requestType: .emailSignIn, email: email).fromIOS
            actionCodeSettings.apply(to: &request)
            _ = try await backend.call(request)
        }
    }

    /// `sendSignInLink(toEmail:actionCodeSettings:completion:)`.
    public func sendSignInLink(toEmail email: String, actionCodeSettings: ActionCodeSettings,
                               completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws in try await auth.sendSignInLink(toEmail: email, actionCodeSettings: actionCodeSettings) }
    }

    /// `isSignIn(withEmailLink:)`: whether the link's query has an `oobCode` and `mode=signIn`,
    /// read as the SDK reads it (`AuthWebUtils.parseURL`: the URL's own query, each value
    /// percent-decoded; Auth.swift 1287–1299).
    public func isSignIn(withEmailLink link: String) -> Bool {
        guard !link.isEmpty else { return false }
        let items = Self.linkQueryItems(link)
        return items["oobCode"] != nil && items["mode"] == "signIn"
    }

    /// `signIn(withEmail:link:)`: `emailLinkSignin` with the link's code, then the user loaded and
    /// made current; `additionalUserInfo` is `password`'s with `isNewUser` from the answer. A link
    /// that is not a sign-in link is `appConfigurationError` (17998) where the SDK stops with
    /// `fatalError`; a used or unknown code is `invalidActionCode` (17030), another address's
    /// `invalidEmail` (17008).
    public func signIn(withEmail email: String, link: String) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            let result = try await internalSignIn(with: EmailAuthCredential(email: email, link: link), isReauthentication: false)
            try makeCurrent(result.user)
            return result
        }
    }

    /// `signIn(withEmail:link:completion:)`.
    public func signIn(withEmail email: String, link: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws -> AuthDataResult in try await auth.signIn(withEmail: email, link: link) }
    }

    /// The SDK's `internalSignInAndRetrieveData(withEmail:link:)` (Auth.swift 2194–2221).
    @inline(never)
    func emailLinkSignIn(email: String, link: String) async throws(AuthError) -> AuthDataResult {
        guard isSignIn(withEmailLink: link) else {
            throw AuthError(.appConfigurationError,
                            "The link provided is not valid for email/link sign-in. Please check the link by calling isSignIn(withEmailLink:) on the Auth instance before attempting to use it for email/link sign-in (the SDK stops here with fatalError).")
        }
        let response = try await backend.call(try EmailLinkSignInRequest(email: email, link: link, idToken: nil))
        if let required = secondFactorRequired(idToken: response.idToken, pending: response.mfaPendingCredential, enrollments: response.mfaInfo) {
            throw required
        }
        let user = try await completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn)
        return AuthDataResult(user: user, additionalUserInfo: AdditionalUserInfo(providerID: EmailAuthProvider.id, profile: nil, username: nil, isNewUser: response.isNewUser ?? false))
    }

    /// A link's query items as the SDK's `AuthWebUtils.parseURL` reads them (later names win).
    static func linkQueryItems(_ link: String) -> [String: String] {
        guard let query = URLComponents(string: link)?.query else { return [:] }
        var items: [String: String] = [:]
        for part in query.components(separatedBy: "&") {
            guard let equals = part.range(of: "="), let name = part[..<equals.lowerBound].removingPercentEncoding,
                  let value = part[equals.upperBound...].removingPercentEncoding else { continue }
            items[name] = value
        }
        return items
    }

    // MARK: Anonymous and custom token

    /// `signInAnonymously()`: an anonymous user already signed in is returned as it is (no
    /// request); otherwise `signupNewUser` with nothing, and the new anonymous user is current.
    /// `additionalUserInfo.providerID` is empty, as the SDK makes it.
    @discardableResult
    public func signInAnonymously() async throws -> AuthDataResult {
        return try await AuthError.forApp {
            if let user = currentUser, user.isAnonymous { return AuthDataResult(user: user, additionalUserInfo: nil) }
            let response = try await backend.call(SignUpNewUserRequest(returnSecureToken: true).fromIOS)
            let user = try await completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn,
                                                anonymous: true)
            try makeCurrent(user)
            return AuthDataResult(user: user, additionalUserInfo: AdditionalUserInfo(providerID: "", profile: nil, username: nil, isNewUser: true))
        }
    }

    /// `signInAnonymously(completion:)`.
    public func signInAnonymously(completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws -> AuthDataResult in try await auth.signInAnonymously() }
    }

    /// `signIn(withCustomToken:)`: `verifyCustomToken` with a token the Admin SDK minted.
    @discardableResult
    public func signIn(withCustomToken token: String) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            let response = try await backend.call(VerifyCustomTokenRequest(token: token))
            let user = try await completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn)
            try makeCurrent(user)
            return AuthDataResult(user: user, additionalUserInfo: AdditionalUserInfo(providerID: "", profile: nil, username: nil, isNewUser: response.isNewUser ?? false))
        }
    }

    /// `signIn(withCustomToken:completion:)`.
    public func signIn(withCustomToken token: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws -> AuthDataResult in try await auth.signIn(withCustomToken: token) }
    }

    /// `fetchSignInMethods(forEmail:)`, deprecated in the SDK: `createAuthUri` with the email and
    /// `http://www.google.com/` as the continue URI (Auth.swift 290-310), answered with the
    /// response's `signinMethods`: empty with email enumeration protection on, whatever the email
    /// has. A malformed email is `invalidEmail` (17008, the service's INVALID_IDENTIFIER).
    @available(*, deprecated, message: "`fetchSignInMethods` is deprecated and will be removed in a future release. This method returns an empty list when Email Enumeration Protection is enabled.")
    public func fetchSignInMethods(forEmail email: String) async throws -> [String] {
        return try await AuthError.forApp {
            try await backend.call(CreateAuthURIRequest(identifier: email, continueUri: "http://www.google.com/")).signinMethods ?? []
        }
    }

    /// `fetchSignInMethods(forEmail:completion:)`, deprecated in the SDK.
    @available(*, deprecated, message: "`fetchSignInMethods` is deprecated and will be removed in a future release. This method returns an empty list when Email Enumeration Protection is enabled.")
    public func fetchSignInMethods(forEmail email: String, completion: (([String]?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws -> [String] in try await auth.fetchSignInMethods(forEmail: email) }
    }

    // MARK: The emails

    /// `sendPasswordReset(withEmail:actionCodeSettings:)`: `getOobConfirmationCode` PASSWORD_RESET.
    /// With email enumeration protection an unknown email succeeds too (nothing is sent).
    public func sendPasswordReset(withEmail email: String, actionCodeSettings: ActionCodeSettings? = nil) async throws {
        try await AuthError.forApp {
            var request = GetOOBConfirmationCodeRequest(requestType: .passwordReset, email: email).fromIOS
            actionCodeSettings?.apply(to: &request)
            _ = try await backend.call(request)
        }
    }

    /// `sendPasswordReset(withEmail:completion:)`.
    public func sendPasswordReset(withEmail email: String, completion: (((any Error)?) -> Void)? = nil) {
        sendPasswordReset(withEmail: email, actionCodeSettings: nil, completion: completion)
    }

    /// `sendPasswordReset(withEmail:actionCodeSettings:completion:)`.
    public func sendPasswordReset(withEmail email: String, actionCodeSettings: ActionCodeSettings?,
                                  completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws in try await auth.sendPasswordReset(withEmail: email, actionCodeSettings: actionCodeSettings) }
    }

    /// `confirmPasswordReset(withCode:newPassword:)`: `resetPassword` with the code and the new
    /// password. A used or unknown code is `invalidActionCode` (17030), an expired one
    /// `expiredActionCode` (17029).
    public func confirmPasswordReset(withCode code: String, newPassword: String) async throws {
        try await AuthError.forApp {
            _ = try await backend.call(ResetPasswordRequest(oobCode: code, newPassword: newPassword))
        }
    }

    /// `confirmPasswordReset(withCode:newPassword:completion:)`.
    public func confirmPasswordReset(withCode code: String, newPassword: String, completion: @escaping ((any Error)?) -> Void) {
        complete(completion, with: self) { (auth: Auth) async throws in try await auth.confirmPasswordReset(withCode: code, newPassword: newPassword) }
    }

    /// `checkActionCode(_:)`: `resetPassword` with the code alone: whose email, and what for.
    public func checkActionCode(_ code: String) async throws -> ActionCodeInfo {
        return try await AuthError.forApp {
            let response = try await backend.call(ResetPasswordRequest(oobCode: code))
            guard let email = response.email else {
                // The SDK stops here with fatalError ("Failed to get a ResetPasswordResponse").
                throw AuthError(.internalError, "resetPassword answered without the code's email")
            }
            return ActionCodeInfo(operation: ActionCodeInfo.operation(forRequestType: response.requestType), email: email, newEmail: response.newEmail)
        }
    }

    /// `checkActionCode(_:completion:)`.
    public func checkActionCode(_ code: String, completion: @escaping (ActionCodeInfo?, (any Error)?) -> Void) {
        complete(completion, with: self) { (auth: Auth) async throws -> ActionCodeInfo in try await auth.checkActionCode(code) }
    }

    /// `verifyPasswordResetCode(_:)`: the email the code was sent to.
    public func verifyPasswordResetCode(_ code: String) async throws -> String {
        try await checkActionCode(code).email
    }

    /// `verifyPasswordResetCode(_:completion:)`.
    public func verifyPasswordResetCode(_ code: String, completion: @escaping (String?, (any Error)?) -> Void) {
        complete(completion, with: self) { (auth: Auth) async throws -> String in try await auth.verifyPasswordResetCode(code) }
    }

    /// `applyActionCode(_:)`: `setAccountInfo` with the code (an email verification, a change
    /// of email). A password reset code needs a new password: `invalidActionCode`.
    public func applyActionCode(_ code: String) async throws {
        try await AuthError.forApp {
            var request = SetAccountInfoRequest(returnSecureToken: true)
            request.oobCode = code
            _ = try await backend.call(request)
        }
    }

    /// `applyActionCode(_:completion:)`.
    public func applyActionCode(_ code: String, completion: @escaping ((any Error)?) -> Void) {
        complete(completion, with: self) { (auth: Auth) async throws in try await auth.applyActionCode(code) }
    }
}

extension User {
    /// `sendEmailVerification(with:)`: `getOobConfirmationCode` VERIFY_EMAIL with the user's ID token.
    public func sendEmailVerification(with actionCodeSettings: ActionCodeSettings? = nil) async throws {
        try await AuthError.forApp {
            try await signingOutIfTokenIsInvalid { () async throws(AuthError) in
                var request = GetOOBConfirmationCodeRequest(requestType: .verifyEmail, idToken: try await idToken()).fromIOS
                actionCodeSettings?.apply(to: &request)
                let auth = try owner()
                _ = try await auth.backend.call(request)
            }
        }
    }

    /// `sendEmailVerification(with:completion:)` (also `sendEmailVerification { error in … }`).
    public func sendEmailVerification(with actionCodeSettings: ActionCodeSettings? = nil, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws in try await user.sendEmailVerification(with: actionCodeSettings) }
    }

    /// `sendEmailVerification(beforeUpdatingEmail:actionCodeSettings:)`: VERIFY_AND_CHANGE_EMAIL;
    /// the email changes when the code is applied. Only the token's fetch signs the user out when
    /// the token is no longer valid; the service's refusal of the request is handed back and the
    /// user stays, as in the SDK (User.swift 1013–1038; audit 3, N-8).
    public func sendEmailVerification(beforeUpdatingEmail newEmail: String, actionCodeSettings: ActionCodeSettings? = nil) async throws {
        try await AuthError.forApp {
            let token = try await signingOutIfTokenIsInvalid { () async throws(AuthError) in try await idToken() }
            var request = GetOOBConfirmationCodeRequest(requestType: .verifyAndChangeEmail, newEmail: newEmail, idToken: token).fromIOS
            actionCodeSettings?.apply(to: &request)
            let auth = try owner()
            _ = try await auth.backend.call(request)
        }
    }

    /// `sendEmailVerification(beforeUpdatingEmail:actionCodeSettings:completion:)`.
    public func sendEmailVerification(beforeUpdatingEmail newEmail: String, actionCodeSettings: ActionCodeSettings? = nil,
                                      completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws in
            try await user.sendEmailVerification(beforeUpdatingEmail: newEmail, actionCodeSettings: actionCodeSettings)
        }
    }

    /// `updatePassword(to:)`: `setAccountInfo` with the password, the user takes the new tokens
    /// (a new password ends every other session). An empty password is `weakPassword` (17026)
    /// without a request, as in the SDK.
    public func updatePassword(to password: String) async throws {
        try await AuthError.forApp {
            guard !password.isEmpty else { throw AuthError(.weakPassword, "Missing Password") }
            try await signingOutIfTokenIsInvalid { () async throws(AuthError) in try await updateEmail(nil, password: password) }
        }
    }

    /// `updatePassword(to:completion:)`.
    public func updatePassword(to password: String, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws in try await user.updatePassword(to: password) }
    }

    /// `updateEmail(to:)`, deprecated in the SDK: `setAccountInfo` with the email. With email
    /// enumeration protection (Firebase's default) the service refuses it, `operationNotAllowed`
    /// (17006): verify the new address first (``sendEmailVerification(beforeUpdatingEmail:actionCodeSettings:)``).
    @available(*, deprecated, message: "`updateEmail` is deprecated and will be removed in a future release. Use sendEmailVerification(beforeUpdatingEmail:) instead.")
    public func updateEmail(to email: String) async throws {
        try await AuthError.forApp {
            try await signingOutIfTokenIsInvalid { () async throws(AuthError) in try await updateEmail(email, password: nil) }
        }
    }

    /// `updateEmail(to:completion:)`, deprecated in the SDK.
    @available(*, deprecated, message: "`updateEmail` is deprecated and will be removed in a future release. Use sendEmailVerification(beforeUpdatingEmail:) instead.")
    public func updateEmail(to email: String, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws in try await user.updateEmail(to: email) }
    }
}

extension User {
    /// The SDK's private `updateEmail(email:password:callback:)` (User.swift 1230–1310): the
    /// change (``executeUpdate(_:)``), the email kept locally; then, only when the user has an
    /// email and had no password provider before, the account read once more for the new
    /// provider (and the user no longer anonymous if it lists any); no other request
    /// (audit 3, N-23).
    func updateEmail(_ email: String?, password: String?) async throws(AuthError) {
        let hadPassword = providerData.contains { $0.providerID == EmailAuthProvider.id }
        try await executeUpdate { request in
            if let email { request.email = email }
            if let password { request.password = password }
        }
        if let email { try setEmail(email) }
        guard self.email != nil, !hadPassword else { return }
        let auth = try owner()
        try await auth.loadAccountInfo(into: self)
        try clearAnonymous(ifAnyProvider: true)
    }
}

extension EmailLinkSignInRequest {
    /// The request for `email` and the code of `link` (its `oobCode`), with the ID token of the
    /// user it links to. A link without a code is `appConfigurationError` where the SDK stops with
    /// `fatalError` ("Missing oobCode in link URL").
    init(email: String, link: String, idToken: String?) throws(AuthError) {
        guard let code = Auth.linkQueryItems(link)["oobCode"] else {
            throw AuthError(.appConfigurationError, "Missing oobCode in link URL (the SDK stops here with fatalError): \(link)")
        }
        self.init(email: email, oobCode: code, idToken: idToken)
    }
}

/// The requests whose 12.19 classes write `clientType` (`CLIENT_TYPE_IOS`, set by
/// `IdentityToolkitRequest.init`): VerifyPasswordRequest.swift 104, SignUpNewUserRequest.swift 108,
/// GetOOBConfirmationCodeRequest.swift 279 (audit 3, N-2).
protocol WritesClientType {
    var clientType: String? { get set }
}

extension WritesClientType {
    /// The request as the SDK sends it from iOS.
    var fromIOS: Self {
        var request = self
        request.clientType = Auth.clientType
        return request
    }
}

extension VerifyPasswordRequest: WritesClientType {}
extension SignUpNewUserRequest: WritesClientType {}
extension GetOOBConfirmationCodeRequest: WritesClientType {}
