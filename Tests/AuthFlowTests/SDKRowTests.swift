import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import HTTPTransport
import IdentityToolkitAPI
import Scenarios
import Testing
import TestSupport
import Utilities

/// The rows of `../shared/reference/sdk-12-gaps.md` not covered by a suite of their own, each
/// through the real backend, with the SDK file and line it reproduces. (Rows 5, 6, 11, 12 and the
/// error list have suites of their own: EmulatorHostTests, KeychainTests, VerificationErrorTests,
/// RequestHeaderTests, ServerErrorTableTests; 4 is `retryFailsTwice`; 14–20 are in GuideSnippetTests,
/// ReCAPTCHARedirectTests, AppleSignInTests and the multi-factor suites.)
@Suite("The SDK's verifyPhoneNumber, row by row (sdk-12-gaps.md)")
struct SDKRowTests {
    static let testNumber = "+16505554567"

    /// An app on its own transport recorder, in `world` (``recordingApp(_:profile:clock:urlSchemes:linksRecaptcha:)``).
    func app(_ world: PhoneAuthWorld, profile: AppProfile = AppProfile(), clock: (any Clock<Duration>)? = nil,
             urlSchemes: [String]? = nil, linksRecaptcha: Bool = false, recaptcha: RecaptchaEnterpriseSDK? = nil) async throws -> (Auth, RecordingTransport) {
        try await recordingApp(world, profile: profile, clock: clock, urlSchemes: urlSchemes, linksRecaptcha: linksRecaptcha, recaptcha: recaptcha)
    }

    /// The JSON body of the recorded requests to `endpoint` (``requestBodies(_:_:)``).
    func bodies(_ recording: RecordingTransport, _ endpoint: String) -> [[String: Any]] { requestBodies(recording, endpoint) }

    /// The API calls, by how their paths end.
    func calls(_ recording: RecordingTransport) -> [String] {
        recording.requests.withLock { $0 }.compactMap { request in
            request.url.path.contains("googleapis.com") ? request.url.lastPathComponent : nil
        }
    }

