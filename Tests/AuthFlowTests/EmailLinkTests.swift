import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import Testing

/// Email link sign-in through the app's auth core and the backend over HTTP, as FirebaseAuth 12.19
/// does it: `Auth/Auth.swift` (`sendSignInLink` 1221–1265, `isSignIn(withEmailLink:)` 1287–1299,
/// `signIn(withEmail:link:)` 451–490 and `internalSignInAndRetrieveData(withEmail:link:)` 2194–2232),
/// `User/User.swift` (`link(withEmailCredential:)` 1517–1570), `Utilities/AuthWebUtils.swift`
/// (`parseURL`), `Backend/RPC/EmailLinkSignInRequest.swift` and `GetOOBConfirmationCodeRequest.swift`
/// (`signInWithEmailLinkRequest`); the backend's answers as the Auth Emulator's `sendOobCode` and
/// `signInWithEmailLink` (firebase-tools `src/emulator/auth/operations.ts`).
@Suite("Email link sign-in")
struct EmailLinkTests {
    let email = "ada@example.com"

    func settings(handleCodeInApp: Bool = true) -> ActionCodeSettings {
        let settings = ActionCodeSettings()
        settings.url = URL(string: "https://example.com/finish")
        settings.handleCodeInApp = handleCodeInApp
        settings.setIOSBundleID("com.example.app")
        return settings
    }

