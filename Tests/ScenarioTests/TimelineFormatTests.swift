import APNsWire
import AuthBackend
import IdentityToolkitAPI
import Foundation
import Scenarios
import Testing

/// The `--json` line format of typed timeline facts: every fact written and read back the same,
/// lines from before kinds were typed still read, and bad lines refused with the line and fact.
@Suite("Timeline facts on --json lines")
struct TimelineFormatTests {
    /// One of every kind of fact (the test below checks none is missing).
    static let samples: [RunFact] = [
        .deviceToken(token: "ab12", environment: .sandbox, bundleID: "com.a", simulator: false),
        .testMode,
        .setAPNSToken(declaredType: "unknown", resolvedType: "sandbox", apsEnvironment: "development"),
        .verifyPhoneNumber(number: "+16505551234", purpose: .firstFactor),
        .verifyPhoneNumber(number: "+16505551234", purpose: .mfaSignIn),
        .pushAccepted(token: "ab12", environment: .sandbox),
        .pushRejected(token: "ab12", environment: .production, reason: .badDeviceToken, status: 400, detail: "issued in sandbox"),
        .receiverFault(fault: .delay(milliseconds: 2000)),
        .receiverFault(fault: .reject(.badDeviceToken)),
        .pushLost(token: "ab12", environment: .sandbox),
        .pushDelivered(token: "ab12", handled: true),
        .fallback(reason: "no APNs token within 5 s", code: .noAPNsToken, url: "http://127.0.0.1:9099/__/auth/handler?apiKey=K"),
        .fallback(reason: "written before the code was kept", code: nil, url: "http://127.0.0.1:9099/__/auth/handler?apiKey=K"),
        .presenter(kind: "challenge"),
        .redirect(handling: .refused, refusal: .notForwarded),
        .redirect(handling: .pending, refusal: nil),
        .verificationID,
        .signedIn(uid: "u1", path: .reCAPTCHA),
        .authError(code: 17054, name: "notificationNotForwarded", message: "no probe", updatedCredential: nil),
        .authError(code: 17025, name: "credentialAlreadyInUse", message: "taken", updatedCredential: true),
        .appleAuthorized(sub: "001.abc", nonce: "9f", aud: "com.a", firstAuthorization: true, ageSeconds: 660),
        .appleCredential(rawNonce: "", rawNonceHash: "", tokenNonce: "9f"),
        .appleCredentialReplayed,
        .providerSetup(keyID: "KEY", teamID: "TEAM", trustedKeyID: "KEY", trustedTeamID: "TEAM", providerClockOffset: -3700),
        .secondFactorRequired(hints: 2),
        .apnsRegistrationFailed(reason: "no valid \u{201C}aps-environment\u{201D} entitlement string found for application"),
        .signedIn(uid: "u2", path: .recaptchaEnterprise),
        .outcome(scenario: "s", expected: "signed in", actual: "signed in", passed: true),
    ] + backendSamples.map(RunFact.backend)

