import Foundation
import IdentityToolkitAPI
import Utilities

// Phone multi-factor as the service answers it (v2 `accounts/mfaEnrollment:*`, `accounts/mfaSignIn:*`),
// with the rules and messages the Firebase Auth Emulator keeps from production
// (firebase-tools `src/emulator/auth/operations.ts` `mfaEnrollmentStart`…`mfaSignInFinalize`),
// plus what the emulator skips: the app verification of each start request, pending credentials
// that expire and serve once.

extension CoreCall {
    /// First factors that cannot lead to a second one (the service's list).
    static let mfaIneligibleProviders: Set<ProviderID> = [.phone, .anonymous, .custom, .gameCenter]

    // MARK: Enrollment

    /// ``IdentityToolkit/startMFAEnrollment(_:)``'s rules.
    mutating func startMFAEnrollment(_ request: StartMFAEnrollmentRequest) throws(IdentityToolkitError) -> StartMFAEnrollmentResponse {
        let endpoint = BackendOperation.mfaEnrollmentStart
        let (user, _) = try enrollingUser(request.idToken, tenant: request.tenantId, endpoint: endpoint)
        if request.totpEnrollmentInfo != nil, request.phoneEnrollmentInfo == nil { return try startTOTPEnrollment(for: user, endpoint: endpoint) }
        guard let info = request.phoneEnrollmentInfo else {
            throw reject(endpoint, IdentityToolkitError(.invalidArgument, "phoneEnrollmentInfo is missing"))
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
        var (user, provider) = try enrollingUser(request.idToken, tenant: request.tenantId, endpoint: endpoint)
        if let totp = request.totpVerificationInfo, request.phoneVerificationInfo == nil {
            return try finalizeTOTPEnrollment(totp, displayName: request.displayName, user: user, provider: provider, endpoint: endpoint)
        }
        guard let info = request.phoneVerificationInfo else {
            throw reject(endpoint, IdentityToolkitError(.invalidArgument, "phoneVerificationInfo is missing"))
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
        return .tokens(try grantTokens(for: user, provider: provider, secondFactor: enrollment.id, signsIn: false, endpoint: endpoint)) { tokens in
            FinalizeMFAEnrollmentResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken,
                                          phoneAuthInfo: FinalizeMFAPhoneResponseInfo(phoneNumber: session.phoneNumber))
        }
    }


    mutating func withdrawMFA(_ request: WithdrawMFARequest) throws(IdentityToolkitError) -> SignInDecision<WithdrawMFAResponse> {
        let endpoint = BackendOperation.mfaEnrollmentWithdraw
        try enter(tenant: request.tenantId, endpoint: endpoint)
        var (user, provider) = try signedInUser(request.idToken, endpoint: endpoint)
        let before = user.mfaEnrollments ?? []
        let after = before.filter { $0.id != request.mfaEnrollmentId }
        guard after.count < before.count else {
            throw reject(endpoint, IdentityToolkitError(.mfaEnrollmentNotFound, "The user has no second factor \(request.mfaEnrollmentId ?? "(none given)")."))
        }
        user.mfaEnrollments = after
        commit(.user(user))
        emit(.secondFactorWithdrawn(uid: user.localId, enrollmentID: request.mfaEnrollmentId ?? ""))
        return .tokens(try grantTokens(for: user, provider: provider, signsIn: false, endpoint: endpoint)) { tokens in
            WithdrawMFAResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken)
        }
    }

    // MARK: Sign-in