    @Test("sendSignInLink, isSignIn(withEmailLink:), signIn(withEmail:link:): the SDK's requests; a new, verified user; the link good once, for its address only")
    func signInByLink() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, recording) = try await recordingApp(world)
            try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings())
            let request = try #require(requestBodies(recording, "getOobConfirmationCode").last)
            #expect(request["requestType"] as? String == "EMAIL_SIGNIN" && request["email"] as? String == email, "\(request)")
            #expect(request["continueUrl"] as? String == "https://example.com/finish" && request["canHandleCodeInApp"] as? Bool == true
                    && request["iOSBundleId"] as? String == "com.example.app", "\(request)")
            let sent = try #require(try await toolkit.emailOutbox().last)
            #expect(sent.requestType == .emailSignIn && sent.email == email)
            #expect(auth.isSignIn(withEmailLink: sent.link), "\(sent.link)")
            for notALink in ["", "https://example.com/finish", "https://example.com/?mode=resetPassword&oobCode=x", "mode=signIn&oobCode=x"] {
                #expect(!auth.isSignIn(withEmailLink: notALink), "\(notALink)")
            }
            #expect(auth.isSignIn(withEmailLink: "https://example.com/?mode=sign%49n&oobCode=a%2Fb"), "values are percent-decoded, as parseURL does")

            // Another address: invalidEmail (17008), and the code stays good.
            let other = await expectAuthError { try await auth.signIn(withEmail: "bob@example.com", link: sent.link) }
            #expect(other?.code == .invalidEmail)
            let result = try await auth.signIn(withEmail: "Ada@Example.com", link: sent.link)
            #expect(result.additionalUserInfo?.providerID == "password" && result.additionalUserInfo?.isNewUser == true)
            #expect(result.user.email == email && result.user.isEmailVerified && !result.user.isAnonymous)
            #expect(result.user.providerData.map(\.providerID) == ["password"])
            #expect(try await result.user.getIDTokenResult().signInProvider == "password")
            #expect(auth.currentUser === result.user)
            let signIn = try #require(requestBodies(recording, "emailLinkSignin").last)
            #expect(signIn as? [String: String] == ["email": "Ada@Example.com", "oobCode": sent.code], "\(signIn)")

            let again = await expectAuthError { try await auth.signIn(withEmail: email, link: sent.link) }
            #expect(again?.code == .invalidActionCode, "a link is good once")
            // Where the SDK stops with fatalError: a clear error, and no request.
            let before = recording.requests.withLock { $0.count }
            let notSignIn = await expectAuthError { try await auth.signIn(withEmail: email, link: "https://example.com/finish") }
            #expect(notSignIn?.code == .appConfigurationError)
            let notInApp = await expectAuthError {
                try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings(handleCodeInApp: false))
            }
            #expect(notInApp?.code == .appConfigurationError && notInApp?.message.contains("handleCodeInApp") == true)
            #expect(recording.requests.withLock { $0.count } == before)

            // A second link signs the same user in; the completion forms answer on the main actor.
            try auth.signOut()
            let sendError = await withCheckedContinuation { continuation in
                auth.sendSignInLink(toEmail: email, actionCodeSettings: settings()) { error in continuation.resume(returning: error) }
            }
            #expect(sendError == nil)
            let next = try #require(try await toolkit.emailOutbox().last)
            let (uid, isNew) = await withCheckedContinuation { continuation in
                auth.signIn(withEmail: email, link: next.link) { result, _ in
                    continuation.resume(returning: (result?.user.uid, result?.additionalUserInfo?.isNewUser))
                }
            }
            #expect(uid == result.user.uid && isNew == false)

            // How the address signs in, as createAuthUri tells it (the emulator's `emailLink`).
            _ = try await toolkit.updateProjectConfig(EmulatorProjectConfig(emailPrivacyConfig: .init(enableImprovedEmailPrivacy: false)))
            let methods = try await toolkit.call(ToolkitCalls.createAuthUri, CreateAuthURIRequest(identifier: email, continueUri: "http://www.google.com/"))
            #expect(methods.signinMethods == ["emailLink"] && methods.allProviders == ["password"])
        }
    }

    @Test("link(with: credential(withEmail:link:)) gives an anonymous user the email, keeping the uid; reauthenticate by link; a second factor is asked for")
    func linkAndReauthenticate() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, recording) = try await recordingApp(world)
            let anonymous = try await auth.signInAnonymously().user
            try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings())
            let sent = try #require(try await toolkit.emailOutbox().last)
            let linked = try await anonymous.link(with: EmailAuthProvider.credential(withEmail: email, link: sent.link))
            #expect(linked.user === anonymous && anonymous.uid == linked.user.uid && !anonymous.isAnonymous && anonymous.email == email)
            #expect(anonymous.providerData.map(\.providerID) == ["password"])
            let link = try #require(requestBodies(recording, "emailLinkSignin").last)
            #expect(Set(link.keys) == ["email", "oobCode", "idToken"], "\(link)")
            let twice = await expectAuthError {
                _ = try await anonymous.link(with: EmailAuthProvider.credential(withEmail: email, link: sent.link))
            }
            #expect(twice?.code == .providerAlreadyLinked)

            try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings())
            let again = try #require(try await toolkit.emailOutbox().last)
            let reauthenticated = try await anonymous.reauthenticate(with: EmailAuthProvider.credential(withEmail: email, link: again.link))
            #expect(reauthenticated.user.uid == anonymous.uid)
            // A link for another address signs in another user: userMismatch (17024).
            try await auth.sendSignInLink(toEmail: "bob@example.com", actionCodeSettings: settings())
            let bobs = try #require(try await toolkit.emailOutbox().last)
            let mismatch = await expectAuthError {
                _ = try await anonymous.reauthenticate(with: EmailAuthProvider.credential(withEmail: "bob@example.com", link: bobs.link))
            }
            #expect(mismatch?.code == .userMismatch)

            // With a phone enrolled, the link alone is not enough.
            var update = SetAccountInfoRequest(localId: anonymous.uid)
            update.mfa = .init(enrollments: [MFAEnrollment(mfaEnrollmentId: nil, phoneInfo: "+16505550101")])
            _ = try await toolkit.adminUpdate(update)
            try auth.signOut()
            try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings())
            let last = try #require(try await toolkit.emailOutbox().last)
            let required = await expectAuthError { try await auth.signIn(withEmail: email, link: last.link) }
            #expect(required?.code == .secondFactorRequired && required?.resolver?.hints.count == 1)
        }
    }

    @Test("ActionCodeURL(link:) reads the link the backend sent as the SDK does (ActionCode/ActionCodeURL.swift 44-83): operation, code, API key, continue URL, language; its quirks kept")
    func actionCodeURL() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, _) = try await recordingApp(world)
            try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings())
            let sent = try #require(try await toolkit.emailOutbox().last)
            let url = try #require(ActionCodeURL(link: sent.link), "\(sent.link)")
            #expect(url.operation == .emailLink && url.code == sent.code && url.apiKey == world.apiKey && url.languageCode == "en")
            #expect(url.continueURL == URL(string: "https://example.com/finish"))
        }
        // No query, or none with a value: nil.
        for notALink in ["", "https://example.com/finish", "https://example.com/?mode", "mode=signIn&oobCode=x"] {
            #expect(ActionCodeURL(link: notALink) == nil, "\(notALink)")
        }
        let reset = try #require(ActionCodeURL(link: "https://p.firebaseapp.com/__/auth/action?mode=resetPassword&oobCode=a%2Fb"))
        #expect(reset.operation == .passwordReset && reset.code == "a/b" && reset.apiKey == nil && reset.continueURL == nil && reset.languageCode == nil)
        // The modes are the link's words, not the request types' (`EMAIL_SIGNIN` is no mode).
        #expect(ActionCodeURL(link: "https://x.example/?mode=EMAIL_SIGNIN&oobCode=a")?.operation == .unknown)
        // Every part is split at each '=': a continue URL with its own query is cut at its first '='.
        let cut = try #require(ActionCodeURL(link: "https://x.example/?mode=signIn&oobCode=a&continueUrl=https%3A%2F%2Fapp.example%2Fdone%3Fcart%3D7"))
        #expect(cut.continueURL == URL(string: "https://app.example/done?cart"))
    }

    @Test("ActionCodeSettings' iOSBundleID starts as the main bundle's (the bound app's) and can be set, as the SDK's (ActionCodeSettings.swift 42–45, 122–124)")
    func actionCodeSettingsBundleID() async throws {
        let process = AppProcess(host: AppHost(AppHost.Configuration(bundleID: "com.example.bound", urlSchemes: [])))
        let bound = await process.run { ActionCodeSettings().iOSBundleID }
        #expect(bound == "com.example.bound")
        let settings = ActionCodeSettings()
        settings.iOSBundleID = "com.example.other"
        #expect(settings.iOSBundleID == "com.example.other")
    }
}
