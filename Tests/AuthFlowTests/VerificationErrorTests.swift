import AuthBackend
import DeviceOS
@testable import FirebaseAuthCore
import FirebaseCore
import Foundation
import Scenarios
import Synchronization
import Testing
import TestSupport
import Utilities

/// Runs `verifyPhoneNumber` and returns the error code it ends with (nil on success).
func verificationError(_ auth: Auth, _ number: String = phone) async -> AuthErrorCode? {
    await verificationError(PhoneAuthProvider.provider(auth: auth), number)
}

/// The same through a provider: what a task takes with it (`Auth` is not Sendable, as in 12.19;
/// its provider is).
func verificationError(_ provider: PhoneAuthProvider, _ number: String = phone) async -> AuthErrorCode? {
    do throws(AuthError) {
        _ = try await AuthError.catching { try await provider.verifyPhoneNumber(number, uiDelegate: nil) }
        return nil
    } catch { return error.code }
}

@Suite("verifyPhoneNumber's error paths, as the SDK takes them")
struct VerificationErrorTests {
    @Test("URL scheme not registered: a clear error naming the scheme (the SDK calls fatalError)")
    func schemeNotRegistered() async throws {
        try await withWorld { world, _ in
            var profile = AppProfile()
            profile.urlSchemes = ["com.example.authsim"]
            let (auth, _) = try await world.install(profile)
            do throws(AuthError) {
                _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil) }
                Issue.record("no error")
            } catch {
                #expect(error.code == .appConfigurationError)
                #expect(error.message.contains("app-1-123456789012-ios-a1b2c3d4e5f60718"))
            }
        }
    }

    @Test("an empty number is missingPhoneNumber (17041)")
    func emptyNumber() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            #expect(await verificationError(auth, "") == .missingPhoneNumber)
            #expect(AuthErrorCode.missingPhoneNumber.rawValue == 17041)
        }
    }

    @Test("swizzling off and no forwarding: the 1 s probe fails → notificationNotForwarded (17054), cached for the process, also in test mode")
    func notForwarded() async throws {
        let clock = ManualClock()
        try await withWorld { world, _ in
            var profile = AppProfile()
            profile.forwardsNotifications = false
            profile.appVerificationDisabledForTesting = true
            let (auth, _) = try await world.install(profile, clock: clock)
            let attempt = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in await verificationError(provider) }
            try await waitForSleepers(clock)
            clock.advance(by: .milliseconds(999))
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .milliseconds(1))
            #expect(await attempt.value == .notificationNotForwarded)
            // Cached: the second attempt fails at once, without waiting on the clock.
            #expect(await verificationError(auth) == .notificationNotForwarded)
            #expect(await world.toolkit!.messages.isEmpty)
        }
    }

    // AuthAPNSTokenManager.swift 51–76: the SDK asks for registration and waits 5 s.
    @Test("no APNs token within 5 s (the OS never answers the registration): the SDK falls back to reCAPTCHA, and the code is sent")
    func noAPNsToken() async throws {
        let clock = ManualClock()
        try await withWorld { world, _ in
            var profile = AppProfile()
            profile.apnsRegistration = .neverAnswers
            let (auth, _) = try await world.install(profile, clock: clock, setToken: false)
            let attempt = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in await verificationError(provider) }
            try await waitForSleepers(clock)
            clock.advance(by: .seconds(5))
            #expect(await attempt.value == nil)
            guard auth.lastAppVerification == .reCAPTCHA, let why = auth.lastFallbackReason else {
                Issue.record("no fallback: \(String(describing: auth.lastAppVerification))")
                return
            }
            #expect(why == .noAPNsToken, "\(why)")
            #expect(await world.toolkit!.messages.count == 1)
        }
    }

    // AuthAPNSTokenManager.swift 62–67: with no token, the SDK calls registerForRemoteNotifications itself.
    @Test("an app that never registers for remote notifications: the SDK registers it, the token reaches Auth, and the silent push signs in (AuthAPNSTokenManager.swift 62–67)")
    func sdkRegisters() async throws {
        try await withWorld { world, _ in
            let registrations = Mutex(0)
            let (auth, _) = try await world.install(AppProfile(), setToken: false, onRegistration: { outcome in
                if case .token = outcome { registrations.withLock { $0 += 1 } }
            })
            #expect(auth.apnsTokenType == nil)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(auth.lastAppVerification == .silentPush)
            #expect(registrations.withLock { $0 } == 1)
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
        }
    }

    // Auth.swift 52–57 and AuthAPNSTokenManager.swift 120: didFail ends the wait at once.
    @Test("registration fails (a build without the aps-environment entitlement): the failure ends the SDK's wait at once, no 5 s, and reCAPTCHA proves the app (Auth.swift 52–57)")
    func registrationFails() async throws {
        let clock = ManualClock()
        try await withWorld { world, _ in
            var profile = AppProfile()
            profile.apnsRegistration = .fails
            let (auth, _) = try await world.install(profile, clock: clock, setToken: false)
            // The clock never moves: only the failure can end the wait.
            let attempt = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in await verificationError(provider) }
            // (The limit bounds a wait for a clock that never moves: it only ends a test that failed.)
            let finished = await withLimit(.seconds(120)) { _ = await attempt.value } != nil
            #expect(finished, "verifyPhoneNumber waited for the clock")
            #expect(await attempt.value == nil)
            guard auth.lastAppVerification == .reCAPTCHA, let why = auth.lastFallbackReason else {
                Issue.record("no fallback: \(String(describing: auth.lastAppVerification))")
                return
            }
            guard case .apnsRegistrationFailed(let reason) = why else { Issue.record("\(why)"); return }
            #expect(reason.contains("aps-environment"), "\(why)")
        }
    }

    @Test("test mode: a test number signs in with its fixed code, no APNs, no SMS; a real number fails clearly")
    func testMode() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+1 650-555-3434": "654321"]
        try await withWorld(configuration: configuration) { world, _ in
            var profile = AppProfile()
            profile.appVerificationDisabledForTesting = true
            let (auth, _) = try await world.install(profile, setToken: false)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber("+16505553434", uiDelegate: nil)
            let result = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: "654321"))
            #expect(result.user.phoneNumber == "+16505553434")
            #expect(await world.toolkit!.messages.isEmpty)
            #expect(try fixtureLogCount(world) == 0)
            do throws(AuthError) {
                _ = try await AuthError.catching { try await provider.verifyPhoneNumber(phone, uiDelegate: nil) }
                Issue.record("a real number passed with app verification disabled")
            } catch {
                #expect(error.code == .missingAppCredential)
                #expect(error.message.contains("test phone numbers"))
            }
        }
    }

    @Test("wrong codes: invalidVerificationCode, then tooManyRequests; a right code after that is refused too")
    func wrongCodes() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: phone))
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<5 {
                await expectAuthError(.invalidVerificationCode) {
                    try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: wrong))
                }
            }
            await expectAuthError(.tooManyRequests) {
                try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
            }
            await expectAuthError(.missingVerificationCode) {
                try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: ""))
            }
            await expectAuthError(.invalidVerificationID) {
                try await auth.signIn(with: provider.credential(withVerificationID: "nope", verificationCode: code))
            }
        }
    }

    @Test("a code is single-use, and expires: sessionExpired (17051)")
    func expiryAndReuse() async throws {
        let backendClock = ManualWallClock()
        try await withWorld(backendClock: backendClock) { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
            await expectAuthError(.invalidVerificationID) {
                try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
            }
            let second = try await provider.verifyPhoneNumber("+16505550001", uiDelegate: nil)
            let secondCode = try #require(await world.lastCode(for: "+16505550001"))
            backendClock.advance(by: 301)
            await expectAuthError(.sessionExpired) {
                try await auth.signIn(with: provider.credential(withVerificationID: second, verificationCode: secondCode))
            }
        }
    }

    @Test("re-entrant verifyPhoneNumber: the same session and no second SMS while the code is valid")
    func reentrant() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let provider = PhoneAuthProvider.provider(auth: auth)
            let first = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let second = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(first == second)
            #expect(await world.toolkit!.messages.count == 1)
        }
    }

    @Test("an expired cached credential: INVALID_APP_CREDENTIAL, dropped, a fresh one by push, and the code is sent")
    func retryOnce() async throws {
        let backendClock = ManualWallClock()
        try await withWorld(backendClock: backendClock) { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let provider = PhoneAuthProvider.provider(auth: auth)
            _ = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let firstCredential = try #require(auth.cachedCredential)
            backendClock.advance(by: 3601)
            _ = try await provider.verifyPhoneNumber("+16505550002", uiDelegate: nil)
            #expect(auth.cachedCredential != firstCredential)
            #expect(try fixtureLogCount(world) == 2)
        }
    }

    // PhoneAuthProvider.swift 468–486: cleared and rerun once; the second refusal is
    // unexpectedResponse (FIRAuthInternalErrorDomain 4) over the INVALID_APP_CREDENTIAL error.
    @Test("a credential the backend refuses twice is internalError (17999) over FIRAuthInternalErrorDomain 4 over 17048 (PhoneAuthProvider.swift 468–486)")
    func retryFailsTwice() async throws {
        var configuration = BackendConfiguration()
        configuration.receiptLifetime = -1
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            do throws(AuthError) {
                _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil) }
                Issue.record("no error")
            } catch {
                #expect(error.code == .internalError)
                let inner = try #require((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)
                #expect(inner.domain == "FIRAuthInternalErrorDomain" && inner.code == 4)
                let refusal = try #require(inner.userInfo[NSUnderlyingErrorKey] as? NSError)
                #expect(refusal.domain == "FIRAuthErrorDomain" && refusal.code == 17048)
            }
            #expect(try fixtureLogCount(world) == 2)
        }
    }

    @Test("a bad number is invalidPhoneNumber with the server's detail")
    func badNumber() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            do throws(AuthError) {
                _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+1650", uiDelegate: nil) }
                Issue.record("no error")
            } catch {
                #expect(error.code == .invalidPhoneNumber)
                #expect(error.serverMessage == "INVALID_PHONE_NUMBER : TOO_SHORT")
            }
        }
    }

    @Test("the app is killed after the SMS: the verification ID kept in UserDefaults signs in after a restart")
    func restoreVerificationID() async throws {
        try await withWorld { world, folder in
            let defaults = folder.appendingPathComponent("UserDefaults.json")
            let before = UserDefaultsStore(file: defaults)
            let (auth, _) = try await world.install(AppProfile(), userDefaults: before)
            let id = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil)
            before.set(id, forKey: "authVerificationID")
            // A new process: new app host, new Auth, the same UserDefaults file.
            let after = UserDefaultsStore(file: defaults)
            let (restarted, _) = try await world.install(AppProfile(), userDefaults: after)
            let restored = try #require(after.string(forKey: "authVerificationID"))
            let code = try #require(await world.lastCode(for: phone))
            let provider = PhoneAuthProvider.provider(auth: restarted)
            let result = try await restarted.signIn(with: provider.credential(withVerificationID: restored, verificationCode: code))
            #expect(result.user.phoneNumber == phone)
        }
    }
}

