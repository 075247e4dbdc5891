import APNsWire
import Crypto
import Foundation
import IdentityToolkitAPI
import Utilities

// Phone sign-in's rules: app credentials, code sessions, reCAPTCHA tokens, signInWithPhoneNumber
// (``IdentityToolkit`` documents each call as an app sees it).

extension CoreCall {
    // MARK: verifyClient

    /// Issues a receipt and the secret its silent push carries, for an APNs token; the push itself
    /// is the actor's (``IdentityToolkit/verifyClient(_:)``).
    mutating func issueAppCredential(_ request: VerifyClientRequest) throws(IdentityToolkitError)
        -> (token: DeviceToken, receipt: String, secret: String, signIn: SignInID) {
        guard let appToken = request.appToken, !appToken.isEmpty else { throw reject(.verifyClient, IdentityToolkitError(.missingIOSAppToken)) }
        guard let token = DeviceToken(hex: appToken) else {
            throw reject(.verifyClient, IdentityToolkitError(.invalidAppCredential, "the APNs token is not hex"))
        }
        let receipt = randomString(bytes: 48)
        let secret = randomString(bytes: 12)
        let signIn = signIn()
        commit(.receipt(id: receipt, secretSHA256: BackendCore.digest(secret), appToken: appToken.uppercased(), issuedAt: now, signIn: signIn))
        return (token, receipt, secret, signIn)
    }

    // MARK: sendVerificationCode

    mutating func sendVerificationCode(_ request: SendVerificationCodeRequest, languageCode: String?) throws(IdentityToolkitError) -> SendVerificationCodeResponse {
        let endpoint = BackendOperation.sendVerificationCode
        try enter(tenant: request.tenantId, endpoint: endpoint)
        let number: String
        do throws(IdentityToolkitError) { number = try PhoneNumbers.validate(request.phoneNumber) } catch { throw reject(endpoint, error) }
        if let holder = directory.idByPhone[number].flatMap({ directory.byID[$0] }), holder.hasSecondFactor {
            throw reject(endpoint, IdentityToolkitError(
                .unsupportedFirstFactor, "A phone number cannot be set as a first factor on an SMS based MFA user."))
        }
        try checkAppProof(number: number, iosReceipt: request.iosReceipt, iosSecret: request.iosSecret,
                          recaptchaToken: request.recaptchaToken, captchaResponse: request.captchaResponse,
                          recaptchaVersion: request.recaptchaVersion, clientType: request.clientType,
                          action: .sendVerificationCode, endpoint: endpoint)
        return SendVerificationCodeResponse(
            sessionInfo: try openSession(number: number, purpose: nil, languageCode: languageCode, endpoint: endpoint))
    }

    /// The proof that a request comes from the real app: a test number needs none; with SMS
    /// defense in AUDIT or ENFORCE a reCAPTCHA Enterprise token that passes the assessment
    /// (``smsDefense(captchaResponse:recaptchaVersion:clientType:action:hasLegacyProof:endpoint:)``);
    /// otherwise an app credential (the receipt and the secret its silent push carried) or a
    /// reCAPTCHA v2 token.
    mutating func checkAppProof(number: String, iosReceipt: String?, iosSecret: String?, recaptchaToken: String?,
                                captchaResponse: String? = nil, recaptchaVersion: RecaptchaVersion? = nil, clientType: String? = nil,
                                action: RecaptchaAction, endpoint: BackendOperation) throws(IdentityToolkitError) {
        guard fixedTestCode(for: number) == nil else {
            emit(.codeRequested(phoneNumber: number, proof: .testMode, receipt: nil, endpoint: endpoint))
            return
        }
        let hasLegacyProof = !(iosReceipt ?? "").isEmpty || recaptchaToken != nil
        if try smsDefense(captchaResponse: captchaResponse, recaptchaVersion: recaptchaVersion, clientType: clientType, action: action,
                          hasLegacyProof: hasLegacyProof, endpoint: endpoint) {
            emit(.codeRequested(phoneNumber: number, proof: .recaptchaEnterprise, receipt: nil, endpoint: endpoint))
            return
        }
        if let iosReceipt, !iosReceipt.isEmpty {
            continueSignIn(state.receipts[iosReceipt]?.signIn)
            let secretDigest = iosSecret.flatMap { $0.isEmpty ? nil : BackendCore.digest($0) }
            if case .refuse(let error) = state.checkAppCredential(receipt: iosReceipt, secretDigest: secretDigest, now: now,
                                                                  lifetime: configuration.receiptLifetime) {
                throw reject(endpoint, error)
            }
            emit(.codeRequested(phoneNumber: number, proof: .silentPush, receipt: iosReceipt, endpoint: endpoint))
        } else if let recaptchaToken {
            try useRecaptchaToken(recaptchaToken, endpoint: endpoint)
            emit(.codeRequested(phoneNumber: number, proof: .reCAPTCHA, receipt: nil, endpoint: endpoint))
        } else if configuration.acceptUnverifiedCodeRequests {
            log(.info, "code request without app verification taken (--accept-unverified-code-requests, as the Auth Emulator)",
                ["endpoint": "\(endpoint)", "phone": "\(number)"])
            emit(.codeRequested(phoneNumber: number, proof: .unverified, receipt: nil, endpoint: endpoint))
        } else {
            throw reject(endpoint, IdentityToolkitError(
                .missingAppCredential,
                "no iOS receipt and secret and no reCAPTCHA token; with app verification disabled for testing (settings.isAppVerificationDisabledForTesting, which useEmulator(withHost:port:) turns on) only test phone numbers work"))
        }
    }

