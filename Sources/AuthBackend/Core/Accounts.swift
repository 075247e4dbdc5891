import Foundation
import IdentityToolkitAPI
import Utilities

// A signed-in user as the service reads them: the refresh token's grant (`securetoken` v1 `token`),
// the ID token a call carries, and the user as `accounts:lookup` describes them.

extension CoreCall {
    /// `secureToken`'s rules: the user a refresh token signs in, and the sign-in it was granted
    /// for; the ID token is signed after.
    mutating func refresh(_ request: SecureTokenRequest) throws(IdentityToolkitError) -> (BackendUser, BackendState.RefreshToken) {
        let endpoint = BackendOperation.secureToken
        guard request.grantType == "refresh_token" else {
            throw reject(endpoint, IdentityToolkitError(.invalidGrantType, "grant_type must be refresh_token, not \(request.grantType ?? "none")"))
        }
        guard let refreshToken = request.refreshToken, !refreshToken.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingRefreshToken))
        }
        let stored: BackendState.RefreshToken
        if let sign = tokenSigner.refreshTokens.open(refreshToken) {
            try enter(tenant: sign.t, endpoint: endpoint)
            // A user deleted, or made again with the same UID, is not the one this token signed in.
            guard let user = directory.byID[sign.u], RefreshTokenSeal.milliseconds(user.createdAt) == sign.k else {
                throw reject(endpoint, IdentityToolkitError(.userNotFound))
            }
            stored = BackendState.RefreshToken(localId: sign.u, provider: ProviderID(rawValue: sign.p), secondFactor: sign.f,
                                               issuedAt: Date(timeIntervalSince1970: Double(sign.i) / 1000), claims: sign.c)
        } else if let legacy = state.refreshTokens[BackendCore.digest(refreshToken)] {
            stored = legacy
        } else {
            throw reject(endpoint, IdentityToolkitError(.invalidRefreshToken))
        }
        guard let user = directory.byID[stored.localId] else { throw reject(endpoint, IdentityToolkitError(.userNotFound)) }
        try requireEnabled(user, endpoint: endpoint)
        // Revoked: the service answers TOKEN_EXPIRED (the SDK's 17021, userTokenExpired).
        if let validSince = user.validSince, Int64(stored.issuedAt.timeIntervalSince1970) < validSince {
            throw reject(endpoint, IdentityToolkitError(.tokenExpired, "The user's credential is no longer valid. The user must sign in again."))
        }
        return (user, stored)
    }
    /// The user of an ID token, and the provider they signed in with.
    mutating func signedInUser(_ idToken: String?, endpoint: BackendOperation) throws(IdentityToolkitError) -> (BackendUser, ProviderID) {
        guard let idToken, !idToken.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingIDToken)) }
        guard let claims = tokenSigner.verifiedClaims(idToken, now: now) else {
            throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
        }
        try enter(tenant: claims.firebase.tenant, endpoint: endpoint)
        guard let user = directory.byID[claims.sub] else { throw reject(endpoint, IdentityToolkitError(.userNotFound)) }
        try requireStanding(user, claims: claims, endpoint: endpoint)
        return (user, claims.firebase.signInProvider)
    }

    /// A token that is not revoked (the Admin SDK's revoke_refresh_tokens: issued before the user's
    /// `validSince`, TOKEN_EXPIRED, as the Auth Emulator's parseIdToken checks), of a user not disabled.
    mutating func requireStanding(_ user: BackendUser, claims: FirebaseIDTokenClaims, endpoint: BackendOperation) throws(IdentityToolkitError) {
        if let validSince = user.validSince, Int64(claims.iat) < validSince {
            throw reject(endpoint, IdentityToolkitError(.tokenExpired, "The user's credential is no longer valid. The user must sign in again."))
        }
        try requireEnabled(user, endpoint: endpoint)
    }
}

extension CoreCall {

    /// ``IdentityToolkit/getAccountInfo(_:)``'s rules.
    mutating func getAccountInfo(_ request: GetAccountInfoRequest) throws(IdentityToolkitError) -> GetAccountInfoResponse {
        let (user, _) = try signedInUser(request.idToken, endpoint: .getAccountInfo)
        return GetAccountInfoResponse(users: [Self.userInfo(user).asClientSees])
    }

