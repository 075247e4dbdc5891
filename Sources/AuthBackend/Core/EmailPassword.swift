import IdentityToolkitAPI
import Utilities
import RS256
import Crypto
import CryptoExtras
import Foundation

// Email and password, anonymous users, and the emails Firebase sends, as the service answers the
// SDK and as the Auth Emulator does (firebase-tools `src/emulator/auth/operations.ts`: `signUp`,
// `signInWithPassword`, `signInWithEmailLink`, `sendOobCode`, `resetPassword`, `setAccountInfoImpl` with `oobCode` and
// `password`, `listOobCodesInProject`). Where the two differ this does as the service:
// - passwords are kept as scrypt hashes (the emulator keeps `fakeHash:salt=…:password=…`, the
//   password in clear; such hashes from an emulator export are still checked, as the emulator checks them);
// - an email's code expires (``BackendConfiguration/oobCodeLifetime``, an hour as Firebase's
//   password reset links) and is good once; the emulator's never expire;
// - email enumeration protection is on by default, as in every project made since September 2023
//   (`emailPrivacyConfig.enableImprovedEmailPrivacy`; the emulator's default is off).

/// One email the backend "sent": its code, for what, to whom; the email outbox lists them.
package struct OobEmail: Sendable, Hashable, Codable {
    package var email: String
    package var code: String
    package var requestType: OobRequestType
    /// The new address, for a change of email.
    package var newEmail: String?
    /// The action link the email carries (Firebase's hosted handler on the project's auth domain).
    package var link: String
    package var sentAt: Date
    /// The tenant of the user it went to (nil: the project's own).
    package var tenant: String?

    package init(email: String, code: String, requestType: OobRequestType, newEmail: String?, link: String, sentAt: Date) {
        self.email = email
        self.code = code
        self.requestType = requestType
        self.newEmail = newEmail
        self.link = link
        self.sentAt = sentAt
    }
}

extension CoreCall {

    // MARK: Sign-up and sign-in