    /// Opens a code session for `number` (or hands back the one still valid for the same number
    /// and purpose) and "texts" its code: the region policy and the quotas apply to real numbers;
    /// test numbers get their fixed code and no SMS.
    mutating func openSession(number: String, purpose: SessionPurpose?, languageCode: String?,
                              endpoint: BackendOperation) throws(IdentityToolkitError) -> String {
        let testCode: String?
        switch state.requestSession(number: number, purpose: purpose, testCode: fixedTestCode(for: number), now: now, configuration: configuration) {
        case .refuse(let error): throw reject(endpoint, error)
        case .reuse(let info):
            continueSignIn(state.sessions[info]?.signIn)
            emit(.codeReused(phoneNumber: number))
            return info
        case .open(let fixed): testCode = fixed
        }
        let code = testCode ?? configuration.fixedSMSCode ?? randomCode()
        let sessionInfo = randomString(bytes: 64)
        commit(.session(id: sessionInfo, phoneNumber: number, code: code, createdAt: now, purpose: purpose, signIn: signIn()))
        if testCode == nil {
            let message = SMSMessage(phoneNumber: number, code: code, sessionInfo: sessionInfo, languageCode: languageCode,
                                     text: Self.smsText(code: code, language: languageCode), sentAt: now)
            commit(.sms(message))
            emit(.smsSent(message))
        }
        return sessionInfo
    }

    /// A test number's fixed code: the project's test numbers, or its tenant's.
    func fixedTestCode(for number: String) -> String? {
        guard let tenantConfig else { return testPhoneNumbers[number] }
        return tenantConfig.testPhoneNumbers?[number]
    }

    // MARK: reCAPTCHA

    /// A token a solved reCAPTCHA challenge yields, for the verification attempt `eventID`.
    ///
    /// The SDK's reCAPTCHA fallback comes after its silent push did not (FirebaseAuth
    /// Sources/Swift/AuthProvider/PhoneAuthProvider.swift: verifyClient, then reCAPTCHA when no push
    /// arrives in time), and nothing it sends names the push. The token, and the code request it
    /// proves, continue the one sign-in whose push went out within ``fallbackWindow`` and that
    /// has asked for no code; with none, or several (sign-ins at once: which is whose cannot be
    /// told), it starts its own.
    mutating func issueRecaptchaToken(eventID: String) -> String {
        // Two in the window already mean "several": the look stops there, so that thousands of
        // sign-ins waiting at once cost each token two steps, not thousands.
        let cutoff = now.addingTimeInterval(-BackendCore.fallbackWindow)
        // Loosely (a fleet's commit does not check them): they only say which sign-in it continues.
        let waiting = Array(state.awaitingCode.looseRows.lazy.filter { $0.value >= cutoff }.prefix(2))
        if waiting.count == 1 { continueSignIn(waiting[0].key) }
        let token = "03A" + randomString(bytes: 96)
        commit(.recaptcha(digest: BackendCore.digest(token), eventID: eventID, issuedAt: now, signIn: signIn()))
        return token
    }

