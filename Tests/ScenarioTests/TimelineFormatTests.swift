import APNsWire
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
        .verifyClient(token: "ab12", environment: .production, receipt: "R"),
        .pushAnswer(token: "ab12", environment: .production, status: 400, reason: .badDeviceToken, error: nil),
        .pushAnswer(token: "ab12", environment: .sandbox, status: nil, reason: nil, error: "connection refused"),
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
        .codeRequested(endpoint: "sendVerificationCode", proof: .silentPush),
        .smsSent(number: "+16505551234"),
        .backendRejected(endpoint: "sendVerificationCode", error: "QUOTA_EXCEEDED", detail: "the project's 10 SMS for today are used", cause: nil),
        .backendRejected(endpoint: "finalizeMfaSignIn", error: "INVALID_MFA_PENDING_CREDENTIAL", detail: "expired", cause: .pendingCredentialExpired),
        .verificationID,
        .signedIn(uid: "u1", path: .reCAPTCHA),
        .appleSignIn(uid: "u1", sub: "001.abc", linked: true),
        .authError(code: 17054, name: "notificationNotForwarded", message: "no probe", updatedCredential: nil),
        .authError(code: 17025, name: "credentialAlreadyInUse", message: "taken", updatedCredential: true),
        .appleAuthorized(sub: "001.abc", nonce: "9f", aud: "com.a", firstAuthorization: true, ageSeconds: 660),
        .appleCredential(rawNonce: "", rawNonceHash: "", tokenNonce: "9f"),
        .appleCredentialReplayed,
        .providerSetup(keyID: "KEY", teamID: "TEAM", trustedKeyID: "KEY", trustedTeamID: "TEAM", providerClockOffset: -3700),
        .mfaPending(uid: "u1", provider: "apple.com"),
        .secondFactorRequired(hints: 2),
        .mfaEnrolled(uid: "u1", enrollmentID: "e1", number: "+16505551234"),
        .mfaSignedIn(uid: "u1", enrollmentID: "e1"),
        .smsDefense(state: .audit),
        .apnsRegistrationFailed(reason: "no valid \u{201C}aps-environment\u{201D} entitlement string found for application"),
        .recaptchaAssessment(endpoint: "sendVerificationCode", enforcement: .enforce, verdict: .tollFraud, riskScore: 0.92, detail: "over"),
        .recaptchaAssessment(endpoint: "mfaSignInStart", enforcement: .audit, verdict: .missing, riskScore: nil, detail: "NO_RECAPTCHA"),
        .signedIn(uid: "u2", path: .recaptchaEnterprise),
        .outcome(scenario: "s", expected: "signed in", actual: "signed in", passed: true),
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
        let line = TimelineRendering.json(TimelineEvent(milliseconds: 5, part: .backend, message: "m",
                                                        fact: .codeRequested(endpoint: "sendVerificationCode", proof: .reCAPTCHA)), scenario: "s")
        #expect(line.contains(#""kind":"codeRequested""#) && line.contains(#""facts":{"endpoint":"sendVerificationCode","proof":"reCAPTCHA"}"#), "\(line)")
        let read = try TimelineRendering.events(fromJSONLines: line)
        #expect(read.map(\.event.fact) == [.codeRequested(endpoint: "sendVerificationCode", proof: .reCAPTCHA)])
        let bad = #expect(throws: TimelineFormatError.self) {
            try TimelineRendering.events(fromJSONLines: #"{"kind":"codeRequested","facts":{"endpoint":"e","proof":"carrier pigeon"},"message":"m","part":"backend"}"#)
        }
        #expect(bad?.message.contains("fact proof is \"carrier pigeon\", expected one of silentPush, reCAPTCHA") == true, "\(bad?.message ?? "")")
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
