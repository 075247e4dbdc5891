import Foundation
import IdentityToolkitAPI

extension IdentityToolkit {
    // MARK: Project config and reCAPTCHA Enterprise (SMSDefense.swift)

    /// The project config: its reCAPTCHA part, as the Admin API writes it (a fleet's, with a shared store).
    public func projectConfigForAdmin() async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await readShared()
        return core.currentProjectConfig()
    }

    /// The project config in the Auth Emulator's own shape (`signIn.allowDuplicateEmails`,
    /// `emailPrivacyConfig`): what an export's `config.json` holds, so that the emulator loads it.
    public func projectConfigForExport() async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await readShared()
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
    public func updateProjectConfig(_ patch: EmulatorProjectConfig) async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await change { core throws(IdentityToolkitError) in try core.updateProjectConfig(patch) }
    }

    /// `GET /v2/recaptchaConfig`: the project's reCAPTCHA Enterprise key (only when a provider is
    /// in AUDIT or ENFORCE, as the service answers) and the enforcement state of each provider.
    public func recaptchaConfig(_ request: GetRecaptchaConfigRequest) async throws(IdentityToolkitError) -> GetRecaptchaConfigResponse {
        try await read { core throws(IdentityToolkitError) in try core.recaptchaConfig(request) }
    }

    /// The simulated reCAPTCHA Enterprise service: a token for `action` with the project's site
    /// key, for the iOS app the key is restricted to. What the RecaptchaEnterprise SDK's
    /// `execute(withAction:)` gets from Google.
    public func executeRecaptchaEnterprise(_ request: RecaptchaEnterpriseExecuteRequest) async throws(IdentityToolkitError) -> RecaptchaEnterpriseExecuteResponse {
        try await change { core throws(IdentityToolkitError) in try core.executeRecaptchaEnterprise(request) }
    }

    // MARK: Multi-factor (MultiFactor.swift)

    /// `securetoken.googleapis.com/v1/token` (`grant_type=refresh_token`): a fresh ID token for a
    /// refresh token this backend issued, with the same sign-in provider and second factor.
    public func secureToken(_ request: SecureTokenRequest) async throws(IdentityToolkitError) -> SecureTokenResponse {
        let (user, stored) = try await read { core throws(IdentityToolkitError) in try core.refresh(request) }
        let idToken = await signToken(for: user, provider: stored.provider, secondFactor: stored.secondFactor, authTime: stored.issuedAt,
                                      extraClaims: BackendUser.claims(stored.claims), now: clock.now)
        return SecureTokenResponse(accessToken: idToken, expiresIn: "3600", refreshToken: request.refreshToken ?? "", idToken: idToken,
                                   userId: user.localId, projectId: configuration.projectID)
    }

    /// `accounts/mfaEnrollment:start`: a signed-in user (by a first factor that allows it, with a
    /// verified email) asks for a code to the phone they enroll. The request carries the same app
    /// verification as `sendVerificationCode`.
    public func startMFAEnrollment(_ request: StartMFAEnrollmentRequest) async throws(IdentityToolkitError) -> StartMFAEnrollmentResponse {
        try await change { core throws(IdentityToolkitError) in try core.startMFAEnrollment(request) }
    }

    /// `accounts/mfaEnrollment:finalize`: the code for the enrollment's session; the phone becomes
    /// a second factor, and the answer's tokens record it.
    public func finalizeMFAEnrollment(_ request: FinalizeMFAEnrollmentRequest) async throws(IdentityToolkitError) -> FinalizeMFAEnrollmentResponse {
        try await signIn { core throws(IdentityToolkitError) in try core.finalizeMFAEnrollment(request) }
    }

    /// `accounts/mfaEnrollment:withdraw`: the user removes one of their second factors.
    public func withdrawMFA(_ request: WithdrawMFARequest) async throws(IdentityToolkitError) -> WithdrawMFAResponse {
        try await signIn { core throws(IdentityToolkitError) in try core.withdrawMFA(request) }
    }

    /// `accounts/mfaSignIn:start`: after a first factor answered `mfaPendingCredential`, a code to
    /// the enrolled phone named by `mfaEnrollmentId`, behind the same app verification as any code.
    public func startMFASignIn(_ request: StartMFASignInRequest) async throws(IdentityToolkitError) -> StartMFASignInResponse {
        try await change { core throws(IdentityToolkitError) in try core.startMFASignIn(request) }
    }

    /// `accounts/mfaSignIn:finalize`: the second factor's code for the pending credential's
    /// session; the pending credential is spent, and the answer is the session.
    public func finalizeMFASignIn(_ request: FinalizeMFASignInRequest) async throws(IdentityToolkitError) -> FinalizeMFASignInResponse {
        try await signIn { core throws(IdentityToolkitError) in try core.finalizeMFASignIn(request) }
    }

    /// Enrolls `phoneNumber` as a second factor of `localId` without a code (what the Admin SDK's
    /// `update_user(multi_factor=…)` and a scenario's set-up do).
    @discardableResult
    public func enrollSecondFactor(localId: String, phoneNumber: String, displayName: String?) async throws(IdentityToolkitError) -> MFAEnrollmentRecord {
        try await change { core throws(IdentityToolkitError) in try core.enrollSecondFactor(localId: localId, phoneNumber: phoneNumber, displayName: displayName) }
    }

    /// Gives `localId` the phone number `phoneNumber` (links the phone provider) without a code.
    public func setPhoneNumber(localId: String, phoneNumber: String) async throws(IdentityToolkitError) {
        try await change { core throws(IdentityToolkitError) in try core.setPhoneNumber(localId: localId, phoneNumber: phoneNumber) }
    }

    /// `getAccountInfo` (`accounts:lookup`) with an ID token: the user as the SDK reads them after
    /// every sign-in (providers, second factors with their numbers).
    public func getAccountInfo(_ request: GetAccountInfoRequest) async throws(IdentityToolkitError) -> GetAccountInfoResponse {
        try await change { core throws(IdentityToolkitError) in try core.getAccountInfo(request) }
    }

    // MARK: Email and password (EmailPassword.swift)

    /// The shortest password the service takes (`WEAK_PASSWORD : Password should be at least 6 characters`).
    public static let minimumPasswordLength = BackendCore.minimumPasswordLength

    /// `signupNewUser` (v1 `accounts:signUp`) from an app: no email and password, an anonymous
    /// user; with both, an email/password user, or, with the signed-in user's ID token, the
    /// email and password linked to that user (the SDK's `link(with: EmailAuthCredential)`).
    public func signUp(_ request: SignUpNewUserRequest) async throws(IdentityToolkitError) -> SignUpNewUserResponse {
        let password = try check { core throws(IdentityToolkitError) in try core.signUpPassword(request) }
        var hash: BackendCore.PasswordHash?
        if let password { hash = await BackendCore.hashPassword(password) }
        return try await signIn { [hash] core throws(IdentityToolkitError) in try core.signUp(request, hash: hash) }
    }

    /// `verifyPassword` (v1 `accounts:signInWithPassword`). With email enumeration protection on
    /// (the default) an unknown email, a user without a password and a wrong password are all
    /// INVALID_LOGIN_CREDENTIALS; off, EMAIL_NOT_FOUND and INVALID_PASSWORD. A user with a second
    /// factor gets a pending credential and hints, not a session.
    public func signInWithPassword(_ request: VerifyPasswordRequest) async throws(IdentityToolkitError) -> VerifyPasswordResponse {
        let (email, password) = try check { core throws(IdentityToolkitError) in try core.passwordCredentials(request) }
        // The hash is checked off the actor (scrypt takes tens of milliseconds), then the sign-in
        // goes on only if the user still has the hash that was checked.
        try await readShared()
        let stored = core.user(email: email).flatMap { user in user.passwordHash.map { (hash: $0, salt: user.salt) } }
        var verified: String?
        if let stored, await BackendCore.passwordMatches(password, hash: stored.hash, salt: stored.salt) { verified = stored.hash }
        return try await signIn { [verified] core throws(IdentityToolkitError) in try core.signInWithPassword(email: email, verifiedHash: verified) }
    }

    /// `getOobConfirmationCode` (v1 `accounts:sendOobCode`): an email with a single-use code, in
    /// the email outbox (``emailOutbox``, the emulator's `oobCodes`). `PASSWORD_RESET` by email
    /// (with enumeration protection, an unknown email is answered the same, and nothing is
    /// sent); `VERIFY_EMAIL` and `VERIFY_AND_CHANGE_EMAIL` for the user of the ID token.
    /// `returnOobLink` (the Admin SDK's link generation) is not the app's to ask.
    public func sendOobCode(_ request: GetOOBConfirmationCodeRequest) async throws(IdentityToolkitError) -> GetOOBConfirmationCodeResponse {
        let type = try check { core throws(IdentityToolkitError) in try core.oobRequestType(request) }
        return try await change { core throws(IdentityToolkitError) in try core.sendOobCode(request, type: type) }
    }

    /// `resetPassword` (v1 `accounts:resetPassword`): with `newPassword`, a PASSWORD_RESET code
    /// spent and the password set (the email counts as verified: the user read it; every earlier
    /// session ends); without, any code checked: what it is for and whose email.
    public func resetPassword(_ request: ResetPasswordRequest) async throws(IdentityToolkitError) -> ResetPasswordResponse {
        let (code, password) = try check { core throws(IdentityToolkitError) in try core.resetPasswordInput(request) }
        var hash: BackendCore.PasswordHash?
        if let password { hash = await BackendCore.hashPassword(password) }
        return try await change { [hash] core throws(IdentityToolkitError) in try core.resetPassword(code: code, hash: hash) }
    }

    /// Every email sent (a day past its code's lifetime, then forgotten), oldest first, with
    /// whether its code was spent: what the inspector lists.
    public func sentEmails() async throws(IdentityToolkitError) -> [(email: OobEmail, used: Bool)] {
        try await readShared()
        return core.state.emailOutbox.map { ($0, core.state.oobCodes[BackendCore.digest($0.code)]?.used ?? true) }
    }

    /// The emails sent whose codes are still unused, oldest first (`GET /emulator/v1/projects/{p}/oobCodes`).
    public func emailOutbox() async throws(IdentityToolkitError) -> [OobEmail] {
        try await readShared()
        return core.state.emailOutbox.filter { core.state.oobCodes[BackendCore.digest($0.code)]?.used == false }
    }

    // MARK: Users, as an admin manages them (UserManagement.swift)

    /// The most users one batch call takes (`accounts:batchDelete`, `accounts:batchCreate`), as the service.
    public static let maximumBatchSize = BackendCore.maximumBatchSize

    /// `POST …/projects/{p}/accounts` (`auth.create_user`): a new user with the fields given.
    public func adminCreateUser(_ request: SignUpNewUserRequest) async throws(IdentityToolkitError) -> SignUpNewUserResponse {
        let hash = try await adminPasswordHash(request.password)
        return try await change { core throws(IdentityToolkitError) in try core.adminCreateUser(request, hash: hash) }
    }

    /// `POST …/projects/{p}/accounts:update` (`update_user`, `set_custom_user_claims`,
    /// `revoke_refresh_tokens`): the fields given change, the others stay.
    public func adminUpdate(_ request: SetAccountInfoRequest) async throws(IdentityToolkitError) -> SetAccountInfoResponse {
        if request.oobCode != nil { throw IdentityToolkitError(.unsupportedField, "oobCode (accounts:update): an email's code is the app's to apply, with its API key") }
        let hash = try await adminPasswordHash(request.password)
        return try await change { core throws(IdentityToolkitError) in try core.adminUpdate(request, hash: hash) }
    }

    /// An admin's password (`create_user(password=…)`, `update_user(password=…)`), hashed; nil for none.
    func adminPasswordHash(_ password: String?) async throws(IdentityToolkitError) -> BackendCore.PasswordHash? {
        guard let password else { return nil }
        guard password.count >= BackendCore.minimumPasswordLength else { throw BackendCore.weakPassword }
        return await BackendCore.hashPassword(password)
    }

    /// `POST …/projects/{p}/accounts:lookup` (`get_user`, `get_user_by_phone_number`,
    /// `get_user_by_provider_uid`, `get_users`): every user matching any identifier, once; `users`
    /// absent when none matched (the Node Admin SDK needs that).
    public func adminLookup(_ request: GetAccountInfoRequest) async throws(IdentityToolkitError) -> GetAccountInfoResponse {
        try await change { core throws(IdentityToolkitError) in try core.adminLookup(request) }
    }

    /// `POST …/projects/{p}/accounts:delete` (`delete_user`).
    public func adminDelete(_ request: DeleteAccountRequest) async throws(IdentityToolkitError) -> DeleteAccountResponse {
        try await change { core throws(IdentityToolkitError) in try core.adminDelete(request) }
    }

    /// `POST …/projects/{p}/accounts:batchDelete` (`delete_users`): 1 to 1,000 IDs; unknown ones
    /// are skipped; without `force` an enabled user is an error entry (NOT_DISABLED), not deleted.
    public func adminBatchDelete(_ request: BatchDeleteAccountsRequest) async throws(IdentityToolkitError) -> BatchDeleteAccountsResponse {
        try await change { core throws(IdentityToolkitError) in try core.adminBatchDelete(request) }
    }

    /// `GET …/projects/{p}/accounts:batchGet` (`list_users`): users by local ID, ascending, a page
    /// at a time; `nextPageToken` is the last ID of a full page. `maxResults` defaults to 20 and
    /// is capped at 1,000; -1 lists everyone (the emulator's own, what its export uses).
    public func adminBatchGet(_ request: DownloadAccountRequest) async throws(IdentityToolkitError) -> DownloadAccountResponse {
        try await change { core throws(IdentityToolkitError) in try core.adminBatchGet(request) }
    }

    /// `POST …/projects/{p}/accounts:query`: users matching any expression (email, user ID, phone
    /// number), sorted (`USER_ID`, `CREATED_AT`, `LAST_LOGIN_AT`, `NAME`, `USER_EMAIL`; `ASC` or
    /// `DESC`), `offset` then at most `limit` (default and most 500); with `returnUserInfo: false`
    /// only the count. (The emulator implements none of expression, limit, offset or other sorts;
    /// the service does, and so does this.)
    public func adminQuery(_ request: QueryUserInfoRequest) async throws(IdentityToolkitError) -> QueryUserInfoResponse {
        try await change { core throws(IdentityToolkitError) in try core.adminQuery(request) }
    }

    /// `POST …/projects/{p}/accounts:batchCreate` (`import_users`, and the emulator's own import
    /// of an export's `accounts.json`): 1 to 1,000 users, each checked alone; a user that cannot
    /// be imported is an entry in `error` (index, why) and the others still are. Without
    /// `allowOverwrite` a local ID twice in the batch refuses the whole batch (DUPLICATE_LOCAL_ID),
    /// and one that exists is an error entry.
    public func adminBatchCreate(_ request: UploadAccountRequest) async throws(IdentityToolkitError) -> UploadAccountResponse {
        try await change { core throws(IdentityToolkitError) in try core.adminBatchCreate(request) }
    }

    /// `accounts:signInWithCustomToken` (v3 `verifyCustomToken`): a token the Admin SDK minted
    /// (`create_custom_token`; unsigned, `alg: none`, against an emulator), or, as the emulator
    /// allows, its payload as plain JSON. The `aud` must be the Identity Toolkit's; `uid` (or
    /// `user_id`) names the user, created on first sign-in; `claims` go into this sign-in's
    /// tokens (and every token its refresh token brings). A signed token's signature is not
    /// checked: as in the Auth Emulator, this backend has no service account key.
    public func signInWithCustomToken(_ request: VerifyCustomTokenRequest) async throws(IdentityToolkitError) -> VerifyCustomTokenResponse {
        try await signIn { core throws(IdentityToolkitError) in try core.signInWithCustomToken(request) }
    }

    /// `DELETE /emulator/v1/projects/{p}/accounts`: every user goes, with their refresh tokens and
    /// pending credentials (sessions, SMS and app credentials stay).
    public func deleteAllAccounts() async throws(IdentityToolkitError) {
        try await change { core throws(IdentityToolkitError) in try core.deleteAllAccounts() }
    }

    /// Custom claims as `setAccountInfo` checks them (a JSON object of at most 1,000 characters,
    /// no reserved claim), before a call that would set them: the inspector's add-a-user checks
    /// them before the user is created.
    public nonisolated static func checkCustomClaims(_ json: String) throws(IdentityToolkitError) {
        try BackendCore.validateCustomClaims(json)
    }

    /// The inspector's import of an accounts file (the emulator's export): every user checked
    /// first, then all kept in one change, or none (see ``BackendCore``'s rule).
    public func importAccounts(_ users: [UserRecord], overwrite: Bool) async throws(IdentityToolkitError) -> (imported: Int, replaced: Int) {
        try await change { core throws(IdentityToolkitError) in try core.importAccounts(users, overwrite: overwrite) }
    }

    /// Every user, as the emulator's export (`accounts:batchGet?maxResults=-1`) lists them.
    public func exportAccounts() async throws(IdentityToolkitError) -> DownloadAccountResponse {
        try await change { core throws(IdentityToolkitError) in try core.exportAccounts() }
    }

    // MARK: Sign in with Apple (AppleSignIn.swift)

    /// `signInWithIdp` (`verifyAssertion`) for `apple.com`: verifies the identity token against
    /// Apple's JWKS (`iss`, `aud`, `exp`, the nonce against the raw nonce, each token once), then signs
    /// the Apple user in (creating them), or links the credential to the user of `idToken`.
    /// Every answer to an identity token carries it back as `oauthIdToken`, as Google's does (the SDK
    /// makes the result's credential, and the 17025 recovery credential, only from an answer with an
    /// OAuth token: OAuthCredential.swift 72–83); an answer to a pending token has none to give.
    public func signInWithIdp(_ request: VerifyAssertionRequest) async throws(IdentityToolkitError) -> VerifyAssertionResponse {
        var answer = try await signIn { core throws(IdentityToolkitError) in try core.signInWithIdp(request) }
        if request.pendingToken?.isEmpty != false, let token = BackendCore.formFields(request.postBody ?? "")["id_token"], !token.isEmpty {
            answer.oauthIdToken = token
        }
        return answer
    }

    /// `accounts:update` (`setAccountInfo`) with the user's ID token, as the SDK's profile change
    /// requests and `unlink` send it: the display name and photo URL, the attributes deleted, the
    /// providers unlinked; with `returnSecureToken`, new tokens for the same sign-in provider.
    public func setAccountInfo(_ request: SetAccountInfoRequest) async throws(IdentityToolkitError) -> SetAccountInfoResponse {
        let password = try check { core throws(IdentityToolkitError) in try core.accountUpdatePassword(request) }
        var hash: BackendCore.PasswordHash?
        if let password { hash = await BackendCore.hashPassword(password) }
        return try await signIn { [hash] core throws(IdentityToolkitError) in try core.setAccountInfo(request, hash: hash) }
    }

    /// Apple's sheet (`POST /appleid/auth/authorize`): the user consents to the app, and Apple
    /// hands back an identity token and an authorization code, with the name and email on the
    /// user's first consent to the app only. Whether it is the first is a record of the backend
    /// (`appleConsent`), so a journal keeps it across a restart and a fleet's nodes share it, as
    /// Apple remembers a grant until it is revoked (``revokeToken(_:)``).
    public func appleAuthorize(_ request: AppleAuthorizeRequest) async throws(IdentityToolkitError) -> AppleAuthorizeResponse {
        try await change { core throws(IdentityToolkitError) in try core.appleAuthorize(request) }
    }

    /// `accounts:revokeToken` (`providerId` apple.com, `tokenType` CODE): revokes the user's Apple
    /// grant with Apple, as the SDK's `revokeToken(withAuthorizationCode:)` asks before deleting.
    public func revokeToken(_ request: RevokeTokenRequest) async throws(IdentityToolkitError) -> EmptyResponse {
        try await change { core throws(IdentityToolkitError) in try core.revokeToken(request) }
    }

    /// `accounts:delete` (`deleteAccount`): the user of the ID token.
    public func deleteAccount(_ request: DeleteAccountRequest) async throws(IdentityToolkitError) -> DeleteAccountResponse {
        try await change { core throws(IdentityToolkitError) in try core.deleteAccount(request) }
    }
}
