import Foundation
import IdentityToolkitAPI
import Utilities

// Phone multi-factor as the service answers it (v2 `accounts/mfaEnrollment:*`, `accounts/mfaSignIn:*`),
// with the rules and messages the Firebase Auth Emulator keeps from production
// (firebase-tools `src/emulator/auth/operations.ts` `mfaEnrollmentStart`…`mfaSignInFinalize`),
// plus what the emulator skips: the app verification of each start request, pending credentials
// that expire and serve once.

extension BackendCore {
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
            // A user deleted, or made again with the same UID, is not the one this token signed in.
            guard let user = state.users[sign.u], RefreshTokenSeal.milliseconds(user.createdAt) == sign.k else {
                throw reject(endpoint, IdentityToolkitError(.userNotFound))
            }
            stored = BackendState.RefreshToken(localId: sign.u, provider: sign.p, secondFactor: sign.f,
                                               issuedAt: Date(timeIntervalSince1970: Double(sign.i) / 1000), claims: sign.c)
        } else if let legacy = state.refreshTokens[Self.digest(refreshToken)] {
            stored = legacy
        } else {
            throw reject(endpoint, IdentityToolkitError(.invalidRefreshToken))
        }
        guard let user = state.users[stored.localId] else { throw reject(endpoint, IdentityToolkitError(.userNotFound)) }
        try requireEnabled(user, endpoint: endpoint)
        // Revoked: the service answers TOKEN_EXPIRED (the SDK's 17021, userTokenExpired).
        if let validSince = user.validSince, Int64(stored.issuedAt.timeIntervalSince1970) < validSince {
            throw reject(endpoint, IdentityToolkitError(.tokenExpired, "The user's credential is no longer valid. The user must sign in again."))
        }
        return (user, stored)
    }
    /// The user of an ID token, and the provider they signed in with.
    mutating func signedInUser(_ idToken: String?, endpoint: BackendOperation) throws(IdentityToolkitError) -> (BackendUser, String) {
        guard let idToken, !idToken.isEmpty else { throw reject(endpoint, IdentityToolkitError("MISSING_ID_TOKEN")) }
        guard let claims = tokenSigner.verifiedClaims(idToken, now: now) else {
            throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
        }
        guard let user = state.users[claims.sub] else { throw reject(endpoint, IdentityToolkitError(.userNotFound)) }
        // Revoked (the Admin SDK's revoke_refresh_tokens), as the Auth Emulator's parseIdToken checks.
        if let validSince = user.validSince, Int64(claims.iat) < validSince {
            throw reject(endpoint, IdentityToolkitError(.tokenExpired, "The user's credential is no longer valid. The user must sign in again."))
        }
        try requireEnabled(user, endpoint: endpoint)
        return (user, claims.firebase.signInProvider)
    }
}

extension BackendCore {
    /// First factors that cannot lead to a second one (the service's list).
    static let mfaIneligibleProviders: Set<String> = ["phone", "anonymous", "custom", "gc.apple.com"]

    // MARK: Enrollment

    /// ``IdentityToolkit/startMFAEnrollment(_:)``'s rules.
    mutating func startMFAEnrollment(_ request: StartMFAEnrollmentRequest) throws(IdentityToolkitError) -> StartMFAEnrollmentResponse {
        let endpoint = BackendOperation.mfaEnrollmentStart
        let (user, _) = try enrollingUser(request.idToken, endpoint: endpoint)
        guard let info = request.phoneEnrollmentInfo else {
            throw reject(endpoint, IdentityToolkitError("INVALID_ARGUMENT", "phoneEnrollmentInfo is missing"))
        }
        let number: String
        do { number = try PhoneNumbers.validate(info.phoneNumber) } catch {
            throw reject(endpoint, IdentityToolkitError(.invalidPhoneNumber, "Invalid format."))
        }
        guard !(user.mfaEnrollments ?? []).contains(where: { $0.phoneNumber == number }) else {
            throw reject(endpoint, IdentityToolkitError(.secondFactorExists, "Phone number already enrolled as second factor for this account."))
        }
        guard (user.mfaEnrollments ?? []).count < configuration.maximumSecondFactors else {
            throw reject(endpoint, IdentityToolkitError(
                .secondFactorLimitExceeded, "The maximum allowed number of second factors (\(configuration.maximumSecondFactors)) on a user has been exceeded."))
        }
        try checkAppProof(number: number, iosReceipt: info.iosReceipt, iosSecret: info.iosSecret,
                          recaptchaToken: info.recaptchaToken, captchaResponse: info.captchaResponse,
                          recaptchaVersion: info.recaptchaVersion, clientType: info.clientType,
                          action: .mfaSmsEnrollment, endpoint: endpoint)
        let sessionInfo = try openSession(number: number, purpose: .mfaEnrollment(localId: user.localId), languageCode: nil,
                                          endpoint: endpoint)
        return StartMFAEnrollmentResponse(phoneSessionInfo: StartMFAPhoneResponseInfo(sessionInfo: sessionInfo))
    }