    /// One of every backend event, with values of every shape (a push answer's, an error's, a date).
    static let backendSamples: [BackendEvent] = [
        .pushing(appToken: "AB12", environment: .production, receipt: "R"),
        .verifyClient(appToken: "AB12", environment: .production, receipt: "R", push: PushResult(status: 400, reason: .badDeviceToken)),
        .verifyClient(appToken: "AB12", environment: .sandbox, receipt: "R", push: PushResult(error: "connection refused")),
        .smsSent(SMSMessage(phoneNumber: "+16505551234", code: "123456", sessionInfo: "S", languageCode: "fr", text: "123456 est votre code",
                            sentAt: Date(timeIntervalSinceReferenceDate: 786_000_000.125))),
        .codeReused(phoneNumber: "+16505551234"),
        .signedIn(uid: "u1", phoneNumber: "+16505551234", isNewUser: true),
        .appleSignIn(uid: "u1", sub: "001.abc", isNewUser: false, linked: true),
        .appleRevoked(uid: nil, sub: "001.abc"),
        .accountDeleted(uid: "u1"),
        .secondFactorRequired(uid: "u1", provider: .apple),
        .secondFactorEnrolled(uid: "u1", enrollmentID: "e1", phoneNumber: "+16505551234"),
        .secondFactorSignedIn(uid: "u1", enrollmentID: "e1"),
        .recaptchaConfig(phone: .audit),
        .recaptchaAssessment(endpoint: .sendVerificationCode, enforcement: .enforce,
                             RecaptchaAssessment(verdict: .tollFraud, action: "phoneAuth", riskScore: 0.92, detail: "over")),
        .recaptchaAssessment(endpoint: .mfaSignInStart, enforcement: .audit, RecaptchaAssessment(verdict: .missing, action: nil, riskScore: nil, detail: "NO_RECAPTCHA")),
        .rejected(endpoint: .sendVerificationCode, IdentityToolkitError(.quotaExceeded, "the project's 10 SMS for today are used"), cause: nil),
        .rejected(endpoint: .mfaSignInFinalize, IdentityToolkitError(.invalidMFAPendingCredential, "expired"), cause: .pendingCredentialExpired),
        .frontendRefused(path: "/v1/accounts:sendVerificationCode", .apiKeyInvalid()),
        .faultAnswered(path: "/v1/accounts:signInWithPhoneNumber", .error("USER_DISABLED", on: "signInWithPhoneNumber")),
        .accountSignIn(uid: "u1", provider: .password, email: "a@example.com", isNewUser: false),
        .emailSent(OobEmail(email: "a@example.com", code: "C", requestType: .passwordReset, newEmail: nil, link: "https://x/__/auth/action?oobCode=C",
                            sentAt: Date(timeIntervalSinceReferenceDate: 1))),
        .codeRequested(phoneNumber: "+16505551234", proof: .silentPush, receipt: "R", endpoint: .sendVerificationCode),
        .secondFactorWithdrawn(uid: "u1", enrollmentID: "e1"),
        .signInMethodsAsked(email: "a@example.com", methods: [.password, SignInMethod(.apple), .emailLink], hidden: true),
        .signInMethodsAsked(email: "b@example.com", methods: [], hidden: false),
    ]

    @Test("every fact is written as a kind and string facts and read back the same; every kind is covered")
    func roundTrip() throws {
        #expect(Set(Self.samples.map(\.kind)).isSuperset(of: EventKind.written))
        let text = Self.samples.enumerated().map { index, fact in
            TimelineRendering.json(TimelineEvent(milliseconds: index, part: .app, message: "step \(index)", fact: fact), scenario: "s")
        }.joined(separator: "\n")
        let read = try TimelineRendering.events(fromJSONLines: "some other output\n" + text)
        #expect(read.map(\.event.fact) == Self.samples)
        #expect(read.map(\.event.milliseconds) == Array(Self.samples.indices))
    }

    /// A kind added to RunFact since the kinds with names of their own: nothing but the case and
    /// the code that raises it, and it is written under the case's name and read back.
    @Test("a kind added since is written as its case's name, its facts as strings, and read back")
    func newerKind() throws {
        let fact = RunFact.callbackScheme(scheme: "app-1-123", registered: false)
        let line = TimelineRendering.json(TimelineEvent(milliseconds: 5, part: .app, message: "m", fact: fact), scenario: "s")
        #expect(line.contains(#""kind":"callbackScheme""#) && line.contains(#""facts":{"registered":"false","scheme":"app-1-123"}"#), "\(line)")
        #expect(try TimelineRendering.events(fromJSONLines: line).map(\.event.fact) == [fact])
        let bad = #expect(throws: TimelineFormatError.self) {
            try TimelineRendering.events(fromJSONLines: #"{"kind":"callbackScheme","facts":{"scheme":"s","registered":"perhaps"},"message":"m","part":"app"}"#)
        }
        #expect(bad?.message.contains("fact registered is \"perhaps\", expected true or false") == true, "\(bad?.message ?? "")")
    }