    /// A user as `accounts:lookup` and `accounts:batchGet` describe them (and as the Auth
    /// Emulator's export writes them).
    static func userInfo(_ user: BackendUser) -> UserRecord {
        var providers: [ProviderUserInfo] = []
        // federatedId beside rawId where Google and the Auth Emulator give one (the SDK reads a
        // provider's uid from federatedId alone, UserInfoImpl.swift 25–38): not for the phone
        // provider (state.ts: phoneNumber and rawId), whose uid is "" on a device.
        if let phone = user.phoneNumber { providers.append(ProviderUserInfo(providerId: .phone, rawId: phone, phoneNumber: phone)) }
        if let sub = user.appleSub {
            providers.append(ProviderUserInfo(providerId: .apple, rawId: sub, federatedId: sub, email: user.email))
        }
        providers += user.otherProviders ?? []
        if user.passwordHash != nil || user.emailLinkSignin == true, let email = user.email {
            // With the user's photo, as the emulator's (state.ts, the password provider's upsert; audit 3, B-7).
            providers.append(ProviderUserInfo(providerId: .password, rawId: email, federatedId: email, email: email, displayName: user.displayName,
                                              photoUrl: user.photoUrl))
        }
        let enrollments = (user.mfaEnrollments ?? []).map(\.described)
        func milliseconds(_ date: Date) -> String { String(Int64((date.timeIntervalSince1970 * 1000).rounded())) }
        return UserRecord(localId: user.localId, email: user.email, emailVerified: user.email == nil ? nil : (user.emailVerified ?? true),
                          displayName: user.displayName, photoUrl: user.photoUrl, phoneNumber: user.phoneNumber,
                          disabled: user.disabled ?? false, providerUserInfo: providers,
                          validSince: user.validSince.map { String($0) },
                          createdAt: milliseconds(user.createdAt), lastLoginAt: user.lastLoginAt.map(milliseconds),
                          customAttributes: user.customAttributes, mfaInfo: enrollments.isEmpty ? nil : enrollments,
                          tenantId: user.tenantId, customAuth: user.customAuth, passwordHash: user.passwordHash, salt: user.salt,
                          passwordUpdatedAt: user.passwordUpdatedAt, emailLinkSignin: user.emailLinkSignin)
    }
}

// MARK: Changing and deleting an account

extension CoreCall {
    /// `setAccountInfo`'s checks of the request alone: the new password to hash, if one is set.
    mutating func accountUpdatePassword(_ request: SetAccountInfoRequest) throws(IdentityToolkitError) -> String? {
        let endpoint = BackendOperation.setAccountInfo
        try enter(tenant: request.tenantId, endpoint: endpoint)
        if request.idToken == nil, request.oobCode == nil {
            throw reject(endpoint, IdentityToolkitError(.invalidReqType, "Unsupported request parameters."))
        }
        // As the Auth Emulator: custom claims and disabling are an admin's; the other admin fields
        // (validSince, createdAt, …) are not read from a user's request.
        if request.customAttributes != nil { throw reject(endpoint, IdentityToolkitError(.insufficientPermission)) }
        if request.disableUser != nil { throw reject(endpoint, IdentityToolkitError(.operationNotAllowed)) }
        if let password = request.password, password.count < BackendCore.minimumPasswordLength { throw reject(endpoint, BackendCore.weakPassword) }
        return request.password
    }

    mutating func setAccountInfo(_ request: SetAccountInfoRequest, hash: PasswordHash?) throws(IdentityToolkitError) -> SignInDecision<SetAccountInfoResponse> {
        let endpoint = BackendOperation.setAccountInfo
        try enter(tenant: request.tenantId, endpoint: endpoint)
        if let code = request.oobCode { return .answer(try applyOobCode(code)) }
        guard let claims = try standingClaims(request.idToken, endpoint: endpoint), var user = directory.byID[claims.sub] else {
            throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
        }
        var provider = claims.firebase.signInProvider
        if request.email != nil || hash != nil || !(request.deleteProvider ?? []).isEmpty {
            try requireRecentSignIn(claims, endpoint: endpoint)
        }
        do throws(IdentityToolkitError) {
            if let email = request.email {
                guard BackendCore.isValidEmail(email) else { throw IdentityToolkitError(.invalidEmail) }
                let canonical = email.lowercased()
                if canonical != user.email {
                    if directory.user(email: canonical) != nil { throw IdentityToolkitError(.emailExists) }
                    if emulatorSignIn.enableImprovedEmailPrivacy {
                        throw IdentityToolkitError(.operationNotAllowed, "Please verify the new email before changing email.")
                    }
                    user.email = canonical
                    user.emailVerified = false
                    user.validSince = Int64(now.timeIntervalSince1970)
                }
            }
            if let hash {
                guard user.email != nil else { throw IdentityToolkitError(.missingEmail, "a password needs the user's email") }
                // A new password ends every other session (their refresh tokens), as Firebase's does.
                setPassword(hash, of: &user)
                provider = .password
            }
            try Self.applyProfile(request, to: &user)
            commit(.user(user))
        } catch { throw reject(endpoint, error) }
        let info = Self.userInfo(user)
        let response = SetAccountInfoResponse(localId: user.localId, email: user.email, displayName: user.displayName, photoUrl: user.photoUrl,
                                              providerUserInfo: info.providerUserInfo, emailVerified: user.emailVerified)
        // New tokens when asked, and always when the change revoked the others (the emulator's rule).
        guard request.returnSecureToken == true || hash != nil else { return .answer(response) }
        let grant = try grantTokens(for: user, provider: provider, secondFactor: claims.firebase.secondFactorIdentifier,
                                    signsIn: false, endpoint: endpoint)
        return .tokens(grant) { tokens in
            var answer = response
            answer.idToken = tokens.idToken
            answer.refreshToken = tokens.refreshToken
            answer.expiresIn = tokens.expiresIn
            return answer
        }
    }

