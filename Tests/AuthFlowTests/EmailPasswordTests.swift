import AuthBackend
import FirebaseAuthCore
import Foundation
import Synchronization
import HTTPTransport
import IdentityToolkitAPI
import Scenarios
import TestSupport
import Testing
import Utilities

/// Email and password, anonymous and custom-token sign-in, and the emails, through the app's auth
/// core and the backend over HTTP, as FirebaseAuth 12.19 does them: `Auth/Auth.swift`
/// (`signIn(withEmail:password:)` 353–437 and `internalSignInUser`, `createUser` 833–955,
/// `signInAnonymously` 700–760, `signIn(withCustomToken:)` 765–830, `confirmPasswordReset`,
/// `checkActionCode`, `verifyPasswordResetCode`, `applyActionCode`, `sendPasswordReset` 959–1215),
/// `User/User.swift` (`updatePassword` 197–240, `link(withEmail:password:)` 1467–1515,
/// `sendEmailVerification` 864–945), `ActionCode/ActionCodeInfo.swift`; the request shapes of
/// `Backend/RPC/VerifyPasswordRequest.swift`, `SignUpNewUserRequest.swift`,
/// `GetOOBConfirmationCodeRequest.swift`, `ResetPasswordRequest.swift`; and the backend's answers as
/// the Auth Emulator's (firebase-tools `src/emulator/auth/operations.ts`).
@Suite("Email and password, anonymous users, and the emails")
struct EmailPasswordTests {
    let email = "ada@example.com"

    @Test("createUser then signIn(withEmail:password:): the SDK's requests; wrong password, unknown email, taken email, weak password as the SDK maps them")
    func createAndSignIn() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await recordingApp(world)
            let created = try await auth.createUser(withEmail: "Ada@Example.com", password: "correct horse")
            #expect(created.additionalUserInfo?.providerID == "password" && created.additionalUserInfo?.isNewUser == true)
            #expect(created.user.email == email, "the backend keeps the email lower-cased, as Google does")
            #expect(created.user.isAnonymous == false && created.user.isEmailVerified == false)
            #expect(created.user.providerData.map(\.providerID) == ["password"])
            #expect(auth.currentUser === created.user)
            let signUp = try #require(requestBodies(recording, "signupNewUser").last)
            // clientType CLIENT_TYPE_IOS in each, as the SDK writes it (SignUpNewUserRequest.swift 108, VerifyPasswordRequest.swift 104).
            #expect(Set(signUp.keys) == ["email", "password", "returnSecureToken", "clientType"] && signUp["clientType"] as? String == "CLIENT_TYPE_IOS", "\(signUp)")

            try auth.signOut()
            let signedIn = try await auth.signIn(withEmail: email, password: "correct horse")
            #expect(signedIn.user.uid == created.user.uid && signedIn.additionalUserInfo?.isNewUser == false)
            #expect(try await signedIn.user.getIDTokenResult().signInProvider == "password")
            let verify = try #require(requestBodies(recording, "verifyPassword").last)
            #expect(Set(verify.keys) == ["email", "password", "returnSecureToken", "clientType"], "\(verify)")

            // Email enumeration protection (on, as in every project since 2023): one answer for both.
            let wrong = await expectAuthError { try await auth.signIn(withEmail: email, password: "wrong horse") }
            #expect(wrong?.code == .invalidCredential)
            let unknown = await expectAuthError { try await auth.signIn(withEmail: "bob@example.com", password: "whatever") }
            #expect(unknown?.code == .invalidCredential)
            // An empty password: wrongPassword without a request (internalSignInUser).
            let sent = recording.requests.withLock { $0.count }
            let empty = await expectAuthError { try await auth.signIn(withEmail: email, password: "") }
            #expect(empty?.code == .wrongPassword)
            #expect(recording.requests.withLock { $0.count } == sent)