@Suite("Auth's notification handling")
struct NotificationHandlingTests {
    func makeAuth(clock: any Clock<Duration> = ContinuousClock()) -> Auth {
        let options = FirebaseOptions(googleAppID: "1:1:ios:1", gcmSenderID: "1")
        options.apiKey = "k"
        let host = AppHost(AppHost.Configuration(bundleID: "com.a", urlSchemes: []), clock: clock)
        return Auth.auth(app: FirebaseApp(name: UUID().uuidString, options: options, host: host))
    }

    @Test("the payload may be a dictionary or a JSON string; only pending receipts are Auth's")
    func payloadForms() {
        let auth = makeAuth()
        auth.addPendingReceipt("R1")
        auth.addPendingReceipt("R2")
        #expect(!auth.canHandleNotification(["com.google.firebase.auth": ["receipt": "R9", "secret": "S"]]))
        #expect(auth.canHandleNotification(["com.google.firebase.auth": ["receipt": "R1", "secret": "S1"]]))
        #expect(auth.canHandleNotification(["com.google.firebase.auth": #"{"receipt":"R2","secret":"S2"}"#]))
        #expect(auth.cachedCredential == AppCredential(receipt: "R2", secret: "S2"))
        #expect(!auth.canHandleNotification(["com.google.firebase.auth": ["receipt": "R1", "secret": "S1"]]))
        #expect(!auth.canHandleNotification(["aps": ["content-available": 1]]))
        #expect(!auth.canHandleNotification(["com.google.firebase.auth": "not json"]))
        // A probe notification before any check is Auth's: the SDK notes that notifications are
        // forwarded (AuthNotificationManager.swift 174–188; audit 3, D1.3).
        #expect(auth.canHandleNotification(["com.google.firebase.auth": ["warning": AuthNotification.probeWarning]]))
    }