    /// ``IdentityToolkit/deleteAccount(_:)``'s rules.
    mutating func deleteAccount(_ request: DeleteAccountRequest) throws(IdentityToolkitError) -> DeleteAccountResponse {
        try enter(tenant: request.tenantId, endpoint: .deleteAccount)
        guard let claims = try standingClaims(request.idToken, endpoint: .deleteAccount) else {
            throw reject(.deleteAccount, IdentityToolkitError(.userNotFound))
        }
        let uid = claims.sub
        try requireRecentSignIn(claims, endpoint: .deleteAccount)
        commit(.userDeleted(localId: uid))
        emit(.accountDeleted(uid: uid))
        return DeleteAccountResponse()
    }


    /// A sensitive change (delete the account, change the email or password, unlink a provider)
    /// needs a sign-in within ``BackendConfiguration/recentLoginSeconds``: Google's
    /// CREDENTIAL_TOO_OLD_LOGIN_AGAIN otherwise, which the SDK documents on each of these calls
    /// (User.swift 111, 186, 246, 811, 942) and reports as `requiresRecentLogin` (17014).
    /// Google answers the bare code, as here.
    mutating func requireRecentSignIn(_ claims: FirebaseIDTokenClaims, endpoint: BackendOperation) throws(IdentityToolkitError) {
        let window = configuration.recentLoginSeconds
        guard window > 0, Int(now.timeIntervalSince1970) - claims.authTime > window else { return }
        throw reject(endpoint, IdentityToolkitError(.credentialTooOldLoginAgain))
    }

    /// The user ID of a valid ID token of this backend's, `nil` for none (each caller answers its
    /// own error); a revoked token (issued before the user's `validSince`) is TOKEN_EXPIRED and a
    /// disabled user USER_DISABLED, as on every call with an ID token (``signedInUser(_:endpoint:)``).
    mutating func standingUID(_ idToken: String?, endpoint: BackendOperation) throws(IdentityToolkitError) -> String? {
        try standingClaims(idToken, endpoint: endpoint)?.sub
    }

    /// ``standingUID(_:endpoint:)``'s token, its claims: its signature checked once.
    mutating func standingClaims(_ idToken: String?, endpoint: BackendOperation) throws(IdentityToolkitError) -> FirebaseIDTokenClaims? {
        guard let idToken, !idToken.isEmpty, let claims = tokenSigner.verifiedClaims(idToken, now: now) else { return nil }
        try enter(tenant: claims.firebase.tenant, endpoint: endpoint)
        guard let user = directory.byID[claims.sub] else { return nil }
        try requireStanding(user, claims: claims, endpoint: endpoint)
        return claims
    }
}

extension UserRecord {
    /// What Google's `accounts:lookup` answers a client (the user's own ID token): the password
    /// hash as `UkVEQUNURUQ=` (base64 of `REDACTED`) when the user has one, and no salt. The SDK
    /// reads only whether a hash is there (`User.swift` `hasEmailPasswordCredential`, 12.19 line
    /// 1371); the Admin routes keep both, as the Admin SDKs' `list_users` gets them.
    var asClientSees: UserRecord {
        var record = self
        record.passwordHash = passwordHash == nil ? nil : Self.redactedPasswordHash
        record.salt = nil
        return record
    }

    static let redactedPasswordHash = "UkVEQUNURUQ="
}
