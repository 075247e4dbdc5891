import Foundation
import IdentityToolkitAPI
import Utilities

/// The nonce of Sign in with Apple, as Firebase's sample makes it: random characters from the
/// sample's charset (which lacks "W", as the sample's does), the SHA-256 hex of it sent to Apple,
/// the raw nonce sent to Firebase.
package enum AppleNonce {
    static let charset = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVXYZabcdefghijklmnopqrstuvwxyz-._")

    /// `length` characters from a cryptographically secure generator (getrandom(2)), without
    /// modulo bias.
    package static func random(length: Int = 32) -> String {
        precondition(length > 0)
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in charset[Int.random(in: 0..<charset.count, using: &generator)] })
    }

    /// Lowercase hex SHA-256, what goes into `ASAuthorizationAppleIDRequest.nonce`.
    package static func sha256(_ input: String) -> String {
        Hex.encode(SHA256Digest.hash(Array(input.utf8)))
    }
}

extension Auth {
    /// signInWithIdp (`verifyAssertion`) for an Apple credential, as the SDK's
    /// `internalSignInAndRetrieveData` sends it: the identity token, raw nonce and (on the first
    /// authorization) the user's name in `postBody`, or a pending token; `autoCreate: false` when
    /// reauthenticating, so no account is made for an unknown Apple ID. A user with a second
    /// factor gets `secondFactorRequired` (17078) with its resolver.
    @inline(never)
    func idpSignIn(_ credential: any IdentityProviderCredential, isReauthentication: Bool) async throws(AuthError) -> AuthDataResult {
        // As the SDK's VerifyAssertionRequest: the postBody always, the pending token beside it,
        // autoCreate always (false when reauthenticating).
        var request = VerifyAssertionRequest()
        request.autoCreate = !isReauthentication
        credential.prepare(&request)
        let response = try await verifyAssertion(request)
        guard let providerID = response.providerId?.rawValue, !providerID.isEmpty else {
            throw AuthError(.internalError, "verifyAssertion answered without providerId (the SDK's unexpected response)")
        }
        let user = try await completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn)
        // `username`: the SDK reads the answer's `username`, a field Google's SignInWithIdpResponse
        // does not have (its schema names `screenName`), so it is nil on a device too.
        return AuthDataResult(user: user,
                              additionalUserInfo: AdditionalUserInfo(providerID: providerID, profile: AdditionalUserInfo.profile(rawUserInfo: response.rawUserInfo),
                                                                     username: nil, isNewUser: response.isNewUser ?? false),
                              credential: OAuthCredential(response: response))
    }

    /// `verifyAssertion`, with what the SDK makes of its answer: a second factor required
    /// (17078, with a ``MultiFactorResolver``), an error in a 200 answer (`returnIdpCredential`:
    /// `FEDERATED_USER_ID_ALREADY_LINKED` is 17025 with the credential that signs in to the
    /// account holding the Apple ID), an account to confirm (17012).
    @inline(never)
    func verifyAssertion(_ request: VerifyAssertionRequest) async throws(AuthError) -> VerifyAssertionResponse {
        let response = try await backend.call(request)
        if let required = secondFactorRequired(idToken: response.idToken, pending: response.mfaPendingCredential, enrollments: response.mfaInfo) {
            throw required
        }
        if let message = response.errorMessage {
            // The SDK maps the messages it knows and, for others, goes on with the answer
            // (AuthBackend.swift 263–279); here an unknown one is a clear internalError instead.
            guard let mapped = AuthError.fromServer(message) else {
                throw AuthError(.internalError, "signInWithIdp answered 200 with errorMessage \(message), which FirebaseAuth 12.19 does not map",
                                serverMessage: message)
            }
            guard mapped.code == .credentialAlreadyInUse else { throw mapped }
            throw AuthError(.credentialAlreadyInUse,
                            "\(message): this provider account is linked to another account; sign in with userInfo[AuthErrorUserInfoUpdatedCredentialKey]",
                            serverMessage: message, updatedCredential: OAuthCredential(response: response),
                            email: response.email.flatMap { $0.isEmpty ? nil : $0 })
        }
        if response.needConfirmation == true {
            throw AuthError(.accountExistsWithDifferentCredential, "an account with this email exists with another sign-in method",
                            updatedCredential: OAuthCredential(response: response), email: response.email)
        }
        return response
    }

    /// `user.link(with:)` after its providerAlreadyLinked check: a phone credential by
    /// `verifyPhoneNumber` with the user's ID token (`operation: LINK`), an Apple one by
    /// `verifyAssertion` with it; then the user's tokens and profile are renewed.
    func link(_ user: User, with credential: AuthCredential) async throws(AuthError) -> AuthDataResult {
        let idToken = try await user.idToken()
        switch credential {
        case let phone as PhoneAuthCredential:
            // A temporary-proof credential (from 17025) is where the SDK stops with fatalError
            // ("Missing verificationCode", User.swift 1421): a clear error here (audit 3, D4.6).
            if phone.temporaryProof != nil {
                throw AuthError(.missingVerificationCode, "link(with:) takes a phone credential with a verification ID and code; one with a temporary proof signs in (the SDK stops here with fatalError: Missing verificationCode)")
            }
            let response = try await backend.call(try phone.verifyRequest(operation: .link, idToken: idToken))
            if let inUse = PhoneAuthCredential.inUse(response) { throw inUse }
            try await renew(user, idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn)
            try user.clearAnonymous()
            // No additional user info for a phone link (User.swift 1626–1644; audit 3, D4.5).
            return AuthDataResult(user: user, additionalUserInfo: nil)
        case let oauth as any IdentityProviderCredential:
            // The SDK links with autoCreate true, its default (UserProfileUpdate.swift 19–24).
            var request = VerifyAssertionRequest(idToken: idToken, autoCreate: true)
            oauth.prepare(&request)
            let response = try await verifyAssertion(request)
            try await renew(user, idToken: response.idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn)
            try user.clearAnonymous()
            return AuthDataResult(user: user,
                                  additionalUserInfo: AdditionalUserInfo(providerID: response.providerId?.rawValue ?? oauth.providerID,
                                                                         profile: AdditionalUserInfo.profile(rawUserInfo: response.rawUserInfo),
                                                                         username: nil, isNewUser: response.isNewUser ?? false),
                                  credential: OAuthCredential(response: response))
        case let email as EmailAuthCredential:
            guard case .password(let password) = email.emailType else { return try await linkEmailLink(email, to: user, idToken: idToken) }
            // The SDK's `link(withEmail:password:)`: signupNewUser with the user's ID token.
            let response = try await backend.call(SignUpNewUserRequest(email: email.email, password: password, returnSecureToken: true,
                                                                       idToken: idToken).fromIOS)
            guard let refreshToken = response.refreshToken, response.idToken != nil else {
                throw AuthError(.internalError, "signupNewUser answered without tokens (the SDK stops with fatalError: Invalid SignUpNewUserResponse)")
            }
            try await renew(user, idToken: response.idToken, refreshToken: refreshToken, expiresIn: response.expiresIn)
            try user.clearAnonymous()
            return AuthDataResult(user: user, additionalUserInfo: nil)
        default:
            throw AuthError(.invalidCredential, "this auth core links phone, identity provider and email credentials, not \(credential)")
        }
    }

    /// The SDK's `link(withEmailCredential:)` for a link (User.swift 1532–1570): `emailLinkSignin`
    /// with the link's code and the user's ID token; the user keeps their ID and gains the email.
    private func linkEmailLink(_ email: EmailAuthCredential, to user: User, idToken: String) async throws(AuthError) -> AuthDataResult {
        guard case .link(let link) = email.emailType else { throw AuthError(.internalError, "not an email link credential") }
        let response = try await backend.call(try EmailLinkSignInRequest(email: email.email, link: link, idToken: idToken))
        if let required = secondFactorRequired(idToken: response.idToken, pending: response.mfaPendingCredential, enrollments: response.mfaInfo) {
            throw required
        }
        guard let refreshToken = response.refreshToken, response.idToken != nil else {
            throw AuthError(.internalError, "emailLinkSignin answered without tokens (the SDK stops with fatalError: missing token in EmailLinkSignInResponse)")
        }
        try await renew(user, idToken: response.idToken, refreshToken: refreshToken, expiresIn: response.expiresIn)
        try user.clearAnonymous()
        return AuthDataResult(user: user, additionalUserInfo: nil)
    }

    /// `revokeToken(withAuthorizationCode:)`: revokes the signed-in user's Apple grant (Apple
    /// requires it before the account is deleted). The SDK sends `tokenType` `"3"` (its enum's raw
    /// value for an authorization code). Without a signed-in user the SDK never calls back; this
    /// throws `nullUser` (17067).
    public func revokeToken(withAuthorizationCode code: String) async throws {
        try await AuthError.forApp {
            guard let user = currentUser else { throw AuthError(.nullUser, "no user is signed in: revokeToken needs the signed-in user's ID token") }
            _ = try await backend.call(RevokeTokenRequest(providerId: ProviderID(rawValue: AuthProviderID.apple.rawValue), tokenType: .sdkAuthorizationCode, token: code,
                                                          idToken: try await user.idToken()))
        }
    }
}