            let taken = await expectAuthError { try await auth.createUser(withEmail: email, password: "another one") }
            #expect(taken?.code == .emailAlreadyInUse)
            let weak = await expectAuthError { try await auth.createUser(withEmail: "eve@example.com", password: "12345") }
            #expect(weak?.code == .weakPassword)
            let bad = await expectAuthError { try await auth.createUser(withEmail: "not-an-email", password: "123456") }
            #expect(bad?.code == .invalidEmail)
            #expect(auth.currentUser?.uid == created.user.uid, "failed calls leave the signed-in user")
        }
    }

    @Test("without enumeration protection: EMAIL_NOT_FOUND is userNotFound (17011), INVALID_PASSWORD wrongPassword (17009)")
    func withoutProtection() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            _ = try await toolkit.updateProjectConfig(EmulatorProjectConfig(emailPrivacyConfig: .init(enableImprovedEmailPrivacy: false)))
            let (auth, _) = try await recordingApp(world)
            _ = try await auth.createUser(withEmail: email, password: "correct horse")
            let wrong = await expectAuthError { try await auth.signIn(withEmail: email, password: "wrong horse") }
            #expect(wrong?.code == .wrongPassword)
            let unknown = await expectAuthError { try await auth.signIn(withEmail: "bob@example.com", password: "whatever") }
            #expect(unknown?.code == .userNotFound)
            let reset = await expectAuthError { try await auth.sendPasswordReset(withEmail: "bob@example.com") }
            #expect(reset?.code == .userNotFound)
        }
    }

    /// FirebaseAuth 12.19 `Auth/Auth.swift` 290–330 (`fetchSignInMethods`, deprecated: "returns an
    /// empty list when Email Enumeration Protection is enabled"), `Backend/RPC/CreateAuthURIRequest.swift`
    /// and `CreateAuthURIResponse.swift`; the answers as the Auth Emulator's `createAuthUri`.
    @available(*, deprecated, message: "it calls fetchSignInMethods, deprecated in the SDK")
    @Test("fetchSignInMethods: createAuthUri as the SDK sends it; [] with enumeration protection, the methods without; the event says which")
    func signInMethods() async throws {
        let events = Mutex<[BackendEvent]>([])
        try await withWorld(backendObserver: { event, _ in events.withLock { $0.append(event) } }) { world, _ in
            let (auth, recording) = try await recordingApp(world)
            _ = try await auth.createUser(withEmail: email, password: "correct horse")
            #expect(try await auth.fetchSignInMethods(forEmail: "Ada@Example.com") == [])
            let body = try #require(requestBodies(recording, "createAuthUri").last)
            #expect(body as? [String: String] == ["identifier": "Ada@Example.com", "continueUri": "http://www.google.com/"], "\(body)")
            #expect(events.withLock { $0.last } == .signInMethodsAsked(email: email, methods: [.password], hidden: true))

            let toolkit = try #require(world.toolkit)
            _ = try await toolkit.updateProjectConfig(EmulatorProjectConfig(emailPrivacyConfig: .init(enableImprovedEmailPrivacy: false)))
            #expect(try await auth.fetchSignInMethods(forEmail: email) == ["password"])
            #expect(try await auth.fetchSignInMethods(forEmail: "bob@example.com") == [])
            #expect(events.withLock { $0.last } == .signInMethodsAsked(email: "bob@example.com", methods: [], hidden: false))
            let bad = await expectAuthError { try await auth.fetchSignInMethods(forEmail: "not-an-email") }
            #expect(bad?.code == .invalidEmail, "INVALID_IDENTIFIER is invalidEmail (AuthBackend.swift)")
            // The completion form answers on the main actor with the same list.
            let methods = await withCheckedContinuation { continuation in
                auth.fetchSignInMethods(forEmail: email) { methods, _ in continuation.resume(returning: methods) }
            }
            #expect(methods == ["password"])
        }
    }

    @Test("signInAnonymously: a new anonymous user, the same one again without a request; linking an email keeps the uid and ends anonymity")
    func anonymousThenLink() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await recordingApp(world)
            let first = try await auth.signInAnonymously()
            #expect(first.user.isAnonymous && first.additionalUserInfo?.providerID == "" && first.additionalUserInfo?.isNewUser == true)
            #expect(first.user.providerData.isEmpty && first.user.email == nil)
            #expect(try await first.user.getIDTokenResult().signInProvider == "anonymous")
            let signUp = try #require(requestBodies(recording, "signupNewUser").last)
            #expect(Set(signUp.keys) == ["returnSecureToken", "clientType"], "\(signUp)")
            let sent = recording.requests.withLock { $0.count }
            let again = try await auth.signInAnonymously()
            #expect(again.user === first.user && again.additionalUserInfo == nil)
            #expect(recording.requests.withLock { $0.count } == sent, "an anonymous user already signed in is returned as it is")

            let linked = try await first.user.link(with: EmailAuthProvider.credential(withEmail: email, password: "correct horse"))
            #expect(linked.user === first.user && linked.user.uid == first.user.uid)
            #expect(!first.user.isAnonymous && first.user.email == email && first.user.providerData.map(\.providerID) == ["password"])
            let link = try #require(requestBodies(recording, "signupNewUser").last)
            #expect(Set(link.keys) == ["email", "password", "idToken", "returnSecureToken", "clientType"], "\(link)")
            // Linked twice: providerAlreadyLinked (17015) without a request.
            let twice = await expectAuthError {
                _ = try await first.user.link(with: EmailAuthProvider.credential(withEmail: "other@example.com", password: "correct horse"))
            }
            #expect(twice?.code == .providerAlreadyLinked)
            try auth.signOut()
            #expect(try await auth.signIn(withEmail: email, password: "correct horse").user.uid == first.user.uid)
        }
    }

    @Test("password reset: the email's code in the outbox (and the emulator's oobCodes), checked, spent once; sign-in with the new password only")
    func passwordReset() async throws {
        let clock = ManualWallClock(Date())
        try await withWorld(backendClock: clock) { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, recording) = try await recordingApp(world)
            _ = try await auth.createUser(withEmail: email, password: "correct horse")
            try auth.signOut()
            try await auth.sendPasswordReset(withEmail: email)
            let request = try #require(requestBodies(recording, "getOobConfirmationCode").last)
            #expect(request["requestType"] as? String == "PASSWORD_RESET" && request["email"] as? String == email, "\(request)")
            let sent = try #require(try await toolkit.emailOutbox().last)
            #expect(sent.email == email && sent.requestType == .passwordReset)
            #expect(sent.link.contains("mode=resetPassword") && sent.link.contains("oobCode=\(sent.code)"), "\(sent.link)")
            // The emulator's listing, over HTTP, as a test suite written for it reads it.
            let listed = try await fetchJSON(world, "/emulator/v1/projects/\(world.projectID)/oobCodes", OobCodesResponse.self)
            #expect(listed.oobCodes.map(\.oobCode) == [sent.code] && listed.oobCodes.first?.requestType == "PASSWORD_RESET")

            #expect(try await auth.verifyPasswordResetCode(sent.code) == email)
            // The SDK maps the action link's mode names, and the service answers the enum's name:
            // on a device, too, `operation` is `.unknown` (ActionCodeInfo.swift 46–56).
            #expect(try await auth.checkActionCode(sent.code).operation == .unknown)
            try await auth.confirmPasswordReset(withCode: sent.code, newPassword: "battery staple")
            let again = await expectAuthError { try await auth.confirmPasswordReset(withCode: sent.code, newPassword: "third one") }
            #expect(again?.code == .invalidActionCode, "a code is good once")
            #expect(try await toolkit.emailOutbox().isEmpty, "a spent code leaves the outbox")

            let old = await expectAuthError { try await auth.signIn(withEmail: email, password: "correct horse") }
            #expect(old?.code == .invalidCredential)
            let user = try await auth.signIn(withEmail: email, password: "battery staple").user
            #expect(user.isEmailVerified, "a reset proves the address, as Google and the emulator mark it")

            // An unknown email: the same success, nothing sent (enumeration protection).
            try await auth.sendPasswordReset(withEmail: "nobody@example.com")
            #expect(try await toolkit.emailOutbox().isEmpty)
            // An hour later a code has expired (expiredActionCode, 17029).
            try await auth.sendPasswordReset(withEmail: email)
            let late = try #require(try await toolkit.emailOutbox().last)
            clock.advance(by: 3600)
            let expired = await expectAuthError { try await auth.confirmPasswordReset(withCode: late.code, newPassword: "fourth one") }
            #expect(expired?.code == .expiredActionCode)
            let unknownCode = await expectAuthError { try await auth.checkActionCode("not-a-code") }
            #expect(unknownCode?.code == .invalidActionCode)
        }
    }

    @Test("email verification: sendEmailVerification, applyActionCode, reload; a password reset code cannot be applied; the email change waits for its code")
    func emailVerification() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, recording) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: email, password: "correct horse").user
            try await user.sendEmailVerification()
            let request = try #require(requestBodies(recording, "getOobConfirmationCode").last)
            #expect(request["requestType"] as? String == "VERIFY_EMAIL" && request["idToken"] != nil && request["email"] == nil, "\(request)")
            let sent = try #require(try await toolkit.emailOutbox().last)
            #expect(sent.requestType == .verifyEmail && sent.email == email)
            try await auth.applyActionCode(sent.code)
            #expect(!user.isEmailVerified, "the user knows after a reload, as on a device")
            try await user.reload()
            #expect(user.isEmailVerified)

            try await auth.sendPasswordReset(withEmail: email)
            let reset = try #require(try await toolkit.emailOutbox().last)
            let applied = await expectAuthError { try await auth.applyActionCode(reset.code) }
            #expect(applied?.code == .invalidActionCode)

            // The address changes when its code is applied, not before.
            try await user.sendEmailVerification(beforeUpdatingEmail: "ada@lovelace.example")
            let change = try #require(try await toolkit.emailOutbox().last)
            #expect(change.requestType == .verifyAndChangeEmail && change.newEmail == "ada@lovelace.example")
            try await user.reload()
            #expect(user.email == email)
            let info = try await auth.checkActionCode(change.code)
            #expect(info.email == "ada@lovelace.example" && info.previousEmail == email)
            try await auth.applyActionCode(change.code)
            try await user.reload()
            #expect(user.email == "ada@lovelace.example" && user.isEmailVerified)
            try auth.signOut()
            #expect(try await auth.signIn(withEmail: "ada@lovelace.example", password: "correct horse").user.uid == user.uid)
        }
    }

    @Test("updatePassword: the user takes new tokens and goes on; another device's session ends (userTokenExpired on refresh)")
    func updatePassword() async throws {
        let clock = ManualWallClock(Date())
        try await withWorld(backendClock: clock) { world, _ in
            let (auth, recording) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: email, password: "correct horse").user
            let (otherDevice, _) = try await world.install(AppProfile(), wallClock: clock)
            let elsewhere = try await otherDevice.signIn(withEmail: email, password: "correct horse").user
            clock.advance(by: 5)
            let empty = await expectAuthError { try await user.updatePassword(to: "") }
            #expect(empty?.code == .weakPassword)
            try await user.updatePassword(to: "battery staple")
            let update = try #require(requestBodies(recording, "setAccountInfo").last)
            #expect(Set(update.keys) == ["idToken", "password", "returnSecureToken"], "\(update)")
            #expect(try await user.getIDToken(forcingRefresh: true).isEmpty == false, "the changing device goes on")
            let ended = await expectAuthError { _ = try await elsewhere.getIDToken(forcingRefresh: true) }
            #expect(ended?.code == .userTokenExpired)
            #expect(otherDevice.currentUser == nil, "signed out, as the SDK does on 17021")
            try auth.signOut()
            #expect(try await auth.signIn(withEmail: email, password: "battery staple").user.uid == user.uid)
        }
    }

    @Test("a sign-in older than the project's window (Google's 5 minutes): delete, updatePassword and unlink are requiresRecentLogin until the user reauthenticates (audit B-16)")
    func recentLogin() async throws {
        let clock = ManualWallClock(Date())
        try await withWorld(backendClock: clock) { world, _ in
            let (auth, recording) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: email, password: "correct horse").user
            clock.advance(by: 300)
            try await user.updatePassword(to: "battery staple")  // 300 s: still recent
            clock.advance(by: 301)
            // updatePassword's new tokens keep the sign-in's auth_time, as Google's do.
            await expectAuthError(.requiresRecentLogin) { try await user.delete() }
            await expectAuthError(.requiresRecentLogin) { try await user.updatePassword(to: "another horse") }
            await expectAuthError(.requiresRecentLogin) { _ = try await user.unlink(fromProvider: "password") }
            #expect(auth.currentUser === user, "17014 does not sign the user out")
            #expect(try #require(requestBodies(recording, "deleteAccount").last).keys.contains("idToken"))
            _ = try await user.reauthenticate(with: EmailAuthProvider.credential(withEmail: email, password: "battery staple"))
            try await user.delete()
            #expect(auth.currentUser == nil)
        }
        var configuration = BackendConfiguration()
        configuration.recentLoginSeconds = 0
        try await withWorld(configuration: configuration, backendClock: clock) { world, _ in
            let (auth, _) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: email, password: "correct horse").user
            clock.advance(by: 3000)  // within the ID token's hour
            try await user.delete()  // 0: no window, as the Auth Emulator
        }
    }

    @Test("signIn(withCustomToken:): the Admin SDK's token, a new user then the same; a second factor on a password user asks for it")
    func customTokenAndSecondFactor() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await recordingApp(world)
            let first = try await auth.signIn(withCustomToken: #"{"uid":"custom-42","claims":{"role":"admin"}}"#)
            #expect(first.user.uid == "custom-42" && first.additionalUserInfo?.isNewUser == true && !first.user.isAnonymous)
            #expect(try await first.user.getIDTokenResult().claims["role"] as? String == "admin")
            try auth.signOut()
            #expect(try await auth.signIn(withCustomToken: #"{"uid":"custom-42"}"#).additionalUserInfo?.isNewUser == false)
            let bad = await expectAuthError { try await auth.signIn(withCustomToken: "not a token") }
            #expect(bad?.code == .invalidCustomToken)

            // A password user with a verified email and an enrolled phone: the password alone is not enough.
            let toolkit = try #require(world.toolkit)
            let user = try await auth.createUser(withEmail: email, password: "correct horse").user
            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: user.uid, emailVerified: true))
            var update = SetAccountInfoRequest(localId: user.uid)
            update.mfa = .init(enrollments: [MFAEnrollment(mfaEnrollmentId: nil, phoneInfo: "+16505550101")])
            _ = try await toolkit.adminUpdate(update)
            try auth.signOut()
            let required = await expectAuthError { try await auth.signIn(withEmail: email, password: "correct horse") }
            #expect(required?.code == .secondFactorRequired)
            #expect(required?.resolver?.hints.count == 1)
        }
    }

    @Test("the backend hashes passwords with scrypt, checks an Auth Emulator export's fakeHash, and refuses what Google would refuse")
    func backendRules() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, _) = try await recordingApp(world)
            let user = try await auth.createUser(withEmail: email, password: "correct horse").user
            let stored = try #require(await toolkit.allUsers.first { $0.localId == user.uid })
            #expect(stored.passwordHash?.hasPrefix("authsim-scrypt:") == true && stored.passwordHash?.contains("correct") == false)
            // An emulator export's user signs in with its password.
            _ = try await toolkit.call(ToolkitCalls.adminBatchCreate, UploadAccountRequest(users: [
                UserRecord(localId: "emulated", email: "grace@example.com", passwordHash: "fakeHash:salt=fakeSaltX:password=cobol1959",
                           salt: "fakeSaltX"),
            ]))
            #expect(try await auth.signIn(withEmail: "grace@example.com", password: "cobol1959").user.uid == "emulated")
            // A field Google does not know: 400 as Google's front end answers it.
            let unknown = #expect(throws: IdentityToolkitError.self) {
                _ = try IdentityToolkitJSON.decodeChecked(VerifyPasswordRequest.self, from: Array(#"{"email":"a@b.c","pasword":"x"}"#.utf8),
                                                                what: "accounts:signInWithPassword")
            }
            #expect(unknown?.message.contains("Unknown name") == true, "\(String(describing: unknown))")
        }
    }
}

/// A GET to the world's backend (the emulator's own endpoints take no key), its JSON decoded.
func fetchJSON<T: Decodable>(_ world: PhoneAuthWorld, _ path: String, _ type: T.Type) async throws -> T {
    let answer = try await world.transport.send(method: "GET", url: URL(string: world.backendURL + path)!, timeout: .seconds(30)) { () throws(TransportError) in
        TransportContent(headers: [], body: nil)
    }
    #expect(answer.status == 200, "\(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
    return try JSONDecoder().decode(T.self, from: Data(answer.body))
}