    @Test("at most 32 pending receipts, the oldest dropped; duplicates kept once")
    func pendingLimit() {
        let auth = makeAuth()
        for index in 0..<40 { auth.addPendingReceipt("R\(index)") }
        auth.addPendingReceipt("R39")
        #expect(auth.pendingReceipts.count == 32)
        #expect(auth.pendingReceipts.first == "R8")
        #expect(!auth.canHandleNotification(["com.google.firebase.auth": ["receipt": "R0", "secret": "S"]]))
    }

    @Test("a push that comes after suggestedTimeout is still accepted and cached")
    func latePush() async throws {
        let clock = ManualClock()
        let auth = makeAuth(clock: clock)
        auth.addPendingReceipt("LATE")
        let held = WeakAuth(auth: auth)
        let waiting = Task { await held.auth?.waitForCredential(receipt: "LATE", timeout: .seconds(5)) }
        try await waitForSleepers(clock)
        clock.advance(by: .seconds(5))
        #expect(await waiting.value == nil)
        #expect(auth.canHandleNotification(["com.google.firebase.auth": ["receipt": "LATE", "secret": "S"]]))
        #expect(auth.cachedCredential?.receipt == "LATE")
    }

    @Test("the SDK's error numbers")
    func errorNumbers() {
        #expect(AuthErrorCode.notificationNotForwarded.rawValue == 17054)
        #expect(AuthErrorCode.invalidAppCredential.rawValue == 17048)
        #expect(AuthErrorCode.webContextCancelled.rawValue == 17058)
        #expect(AuthErrorCode.missingOrInvalidNonce.rawValue == 17094)
        #expect(AuthErrorCode.internalError.rawValue == 17999)
        #expect(AuthError.fromServer("INVALID_PHONE_NUMBER : TOO_LONG")?.code == .invalidPhoneNumber)
        #expect(AuthError.fromServer("SOMETHING_NEW") == nil)
    }
}