    /// `signUp`'s checks before its password is hashed: the password to hash, if the request signs up with one.
    mutating func signUpPassword(_ request: SignUpNewUserRequest) throws(IdentityToolkitError) -> String? {
        let endpoint = BackendOperation.signUp
        try enter(tenant: request.tenantId, endpoint: endpoint)
        if request.localId != nil { throw reject(endpoint, IdentityToolkitError(.unexpectedParameter, "User ID")) }
        for (name, value) in [("phoneNumber", request.phoneNumber), ("photoUrl", request.photoUrl)] where value != nil {
            throw reject(endpoint, IdentityToolkitError(.insufficientPermission, "\(name) is set by an admin, not by the app's sign-up"))
        }
        let emailPassword = request.idToken != nil || request.password != nil || request.email != nil
        // A tenant's sign-in settings (the emulator's signUp: OPERATION_NOT_ALLOWED, ADMIN_ONLY_OPERATION).
        if emailPassword, tenantConfig?.allowPasswordSignup == false { throw reject(endpoint, IdentityToolkitError(.operationNotAllowed)) }
        if !emailPassword, tenantConfig?.enableAnonymousUser == false { throw reject(endpoint, IdentityToolkitError(.adminOnlyOperation)) }
        guard emailPassword else { return nil }
        guard let email = request.email, !email.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingEmail)) }
        guard let password = request.password, !password.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingPassword)) }
        guard BackendCore.isValidEmail(email) else { throw reject(endpoint, IdentityToolkitError(.invalidEmail)) }
        // A taken email is answered before a weak password, as the emulator's signUp orders them
        // (operations.ts 198–220; audit 3, B-3); signUp checks it again once the hash is made.
        if request.idToken == nil, directory.user(email: email) != nil { throw reject(endpoint, IdentityToolkitError(.emailExists)) }
        guard password.count >= BackendCore.minimumPasswordLength else { throw reject(endpoint, BackendCore.weakPassword) }
        return password
    }

    /// `signUp`, its password hashed.
    mutating func signUp(_ request: SignUpNewUserRequest, hash: PasswordHash?) throws(IdentityToolkitError) -> SignInDecision<SignUpNewUserResponse> {
        let endpoint = BackendOperation.signUp
        try enter(tenant: request.tenantId, endpoint: endpoint)
        var user: BackendUser
        var isNew = true
        if let idToken = request.idToken {
            guard let uid = try standingUID(idToken, endpoint: endpoint), let existing = directory.byID[uid] else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
            }
            user = existing
            isNew = false
        } else {
            user = BackendUser(localId: newLocalID(hint: request.email?.lowercased()), createdAt: now)
        }
        let provider: ProviderID
        if let hash, let email = request.email {
            let canonical = email.lowercased()
            if let holder = directory.user(email: canonical), holder.localId != user.localId || user.passwordHash != nil {
                throw reject(endpoint, IdentityToolkitError(.emailExists))
            }
            user.email = canonical
            user.emailVerified = false
            setPassword(hash, of: &user)
            if let name = request.displayName { user.displayName = name }
            provider = .password
        } else {
            provider = .anonymous
        }
        commit(.user(user))
        let grant = try grantTokens(for: user, provider: provider, endpoint: endpoint)
        emit(.accountSignIn(uid: user.localId, provider: SignInMethod(provider), email: user.email, isNewUser: isNew))
        return .tokens(grant) { tokens in
            SignUpNewUserResponse(localId: user.localId, email: user.email, displayName: user.displayName, idToken: tokens.idToken,
                                         refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn)
        }
    }

    /// `signInWithPassword`'s checks before the password is: the canonical email and the password.
    mutating func passwordCredentials(_ request: VerifyPasswordRequest) throws(IdentityToolkitError) -> (email: String, password: String) {
        let endpoint = BackendOperation.signInWithPassword
        try enter(tenant: request.tenantId, endpoint: endpoint)
        if tenantConfig?.allowPasswordSignup == false { throw reject(endpoint, IdentityToolkitError(.passwordLoginDisabled)) }
        guard let email = request.email else { throw reject(endpoint, IdentityToolkitError(.missingEmail)) }
        guard BackendCore.isValidEmail(email) else { throw reject(endpoint, IdentityToolkitError(.invalidEmail)) }
        guard let password = request.password, !password.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingPassword)) }
        return (email.lowercased(), password)
    }

    /// `signInWithPassword` in `tenant`, once the password was checked against the hash
    /// `verifiedHash` (nil: it did not match any).
    mutating func signInWithPassword(email canonical: String, verifiedHash verified: String?,
                                     tenant: String?) throws(IdentityToolkitError) -> SignInDecision<VerifyPasswordResponse> {
        let endpoint = BackendOperation.signInWithPassword
        try enter(tenant: tenant, endpoint: endpoint)
        let protected = emulatorSignIn.enableImprovedEmailPrivacy
        guard let user = directory.user(email: canonical) else {
            throw reject(endpoint, IdentityToolkitError(protected ? .invalidLoginCredentials : .emailNotFound))
        }
        try requireEnabled(user, endpoint: endpoint)
        guard let verified, user.passwordHash == verified else {
            throw reject(endpoint, IdentityToolkitError(protected ? .invalidLoginCredentials : .invalidPassword))
        }
        if user.hasSecondFactor {
            let pending = try openMFAPending(for: user, provider: .password, endpoint: endpoint)
            return .answer(VerifyPasswordResponse(localId: user.localId, email: user.email, displayName: user.displayName,
                                                  mfaPendingCredential: pending.credential, mfaInfo: pending.hints))
        }
        let grant = try grantTokens(for: user, provider: .password, endpoint: endpoint)
        emit(.accountSignIn(uid: user.localId, provider: .password, email: user.email, isNewUser: false))
        return .tokens(grant) { tokens in
            VerifyPasswordResponse(localId: user.localId, email: user.email, displayName: user.displayName, idToken: tokens.idToken,
                                          refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn)
        }
    }

    /// `emailLinkSignin` (v1 `accounts:signInWithEmailLink`), as the Auth Emulator answers it
    /// (firebase-tools `operations.ts` `signInWithEmailLink`): an unused `EMAIL_SIGNIN` code for
    /// the same address, spent; the user with that email signs in (created on first sign-in), or,
    /// with an ID token, the email is linked to that user. Either way the email is verified and
    /// signs in by link from now on. A user with a second factor gets a pending credential.
    mutating func signInWithEmailLink(_ request: EmailLinkSignInRequest) throws(IdentityToolkitError) -> SignInDecision<EmailLinkSignInResponse> {
        let endpoint = BackendOperation.signInWithEmailLink
        try enter(tenant: request.tenantId, endpoint: endpoint)
        if tenantConfig?.enableEmailLinkSignin == false { throw reject(endpoint, IdentityToolkitError(.operationNotAllowed)) }
        var linkingTo: BackendUser?
        if let idToken = request.idToken {
            guard let uid = try standingUID(idToken, endpoint: endpoint), let user = directory.byID[uid] else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
            }
            linkingTo = user
        }
        guard let given = request.email, !given.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingEmail)) }
        let email = given.lowercased()
        guard let code = request.oobCode, !code.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingOobCode)) }
        let (digest, message) = try usableOobCode(code, endpoint: endpoint)
        guard message.requestType == .emailSignIn else { throw reject(endpoint, IdentityToolkitError(.invalidOobCode)) }
        guard message.email == email else {
            throw reject(endpoint, IdentityToolkitError(.invalidEmail, "The email provided does not match the sign-in email address."))
        }
        let holder = directory.user(email: email)
        if let linkingTo, let holder, holder.localId != linkingTo.localId { throw reject(endpoint, IdentityToolkitError(.emailExists)) }
        if let existing = linkingTo ?? holder { try requireEnabled(existing, endpoint: endpoint) }
        commit(.oobCodeUsed(digest: digest))
        var user = linkingTo ?? holder ?? BackendUser(localId: newLocalID(hint: email), createdAt: now)
        let isNewUser = linkingTo == nil && holder == nil
        user.email = email
        user.emailVerified = true
        user.emailLinkSignin = true
        commit(.user(user))
        if user.hasSecondFactor {
            let pending = try openMFAPending(for: user, provider: .password, endpoint: endpoint)
            return .answer(EmailLinkSignInResponse(localId: user.localId, email: email, isNewUser: isNewUser,
                                                   mfaPendingCredential: pending.credential, mfaInfo: pending.hints))
        }
        let grant = try grantTokens(for: user, provider: .password, endpoint: endpoint)
        emit(.accountSignIn(uid: user.localId, provider: SignInMethod.emailLink, email: email, isNewUser: isNewUser))
        return .tokens(grant) { tokens in
            EmailLinkSignInResponse(localId: user.localId, email: email, idToken: tokens.idToken, refreshToken: tokens.refreshToken,
                                    expiresIn: tokens.expiresIn, isNewUser: isNewUser)
        }
    }

    // MARK: The emails

    /// `sendOobCode`'s checks of the request alone: the email it asks for. `returnOobLink` is an
    /// admin's (the Admin SDKs' link generation, on the project's path with its bearer token).
    mutating func oobRequestType(_ request: GetOOBConfirmationCodeRequest, admin: Bool = false) throws(IdentityToolkitError) -> OobRequestType {
        let endpoint: BackendOperation = admin ? .adminSendOobCode : .sendOobCode
        try enter(tenant: request.tenantId, endpoint: endpoint)
        if request.returnOobLink == true, !admin {
            throw reject(endpoint, IdentityToolkitError(.insufficientPermission, "returnOobLink is for an admin's link generation"))
        }
        if let url = request.continueUrl, URL(string: url)?.scheme == nil || URL(string: url)?.host == nil {
            throw reject(endpoint, IdentityToolkitError(.invalidContinueURI, "((expected an absolute URI with valid scheme and host))"))
        }
        guard let text = request.requestType, text != OobRequestType.unspecified else {
            throw reject(endpoint, IdentityToolkitError(.missingReqType))
        }
        guard let type = OobRequestType(rawValue: text), type != .recoverEmail else {
            throw reject(endpoint, IdentityToolkitError(.invalidReqType, "\(text) is not an email this backend sends (PASSWORD_RESET, VERIFY_EMAIL, VERIFY_AND_CHANGE_EMAIL, EMAIL_SIGNIN)"))
        }
        if type == .emailSignIn, tenantConfig?.enableEmailLinkSignin == false {
            throw reject(endpoint, IdentityToolkitError(.operationNotAllowed))
        }
        return type
    }

    /// With `returnOobLink` (an admin's), the code and its link are answered and no email goes
    /// out; an email verification or change is then for the account with `email`, not an ID
    /// token's (USER_NOT_FOUND without one), as the Auth Emulator answers the Admin SDKs.
    mutating func sendOobCode(_ request: GetOOBConfirmationCodeRequest, type: OobRequestType, admin: Bool = false) throws(IdentityToolkitError) -> GetOOBConfirmationCodeResponse {
        let endpoint: BackendOperation = admin ? .adminSendOobCode : .sendOobCode
        try enter(tenant: request.tenantId, endpoint: endpoint)
        let returnsLink = admin && request.returnOobLink == true
        var email: String
        var newEmail: String?
        switch type {
        case .passwordReset:
            guard let given = request.email, !given.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingEmail)) }
            email = given.lowercased()
            if directory.user(email: email) == nil {
                if emulatorSignIn.enableImprovedEmailPrivacy { return GetOOBConfirmationCodeResponse(email: email) }
                throw reject(endpoint, IdentityToolkitError(.emailNotFound))
            }
        case .verifyEmail, .verifyAndChangeEmail:
            let user: BackendUser
            if returnsLink, request.idToken == nil {
                guard let given = request.email, !given.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingEmail)) }
                guard let holder = directory.user(email: given) else { throw reject(endpoint, IdentityToolkitError(.userNotFound)) }
                user = holder
            } else {
                guard let uid = try standingUID(request.idToken, endpoint: endpoint), let holder = directory.byID[uid] else {
                    throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
                }
                user = holder
            }
            guard let current = user.email else { throw reject(endpoint, IdentityToolkitError(.missingEmail)) }
            email = current
            if type == .verifyAndChangeEmail {
                guard let given = request.newEmail, !given.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingNewEmail)) }
                guard BackendCore.isValidEmail(given) else { throw reject(endpoint, IdentityToolkitError(.invalidEmail)) }
                let canonical = given.lowercased()
                if directory.user(email: canonical) != nil { throw reject(endpoint, IdentityToolkitError(.emailExists)) }
                newEmail = canonical
            }
        case .emailSignIn:
            // Anyone may ask for a sign-in link, to any address: the link is the proof.
            guard let given = request.email, !given.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingEmail)) }
            guard BackendCore.isValidEmail(given) else { throw reject(endpoint, IdentityToolkitError(.invalidEmail)) }
            email = given.lowercased()
        case .recoverEmail:
            throw reject(endpoint, IdentityToolkitError(.invalidReqType))
        }
        let code = randomString(bytes: 40)
        let message = OobEmail(email: email, code: code, requestType: type, newEmail: newEmail,
                               link: actionLink(type, code: code, continueURL: request.continueUrl), sentAt: now)
        commit(.oobCode(digest: BackendCore.digest(code), message))
        if returnsLink {
            emit(.emailLinkGenerated(message))
            return GetOOBConfirmationCodeResponse(email: email, oobCode: code, oobLink: message.link)
        }
        emit(.emailSent(message))
        return GetOOBConfirmationCodeResponse(email: email)
    }

    /// `createAuthUri` for an email (the SDK's `fetchSignInMethods(forEmail:)`), as the Auth
    /// Emulator answers it (firebase-tools `operations.ts` `createAuthUri`): whether an account has
    /// the email, its providers but phone, and how it signs in (`password` only with a password);
    /// with email enumeration protection on, only the session ID, which the SDK reads as no methods.
    /// An identity provider's sign-in URI (`providerId`) is refused, as by the emulator.
    mutating func createAuthUri(_ request: CreateAuthURIRequest) throws(IdentityToolkitError) -> CreateAuthURIResponse {
        let endpoint = BackendOperation.createAuthUri
        try enter(tenant: request.tenantId, endpoint: endpoint)
        guard let identifier = request.identifier, !identifier.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingIdentifier)) }
        guard let continueUri = request.continueUri, !continueUri.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingContinueURI)) }
        guard BackendCore.isValidEmail(identifier) else { throw reject(endpoint, IdentityToolkitError(.invalidIdentifier)) }
        guard let url = URL(string: continueUri), url.scheme != nil, url.host != nil else {
            throw reject(endpoint, IdentityToolkitError(.invalidContinueURI, "((expected an absolute URI with valid scheme and host))"))
        }
        let email = identifier.lowercased()
        var registered = false
        var allProviders: [String] = []
        var methods: [SignInMethod] = []
        if let user = directory.user(email: email) {
            registered = true
            for provider in Self.userInfo(user).providerUserInfo ?? [] where provider.providerId != .phone {
                let id = provider.providerId
                allProviders.append(id.rawValue)
                if id != .password {
                    methods.append(SignInMethod(id))
                } else {
                    // The emulator's: `password` with a password, `emailLink` for a user who signs in by link.
                    if user.passwordHash != nil { methods.append(SignInMethod.password) }
                    if user.emailLinkSignin == true { methods.append(SignInMethod.emailLink) }
                }
            }
        }
        let hidden = emulatorSignIn.enableImprovedEmailPrivacy
        emit(.signInMethodsAsked(email: email, methods: methods, hidden: hidden))
        let sessionId = request.sessionId ?? randomID(length: 27)
        if hidden { return CreateAuthURIResponse(sessionId: sessionId) }
        return CreateAuthURIResponse(registered: registered, allProviders: allProviders, signinMethods: methods.map(\.rawValue), sessionId: sessionId)
    }

    /// `resetPassword`'s checks before the new password is hashed: the code, and the password to hash if one is set.
    /// In the emulator's order (operations.ts `resetPassword`): MISSING_OOB_CODE, the code
    /// (INVALID_OOB_CODE, EXPIRED_OOB_CODE), and with a new password a reset code
    /// (INVALID_OOB_CODE) before WEAK_PASSWORD (audit 3, B-8).
    mutating func resetPasswordInput(_ request: ResetPasswordRequest) throws(IdentityToolkitError) -> (code: String, password: String?) {
        let endpoint = BackendOperation.resetPassword
        try enter(tenant: request.tenantId, endpoint: endpoint)
        guard let code = request.oobCode, !code.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingOobCode)) }
        guard let password = request.newPassword, !password.isEmpty else { return (code, nil) }
        let (_, message) = try usableOobCode(code, endpoint: endpoint)
        guard message.requestType == .passwordReset else { throw reject(endpoint, IdentityToolkitError(.invalidOobCode)) }
        if password.count < BackendCore.minimumPasswordLength { throw reject(endpoint, BackendCore.weakPassword) }
        return (code, password)
    }

    mutating func resetPassword(code: String, hash: PasswordHash?, tenant: String?) throws(IdentityToolkitError) -> ResetPasswordResponse {
        let endpoint = BackendOperation.resetPassword
        try enter(tenant: tenant, endpoint: endpoint)
        let (digest, message) = try usableOobCode(code, endpoint: endpoint)
        // An email sign-in code does not tell its address: the app asks the user (the emulator's rule).
        let answer = ResetPasswordResponse(email: message.requestType == .emailSignIn ? nil : message.email, newEmail: message.newEmail,
                                           requestType: message.requestType.rawValue)
        guard let hash else { return answer }
        guard message.requestType == .passwordReset, var user = directory.user(email: message.email) else {
            throw reject(endpoint, IdentityToolkitError(.invalidOobCode))
        }
        setPassword(hash, of: &user)
        user.emailVerified = true
        // As the emulator: every other provider goes (its `deleteProviders`, all of them, then
        // password and phone derived again), and every session ends (`validSince`).
        user.otherProviders = nil
        user.appleSub = nil
        commit(.oobCodeUsed(digest: digest))
        commit(.user(user))
        return answer
    }





    /// A code of the email outbox that can still be used: known (INVALID_OOB_CODE), unused
    /// (INVALID_OOB_CODE: the service does not tell a used code from a wrong one), in its lifetime
    /// (EXPIRED_OOB_CODE). The call is then one of the tenant of the user the email went to.
    mutating func usableOobCode(_ code: String, endpoint: BackendOperation) throws(IdentityToolkitError) -> (digest: String, OobEmail) {
        let digest = BackendCore.digest(code)
        guard let entry = state.oobCodes[digest], !entry.used else { throw reject(endpoint, IdentityToolkitError(.invalidOobCode)) }
        try enter(tenant: entry.message.tenant, endpoint: endpoint)
        guard now.timeIntervalSince(entry.message.sentAt) < configuration.oobCodeLifetime else {
            throw reject(endpoint, IdentityToolkitError(.expiredOobCode))
        }
        return (digest, entry.message)
    }

    /// `accounts:update` with an `oobCode` (`applyActionCode`): an email verification marks the
    /// email verified; a change of email sets the new, verified address. The code is spent.
    mutating func applyOobCode(_ code: String) throws(IdentityToolkitError) -> SetAccountInfoResponse {
        let endpoint = BackendOperation.setAccountInfo
        let (digest, message) = try usableOobCode(code, endpoint: endpoint)
        guard var user = directory.user(email: message.email) else { throw reject(endpoint, IdentityToolkitError(.invalidOobCode)) }
        var newEmail: String?
        switch message.requestType {
        case .verifyEmail:
            user.emailVerified = true
        case .verifyAndChangeEmail:
            guard let target = message.newEmail else { throw reject(endpoint, IdentityToolkitError(.invalidOobCode)) }
            if let holder = directory.user(email: target), holder.localId != user.localId { throw reject(endpoint, IdentityToolkitError(.emailExists)) }
            user.email = target
            user.emailVerified = true
            newEmail = target
        case .passwordReset, .emailSignIn, .recoverEmail:
            // A password reset code needs a new password: resetPassword, not applyActionCode.
            throw reject(endpoint, IdentityToolkitError(.invalidOobCode))
        }
        commit(.oobCodeUsed(digest: digest))
        commit(.user(user))
        let info = Self.userInfo(user)
        var response = SetAccountInfoResponse(localId: user.localId, email: user.email, displayName: user.displayName, photoUrl: user.photoUrl,
                                              providerUserInfo: info.providerUserInfo, emailVerified: user.emailVerified)
        response.newEmail = newEmail
        return response
    }



    /// The link the email carries: Firebase's hosted action handler on the project's auth domain
    /// (this backend does not serve that page: an app or a test takes the code from the link).
    mutating func actionLink(_ type: OobRequestType, code: String, continueURL: String?) -> String {
        let mode = switch type {
        case .passwordReset: "resetPassword"
        case .verifyEmail: "verifyEmail"
        case .verifyAndChangeEmail: "verifyAndChangeEmail"
        case .emailSignIn: "signIn"
        case .recoverEmail: "recoverEmail"
        }
        var components = URLComponents()
        components.scheme = "https"
        components.host = "\(configuration.projectID).firebaseapp.com"
        components.path = "/__/auth/action"
        components.queryItems = [URLQueryItem(name: "mode", value: mode), URLQueryItem(name: "oobCode", value: code),
                                 URLQueryItem(name: "apiKey", value: configuration.apiKey), URLQueryItem(name: "lang", value: "en")]
            + (continueURL.map { [URLQueryItem(name: "continueUrl", value: $0)] } ?? [])
            + (tenant.map { [URLQueryItem(name: "tenantId", value: $0)] } ?? [])
        return components.string ?? ""
    }

    // MARK: Passwords

    /// A new password's salt, from the call's source of randomness: a seeded run gives the same
    /// records (the hash itself is made beside the actor: PasswordHashing.swift).
    mutating func passwordSalt() -> [UInt8] { randomBytes(16) }
}

extension BackendCore {
    /// The shortest password the service takes (`WEAK_PASSWORD : Password should be at least 6 characters`).
    static let minimumPasswordLength = 6

    static var weakPassword: IdentityToolkitError {
        IdentityToolkitError(.weakPassword, "Password should be at least \(minimumPasswordLength) characters")
    }

    /// `x@y` with something on both sides (the emulator's `isValidEmailAddress` is as loose).
    static func isValidEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && !email.contains(where: \.isWhitespace)
    }
}
