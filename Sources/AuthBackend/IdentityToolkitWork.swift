import Foundation
import IdentityToolkitAPI

/// The actor's work around the rules, where a call needs more than one rule run once
/// (``ToolkitCalls``' `.actor` rows, and Swift callers): password hashes made and checked off the
/// actor, ID tokens signed, the project config as the Admin API and the export see it, and the
/// scenario and inspector conveniences that have no Identity Toolkit path.
extension IdentityToolkit {
    // MARK: Project config and reCAPTCHA Enterprise (SMSDefense.swift)

    /// The project config: its reCAPTCHA part, as the Admin API writes it (a fleet's, with a shared store).
    package func projectConfigForAdmin() async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await reading { _ in }
        return core.currentProjectConfig()
    }

    /// The project config in the Auth Emulator's own shape (`signIn.allowDuplicateEmails`,
    /// `emailPrivacyConfig`): what an export's `config.json` holds, so that the emulator loads it.
    package func projectConfigForExport() async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await reading { _ in }
        return EmulatorProjectConfig(signIn: .init(allowDuplicateEmails: core.emulatorSignIn.allowDuplicateEmails),
                                     emailPrivacyConfig: .init(enableImprovedEmailPrivacy: core.emulatorSignIn.enableImprovedEmailPrivacy))
    }

    /// Changes the project config (the fields given; others stay): the emulator's sign-in
    /// settings, the test phone numbers (replaced as a whole, checked as at start-up), and the
    /// reCAPTCHA config as the Admin API's `updateProjectConfig` does (the next `recaptchaConfig`
    /// and code request see it). Nothing changes unless everything given is good.
    ///
    /// With a shared store the config is the fleet's: it is a record (``SharedProjectConfig``), and
    /// every node adopts it. Without one it stays in memory, as the emulator's config does.
    package func updateProjectConfig(_ patch: EmulatorProjectConfig) async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await change { core throws(IdentityToolkitError) in try core.updateProjectConfig(patch) }
    }

    /// The simulated reCAPTCHA Enterprise service's check behind `Recaptcha.fetchClient(withSiteKey:)`.
    package func fetchRecaptchaClient(_ request: RecaptchaEnterpriseFetchClientRequest) async throws(IdentityToolkitError) -> RecaptchaEnterpriseFetchClientResponse {
        try await read { core throws(IdentityToolkitError) in try core.fetchRecaptchaClient(request) }
    }

    /// The simulated reCAPTCHA Enterprise service: a token for `action` with the project's site
    /// key, for the iOS app the key is restricted to. What the RecaptchaEnterprise SDK's
    /// `execute(withAction:)` gets from Google.
    package func executeRecaptchaEnterprise(_ request: RecaptchaEnterpriseExecuteRequest) async throws(IdentityToolkitError) -> RecaptchaEnterpriseExecuteResponse {
        try await change { core throws(IdentityToolkitError) in try core.executeRecaptchaEnterprise(request) }
    }

    // MARK: Multi-factor (MultiFactor.swift)

    /// `securetoken.googleapis.com/v1/token` (`grant_type=refresh_token`): a fresh ID token for a
    /// refresh token this backend issued, with the same sign-in provider and second factor.
    package func secureToken(_ request: SecureTokenRequest) async throws(IdentityToolkitError) -> SecureTokenResponse {
        let (user, stored) = try await read { core throws(IdentityToolkitError) in try core.refresh(request) }
        let idToken = await signToken(for: user, provider: stored.provider, secondFactor: stored.secondFactor, authTime: stored.issuedAt,
                                      extraClaims: BackendUser.claims(stored.claims), now: clock.now)
        return SecureTokenResponse(accessToken: idToken, expiresIn: "3600", refreshToken: request.refreshToken ?? "", idToken: idToken,
                                   userId: user.localId, projectId: configuration.projectID)
    }

    /// Enrolls `phoneNumber` as a second factor of `localId` without a code (what the Admin SDK's
    /// `update_user(multi_factor=…)` and a scenario's set-up do).
    @discardableResult
    package func enrollSecondFactor(localId: String, phoneNumber: String, displayName: String?) async throws(IdentityToolkitError) -> MFAEnrollmentRecord {
        try await change { core throws(IdentityToolkitError) in try core.enrollSecondFactor(localId: localId, phoneNumber: phoneNumber, displayName: displayName) }
    }

    /// Gives `localId` the phone number `phoneNumber` (links the phone provider) without a code.
    package func setPhoneNumber(localId: String, phoneNumber: String) async throws(IdentityToolkitError) {
        try await change { core throws(IdentityToolkitError) in try core.setPhoneNumber(localId: localId, phoneNumber: phoneNumber) }
    }

    // MARK: Email and password (EmailPassword.swift)

    /// The shortest password the service takes (`WEAK_PASSWORD : Password should be at least 6 characters`).
    package static let minimumPasswordLength = BackendCore.minimumPasswordLength

    /// `signupNewUser` (v1 `accounts:signUp`) from an app: no email and password, an anonymous
    /// user; with both, an email/password user, or, with the signed-in user's ID token, the
    /// email and password linked to that user (the SDK's `link(with: EmailAuthCredential)`).
    package func signUp(_ request: SignUpNewUserRequest) async throws(IdentityToolkitError) -> SignUpNewUserResponse {
        let password = try check { core throws(IdentityToolkitError) in try core.signUpPassword(request) }
        let hash = try await passwordHash(password)
        return try await signIn { [hash] core throws(IdentityToolkitError) in try core.signUp(request, hash: hash) }
    }

    /// `verifyPassword` (v1 `accounts:signInWithPassword`). With email enumeration protection on
    /// (the default) an unknown email, a user without a password and a wrong password are all
    /// INVALID_LOGIN_CREDENTIALS; off, EMAIL_NOT_FOUND and INVALID_PASSWORD. A user with a second
    /// factor gets a pending credential and hints, not a session.
    package func signInWithPassword(_ request: VerifyPasswordRequest) async throws(IdentityToolkitError) -> VerifyPasswordResponse {
        let (email, password) = try check { core throws(IdentityToolkitError) in try core.passwordCredentials(request) }
        // The hash is checked off the actor (scrypt takes tens of milliseconds), then the sign-in
        // goes on only if the user still has the hash that was checked.
        let stored = try await reading { state in
            state.users(in: request.tenantId).user(email: email).flatMap { user in user.passwordHash.map { (hash: $0, salt: user.salt) } }
        }
        var verified: String?
        if let stored, await PasswordHashing.matches(password, hash: stored.hash, salt: stored.salt) { verified = stored.hash }
        return try await signIn { [verified] core throws(IdentityToolkitError) in
            try core.signInWithPassword(email: email, verifiedHash: verified, tenant: request.tenantId)
        }
    }

    /// `getOobConfirmationCode` (v1 `accounts:sendOobCode`): an email with a single-use code, in
    /// the email outbox (``emailOutbox``, the emulator's `oobCodes`). `PASSWORD_RESET` by email
    /// (with enumeration protection, an unknown email is answered the same, and nothing is
    /// sent); `VERIFY_EMAIL` and `VERIFY_AND_CHANGE_EMAIL` for the user of the ID token.
    /// `returnOobLink` (the Admin SDKs' link generation, `admin`) is not the app's to ask.
    package func sendOobCode(_ request: GetOOBConfirmationCodeRequest, admin: Bool = false) async throws(IdentityToolkitError) -> GetOOBConfirmationCodeResponse {
        let type = try check { core throws(IdentityToolkitError) in try core.oobRequestType(request, admin: admin) }
        return try await change { core throws(IdentityToolkitError) in try core.sendOobCode(request, type: type, admin: admin) }
    }

    /// `resetPassword` (v1 `accounts:resetPassword`): with `newPassword`, a PASSWORD_RESET code
    /// spent and the password set (the email counts as verified: the user read it; every earlier
    /// session ends); without, any code checked: what it is for and whose email.
    package func resetPassword(_ request: ResetPasswordRequest) async throws(IdentityToolkitError) -> ResetPasswordResponse {
        let (code, password) = try check { core throws(IdentityToolkitError) in try core.resetPasswordInput(request) }
        let hash = try await passwordHash(password)
        return try await change { [hash] core throws(IdentityToolkitError) in try core.resetPassword(code: code, hash: hash, tenant: request.tenantId) }
    }

    /// Every email sent (a day past its code's lifetime, then forgotten), oldest first, with
    /// whether its code was spent: what the inspector lists.
    package func sentEmails() async throws(IdentityToolkitError) -> [(email: OobEmail, used: Bool)] {
        try await reading { state in state.emailOutboxMessages.map { ($0, state.oobCodes[BackendCore.digest($0.code)]?.used ?? true) } }
    }

    /// The emails sent whose codes are still unused, oldest first (`GET /emulator/v1/projects/{p}/oobCodes`,
    /// or a tenant's: `…/tenants/{t}/oobCodes`).
    package func emailOutbox(tenant: String? = nil) async throws(IdentityToolkitError) -> [OobEmail] {
        try await reading { state in
            state.emailOutboxMessages.filter { $0.tenant == tenant && state.oobCodes[BackendCore.digest($0.code)]?.used == false }
        }
    }

    // MARK: Users, as an admin manages them (UserManagement.swift)

    /// The most users one batch call takes (`accounts:batchDelete`, `accounts:batchCreate`), as the service.
    package static let maximumBatchSize = BackendCore.maximumBatchSize

    /// `POST …/projects/{p}/accounts` (`auth.create_user`): a new user with the fields given.
    package func adminCreateUser(_ request: SignUpNewUserRequest) async throws(IdentityToolkitError) -> SignUpNewUserResponse {
        let hash = try await adminPasswordHash(request.password)
        return try await change { core throws(IdentityToolkitError) in try core.adminCreateUser(request, hash: hash) }
    }

    /// `POST …/projects/{p}/accounts:update` (`update_user`, `set_custom_user_claims`,
    /// `revoke_refresh_tokens`): the fields given change, the others stay.
    package func adminUpdate(_ request: SetAccountInfoRequest) async throws(IdentityToolkitError) -> SetAccountInfoResponse {
        if request.oobCode != nil { throw IdentityToolkitError(.unsupportedField, "oobCode (accounts:update): an email's code is the app's to apply, with its API key") }
        let hash = try await adminPasswordHash(request.password)
        return try await change { core throws(IdentityToolkitError) in try core.adminUpdate(request, hash: hash) }
    }

    /// An admin's password (`create_user(password=…)`, `update_user(password=…)`), hashed; nil for none.
    func adminPasswordHash(_ password: String?) async throws(IdentityToolkitError) -> PasswordHash? {
        guard let password else { return nil }
        guard password.count >= BackendCore.minimumPasswordLength else { throw BackendCore.weakPassword }
        return try await passwordHash(password)
    }

    /// `DELETE /emulator/v1/projects/{p}/accounts`: every user goes, with their refresh tokens and
    /// pending credentials (sessions, SMS and app credentials stay).
    package func deleteAllAccounts(tenant: String? = nil) async throws(IdentityToolkitError) {
        try await change { core throws(IdentityToolkitError) in try core.deleteAllAccounts(tenant: tenant) }
    }

    /// Custom claims as `setAccountInfo` checks them (a JSON object of at most 1,000 characters,
    /// no reserved claim), before a call that would set them: the inspector's add-a-user checks
    /// them before the user is created.
    package nonisolated static func checkCustomClaims(_ json: String) throws(IdentityToolkitError) {
        try BackendCore.validateCustomClaims(json)
    }

    /// The inspector's import of an accounts file (the emulator's export): every user checked
    /// first, then all kept in one change, or none (see ``BackendCore``'s rule).
    package func importAccounts(_ users: [UserRecord], overwrite: Bool) async throws(IdentityToolkitError) -> (imported: Int, replaced: Int) {
        try await change { core throws(IdentityToolkitError) in try core.importAccounts(users, overwrite: overwrite) }
    }

    /// Every user, as the emulator's export (`accounts:batchGet?maxResults=-1`) lists them.
    package func exportAccounts() async throws(IdentityToolkitError) -> DownloadAccountResponse {
        try await change { core throws(IdentityToolkitError) in try core.exportAccounts() }
    }

    // MARK: Sign in with Apple (AppleSignIn.swift)

    /// `signInWithIdp` (`verifyAssertion`) for `apple.com`: verifies the identity token against
    /// Apple's JWKS (`iss`, `aud`, `exp`, the nonce against the raw nonce, each token once), then signs
    /// the Apple user in (creating them), or links the credential to the user of `idToken`.
    /// Every answer to an identity token carries it back as `oauthIdToken`, as Google's does (the SDK
    /// makes the result's credential, and the 17025 recovery credential, only from an answer with an
    /// OAuth token: OAuthCredential.swift 72–83); an answer to a pending token has none to give.
    package func signInWithIdp(_ request: VerifyAssertionRequest) async throws(IdentityToolkitError) -> VerifyAssertionResponse {
        var answer = try await signIn { core throws(IdentityToolkitError) in try core.signInWithIdp(request) }
        if request.pendingToken?.isEmpty != false, let token = try? request.credentialFields()["id_token"], !token.isEmpty {
            answer.oauthIdToken = token
        }
        return answer
    }

    /// `accounts:update` (`setAccountInfo`) with the user's ID token, as the SDK's profile change
    /// requests and `unlink` send it: the display name and photo URL, the attributes deleted, the
    /// providers unlinked; with `returnSecureToken`, new tokens for the same sign-in provider.
    package func setAccountInfo(_ request: SetAccountInfoRequest) async throws(IdentityToolkitError) -> SetAccountInfoResponse {
        let password = try check { core throws(IdentityToolkitError) in try core.accountUpdatePassword(request) }
        let hash = try await passwordHash(password)
        return try await signIn { [hash] core throws(IdentityToolkitError) in try core.setAccountInfo(request, hash: hash) }
    }

    /// Apple's sheet (`POST /appleid/auth/authorize`): the user consents to the app, and Apple
    /// hands back an identity token and an authorization code, with the name and email on the
    /// user's first consent to the app only. Whether it is the first is a record of the backend
    /// (`appleConsent`), so a journal keeps it across a restart and a fleet's nodes share it, as
    /// Apple remembers a grant until it is revoked (``revokeToken(_:)``).
    package func appleAuthorize(_ request: AppleAuthorizeRequest) async throws(IdentityToolkitError) -> AppleAuthorizeResponse {
        try await change { core throws(IdentityToolkitError) in try core.appleAuthorize(request) }
    }

}