    /// A backend event is kept as the backend made it: kind `backend`, the case as `event`, its
    /// values beside it, a value's own values under its path.
    @Test("a backend event is written as kind backend with its case and values, and read back the same")
    func backendEvent() throws {
        let event = BackendEvent.verifyClient(appToken: "AB12", environment: .production, receipt: "R", push: PushResult(status: 400, reason: .badDeviceToken))
        let line = TimelineRendering.json(TimelineEvent(milliseconds: 5, part: .sender, to: .backend, message: "m", fact: .backend(event)), scenario: "s")
        #expect(line.contains(#""kind":"backend""#), "\(line)")
        #expect(line.contains(#""facts":{"appToken":"AB12","environment":"production","event":"verifyClient","push.reason":"BadDeviceToken","push.status":"400","receipt":"R"}"#),
                "\(line)")
        #expect(try TimelineRendering.events(fromJSONLines: line).map(\.event.fact) == [.backend(event)])
        // An unlabelled value's own values stand beside the labelled ones.
        let refusal = RunFact.backend(.rejected(endpoint: .sendVerificationCode, IdentityToolkitError(.quotaExceeded, "used"), cause: nil))
        #expect(refusal.facts == ["event": "rejected", "endpoint": "sendVerificationCode", "code": "QUOTA_EXCEEDED", "detail": "used", "httpStatus": "400"])
    }

    @Test("a backend line without its event, with an event this authsim lacks, or with a bad value is an error naming it", arguments: [
        (#"{"kind":"backend","facts":{"uid":"u"},"message":"m","part":"backend"}"#, "line 2: backend: fact event is missing"),
        (#"{"kind":"backend","facts":{"event":"teleported"},"message":"m","part":"backend"}"#,
         "line 2: backend: fact event is \"teleported\", expected the name of a backend event"),
        (#"{"kind":"backend","facts":{"event":"verifyClient","appToken":"A","environment":"sandbox","receipt":"R","push.status":"soon"},"message":"m","part":"backend"}"#,
         "line 2: backend: fact push.status is \"soon\", expected an integer"),
        (#"{"kind":"backend","facts":{"event":"smsSent","phoneNumber":"+1"},"message":"m","part":"backend"}"#,
         "line 2: backend: fact code is missing, expected a string"),
        (#"{"kind":"backend","facts":{"event":"emailSent","email":"a@x","code":"C","requestType":"PASSWORD_RESET","link":"l","sentAt":"yesterday"},"message":"m","part":"backend"}"#,
         "line 2: backend: fact sentAt is \"yesterday\", expected a time such as 2026-11-29T10:15:30.125Z"),
    ])
    func backendRefusals(line: String, message: String) {
        let error = #expect(throws: TimelineFormatError.self) {
            try TimelineRendering.events(fromJSONLines: "preamble\n" + line)
        }
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
    }

    /// Timelines written before the backend's events were kept as they are: each of its kinds then
    /// is read as the event it came from (explain reads them as it reads new ones).
    @Test("the backend's older kinds are read as the events they stood for")
    func olderBackendLines() throws {
        func line(_ kind: String, _ facts: String) -> String { #"{"kind":"\#(kind)","facts":{\#(facts)},"message":"m","ms":1,"part":"backend","scenario":"s"}"# }
        let lines = [
            line("backend.verifyClient", #""token":"ab12","environment":"production","receipt":"R""#),
            line("sender.answer", #""token":"ab12","environment":"production","status":"400","reason":"BadDeviceToken""#),
            line("codeRequested", #""endpoint":"sendVerificationCode","proof":"silentPush""#),
            line("backend.sms", #""number":"+16505551234""#),
            line("backend.rejected", #""endpoint":"mfaSignInFinalize","error":"INVALID_MFA_PENDING_CREDENTIAL","detail":"expired","cause":"pendingCredentialExpired""#),
            line("backend.rejected", #""endpoint":"accounts:sendVerificationCode","error":"API_KEY_INVALID","detail":"API key not valid.""#),
            line("backend.appleSignIn", #""uid":"u1","sub":"001.abc","linked":"true""#),
            line("backend.mfaPending", #""uid":"u1","provider":"apple.com""#),
            line("backend.mfaEnrolled", #""uid":"u1","enrollmentID":"e1","number":"+16505551234""#),
            line("backend.mfaSignedIn", #""uid":"u1","enrollmentID":"e1""#),
            line("app.recaptchaConfig", #""state":"ENFORCE""#),
            line("backend.recaptchaAssessment", #""endpoint":"sendVerificationCode","enforcement":"ENFORCE","verdict":"tollFraud","riskScore":"0.9""#),
        ].joined(separator: "\n")
        let read = try TimelineRendering.events(fromJSONLines: lines).map { $0.event.backend }
        #expect(read.count == 12 && !read.contains(nil))
        #expect(read[0] == .pushing(appToken: "ab12", environment: .production, receipt: "R"))
        #expect(read[1] == .verifyClient(appToken: "ab12", environment: .production, receipt: "", push: PushResult(status: 400, reason: .badDeviceToken)))
        #expect(read[2]?.kind == "codeRequested" && read[3]?.kind == "smsSent")
        #expect(read[4]?.refusal?.cause == .pendingCredentialExpired && read[4]?.refusal?.endpoint == "mfaSignInFinalize")
        #expect(read[5]?.refusal?.code == .apiKeyInvalid && read[5]?.refusal?.detail == "API key not valid." && read[5]?.refusal?.endpoint == "accounts:sendVerificationCode")
        #expect(read[6] == .appleSignIn(uid: "u1", sub: "001.abc", isNewUser: false, linked: true))
        #expect(read[7] == .secondFactorRequired(uid: "u1", provider: .apple))
        #expect(read[8] == .secondFactorEnrolled(uid: "u1", enrollmentID: "e1", phoneNumber: "+16505551234"))
        #expect(read[9] == .secondFactorSignedIn(uid: "u1", enrollmentID: "e1"))
        #expect(read[10] == .recaptchaConfig(phone: .enforce))
        #expect(read[11] == .recaptchaAssessment(endpoint: .sendVerificationCode, enforcement: .enforce,
                                                 RecaptchaAssessment(verdict: .tollFraud, action: nil, riskScore: 0.9, detail: "")))
    }

    /// A list of sign-in methods is one fact, its items joined by commas; lines written when the
    /// event kept the list as one text (`password, apple.com`) read as the same list.
    @Test("a list fact is written joined by commas and read back; the older spaced text reads as the same list")
    func listFact() throws {
        let event = BackendEvent.signInMethodsAsked(email: "a@example.com", methods: [.password, SignInMethod(.apple)], hidden: false)
        let line = TimelineRendering.json(TimelineEvent(milliseconds: 1, part: .backend, message: "m", fact: .backend(event)), scenario: "s")
        #expect(line.contains(#""methods":"password,apple.com""#), "\(line)")
        let older = #"{"kind":"backend","facts":{"event":"signInMethodsAsked","email":"a@example.com","methods":"password, apple.com","hidden":"false"},"message":"m","part":"backend"}"#
        #expect(try TimelineRendering.events(fromJSONLines: older).map(\.event.fact) == [.backend(event)])
        let none = #"{"kind":"backend","facts":{"event":"signInMethodsAsked","email":"a@example.com","methods":"","hidden":"false"},"message":"m","part":"backend"}"#
        #expect(try TimelineRendering.events(fromJSONLines: none).map(\.event.fact)
                == [.backend(.signInMethodsAsked(email: "a@example.com", methods: [], hidden: false))])
    }

    @Test("lines from before kinds were typed (facts without a kind) are read as the facts they are")
    func legacyLines() throws {
        let lines = [
            #"{"facts":{"testMode":"true"},"message":"auth.settings?.isAppVerificationDisabledForTesting = true","ms":3,"part":"app","scenario":"s"}"#,
            #"{"facts":{"keyID":"TEAM","providerClockOffset":"0","teamID":"KEY","trustedKeyID":"KEY","trustedTeamID":"TEAM"},"message":"m","ms":0,"part":"authsim","scenario":"s"}"#,
            #"{"facts":{"replay":"true"},"kind":"app.appleCredential","message":"again","ms":9,"part":"app","scenario":"s"}"#,
            #"{"message":"narration","ms":1,"part":"backend","scenario":"s"}"#,
        ].joined(separator: "\n")
        let read = try TimelineRendering.events(fromJSONLines: lines).map(\.event.fact)
        #expect(read == [.testMode, .providerSetup(keyID: "TEAM", teamID: "KEY", trustedKeyID: "KEY", trustedTeamID: "TEAM", providerClockOffset: 0),
                         .appleCredentialReplayed, nil])
    }

    @Test("an unknown kind, a missing fact or a malformed one is an error naming the line and the fact", arguments: [
        (#"{"kind":"app.teleported","message":"m","part":"app"}"#, "line 2: unknown event kind app.teleported"),
        (#"{"kind":"device.delivered","facts":{"token":"ab"},"message":"m","part":"device"}"#,
         "line 2: device.delivered: fact handled is missing, expected true or false"),
        (#"{"kind":"receiver.rejected","facts":{"token":"ab","environment":"staging","reason":"X"},"message":"m","part":"receiver"}"#,
         "line 2: receiver.rejected: fact environment is \"staging\", expected sandbox or production"),
        (#"{"kind":"app.error","facts":{"code":"seventeen"},"message":"m","part":"app"}"#,
         "line 2: app.error: fact code is \"seventeen\", expected an integer"),
        (#"{"kind":"app.recaptchaConfig","facts":{"state":"STRICT"},"message":"m","part":"backend"}"#,
         "line 2: app.recaptchaConfig: fact state is \"STRICT\", expected one of OFF, AUDIT, ENFORCE"),
        (#"{"kind":"backend.recaptchaAssessment","facts":{"endpoint":"e","enforcement":"AUDIT","verdict":"fine"},"message":"m","part":"backend"}"#,
         "line 2: backend.recaptchaAssessment: fact verdict is \"fine\", expected one of passed, missing, invalid, wrongAction, tollFraud"),
        (#"{"kind":"receiver.fault","facts":{"fault":"explode"},"message":"m","part":"receiver"}"#,
         "line 2: receiver.fault: fact fault is \"explode\", expected a fault spec"),
        (#"{"kind":"app.fallback","facts":{"reason":"r","code":"bored","url":"u"},"message":"m","part":"app"}"#,
         "line 2: app.fallback: fact code is \"bored\", expected one of simulator, noAPNsToken, apnsRegistrationFailed, verifyClientRefused, noSilentPush"),
        (#"{"kind":"app.signedIn","message":"m","part":"flying"}"#, "line 2 is not an event"),
    ])
    func refusals(line: String, message: String) {
        let error = #expect(throws: TimelineFormatError.self) {
            try TimelineRendering.events(fromJSONLines: "preamble\n" + line)
        }
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
    }
}

/// The HTML diagram (issue 19: it left out the cause, drew a lost push like a delivered one, and did
/// not mark what decided the run).
@Suite("The HTML sequence diagram")
struct HTMLDiagramTests {
    @Test("the cause is shown, the decisive event is marked, a lost push and a push accepted under a drop fault are drawn as never delivered")
    func causeDecisiveAndLost() {
        let timeline = [
            TimelineEvent(milliseconds: 0, part: .receiver, message: "sandbox injects fault drop", fact: .receiverFault(fault: .drop)),
            TimelineEvent(milliseconds: 1, part: .receiver, to: .device, message: "sandbox accepts the silent push to 1234… and logs it",
                          fact: .pushAccepted(token: "1234", environment: .sandbox)),
            TimelineEvent(milliseconds: 2, part: .receiver, to: .device, message: "sandbox accepts the silent push to 5678… and logs it",
                          fact: .pushAccepted(token: "5678", environment: .sandbox)),
            TimelineEvent(milliseconds: 250, part: .device, message: "the push to 5678… never reaches the device: it is offline",
                          fact: .pushLost(token: "5678", environment: .sandbox)),
        ]
        let result = DemoResult(name: "lost", summary: "a lost push", expected: "signed in", actual: "signed in via reCAPTCHA", timeline: timeline)
        let html = TimelineRendering.html([result], causes: ["lost": "the push never reached the device"])
        #expect(html.contains(#"<p class="cause"><b>Why:</b> the push never reached the device</p>"#))
        #expect(html.contains("sandbox accepts the silent push to 1234… and logs it (dropped: never delivered)"))
        #expect(!html.contains("5678… and logs it (dropped"), "only the push under the drop fault")
        #expect(html.contains(#"lost decisive">◆ the push to 5678… never reaches the device"#), "\(html)")
        #expect(html.components(separatedBy: "◆").count == 2, "one decisive event")
    }
}