@Suite("SMS region policy and quotas")
struct SMSPolicyTests {
    @Test("a region outside the allowlist, or on the denylist, is operationNotAllowed; test numbers are exempt")
    func regions() async throws {
        var configuration = BackendConfiguration()
        configuration.smsRegionPolicy = .allowlistOnly(["US", "FR"])
        configuration.testPhoneNumbers = ["+447700900123": "111111"]
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            #expect(await verificationError(auth, "+33612345678") == nil)
            #expect(await verificationError(auth, "+447700900000") == .operationNotAllowed)
            #expect(await verificationError(auth, "+447700900123") == nil)
        }
        configuration.smsRegionPolicy = .allowByDefault(disallowed: ["DE"])
        try await withWorld(configuration: configuration, name: "denylist") { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            #expect(await verificationError(auth, "+4915112345678") == .operationNotAllowed)
            #expect(await verificationError(auth, "+33612345678") == nil)
        }
        #expect(PhoneNumbers.region(of: "+16505551234") == "US")
        #expect(PhoneNumbers.region(of: "+972501234567") == "IL")
        #expect(PhoneNumbers.region(of: "+9991234567") == nil)
    }

    @Test("per-number and per-project daily SMS quotas: quotaExceeded (17052)")
    func quotas() async throws {
        var configuration = BackendConfiguration()
        configuration.smsPerNumberPerDay = 1
        configuration.smsPerProjectPerDay = 2
        configuration.codeLifetime = 0  // every request is a new session, so each one would text
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            #expect(await verificationError(auth, "+16505550101") == nil)
            #expect(await verificationError(auth, "+16505550101") == .quotaExceeded)
            #expect(await verificationError(auth, "+16505550102") == nil)
            #expect(await verificationError(auth, "+16505550103") == .quotaExceeded)
            #expect(await world.toolkit!.messages.count == 2)
        }
    }
}


@Suite("The reCAPTCHA fallback's own outcomes")
struct ReCAPTCHAFallbackTests {
    func profile() -> AppProfile {
        var profile = AppProfile()
        profile.isSimulator = true
        return profile
    }