    /// ``IdentityToolkit/startMFASignIn(_:)``'s rules.
    mutating func startMFASignIn(_ request: StartMFASignInRequest) throws(IdentityToolkitError) -> StartMFASignInResponse {
        let endpoint = BackendOperation.mfaSignInStart
        try enter(tenant: request.tenantId, endpoint: endpoint)
        try requireMultiFactor(endpoint)
        guard let credential = request.mfaPendingCredential, !credential.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingMFAPendingCredential, "Request does not have MFA pending credential."))
        }
        guard let enrollmentID = request.mfaEnrollmentId, !enrollmentID.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingMFAEnrollmentID, "No second factor identifier is provided."))
        }
        let (digest, _, user) = try pending(credential, endpoint: endpoint)
        guard let enrollment = user.mfaEnrollments?.first(where: { $0.id == enrollmentID }), let number = enrollment.phoneNumber else {
            throw reject(endpoint, IdentityToolkitError(.mfaEnrollmentNotFound, "The user has no phone second factor \(enrollmentID) (a TOTP factor's code goes straight to mfaSignIn:finalize)."))
        }
        let info = request.phoneSignInInfo
        try checkAppProof(number: number, iosReceipt: info?.iosReceipt, iosSecret: info?.iosSecret,
                          recaptchaToken: info?.recaptchaToken, captchaResponse: info?.captchaResponse,
                          recaptchaVersion: info?.recaptchaVersion, clientType: info?.clientType,
                          action: .mfaSmsSignIn, endpoint: endpoint)
        let sessionInfo = try openSession(number: number,
                                          purpose: .mfaSignIn(pendingDigest: digest, enrollmentID: enrollmentID),
                                          languageCode: nil, endpoint: endpoint)
        return StartMFASignInResponse(phoneResponseInfo: StartMFAPhoneResponseInfo(sessionInfo: sessionInfo))
    }


    mutating func finalizeMFASignIn(_ request: FinalizeMFASignInRequest) throws(IdentityToolkitError) -> SignInDecision<FinalizeMFASignInResponse> {
        let endpoint = BackendOperation.mfaSignInFinalize
        try enter(tenant: request.tenantId, endpoint: endpoint)
        try requireMultiFactor(endpoint)
        guard let credential = request.mfaPendingCredential, !credential.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingMFAPendingCredential, "Please set MFA Pending Credential."))
        }
        if let totp = request.totpVerificationInfo, request.phoneVerificationInfo == nil {
            return try finalizeTOTPSignIn(totp, credential: credential, enrollmentID: request.mfaEnrollmentId, endpoint: endpoint)
        }
        guard let info = request.phoneVerificationInfo else {
            throw reject(endpoint, IdentityToolkitError(.invalidArgument, "MFA provider not supported!"))
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

    /// A first factor (with `provider`) of a user with a second factor: a pending credential, told
    /// as `secondFactorRequired`, and the hints of the user's enrollments, for the answer's
    /// `mfaPendingCredential` and `mfaInfo` (no session).
    mutating func openMFAPending(for user: BackendUser, provider: ProviderID,
                                 endpoint: BackendOperation) throws(IdentityToolkitError) -> (credential: String, hints: [MFAEnrollment]) {
        try requireEnabled(user, endpoint: endpoint)
        let credential = randomString(bytes: 48)
        commit(.mfaPending(digest: BackendCore.digest(credential), localId: user.localId, provider: provider, at: now, signIn: signIn()))
        emit(.secondFactorRequired(uid: user.localId, provider: provider))
        return (credential, (user.mfaEnrollments ?? []).map(\.hint))
    }


    // MARK: TOTP second factors (Identity Platform's; the Auth Emulator has none)

    /// `mfaEnrollment:start` with `totpEnrollmentInfo`: a new secret (20 random bytes, Base32) for
    /// the user's authenticator app, and the session that finishes the enrollment within
    /// ``BackendCore/totpEnrollmentWindow``.
    private mutating func startTOTPEnrollment(for user: BackendUser, endpoint: BackendOperation) throws(IdentityToolkitError) -> StartMFAEnrollmentResponse {
        try requireTOTP(endpoint)
        let secret = TOTPCodes.base32(randomBytes(20))
        let sessionInfo = randomString(bytes: 48)
        commit(.totpSession(digest: BackendCore.digest(sessionInfo), localId: user.localId, secret: secret, createdAt: now))
        return StartMFAEnrollmentResponse(totpSessionInfo: StartMFATOTPResponseInfo(
            sharedSecretKey: secret, verificationCodeLength: TOTPCodes.digits, hashingAlgorithm: TOTPCodes.algorithm,
            periodSec: Int(TOTPCodes.period), sessionInfo: sessionInfo,
            finalizeEnrollmentTime: RFC3339.string(now.addingTimeInterval(BackendCore.totpEnrollmentWindow))))
    }

    /// `mfaEnrollment:finalize` with `totpVerificationInfo`: the session's user, in its window, and
    /// a code of its secret now (INVALID_CODE otherwise, as a phone code's).
    private mutating func finalizeTOTPEnrollment(_ info: MFATOTPVerificationInfo, displayName: String?, user: BackendUser, provider: ProviderID,
                                                 endpoint: BackendOperation) throws(IdentityToolkitError) -> SignInDecision<FinalizeMFAEnrollmentResponse> {
        try requireTOTP(endpoint)
        guard let sessionInfo = info.sessionInfo, !sessionInfo.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingSessionInfo)) }
        let digest = BackendCore.digest(sessionInfo)
        guard let session = state.totpSessions[digest], session.localId == user.localId else {
            throw reject(endpoint, IdentityToolkitError(.invalidSessionInfo, "not a TOTP enrollment of this user"))
        }
        guard now.timeIntervalSince(session.createdAt) <= BackendCore.totpEnrollmentWindow else {
            throw reject(endpoint, IdentityToolkitError(.sessionExpired, "the TOTP enrollment's window (finalizeEnrollmentTime) is over: generate a secret again"))
        }
        guard let secret = TOTPCodes.bytes(base32: session.secret),
              let step = TOTPCodes.matchingStep(info.verificationCode ?? "", secret: secret, at: now,
                                                adjacentIntervals: configuration.totpAdjacentIntervals ?? 0, after: nil) else {
            throw reject(endpoint, IdentityToolkitError(.invalidCode, "the code is not the secret's now"))
        }
        var user = user
        let enrollment = MFAEnrollmentRecord(id: randomString(bytes: 21), phoneNumber: nil, displayName: displayName, enrolledAt: now,
                                             totpSecret: session.secret, totpLastStep: step)
        user.mfaEnrollments = (user.mfaEnrollments ?? []) + [enrollment]
        commit(.totpSessionUsed(digest: digest))
        commit(.user(user))
        emit(.secondFactorEnrolled(uid: user.localId, enrollmentID: enrollment.id, phoneNumber: nil))
        return .tokens(try grantTokens(for: user, provider: provider, secondFactor: enrollment.id, signsIn: false, endpoint: endpoint)) { tokens in
            FinalizeMFAEnrollmentResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken)
        }
    }

    /// `mfaSignIn:finalize` with `totpVerificationInfo` and `mfaEnrollmentId`: the pending
    /// credential's user, their TOTP factor, and a code of it within the adjacent intervals that
    /// is later than the last one spent (a code signs in once).
    private mutating func finalizeTOTPSignIn(_ info: MFATOTPSignInInfo, credential: String, enrollmentID: String?,
                                             endpoint: BackendOperation) throws(IdentityToolkitError) -> SignInDecision<FinalizeMFASignInResponse> {
        try requireTOTP(endpoint)
        let (digest, provider, user) = try pending(credential, endpoint: endpoint)
        guard let enrollmentID, !enrollmentID.isEmpty else {
            throw reject(endpoint, IdentityToolkitError(.missingMFAEnrollmentID, "No second factor identifier is provided."))
        }
        guard let index = user.mfaEnrollments?.firstIndex(where: { $0.id == enrollmentID && $0.isTOTP }),
              let enrollment = user.mfaEnrollments?[index], let secret = enrollment.totpSecret.flatMap(TOTPCodes.bytes(base32:)) else {
            throw reject(endpoint, IdentityToolkitError(.mfaEnrollmentNotFound, "The user has no TOTP second factor \(enrollmentID)."))
        }
        guard let step = TOTPCodes.matchingStep(info.verificationCode ?? "", secret: secret, at: now,
                                                adjacentIntervals: configuration.totpAdjacentIntervals ?? 0, after: enrollment.totpLastStep) else {
            throw reject(endpoint, IdentityToolkitError(.invalidCode, "the code is not the factor's now, or was already used"))
        }
        var updated = user
        updated.mfaEnrollments?[index].totpLastStep = step
        commit(.mfaPendingUsed(digest: digest))
        commit(.user(updated))
        let grant = try grantTokens(for: updated, provider: provider, secondFactor: enrollmentID, endpoint: endpoint)
        emit(.secondFactorSignedIn(uid: user.localId, enrollmentID: enrollmentID))
        return .tokens(grant) { tokens in
            FinalizeMFASignInResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken)
        }
    }

    /// TOTP on for the project (``BackendConfiguration/totpAdjacentIntervals``).
    private mutating func requireTOTP(_ endpoint: BackendOperation) throws(IdentityToolkitError) {
        guard configuration.totpAdjacentIntervals != nil else {
            throw reject(endpoint, IdentityToolkitError(.operationNotAllowed, "TOTP based MFA not enabled."))
        }
    }

    // MARK: The checks they share

    /// The pending credential's digest, provider and user: it must be one this backend issued,
    /// unspent, not older than its lifetime, for a user who still exists.
    private mutating func pending(_ credential: String, endpoint: BackendOperation) throws(IdentityToolkitError) -> (String, ProviderID, BackendUser) {
        // A refusal (spent, expired) is a step of the sign-in the credential came from too.
        let digest = BackendCore.digest(credential)
        continueSignIn(state.mfaPending[digest]?.signIn)
        // The first factor's tenant, whose second-factor settings hold too.
        try enter(tenant: state.mfaPending[digest]?.tenant, endpoint: endpoint)
        try requireMultiFactor(endpoint)
        switch state.checkPending(digest: digest, now: now, lifetime: configuration.mfaPendingCredentialLifetime) {
        case .refuse(let error, let cause): throw reject(endpoint, error, cause: cause)
        case .valid(let digest, let provider, let user): return (digest, provider, user)
        }
    }

    /// A phone second factor allowed: by the project, and by the call's tenant's `mfaConfig`
    /// (ENABLED or MANDATORY with PHONE_SMS, the emulator's check).
    private mutating func requireMultiFactor(_ endpoint: BackendOperation) throws(IdentityToolkitError) {
        guard configuration.multiFactorEnabled, tenantConfig.map({ $0.mfaConfig?.allowsPhoneSecondFactor == true }) ?? true else {
            throw reject(endpoint, IdentityToolkitError(.operationNotAllowed, "SMS based MFA not enabled."))
        }
    }

    /// The user of an ID token (of `tenant`) who may enroll a second factor: MFA on, a first
    /// factor that allows it, a verified email.
    private mutating func enrollingUser(_ idToken: String?, tenant: String?,
                                        endpoint: BackendOperation) throws(IdentityToolkitError) -> (BackendUser, ProviderID) {
        try enter(tenant: tenant, endpoint: endpoint)
        try requireMultiFactor(endpoint)
        let (user, provider) = try signedInUser(idToken, endpoint: endpoint)
        try requireMultiFactor(endpoint)
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
        guard var user = directory.byID[localId] else { throw IdentityToolkitError(.userNotFound) }
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
        guard var user = directory.byID[localId] else { throw IdentityToolkitError(.userNotFound) }
        let number = try PhoneNumbers.validate(phoneNumber)
        if let holder = directory.idByPhone[number], holder != localId { throw IdentityToolkitError(.phoneNumberExists) }
        user.phoneNumber = number
        commit(.user(user))
    }
}