    // Rows 1 and 2: PhoneAuthProvider.swift 107–245 and AuthRecaptchaVerifier.swift 159.
    @Test("row 1–2: the order: scheme, empty number, probe, then test mode (no config) or the reCAPTCHA config first, a GET with the key, clientType and version (PhoneAuthProvider.swift 107–245, AuthRecaptchaVerifier.swift 159)")
    func order() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = [Self.testNumber: "123456"]
        try await withWorld(configuration: configuration) { world, _ in
            // An unregistered scheme stops before any request; so does an empty number.
            let (unregistered, silent) = try await app(world, urlSchemes: ["com.example.other"])
            await expectAuthError(.appConfigurationError) {
                _ = try await PhoneAuthProvider.provider(auth: unregistered).verifyPhoneNumber("+16505551234", uiDelegate: nil)
            }
            let (auth, recording) = try await app(world)
            await expectAuthError(.missingPhoneNumber) {
                _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("", uiDelegate: nil)
            }
            #expect(calls(silent).isEmpty && calls(recording).isEmpty)

            // Test mode: no reCAPTCHA config, no verifyClient; only the code request.
            auth.settings?.isAppVerificationDisabledForTesting = true
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(Self.testNumber, uiDelegate: nil)
            #expect(calls(recording) == ["sendVerificationCode"])

            // Outside test mode the config comes first, every time (forceRefresh).
            auth.settings?.isAppVerificationDisabledForTesting = false
            for number in ["+16505551234", "+16505551235"] {
                _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(number, uiDelegate: nil)
            }
            #expect(calls(recording) == ["sendVerificationCode", "recaptchaConfig", "verifyClient", "sendVerificationCode",
                                         "recaptchaConfig", "sendVerificationCode"])
            let config = try #require(recording.requests.withLock { $0 }.first { $0.url.path.hasSuffix("/v2/recaptchaConfig") })
            #expect(config.method == "GET")
            #expect(config.url.query == "key=\(world.apiKey)&clientType=CLIENT_TYPE_IOS&version=RECAPTCHA_ENTERPRISE")
        }
    }

    // Row 3: PhoneAuthProvider.swift 247–272 and 367–413.
    @Test("row 3: ENFORCE sends a reCAPTCHA Enterprise token and never APNs; without the SDK linked 17208 before any code request; AUDIT whose token is refused reruns through verifyClient with NO_RECAPTCHA (PhoneAuthProvider.swift 247–272, 367–413)")
    func smsDefense() async throws {
        var enforce = BackendConfiguration()
        enforce.phoneRecaptchaEnforcement = .enforce
        try await withWorld(configuration: enforce) { world, _ in
            let (auth, recording) = try await app(world, linksRecaptcha: true)
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505551234", uiDelegate: nil)
            #expect(auth.lastAppVerification == .recaptchaEnterprise)
            // The app's RecaptchaEnterprise SDK asks Google's service (ios:execute) for the token.
            #expect(calls(recording) == ["recaptchaConfig", "ios:fetchClient", "ios:execute", "sendVerificationCode"])
            let body = try #require(bodies(recording, "sendVerificationCode").first)
            #expect((body["captchaResponse"] as? String)?.isEmpty == false)
            #expect(body["recaptchaVersion"] as? String == "RECAPTCHA_ENTERPRISE")
            #expect(body["clientType"] as? String == "CLIENT_TYPE_IOS")
            #expect(body["iosReceipt"] == nil && body["recaptchaToken"] == nil)

            let (unlinked, bare) = try await app(world, linksRecaptcha: false)
            await expectAuthError(.recaptchaSDKNotLinked) {
                _ = try await PhoneAuthProvider.provider(auth: unlinked).verifyPhoneNumber("+16505551236", uiDelegate: nil)
            }
            #expect(calls(bare) == ["recaptchaConfig"])
        }
        var audit = BackendConfiguration()
        audit.phoneRecaptchaEnforcement = .audit
        audit.tollFraudRiskScore = 0.9
        try await withWorld(configuration: audit) { world, _ in
            let (auth, recording) = try await app(world, linksRecaptcha: true)
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505551234", uiDelegate: nil)
            #expect(calls(recording) == ["recaptchaConfig", "ios:fetchClient", "ios:execute", "sendVerificationCode", "verifyClient",
                                         "sendVerificationCode"])
            let rerun = try #require(bodies(recording, "sendVerificationCode").last)
            #expect(rerun["captchaResponse"] as? String == "NO_RECAPTCHA")
            #expect((rerun["iosReceipt"] as? String)?.isEmpty == false)
            #expect(auth.lastAppVerification == .silentPush)
        }
    }

    /// The RecaptchaEnterprise SDK's client, as FirebaseAuth 12.19 gets it (AuthRecaptchaVerifier.swift
    /// 105–147, 188–234): `fetchClient(withSiteKey:)` once, its failure thrown as that SDK's own
    /// error (audit 3, D1.1 and D1.13); `initializeRecaptchaConfig()` (Auth.swift 1307–1331) makes
    /// the client before the first code request.
    @Test("fetchClient once per app; its failure (no network, an empty or foreign key) is the RecaptchaEnterprise SDK's error, thrown as it is, with no fallback even in AUDIT; initializeRecaptchaConfig fetches the client first")
    func recaptchaClient() async throws {
        func failure(_ auth: Auth, _ number: String? = nil) async -> NSError? {
            do {
                if let number { _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(number, uiDelegate: nil) } else {
                    try await auth.initializeRecaptchaConfig()
                }
                return nil
            } catch { return error as NSError }
        }
        var audit = BackendConfiguration()
        audit.phoneRecaptchaEnforcement = .audit
        try await withWorld(configuration: audit) { world, _ in
            // Google's service out of reach: RecaptchaErrorCode 1, and the code request is never made.
            let (offline, offlineCalls) = try await app(world, recaptcha: RecaptchaEnterpriseSDK(service: "http://127.0.0.1:9"))
            let unreachable = await failure(offline, "+16505551234")
            #expect(unreachable?.domain == RecaptchaEnterpriseErrors.domain && unreachable?.code == 1, "\(String(describing: unreachable))")
            #expect(calls(offlineCalls) == ["recaptchaConfig", "ios:fetchClient"])

            // initializeRecaptchaConfig: the config again, the client, a token dropped; the next
            // verifyPhoneNumber fetches no client.
            let (auth, recording) = try await app(world, linksRecaptcha: true)
            try await auth.initializeRecaptchaConfig()
            #expect(calls(recording) == ["recaptchaConfig", "ios:fetchClient", "ios:execute"])
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505551235", uiDelegate: nil)
            #expect(calls(recording).dropFirst(3) == ["recaptchaConfig", "ios:execute", "sendVerificationCode"])
            #expect(auth.lastAppVerification == .recaptchaEnterprise)
            // The completion form, on the main queue.
            let done: Bool = await withCheckedContinuation { finished in
                auth.initializeRecaptchaConfig { error in
                    dispatchPrecondition(condition: .onQueue(.main))
                    finished.resume(returning: error == nil)
                }
            }
            #expect(done)
        }
        // SMS defense off: the config names no key, and 12.19 still asks for a client with "":
        // invalid site key (2). Without the SDK linked: 17208 whatever the project's state.
        try await withWorld { world, _ in
            let (linked, _) = try await app(world, linksRecaptcha: true)
            let emptyKey = await failure(linked)
            #expect(emptyKey?.domain == RecaptchaEnterpriseErrors.domain && emptyKey?.code == 2, "\(String(describing: emptyKey))")
            let (bare, _) = try await app(world)
            let unlinked = await failure(bare)
            #expect(unlinked?.domain == AuthErrors.domain && unlinked?.code == AuthErrorCode.recaptchaSDKNotLinked.rawValue)
            // With SMS defense off verifyPhoneNumber asks for no client: the silent push signs in.
            _ = try await PhoneAuthProvider.provider(auth: linked).verifyPhoneNumber("+16505551236", uiDelegate: nil)
            #expect(linked.lastAppVerification == .silentPush)
        }
    }

    // Row 7: AuthAppCredentialManager.swift 105–110 (`callbackWithReceipt`).
    @Test("row 7: when the wait for receipt B ends, the SDK takes the credential a late push for the older receipt A brought, and the code goes out with it (AuthAppCredentialManager.swift 105–110)")
    func lateOlderReceipt() async throws {
        try await withWorld { world, _ in
            let clock = ManualClock()
            let (auth, recording) = try await app(world, clock: clock)
            let channel = try #require(world.channel)
            await channel.hub.setLosesPushes(true)
            // A: its push is lost on the way; the SDK gives up on the app's clock and uses reCAPTCHA.
            let first = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in await verificationError(provider, "+16505551234") }
            try await waitForSleepers(clock)
            clock.advance(by: .seconds(5))
            #expect(await first.value == nil)
            guard auth.lastAppVerification == .reCAPTCHA, auth.lastFallbackReason != nil else { Issue.record("\(String(describing: auth.lastAppVerification))"); return }
            // B: a second number; its push is lost too, and the flow waits.
            let second = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in await verificationError(provider, "+16505551235") }
            try await waitForSleepers(clock)
            #expect(auth.pendingReceipts.count == 2)
            // Now A's push arrives, late: the OS hands it to the app.
            let firstPush = try #require(try loggedPushes(in: channel.deliveryLogFile).first)
            let payload = try #require(firstPush["payload"] as? [String: Any])
            let receiptA = try #require((payload["com.google.firebase.auth"] as? [String: Any])?["receipt"] as? String)
            #expect(auth.host.didReceiveRemoteNotification(payload))
            #expect(auth.cachedCredential?.receipt == receiptA)
            clock.advance(by: .seconds(5))
            #expect(await second.value == nil)
            #expect(auth.lastAppVerification == .silentPush)
            #expect(bodies(recording, "sendVerificationCode").last?["iosReceipt"] as? String == receiptA)
        }
    }

    // Row 8: SendVerificationTokenRequest.swift 64–85.
    @Test("row 8: clientType CLIENT_TYPE_IOS on every sendVerificationCode, with SMS defense OFF too (SendVerificationTokenRequest.swift 64–85)")
    func clientType() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await app(world)
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505551234", uiDelegate: nil)
            let body = try #require(bodies(recording, "sendVerificationCode").first)
            #expect(body["clientType"] as? String == "CLIENT_TYPE_IOS")
            #expect(body["captchaResponse"] == nil && body["recaptchaVersion"] == nil)
        }
    }

    // Row 9: PhoneAuthProvider.swift 114–120.
    @Test("row 9: an answer without sessionInfo is invalidVerificationID (17046), \"Invalid verification ID\" (PhoneAuthProvider.swift 114–120)")
    func noSessionInfo() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await app(world)
            world.toolkit?.faults.add(.raw(status: 200, body: "{}", on: "sendVerificationCode"))
            #expect(await verificationError(auth) == .invalidVerificationID)
        }
    }

    // Row 10: VerifyClientResponse (suggestedTimeout read with Double(_:)).
    @Test("row 10: suggestedTimeout \"0.25\" is a quarter second, as Double(_:) reads it (VerifyClientResponse.swift)")
    func fractionalTimeout() async throws {
        try await withWorld { world, _ in
            let clock = ManualClock()
            let (auth, _) = try await app(world, clock: clock)
            // A receipt no push will ever carry, and a fractional wait, on the app's clock.
            world.toolkit?.faults.add(.raw(status: 200, body: #"{"receipt":"R-no-push","suggestedTimeout":"0.25"}"#, on: "verifyClient"))
            let attempt = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in await verificationError(provider) }
            try await waitForSleepers(clock)
            clock.advance(by: .milliseconds(200))
            // advance(by:) wakes, then and there, every sleeper whose deadline has come: one still
            // sleeping has not given up (this slept 50 ms of wall time and looked until issue 26).
            #expect(clock.sleeperCount == 1, "gave up before 0.25 s")
            #expect(auth.lastAppVerification == nil, "gave up before 0.25 s")
            clock.advance(by: .milliseconds(50))
            #expect(await attempt.value == nil)
            guard auth.lastAppVerification == .reCAPTCHA, let why = auth.lastFallbackReason else { Issue.record("no fallback"); return }
            guard case .noSilentPush(_, let timeout) = why else { Issue.record("\(why)"); return }
            #expect(timeout == "0.25", "\(why)")
            #expect("\(why)".contains("suggestedTimeout 0.25 s"), "\(why)")
        }
    }

    // Row 13: VerifyPhoneNumberRequest (operation), Auth.swift completeSignIn → getAccountInfo.
    @Test("row 13: the sign-in sends operation SIGN_UP_OR_IN and then getAccountInfo loads the user (VerifyPhoneNumberRequest.swift, Auth.swift completeSignIn)")
    func signInThenAccountInfo() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = [Self.testNumber: "123456"]
        try await withWorld(configuration: configuration) { world, _ in
            let (auth, recording) = try await app(world)
            auth.settings?.isAppVerificationDisabledForTesting = true
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(Self.testNumber, uiDelegate: nil)
            let user = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: "123456")).user
            #expect(calls(recording) == ["sendVerificationCode", "verifyPhoneNumber", "getAccountInfo"])
            #expect(bodies(recording, "verifyPhoneNumber").first?["operation"] as? String == "SIGN_UP_OR_IN")
            #expect(user.providerData.map(\.providerID) == ["phone"])
        }
    }

    // Row 17: VerifyAssertionRequest.swift (postBody with user, autoCreate), Auth.swift reauthenticate.
    // Row 19: RevokeTokenRequest.swift (tokenType = AuthTokenType.authorizationCode's raw value, 3).
    @Test("rows 17 and 19: Apple's postBody carries the name as user JSON, with requestUri, returnSecureToken, returnIdpCredential; reauthentication sends autoCreate false; revokeToken sends tokenType 3 (VerifyAssertionRequest.swift, RevokeTokenRequest.swift)")
    func appleRequests() async throws {
        try await withWorld { world, _ in
            let options = world.options(for: AppProfile())
            let recording = RecordingTransport(world.transport)
            let auth = world.auth(options: options, host: AppHost(AppHost.Configuration(bundleID: options.bundleID, urlSchemes: [options.encodedAppIDScheme]), transport: recording))
            let raw = AppleNonce.random()
            let sheet = try await world.appleSheet.authorize(clientID: options.bundleID, appleUser: "grace", nonce: AppleNonce.sha256(raw))
            let user = try await auth.signIn(with: OAuthProvider.appleCredential(withIDToken: sheet.identityToken, rawNonce: raw,
                                                                                fullName: sheet.fullName)).user
            let signIn = try #require(bodies(recording, "verifyAssertion").first)
            let postBody = try #require(signIn["postBody"] as? String)
            let fields = URLComponents(string: "http://x/?" + postBody)?.queryItems ?? []
            #expect(fields.first { $0.name == "providerId" }?.value == "apple.com")
            #expect(fields.first { $0.name == "nonce" }?.value == raw)
            let name = try #require(fields.first { $0.name == "user" }?.value)
            let given = try #require(sheet.fullName?.givenName)
            #expect(name.contains("\"firstName\":\"\(given)\""), "\(name)")
            #expect(signIn["returnSecureToken"] as? Bool == true && signIn["returnIdpCredential"] as? Bool == true)
            #expect(signIn["requestUri"] as? String != nil)
            #expect(signIn["autoCreate"] as? Bool != false)

            let raw2 = AppleNonce.random()
            let again = try await world.appleSheet.authorize(clientID: options.bundleID, appleUser: "grace", nonce: AppleNonce.sha256(raw2))
            try await user.reauthenticate(with: OAuthProvider.credential(providerID: .apple, idToken: again.identityToken, rawNonce: raw2))
            #expect(bodies(recording, "verifyAssertion").last?["autoCreate"] as? Bool == false)

            try await auth.revokeToken(withAuthorizationCode: sheet.authorizationCode)
            let revoke = try #require(bodies(recording, "accounts:revokeToken").first)
            #expect(revoke["tokenType"] as? String == "3")
            #expect(revoke["providerId"] as? String == "apple.com")
            #expect(revoke["token"] as? String == sheet.authorizationCode)
        }
    }

    @Test("row 3, the project's side: PATCH /emulator/v1/projects/{p}/config with the Admin API's recaptchaConfig turns SMS defense to ENFORCE at run time (curl); the next verifyPhoneNumber sees it; bad fields are refused by name")
    func projectConfig() async throws {
        guard await toolAvailable(["curl", "--version"]) else { return }
        try await withWorld { world, _ in
            let url = "\(world.backendURL)/emulator/v1/projects/\(world.projectID)/config"
            func curl(_ arguments: [String]) async throws -> (status: String, body: [String: Any]) {
                let run = try await runProgram(["curl", "-s", "-w", "\n%{http_code}"] + arguments)
                let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false)
                let body = (try? JSONSerialization.jsonObject(with: Data(lines.dropLast().joined(separator: "\n").utf8))) as? [String: Any] ?? [:]
                return (String(lines.last ?? ""), body)
            }
            let before = try await curl([url])
            #expect(before.status == "200")
            #expect((before.body["recaptchaConfig"] as? [String: Any])?["phoneEnforcementState"] as? String == "OFF")

            let patch = #"{"recaptchaConfig":{"phoneEnforcementState":"ENFORCE","tollFraudManagedRules":[{"startScore":0.7,"action":"BLOCK"}]}}"#
            let after = try await curl(["-X", "PATCH", "-H", "Content-Type: application/json", "-d", patch, url])
            #expect(after.status == "200")
            let config = try #require(after.body["recaptchaConfig"] as? [String: Any])
            #expect(config["phoneEnforcementState"] as? String == "ENFORCE")
            #expect(((config["tollFraudManagedRules"] as? [[String: Any]])?.first?["startScore"] as? Double) == 0.7)

            // The app sees ENFORCE in its next config fetch: without the RecaptchaEnterprise SDK, 17208.
            let (auth, _) = try await app(world)
            #expect(await verificationError(auth) == .recaptchaSDKNotLinked)

            let bad = try await curl(["-X", "PATCH", "-H", "Content-Type: application/json", "-d", #"{"recaptchaConfig":{"phoneEnforcementState":"ON"}}"#, url])
            #expect(bad.status == "400")
            #expect(((bad.body["error"] as? [String: Any])?["message"] as? String)?.contains("phoneEnforcementState") == true)
            let otherProject = try await curl([url.replacingOccurrences(of: "/\(world.projectID)/", with: "/someone-else/")])
            #expect(otherProject.status == "404")
        }
    }
}