    @Test("a simulator goes straight to reCAPTCHA: no verifyClient, no push; the code is sent and sign-in works")
    func simulator() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(profile())
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(try fixtureLogCount(world) == 0)
            guard auth.lastAppVerification == .reCAPTCHA, let why = auth.lastFallbackReason else {
                Issue.record("no fallback")
                return
            }
            #expect(why == .simulator, "\(why)")
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
        }
    }

    /// Audit 3, D1.4: PhoneAuthProvider.swift 492–498 goes to reCAPTCHA on a simulator only when
    /// `XCTestConfigurationFilePath` is not in the process's environment.
    @Test("a simulator running an XCTest suite takes the silent-push path, as the SDK does")
    func simulatorUnderXCTest() async throws {
        try await withWorld { world, _ in
            var underTest = profile()
            underTest.runsUnderXCTest = true
            // Its own code says sandbox (a simulator's .unknown token is taken as production,
            // APNs would refuse the push, and the wait would run on a clock nobody moves).
            underTest.declaredTokenType = .sandbox
            let (auth, _) = try await world.install(underTest)
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(auth.lastAppVerification == .silentPush && auth.lastFallbackReason == nil)
        }
    }

    @Test("the user closes the page: webContextCancelled (17058)")
    func userCancels() async throws {
        var configuration = BackendConfiguration()
        configuration.recaptchaOutcome = .userCancels
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await world.install(profile())
            #expect(await verificationError(auth) == .webContextCancelled)
            #expect(await world.toolkit!.messages.isEmpty)
        }
    }

    @Test("the app never passes the redirect URL to canHandle: the page never closes, and it ends as a cancellation")
    func urlNotForwarded() async throws {
        try await withWorld { world, _ in
            let options = FirebaseOptions(googleAppID: AppProfile().googleAppID, gcmSenderID: "123456789012")
            options.apiKey = world.apiKey
            options.bundleID = AppProfile().bundleID
            let host = AppHost(AppHost.Configuration(bundleID: options.bundleID, urlSchemes: [options.encodedAppIDScheme], isSimulator: true, forwardsURLs: false), transport: world.transport)
            let auth = world.auth(options: options, host: host)
            #expect(await verificationError(auth) == .webContextCancelled)
        }
    }

    @Test("the page reports an error: the SDK's code for it")
    func pageError() async throws {
        var configuration = BackendConfiguration()
        configuration.recaptchaOutcome = .firebaseError(code: "auth/internal-error", message: "the challenge broke")
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, _) = try await world.install(profile())
            #expect(await verificationError(auth) == .webInternalError)
        }
    }

    @Test("a redirect for another event, or after the presentation, is not Auth's")
    func staleRedirects() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(profile())
            let stale = URL(string: "app-1-123456789012-ios-a1b2c3d4e5f60718://firebaseauth/link?deep_link_id=https%3A%2F%2Fx.firebaseapp.com%2F__%2Fauth%2Fcallback%3FauthType%3DverifyApp%26recaptchaToken%3DT%26eventId%3DABCDEFGHIJ")!
            #expect(!auth.canHandle(stale))
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(!auth.canHandle(stale))
        }
    }

    @Test("verifyClient refuses the APNs token (an empty one: MISSING_IOS_APP_TOKEN): reCAPTCHA takes over and sign-in works")
    func verifyClientRefuses() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile(), setToken: false)
            auth.setAPNSToken(Data(), type: .sandbox)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            guard auth.lastAppVerification == .reCAPTCHA, let why = auth.lastFallbackReason else {
                Issue.record("no fallback: \(String(describing: auth.lastAppVerification))")
                return
            }
            #expect(why.code == .verifyClientRefused, "\(why)")
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
        }
    }

    @Test("a second presentation while one is active is webContextCancelled (17058), as in the SDK")
    func secondPresentation() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(profile())
            let presenting = Latch()
            let released = Latch()
            // The first page stays open (the user is on it) until the test lets it close.
            let holding = ClosurePresenter { _, _ in
                presenting.open()
                await released.wait()
            }
            let provider = PhoneAuthProvider.provider(auth: auth)
            let first = Task { () -> AuthErrorCode? in
                do throws(AuthError) { _ = try await AuthError.catching { try await provider.verifyPhoneNumber(phone, uiDelegate: holding) }; return nil } catch { return error.code }
            }
            await presenting.wait()
            await expectAuthError(.webContextCancelled) {
                _ = try await provider.verifyPhoneNumber("+16505550123", uiDelegate: nil)
            }
            released.open()
            #expect(await first.value == .webContextCancelled)
        }
    }
}
