// The feature's tests on Linux: the whole channel (backend, APNs, the device, the reCAPTCHA page)
// through AuthsimTesting. On Apple platforms this file compiles to nothing; the team's device tests
// run there instead.
#if canImport(AuthsimTesting)
import AuthsimTesting
import FirebaseAuth
import FirebaseCore
import SignInFeature
import Testing

/// What the app's root screen shows, as the session observer tells it (nil: the sign-in screen).
@MainActor
final class SessionScreen {
    private(set) var shown: [String?] = []
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func show(_ uid: String?) {
        shown.append(uid)
        for waiter in waiters where waiter.0 <= shown.count { waiter.1.resume() }
        waiters.removeAll { $0.0 <= shown.count }
    }

    /// Returns once the screen changed `count` times.
    func wait(for count: Int) async {
        if shown.count >= count { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}

@Suite("SignInService, on Linux, against authsim")
struct SignInServiceTests {
    let phone = "+16505551234"

    /// `FirebaseApp.configure()` as the app delegate calls it, then the feature's code.
    func signIn(_ simulation: Simulation, service: SignInService = SignInService()) async throws -> String {
        FirebaseApp.configure()
        let verificationID = try await service.sendCode(to: phone)
        let code = try await simulation.smsCode(to: phone)
        guard case .signedIn(let uid) = try await service.signIn(verificationID: verificationID, code: code) else {
            throw SimulationError("a second factor was asked for")
        }
        return uid
    }

    @Test("the silent push proves the app: signed in, no reCAPTCHA")
    func silentPush() async throws {
        try await Simulation.run(.silentPushWorks) { simulation in
            let uid = try await signIn(simulation)
            #expect(SignInService().currentUserID == uid)
            #expect(simulation.lastAppVerification == .silentPush)
            #expect(await simulation.silentPushes().map(\.result.status) == [200])
        }
    }

    @Test("the push is lost: the SDK waits suggestedTimeout, the user solves reCAPTCHA, signed in")
    func recaptchaFallback() async throws {
        try await Simulation.run(.pushLost) { simulation in
            _ = try await signIn(simulation)
            #expect(simulation.lastAppVerification == .reCAPTCHA)
            #expect(simulation.lastFallbackReason != nil)
        }
    }

    @Test("a debug build whose delegate says .prod: APNs refuses the push (BadDeviceToken), reCAPTCHA takes over")
    func tokenTypeMismatch() async throws {
        try await Simulation.run(.tokenTypeMismatch) { simulation in
            _ = try await signIn(simulation)
            #expect(simulation.lastAppVerification == .reCAPTCHA)
            #expect(await simulation.silentPushes().first?.result.reason?.rawValue == "BadDeviceToken")
        }
    }

    @Test("the user closes the reCAPTCHA page: sendCode fails as cancelled, nothing is texted")
    func recaptchaCancelled() async throws {
        try await Simulation.run(.recaptchaCancelled) { simulation in
            FirebaseApp.configure()
            await #expect(throws: SignInService.Failure.cancelled) { try await SignInService().sendCode(to: phone) }
            await #expect(throws: SimulationError.self) { try await simulation.smsCode(to: phone) }
        }
    }

    @Test("a wrong code: the feature says so, and the right code still works")
    func wrongCode() async throws {
        try await Simulation.run { simulation in
            FirebaseApp.configure()
            let service = SignInService()
            let verificationID = try await service.sendCode(to: phone)
            let code = try await simulation.smsCode(to: phone)
            let wrong = String(code.reversed()) == code ? "000000" : String(code.reversed())
            await #expect(throws: SignInService.Failure.wrongCode) { try await service.signIn(verificationID: verificationID, code: wrong) }
            guard case .signedIn = try await service.signIn(verificationID: verificationID, code: code) else {
                Issue.record("not signed in")
                return
            }
        }
    }

    @Test("an Apple user with a phone second factor: the resolver, the hint's code, signed in as that user")
    func multiFactor() async throws {
        try await Simulation.run { simulation in
            FirebaseApp.configure()
            let service = SignInService()
            // Grace signs in with Apple, and her second factor is enrolled (console or Admin SDK).
            let first = try await simulation.appleAuthorization("grace")
            guard case .signedIn(let uid) = try await service.signInWithApple(idToken: first.idToken, rawNonce: first.rawNonce,
                                                                             fullName: first.fullName)
            else {
                Issue.record("a second factor before one was enrolled")
                return
            }
            let secondPhone = "+447700900123"
            try await simulation.enrollSecondFactor(uid: uid, phoneNumber: secondPhone, displayName: "Work phone")
            try service.signOut()
            // Next time, Apple is not enough.
            let again = try await simulation.appleAuthorization("grace")
            guard case .secondFactorRequired(let challenge) = try await service.signInWithApple(
                idToken: again.idToken, rawNonce: again.rawNonce, fullName: nil)
            else {
                Issue.record("signed in without the second factor")
                return
            }
            #expect(challenge.hintNames == ["Work phone"])
            let secondID = try await service.sendSecondFactorCode(challenge, hint: 0)
            #expect(simulation.lastAppVerification == .silentPush)
            let signedIn = try await service.finishSecondFactor(challenge, verificationID: secondID,
                                                               code: try await simulation.smsCode(to: secondPhone))
            #expect(signedIn == uid)
            #expect(service.currentUserID == uid)
        }
    }

    @Test("the session observer drives the screen: signed out, signed in; an admin disables the user, the next refresh signs out")
    func session() async throws {
        try await Simulation.run { simulation in
            FirebaseApp.configure()
            let service = SignInService()
            let screen = SessionScreen()
            let handle = service.observeSession { uid in screen.show(uid) }
            await screen.wait(for: 1)
            let verificationID = try await service.sendCode(to: phone)
            guard case .signedIn(let uid) = try await service.signIn(verificationID: verificationID, code: try await simulation.smsCode(to: phone))
            else {
                Issue.record("a second factor was asked for")
                return
            }
            await screen.wait(for: 2)
            #expect(await screen.shown == [nil, uid])
            try await simulation.disableUser(uid: uid)
            await #expect(throws: SignInService.Failure.disabled) { try await service.refreshSession() }
            await screen.wait(for: 3)
            #expect(await screen.shown == [nil, uid, nil])
            #expect(service.currentUserID == nil)
            service.stopObserving(handle)
        }
    }

    @Test("the profile screen: a display name, Apple linked and unlinked, the phone kept")
    func profile() async throws {
        try await Simulation.run { simulation in
            _ = try await signIn(simulation)
            let service = SignInService()
            try await service.updateDisplayName("Grace Hopper")
            #expect(service.profile?.name == "Grace Hopper")
            let apple = try await simulation.appleAuthorization("grace")
            try await service.linkApple(idToken: apple.idToken, rawNonce: apple.rawNonce)
            #expect(service.profile?.providers == ["apple.com", "phone"])
            try await service.unlinkApple()
            #expect(service.profile?.providers == ["phone"])
            await #expect(throws: SignInService.Failure.self) { try await service.unlinkApple() }
        }
    }

    @Test("email and password: sign up, verify the email from its link, a wrong password, forgot password, the link works once")
    func emailAndPassword() async throws {
        try await Simulation.run { simulation in
            FirebaseApp.configure()
            let service = SignInService()
            let uid = try await service.signUp(email: "grace@example.com", password: "cobol1959")
            #expect(try await service.verifyEmail(code: simulation.emailCode(to: "grace@example.com")))
            try service.signOut()
            await #expect(throws: SignInService.Failure.wrongEmailOrPassword) {
                _ = try await service.signIn(email: "grace@example.com", password: "fortran1957")
            }
            await #expect(throws: SignInService.Failure.emailInUse) { _ = try await service.signUp(email: "grace@example.com", password: "another1") }
            try await service.sendPasswordReset(to: "grace@example.com")
            let code = try await simulation.emailCode(to: "grace@example.com")
            #expect(try await service.resetPassword(code: code, newPassword: "fortran1957") == "grace@example.com")
            await #expect(throws: SignInService.Failure.linkInvalid) { _ = try await service.resetPassword(code: code, newPassword: "third1") }
            guard case .signedIn(let again) = try await service.signIn(email: "grace@example.com", password: "fortran1957") else {
                throw SimulationError("a second factor was asked for")
            }
            #expect(again == uid)
        }
    }

    @Test("a Microsoft account on the provider's page: the user picks it, signed in; the same account next time; closing the page is cancelled")
    func providerPage() async throws {
        try await Simulation.run { simulation in
            FirebaseApp.configure()
            let service = SignInService()
            try await simulation.answerProviderPage(.account(email: "ada@corp.example"))
            guard case .signedIn(let uid) = try await service.signIn(withProvider: "microsoft.com") else {
                throw SimulationError("a second factor was asked for")
            }
            #expect(service.profile?.providers == ["microsoft.com"])
            try service.signOut()
            guard case .signedIn(let again) = try await service.signIn(withProvider: "microsoft.com", loginHint: "ada@corp.example") else {
                throw SimulationError("a second factor was asked for")
            }
            #expect(again == uid)
            try service.signOut()
            try await simulation.answerProviderPage(.cancel)
            await #expect(throws: SignInService.Failure.cancelled) { _ = try await service.signIn(withProvider: "microsoft.com") }
        }
    }

    @Test("an authenticator app as the second factor: enroll with its code, sign in again with a later one")
    func authenticatorApp() async throws {
        try await Simulation.run { simulation in
            FirebaseApp.configure()
            let service = SignInService()
            let uid = try await service.signUp(email: "lin@example.com", password: "haskell1990")
            #expect(try await service.verifyEmail(code: simulation.emailCode(to: "lin@example.com")))
            let enrollment = try await service.startTOTPEnrollment(accountName: "lin@example.com", issuer: "SignInFeature")
            #expect(enrollment.qrCodeURL.hasPrefix("otpauth://totp/SignInFeature:lin@example.com?secret=\(enrollment.key)"))
            await #expect(throws: SignInService.Failure.wrongCode) {
                try await service.finishTOTPEnrollment(enrollment, code: "000000", displayName: "phone app")
            }
            try await service.finishTOTPEnrollment(enrollment, code: simulation.authenticatorCode(qrCodeURL: enrollment.qrCodeURL), displayName: "phone app")
            try service.signOut()
            guard case .secondFactorRequired(let challenge) = try await service.signIn(email: "lin@example.com", password: "haskell1990") else {
                throw SimulationError("signed in without the second factor")
            }
            #expect(challenge.hintNames == ["phone app"])
            let code = try simulation.authenticatorCode(qrCodeURL: enrollment.qrCodeURL, stepsAhead: 1)
            #expect(try await service.finishTOTPSecondFactor(challenge, hint: 0, code: code) == uid)
            #expect(service.currentUserID == uid)
        }
    }

    @Test("SMS defense ENFORCE: the app with the reCAPTCHA Enterprise SDK proves itself with its token, no push")
    func smsDefense() async throws {
        var app = SimulatedApp()
        app.recaptchaEnterprise = .linked
        try await Simulation.run(.smsDefenseEnforced, app: app) { simulation in
            _ = try await signIn(simulation)
            #expect(simulation.lastAppVerification == .recaptchaEnterprise)
            #expect(await simulation.silentPushes().isEmpty)
        }
    }

    @Test("a release build signs in by silent push too; what a scenario scripts (the app's language) is the test's code, and refused on the app")
    func releaseBuildAndRefusal() async throws {
        var app = SimulatedApp()
        app.build = .release
        try await Simulation.run(.silentPushWorks, app: app) { simulation in
            _ = try await signIn(simulation)
            #expect(simulation.lastAppVerification == .silentPush)
        }
        var scripted = SimulatedApp()
        scripted.languageCode = "fr"
        let refused = await #expect(throws: SimulationError.self) { try await Simulation.run(app: scripted) { _ in } }
        #expect(refused?.description.contains("set Auth.auth().languageCode in the test's code") == true, "\(refused?.description ?? "")")
    }
}
#endif
