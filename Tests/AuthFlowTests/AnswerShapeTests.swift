import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import Testing
import Utilities

/// Audit 3's rows on what the SDK sends and takes, each as 12.19 does it: D2.1 and D2.2 (a
/// verifyAssertion body carries the postBody always, a pending token beside it, and `autoCreate`
/// always: VerifyAssertionRequest.swift 137–217, UserProfileUpdate.swift 19–24), D2.5 (a
/// getAccountInfo answer with other than one user is the SDK's unexpected response, 17999:
/// GetAccountInfoResponse.swift 141–149) and D2.7 (a refresh answer without `access_token` is too,
/// whatever `id_token` says: SecureTokenResponse.swift), D3.5 (an answer without `mfaInfo` keeps
/// the user's factors: User.swift 1387–1391).
@Suite("Request and answer shapes as 12.19's: verifyAssertion's fields, getAccountInfo's one user, the refresh's access_token")
struct AnswerShapeTests {
    @Test("sign-in, link and reauthentication send postBody and autoCreate (true, true, false), as the SDK")
    func verifyAssertionFields() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await recordingApp(world)
            let google = GoogleAuthProvider.credential(withIDToken: #"{"sub":"g-1"}"#, accessToken: "a")
            let user = try await auth.signIn(with: google).user
            _ = try await user.link(with: GitHubAuthProvider.credential(withToken: #"{"sub":"gh-1"}"#))
            _ = try await user.reauthenticate(with: google)
            let bodies = requestBodies(recording, "verifyAssertion")
            #expect(bodies.count == 3)
            #expect(bodies.map { $0["autoCreate"] as? Bool } == [true, true, false])
            #expect(bodies.allSatisfy { ($0["postBody"] as? String)?.contains("providerId=") == true })
        }
    }

    @Test("getAccountInfo answering no user, or two, is internalError (17999); a refresh answer without access_token too")
    func unexpectedAnswers() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            let toolkit = try #require(world.toolkit)
            toolkit.faults.add(.raw(status: 200, body: #"{"users":[]}"#, on: "getAccountInfo"))
            _ = await expectAuthError(.internalError) { try await auth.signInAnonymously() }
            let user = try await auth.signInAnonymously().user
            toolkit.faults.add(.raw(status: 200, body: #"{"users":[{"localId":"a"},{"localId":"b"}]}"#, on: "getAccountInfo"))
            _ = await expectAuthError(.internalError) { try await user.reload() }
            toolkit.faults.add(.raw(status: 200, body: #"{"id_token":"x.y.z","refresh_token":"r","expires_in":"3600"}"#, on: "token"))
            _ = await expectAuthError(.internalError) { try await user.getIDToken(forcingRefresh: true) }
        }
    }

    @Test("a lookup answer without mfaInfo keeps the factors the user had, as the SDK's update does")
    func factorsKept() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            let toolkit = try #require(world.toolkit)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            try await toolkit.enrollSecondFactor(localId: user.uid, phoneNumber: "+16505550142", displayName: "work")
            try await user.reload()
            #expect(user.multiFactor.enrolledFactors.count == 1)
            toolkit.faults.add(.raw(status: 200, body: #"{"users":[{"localId":"\#(user.uid)","email":"ada@example.com"}]}"#, on: "getAccountInfo"))
            try await user.reload()
            #expect(user.multiFactor.enrolledFactors.count == 1, "an answer without mfaInfo keeps them")
        }
    }

    /// Audit 3, N-13: `update(withGetAccountInfoResponse:)` (User.swift 1358–1398) never touches
    /// `isAnonymous`; linking clears it (`updateTokenAndRefreshUser`, UserProfileUpdate.swift 139),
    /// a password or email update when the account lists a provider (User.swift 1272–1279).
    @Test("an anonymous user an admin gave a provider stays anonymous on reload, as on a device; linking makes it not anonymous")
    func anonymousUntilLinked() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            let toolkit = try #require(world.toolkit)
            let user = try await auth.signInAnonymously().user
            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: user.uid, phoneNumber: "+16505550177"))
            try await user.reload()
            #expect(user.providerData.map(\.providerID) == ["phone"])
            #expect(user.isAnonymous, "a reload keeps isAnonymous, whatever the account lists")
            _ = try await user.link(with: GoogleAuthProvider.credential(withIDToken: #"{"sub":"g-9"}"#, accessToken: "a"))
            #expect(!user.isAnonymous)
        }
    }

    /// Audit 3, N-8: `sendEmailVerification(beforeUpdatingEmail:)` (User.swift 1013–1038) signs
    /// out only when fetching the token fails; a refusal of the request itself is handed back.
    @Test("sendEmailVerification(beforeUpdatingEmail:) refused for a disabled user: the error, and the user stays signed in, as on a device")
    func verifyBeforeUpdateKeepsUser() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            let toolkit = try #require(world.toolkit)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: user.uid, disableUser: true))
            _ = await expectAuthError(.userDisabled) { try await user.sendEmailVerification(beforeUpdatingEmail: "ada@work.example") }
            #expect(auth.currentUser?.uid == user.uid, "the service's refusal does not sign the user out")
            // A refresh is a token fetch: that one signs out (User.swift 1703–1725).
            _ = await expectAuthError(.userDisabled) { try await user.getIDToken(forcingRefresh: true) }
            #expect(auth.currentUser == nil)
        }
    }

    /// Audit 3, N-6: an empty password is `weakPasswordError(serverResponseReason:)` with the SDK's
    /// reason, "Missing password" from createUser (Auth.swift 836–838) and "Missing Password" from
    /// updatePassword (User.swift 198–203), under `NSLocalizedFailureReasonErrorKey`.
    @Test("an empty password's failure reason is the SDK's: Missing password (createUser), Missing Password (updatePassword)")
    func emptyPasswordReasons() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            func reason(_ call: () async throws -> Void) async -> String? {
                do { try await call() } catch { return (error as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String }
                return nil
            }
            #expect(await reason { _ = try await auth.createUser(withEmail: "ada@example.com", password: "") } == "Missing password")
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            #expect(await reason { try await user.updatePassword(to: "") } == "Missing Password")
        }
    }