    mutating func finalizeMFAEnrollment(_ request: FinalizeMFAEnrollmentRequest) throws(IdentityToolkitError) -> SignInDecision<FinalizeMFAEnrollmentResponse> {
        let endpoint = BackendOperation.mfaEnrollmentFinalize
        var (user, provider) = try enrollingUser(request.idToken, endpoint: endpoint)
        guard let info = request.phoneVerificationInfo else {
            throw reject(endpoint, IdentityToolkitError("INVALID_ARGUMENT", "phoneVerificationInfo is missing"))
        }
        let session = try spendSession(info.sessionInfo, code: info.code, purpose: .mfaEnrollment(localId: user.localId), endpoint: endpoint)
        guard !(user.mfaEnrollments ?? []).contains(where: { $0.phoneNumber == session.phoneNumber }) else {
            throw reject(endpoint, IdentityToolkitError(.secondFactorExists, "Phone number already enrolled as second factor for this account."))
        }
        let enrollment = MFAEnrollmentRecord(id: randomString(bytes: 21), phoneNumber: session.phoneNumber,
                                             displayName: request.displayName, enrolledAt: now)
        user.mfaEnrollments = (user.mfaEnrollments ?? []) + [enrollment]
        commit(.user(user))
        emit(.secondFactorEnrolled(uid: user.localId, enrollmentID: enrollment.id, phoneNumber: enrollment.phoneNumber))
        return .tokens(try grantTokens(for: user, provider: provider, secondFactor: enrollment.id, endpoint: endpoint)) { tokens in
            FinalizeMFAEnrollmentResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken,
                                          phoneAuthInfo: FinalizeMFAPhoneResponseInfo(phoneNumber: session.phoneNumber))
        }
    }


    mutating func withdrawMFA(_ request: WithdrawMFARequest) throws(IdentityToolkitError) -> SignInDecision<WithdrawMFAResponse> {
        let endpoint = BackendOperation.mfaEnrollmentWithdraw
        var (user, provider) = try signedInUser(request.idToken, endpoint: endpoint)
        let before = user.mfaEnrollments ?? []
        let after = before.filter { $0.id != request.mfaEnrollmentId }
        guard after.count < before.count else {
            throw reject(endpoint, IdentityToolkitError(.mfaEnrollmentNotFound, "The user has no second factor \(request.mfaEnrollmentId ?? "(none given)")."))
        }
        user.mfaEnrollments = after
        commit(.user(user))
        emit(.secondFactorWithdrawn(uid: user.localId, enrollmentID: request.mfaEnrollmentId ?? ""))
        return .tokens(try grantTokens(for: user, provider: provider, endpoint: endpoint)) { tokens in
            WithdrawMFAResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken)
        }
    }

    // MARK: Sign-in

    /// ``IdentityToolkit/startMFASignIn(_:)``'s rules.
    mutating func startMFASignIn(_ request: StartMFASignInRequest) throws(IdentityToolkitError) -> StartMFASignInResponse {
        let endpoint = BackendOperation.mfaSignInStart
        try requireMultiFactor(endpoint)
        guard let credential = request.mfaPendingCredential, !credential.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingMFAPendingCredential, "Request does not have MFA pending credential."))
        }
        guard let enrollmentID = request.mfaEnrollmentId, !enrollmentID.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingMFAEnrollmentID, "No second factor identifier is provided."))
        }
        let (digest, _, user) = try pending(credential, endpoint: endpoint)
        guard let enrollment = user.mfaEnrollments?.first(where: { $0.id == enrollmentID }) else {
            throw reject(endpoint, IdentityToolkitError(.mfaEnrollmentNotFound, "The user has no second factor \(enrollmentID)."))
        }
        let info = request.phoneSignInInfo
        try checkAppProof(number: enrollment.phoneNumber, iosReceipt: info?.iosReceipt, iosSecret: info?.iosSecret,
                          recaptchaToken: info?.recaptchaToken, captchaResponse: info?.captchaResponse,
                          recaptchaVersion: info?.recaptchaVersion, clientType: info?.clientType,
                          action: .mfaSmsSignIn, endpoint: endpoint)
        let sessionInfo = try openSession(number: enrollment.phoneNumber,
                                          purpose: .mfaSignIn(pendingDigest: digest, enrollmentID: enrollmentID),
                                          languageCode: nil, endpoint: endpoint)
        return StartMFASignInResponse(phoneResponseInfo: StartMFAPhoneResponseInfo(sessionInfo: sessionInfo))
    }


    mutating func finalizeMFASignIn(_ request: FinalizeMFASignInRequest) throws(IdentityToolkitError) -> SignInDecision<FinalizeMFASignInResponse> {
        let endpoint = BackendOperation.mfaSignInFinalize
        try requireMultiFactor(endpoint)
        guard let credential = request.mfaPendingCredential, !credential.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingMFAPendingCredential, "Please set MFA Pending Credential."))
        }
        guard let info = request.phoneVerificationInfo else {
            throw reject(endpoint, IdentityToolkitError("INVALID_ARGUMENT", "MFA provider not supported!"))
        }
        let (digest, provider, user) = try pending(credential, endpoint: endpoint)
        guard let sessionInfo = info.sessionInfo, !sessionInfo.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingSessionInfo))
        }
        guard case .mfaSignIn(digest, let enrollmentID)? = state.sessions[sessionInfo]?.purpose else {
            throw reject(endpoint, IdentityToolkitError(.invalidSessionInfo, "the verification ID is not a second-factor code for this pending credential"))
        }
        _ = try spendSession(sessionInfo, code: info.code, purpose: .mfaSignIn(pendingDigest: digest, enrollmentID: enrollmentID),
                             endpoint: endpoint)
        guard user.mfaEnrollments?.contains(where: { $0.id == enrollmentID }) == true else {
            throw reject(endpoint, IdentityToolkitError(.mfaEnrollmentNotFound, "The user has no second factor \(enrollmentID)."))
        }
        commit(.mfaPendingUsed(digest: digest))
        let grant = try grantTokens(for: user, provider: provider, secondFactor: enrollmentID, endpoint: endpoint)
        emit(.secondFactorSignedIn(uid: user.localId, enrollmentID: enrollmentID))
        return .tokens(grant) { tokens in
            FinalizeMFASignInResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken)
        }
    }

    /// A pending credential for `user`'s second factor, after a first factor with `provider`.
    mutating func openMFAPending(for user: BackendUser, provider: String, endpoint: BackendOperation) throws(IdentityToolkitError) -> String {
        try requireEnabled(user, endpoint: endpoint)
        let credential = randomString(bytes: 48)
        commit(.mfaPending(digest: Self.digest(credential), localId: user.localId, provider: provider, at: now))
        return credential
    }

    /// A second factor as the first factor's answer lists it: the number hidden but for its last four digits.
    static func hint(_ enrollment: MFAEnrollmentRecord) -> MFAEnrollment {
        MFAEnrollment(mfaEnrollmentId: enrollment.id, displayName: enrollment.displayName,
                      phoneInfo: PhoneNumbers.obfuscated(enrollment.phoneNumber), enrolledAt: RFC3339.string(enrollment.enrolledAt))
    }


    // MARK: The checks they share

    /// The pending credential's digest, provider and user: it must be one this backend issued,
    /// unspent, not older than its lifetime, for a user who still exists.
    private mutating func pending(_ credential: String, endpoint: BackendOperation) throws(IdentityToolkitError) -> (String, String, BackendUser) {
        switch state.checkPending(digest: Self.digest(credential), now: now, lifetime: configuration.mfaPendingCredentialLifetime) {
        case .refuse(let error, let cause): throw reject(endpoint, error, cause: cause)
        case .valid(let digest, let provider, let user): return (digest, provider, user)
        }
    }

    private mutating func requireMultiFactor(_ endpoint: BackendOperation) throws(IdentityToolkitError) {
        guard configuration.multiFactorEnabled else {
            throw reject(endpoint, IdentityToolkitError(.operationNotAllowed, "SMS based MFA not enabled."))
        }
    }

    /// The user of an ID token who may enroll a second factor: MFA on, a first factor that allows
    /// it, a verified email.
    private mutating func enrollingUser(_ idToken: String?, endpoint: BackendOperation) throws(IdentityToolkitError) -> (BackendUser, String) {
        try requireMultiFactor(endpoint)
        let (user, provider) = try signedInUser(idToken, endpoint: endpoint)
        guard !Self.mfaIneligibleProviders.contains(provider) else {
            throw reject(endpoint, IdentityToolkitError(
                .unsupportedFirstFactor, "MFA is not available for the given first factor (\(provider)): sign in with Apple (or email) first."))
        }
        guard user.email != nil, user.emailVerified != false else {
            throw reject(endpoint, IdentityToolkitError(.unverifiedEmail, "Need to verify email first before enrolling second factors."))
        }
        return (user, provider)
    }

    // MARK: Set-up (scenarios, the Admin SDK)

    /// ``IdentityToolkit/enrollSecondFactor(localId:phoneNumber:displayName:)``'s rules.
    mutating func enrollSecondFactor(localId: String, phoneNumber: String, displayName: String?) throws(IdentityToolkitError) -> MFAEnrollmentRecord {
        guard var user = state.users[localId] else { throw IdentityToolkitError(.userNotFound) }
        let number = try PhoneNumbers.validate(phoneNumber)
        guard !(user.mfaEnrollments ?? []).contains(where: { $0.phoneNumber == number }) else {
            throw IdentityToolkitError(.secondFactorExists, "Phone number already enrolled as second factor for this account.")
        }
        let enrollment = MFAEnrollmentRecord(id: randomString(bytes: 21), phoneNumber: number, displayName: displayName,
                                             enrolledAt: now)
        user.mfaEnrollments = (user.mfaEnrollments ?? []) + [enrollment]
        commit(.user(user))
        return enrollment
    }

    /// ``IdentityToolkit/setPhoneNumber(localId:phoneNumber:)``'s rules.
    mutating func setPhoneNumber(localId: String, phoneNumber: String) throws(IdentityToolkitError) {
        guard var user = state.users[localId] else { throw IdentityToolkitError(.userNotFound) }
        let number = try PhoneNumbers.validate(phoneNumber)
        if let holder = state.userByPhone[number], holder != localId { throw IdentityToolkitError(.phoneNumberExists) }
        user.phoneNumber = number
        commit(.user(user))
    }

    // MARK: Accounts and tokens

    /// ``IdentityToolkit/getAccountInfo(_:)``'s rules.
    mutating func getAccountInfo(_ request: GetAccountInfoRequest) throws(IdentityToolkitError) -> GetAccountInfoResponse {
        let (user, _) = try signedInUser(request.idToken, endpoint: .getAccountInfo)
        return GetAccountInfoResponse(users: [Self.userInfo(user).asClientSees])
    }

    /// A user as `accounts:lookup` and `accounts:batchGet` describe them (and as the Auth
    /// Emulator's export writes them).
    static func userInfo(_ user: BackendUser) -> UserRecord {
        var providers: [ProviderUserInfo] = []
        // federatedId beside rawId: the SDK reads a provider's uid from federatedId alone (UserInfoImpl.swift 25–38).
        if let phone = user.phoneNumber { providers.append(ProviderUserInfo(providerId: "phone", rawId: phone, federatedId: phone, phoneNumber: phone)) }
        if let sub = user.appleSub {
            providers.append(ProviderUserInfo(providerId: "apple.com", rawId: sub, federatedId: sub, email: user.email))
        }
        providers += user.otherProviders ?? []
        if user.passwordHash != nil, let email = user.email {
            providers.append(ProviderUserInfo(providerId: "password", rawId: email, federatedId: email, email: email, displayName: user.displayName))
        }
        let enrollments = (user.mfaEnrollments ?? []).map {
            MFAEnrollment(mfaEnrollmentId: $0.id, displayName: $0.displayName, phoneInfo: $0.phoneNumber, enrolledAt: RFC3339.string($0.enrolledAt))
        }
        func milliseconds(_ date: Date) -> String { String(Int64((date.timeIntervalSince1970 * 1000).rounded())) }
        return UserRecord(localId: user.localId, email: user.email, emailVerified: user.email == nil ? nil : (user.emailVerified ?? true),
                          displayName: user.displayName, photoUrl: user.photoUrl, phoneNumber: user.phoneNumber,
                          disabled: user.disabled ?? false, providerUserInfo: providers,
                          validSince: user.validSince.map { String($0) },
                          createdAt: milliseconds(user.createdAt), lastLoginAt: user.lastLoginAt.map(milliseconds),
                          customAttributes: user.customAttributes, mfaInfo: enrollments.isEmpty ? nil : enrollments,
                          customAuth: user.customAuth, passwordHash: user.passwordHash, salt: user.salt,
                          passwordUpdatedAt: user.passwordUpdatedAt)
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