    /// Spends a reCAPTCHA token: unknown → MALFORMED; used before, or too old → EXPIRED.
    private mutating func useRecaptchaToken(_ token: String, endpoint: BackendOperation) throws(IdentityToolkitError) {
        let digest = BackendCore.digest(token)
        continueSignIn(state.recaptchaTokens[digest]?.signIn)
        switch state.checkRecaptchaToken(digest: digest, now: now, lifetime: configuration.recaptchaTokenLifetime) {
        case .refuse(let error): throw reject(endpoint, error)
        case .spend(let digest): commit(.recaptchaUsed(digest: digest))
        }
    }

    // MARK: signInWithPhoneNumber

    mutating func signInWithPhoneNumber(_ request: VerifyPhoneNumberRequest) throws(IdentityToolkitError) -> SignInDecision<VerifyPhoneNumberResponse> {
        let endpoint = BackendOperation.signInWithPhoneNumber
        try enter(tenant: request.tenantId, endpoint: endpoint)
        let number: String
        var proofDigest: String?
        if let proof = request.temporaryProof, !proof.isEmpty {
            let proofKey = BackendCore.digest(proof)
            try enter(tenant: state.temporaryProofs[proofKey]?.tenant, endpoint: endpoint)
            switch state.checkTemporaryProof(digest: proofKey, claimedNumber: request.phoneNumber, now: now,
                                             lifetime: configuration.temporaryProofLifetime) {
            case .refuse(let error): throw reject(endpoint, error)
            case .spend(let digest, let phoneNumber):
                number = phoneNumber
                proofDigest = digest
            }
        } else {
            // The code request's tenant: a code sent for one tenant's sign-in signs in to no other.
            try enter(tenant: request.sessionInfo.flatMap { state.sessions[$0]?.tenant }, endpoint: endpoint)
            number = try spendSession(request.sessionInfo, code: request.code, purpose: nil, endpoint: endpoint).phoneNumber
        }
        let holder = directory.idByPhone[number].flatMap { directory.byID[$0] }
        var signedIn: BackendUser?
        if let idToken = request.idToken, !idToken.isEmpty {
            (signedIn, _) = try signedInUser(idToken, endpoint: endpoint)
        }
        if let signedIn, let holder, holder.localId != signedIn.localId {
            guard proofDigest == nil else { throw reject(endpoint, IdentityToolkitError(.phoneNumberExists)) }
            let proof = randomString(bytes: 48)
            commit(.temporaryProof(digest: BackendCore.digest(proof), phoneNumber: number, at: now))
            _ = reject(endpoint, IdentityToolkitError(.phoneNumberExists, "linking: \(number) belongs to another account; answered a temporary proof"))
            return .answer(VerifyPhoneNumberResponse(phoneNumber: number, temporaryProof: proof,
                                                     temporaryProofExpiresIn: String(Int(configuration.temporaryProofLifetime))))
        }
        var user = signedIn ?? holder
        if user == nil, request.operation == .reauth {
            throw reject(endpoint, IdentityToolkitError(.userNotFound, "There is no user record for \(number) to reauthenticate."))
        }
        if let existing = user, existing.hasSecondFactor {
            throw reject(endpoint, IdentityToolkitError(
                .unsupportedFirstFactor, "A phone number cannot be set as a first factor on an SMS based MFA user."))
        }
        let isNewUser = user == nil
        if let proofDigest { commit(.temporaryProofUsed(digest: proofDigest)) }
        if var existing = user {
            if existing.phoneNumber != number {
                existing.phoneNumber = number
                commit(.user(existing))
                user = existing
            }
        } else {
            let created = BackendUser(localId: newLocalID(hint: number), phoneNumber: number, createdAt: now)
            commit(.user(created))
            user = created
        }
        guard let user else { throw reject(endpoint, IdentityToolkitError(.internal, "no user after sign-in")) }
        let grant = try grantTokens(for: user, provider: .phone, endpoint: endpoint)
        emit(.signedIn(uid: user.localId, phoneNumber: number, isNewUser: isNewUser))
        return .tokens(grant) { tokens in
            VerifyPhoneNumberResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn,
                                      localId: user.localId, isNewUser: isNewUser, phoneNumber: number)
        }
    }

    /// Spends a code session: it must exist for `purpose`, be unused and unexpired, have attempts
    /// left, and `code` must be its code (a wrong one counts). Returns the session, now used.
    mutating func spendSession(_ sessionInfo: String?, code: String?, purpose: SessionPurpose?,
                               endpoint: BackendOperation) throws(IdentityToolkitError) -> BackendState.Session {
        continueSignIn(sessionInfo.flatMap { state.sessions[$0]?.signIn })
        switch state.checkCode(sessionInfo: sessionInfo, code: code, purpose: purpose, now: now, configuration: configuration) {
        case .refuse(let error):
            throw reject(endpoint, error)
        case .wrongCode(let sessionInfo):
            commit(.wrongCode(session: sessionInfo))
            throw reject(endpoint, IdentityToolkitError(.invalidCode))
        case .spend(let sessionInfo, let session):
            commit(.sessionUsed(session: sessionInfo))
            return session
        }
    }

    /// Grants `user`, signed in with `provider`, a refresh token (sealed with its sign-in,
    /// ``RefreshTokenSeal``: nothing kept but `lastLoginAt`), and with `secondFactor` (an
    /// enrollment ID) when a second factor completed the sign-in; `claims` are a custom token's (a
    /// JSON object as text). A disabled user gets USER_DISABLED instead. The ID token is signed
    /// after the call (``IdentityToolkit/signIn(_:)``), so that no call waits for an RSA signature.
    /// - Parameter signsIn: whether the grant is a sign-in, which moves the user's `lastLoginAt`:
    ///   new tokens after a profile change or a second factor's enrollment or withdrawal are not
    ///   (the emulator sets `lastLoginAt` in its sign-in calls only; audit 3, B-13).
    mutating func grantTokens(for user: BackendUser, provider: ProviderID, secondFactor: String? = nil, claims: String? = nil,
                              signsIn: Bool = true, endpoint: BackendOperation) throws(IdentityToolkitError) -> TokenGrant {
        // A user the call made is its tenant's (as ``commit(_:)`` keeps it): its tokens say so.
        var user = user
        if let tenant, user.tenantId == nil { user.tenantId = tenant }
        try requireEnabled(user, endpoint: endpoint)
        let refreshToken = tokenSigner.refreshTokens.seal(localId: user.localId, userCreatedAt: user.createdAt, provider: provider,
                                                          secondFactor: secondFactor, issuedAt: now, claims: claims, tenant: user.tenantId)
        if signsIn { commit(.signedIn(localId: user.localId, at: now)) }
        return TokenGrant(user: user, provider: provider, secondFactor: secondFactor, refreshToken: refreshToken, issuedAt: now,
                          claims: BackendUser.claims(claims))
    }

    /// USER_DISABLED for a user an admin disabled: no sign-in, no refresh, no call with their ID token.
    mutating func requireEnabled(_ user: BackendUser, endpoint: BackendOperation) throws(IdentityToolkitError) {
        if user.disabled == true {
            throw reject(endpoint, IdentityToolkitError(.userDisabled, "The user account has been disabled by an administrator."))
        }
    }

    static func smsText(code: String, language: String?) -> String {
        switch language?.prefix(2) {
        case "fr": return "\(code) est votre code de validation."
        case "de": return "\(code) ist Ihr Bestätigungscode."
        case "es": return "\(code) es tu código de verificación."
        default: return "\(code) is your verification code."
        }
    }
}

extension BackendCore {
    static func digest(_ secret: String) -> String {
        Hex.encode(SHA256.hash(data: Array(secret.utf8)))
    }

    /// How long after its silent push a sign-in may continue with the reCAPTCHA fallback.
    static let fallbackWindow: TimeInterval = 600
    /// How long a TOTP enrollment's session lasts (its `finalizeEnrollmentTime`).
    static let totpEnrollmentWindow: TimeInterval = 300
}