    /// Audit 3, N-23: after `setAccountInfo`, the SDK reads the account again only when the user
    /// has an email and had no password provider (User.swift 1230–1310).
    @Test("updatePassword reads the account again only when it adds the password provider, as the SDK")
    func updatePasswordLookups() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await recordingApp(world)
            func lookups() -> Int { requestBodies(recording, "getAccountInfo").count }
            let emailUser = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            var before = lookups()
            try await emailUser.updatePassword(to: "secret2")
            #expect(lookups() - before == 1, "the update's own read only")
            try auth.signOut()
            let google = try await auth.signIn(with: GoogleAuthProvider.credential(withIDToken: #"{"sub":"g-3","email":"lin@example.com","email_verified":true}"#,
                                                                                   accessToken: "a")).user
            before = lookups()
            try await google.updatePassword(to: "secret3")
            #expect(lookups() - before == 2, "the update's read, and one more for the new password provider")
            #expect(Set(google.providerData.map(\.providerID)) == ["google.com", "password"])
        }
    }

    /// Audit 3, B-7: the emulator's password provider carries the user's `photoUrl` (state.ts, the
    /// password provider's upsert), so `providerData`'s password entry has the photo.
    @Test("after a profile change the password provider's photoURL is the user's, as the emulator answers")
    func passwordProviderPhoto() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            let change = user.createProfileChangeRequest()
            change.photoURL = URL(string: "https://example.com/ada.png")
            try await change.commitChanges()
            try await user.reload()
            #expect(user.providerData.first { $0.providerID == "password" }?.photoURL?.absoluteString == "https://example.com/ada.png")
        }
    }

    /// Audit 3, B-13: `lastLoginAt` moves in the emulator's sign-in calls only (operations.ts:
    /// signUp, signInWith…, mfaSignInFinalize), not with the new tokens of a profile change.
    @Test("a profile change's new tokens leave metadata.lastSignInDate; the next sign-in moves it")
    func lastSignInMovesOnSignInOnly() async throws {
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await withWorld(backendClock: clock) { world, _ in
            let (auth, _) = try await world.install(AppProfile(), wallClock: clock)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            let signedInAt = try #require(user.metadata.lastSignInDate)
            clock.advance(by: 60)
            let change = user.createProfileChangeRequest()
            change.displayName = "Ada"
            try await change.commitChanges()
            try await user.reload()
            #expect(user.metadata.lastSignInDate == signedInAt)
            try auth.signOut()
            let again = try await auth.signIn(withEmail: "ada@example.com", password: "secret1").user
            #expect(again.metadata.lastSignInDate == signedInAt.addingTimeInterval(60))
        }
    }

    /// Audit 3, B-8: the emulator's `resetPassword` checks the code, then that it is a reset
    /// code, then the password's strength; a reset drops every linked provider but password and
    /// phone, and ends every session (operations.ts `resetPassword`).
    @Test("confirmPasswordReset: a wrong code before a weak password, a verification code is not a reset code; a reset drops Google")
    func resetPasswordOrderAndEffects() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            let toolkit = try #require(world.toolkit)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            _ = try await user.link(with: GoogleAuthProvider.credential(withIDToken: #"{"sub":"g-7","email":"ada@example.com"}"#, accessToken: "a"))
            #expect(Set(user.providerData.map(\.providerID)) == ["password", "google.com"])
            _ = await expectAuthError(.invalidActionCode) { try await auth.confirmPasswordReset(withCode: "not-a-code", newPassword: "123") }
            try await user.sendEmailVerification()
            let verification = try #require(try await toolkit.emailOutbox().last).code
            _ = await expectAuthError(.invalidActionCode) { try await auth.confirmPasswordReset(withCode: verification, newPassword: "123") }
            try await auth.sendPasswordReset(withEmail: "ada@example.com")
            let reset = try #require(try await toolkit.emailOutbox().last).code
            _ = await expectAuthError(.weakPassword) { try await auth.confirmPasswordReset(withCode: reset, newPassword: "123") }
            try await auth.confirmPasswordReset(withCode: reset, newPassword: "secret2")
            // The old session ended (validSince); signed in again, only the password is left.
            _ = await expectAuthError(.userTokenExpired) { try await user.getIDToken(forcingRefresh: true) }
            let again = try await auth.signIn(withEmail: "ada@example.com", password: "secret2").user
            #expect(again.providerData.map(\.providerID) == ["password"])
        }
    }

    /// Audit 3, D4.7: `retryIfExpired` (SecureTokenService.swift 74–95): a refreshed token whose
    /// `exp` is within five minutes of the device's clock is asked for once more.
    @Test("a device clock 58 minutes ahead: the refresh asks once more, as the SDK, and not a third time")
    func refreshRetriedOnceWhenNearlyExpired() async throws {
        try await withWorld { world, _ in
            let ahead = ManualWallClock(Date().addingTimeInterval(58 * 60))
            let (auth, recording) = try await recordingApp(world, wallClock: ahead)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            let before = requestBodies(recording, "token").count
            _ = try await user.getIDToken(forcingRefresh: true)
            #expect(requestBodies(recording, "token").count - before == 2)
        }
    }

    /// Audit 3, D4.5: linking a phone number gives no additional user info (User.swift 1626–1644).
    @Test("link(with:) a phone credential: the same user with the number, and additionalUserInfo nil, as the SDK")
    func phoneLinkHasNoAdditionalInfo() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505553434": "654321"]
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            auth.settings?.isAppVerificationDisabledForTesting = true
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber("+16505553434", uiDelegate: nil)
            let linked = try await user.link(with: provider.credential(withVerificationID: id, verificationCode: "654321"))
            #expect(linked.user.uid == user.uid && linked.user.phoneNumber == "+16505553434")
            #expect(linked.additionalUserInfo == nil)
        }
    }

    /// Audit 3, D1.11: in test mode the SDK sends the code request alone (`verifyInTestMode`,
    /// PhoneAuthProvider.swift 339–360): a refusal is thrown as it is, with no rerun.
    @Test("test mode: INVALID_APP_CREDENTIAL is 17048 at once, one request, no second verification")
    func testModeNoRerun() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await recordingApp(world)
            let toolkit = try #require(world.toolkit)
            auth.settings?.isAppVerificationDisabledForTesting = true
            toolkit.faults.add(.error("INVALID_APP_CREDENTIAL", on: "sendVerificationCode"))
            _ = await expectAuthError(.invalidAppCredential) {
                try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505553434", uiDelegate: nil)
            }
            #expect(requestBodies(recording, "sendVerificationCode").count == 1)
        }
    }

    /// Audit 3, D3.3: `reauthenticate(with:)` (User.swift 386–405) compares the credential's user
    /// with the Auth's current user, returns the sign-in's own result and sends nothing more.
    @Test("reauthenticate: the sign-in's result, one lookup; a user object kept after a sign-out is userMismatch")
    func reauthenticateAsTheSDK() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            let before = requestBodies(recording, "getAccountInfo").count
            let result = try await user.reauthenticate(with: EmailAuthProvider.credential(withEmail: "ada@example.com", password: "secret1"))
            #expect(result.user.uid == user.uid && result.user !== user && auth.currentUser === user)
            #expect(requestBodies(recording, "getAccountInfo").count - before == 1, "the sign-in's own lookup only")
            try auth.signOut()
            _ = await expectAuthError(.userMismatch) {
                try await user.reauthenticate(with: EmailAuthProvider.credential(withEmail: "ada@example.com", password: "secret1"))
            }
        }
    }

    /// Audit 3, D1.12: a second factor's start answer without its phone info is the SDK's
    /// unexpected response (its StartMFAEnrollmentResponse requires it), 17999.
    @Test("mfaEnrollment:start answered without phoneSessionInfo: 17999, not an empty verification ID")
    func enrollmentStartWithoutInfo() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505553434": "654321"]
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await recordingApp(world)
            let toolkit = try #require(world.toolkit)
            _ = try await toolkit.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com", password: "secret1", emailVerified: true))
            let user = try await auth.signIn(withEmail: "ada@example.com", password: "secret1").user
            auth.settings?.isAppVerificationDisabledForTesting = true
            toolkit.faults.add(.raw(status: 200, body: "{}", on: "accounts/mfaEnrollment:start"))
            let session = try await user.multiFactor.session()
            _ = await expectAuthError(.internalError) {
                try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505553434", uiDelegate: nil, multiFactorSession: session)
            }
        }
    }

    /// Audit 3, D4.6: linking a temporary-proof phone credential is where the SDK stops with
    /// fatalError ("Missing verificationCode", User.swift 1421): a clear 17044 here, no request.
    @Test("link(with:) the temporary-proof credential of a 17025: missingVerificationCode, as the SDK's crash says")
    func linkTemporaryProof() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505553434": "654321"]
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await recordingApp(world)
            auth.settings?.isAppVerificationDisabledForTesting = true
            let provider = PhoneAuthProvider.provider(auth: auth)
            _ = try await auth.signIn(with: provider.credential(withVerificationID: try await provider.verifyPhoneNumber("+16505553434", uiDelegate: nil),
                                                                verificationCode: "654321"))
            try auth.signOut()
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            let taken = await expectAuthError(.credentialAlreadyInUse) {
                try await user.link(with: provider.credential(withVerificationID: try await provider.verifyPhoneNumber("+16505553434", uiDelegate: nil),
                                                              verificationCode: "654321"))
            }
            let proof = try #require(taken?.updatedCredential)
            _ = await expectAuthError(.missingVerificationCode) { try await user.link(with: proof) }
        }
    }
}
