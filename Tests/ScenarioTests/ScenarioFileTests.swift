import APNsWire
import Causes
import Diagnostics
import FirebaseAuthCore
import Foundation
import LocalPKI
import Scenarios
import TestSupport
import Testing

/// The repository's root (the tests' sources are two folders down).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let shippedScenarios = (try? ScenarioSpec.load(directory: repositoryRoot.appendingPathComponent("Scenarios"))) ?? []

@Suite("Scenario files: the shipped ones run as they say; bad ones are refused precisely")
struct ScenarioFileTests {
    @Test("the shipped scenarios are there, with the twelve required cases")
    func shipped() {
        let names = Set(shippedScenarios.map(\.name))
        for required in ["silent-push", "push-never-arrives", "debug-build-declares-prod", "unknown-from-development-profile",
                         "release-build-declares-sandbox", "notifications-not-forwarded", "redirect-not-forwarded",
                         "scheme-not-registered", "app-killed-after-sms", "test-number-test-mode", "real-number-test-mode",
                         "key-and-team-swapped", "provider-clock-behind", "wrong-code", "session-expired", "region-blocked",
                         "quota-exceeded", "apple-sign-in", "apple-wrong-nonce", "apple-replayed-token", "apple-expired-token",
                         "apple-reauthenticate", "apple-link-to-phone-user", "apple-revoke-then-delete",
                         "provider-page-sign-in", "provider-redirect-not-forwarded", "provider-scheme-not-registered",
                         "provider-redirect-to-other-app", "provider-page-closed"] {
            #expect(names.contains(required), "missing \(required)")
        }
    }

    @Test("every shipped scenario ends with the outcome it expects", arguments: shippedScenarios.map(\.name))
    func runs(_ name: String) async throws {
        let spec = try #require(shippedScenarios.first { $0.name == name })
        let folder = temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = await ScenarioRunner.run(spec, certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"))
        #expect(result.actual == spec.expectedOutcome, "\(result.timeline.map(TimelineRendering.line).joined(separator: "\n"))")
        #expect(result.timeline.last?.kind == .outcome)
        // Every run shows how the app got its APNs token, or why it got none.
        #expect(result.timeline.contains(.deviceToken) || result.timeline.contains(.appleAuthorized)
                || result.timeline.contains(.apnsRegistrationFailed) || spec.app.apnsRegistration == .neverAnswers)
    }

    @Test("bad files say which key is wrong and why", arguments: [
        (#"{"format":"authsim-scenario/2","name":"x","summary":"","expect":{"outcome":"signed in"}}"#, ScenarioFileError.Code.wrongFormat, "authsim-scenario/1"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"app":{"declaredTokenTyp":"prod"}}"#, .unknownKey, "declaredTokenTyp"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"app":{"declaredTokenType":"production"}}"#, .invalidValue, "sandbox, prod, unknown"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"app":{"simulator":1}}"#, .invalidValue, "true or false"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"suggestedTimeout":true}}"#, .invalidValue, "a number"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"smsRegionPolicy":{"allowOnly":["US"],"deny":["GB"]}}}"#, .invalidValue, "not both"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"recaptcha":"maybe"}}"#, .invalidValue, "pass, slow"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"testPhoneNumbers":{"+16505553434":"12"}}}"#, .invalidValue, "6 digits"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"network":{"receiverFaults":["explode"]}}"#, .invalidValue, "receiverFaults"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"user":{"code":"12ab56"}}"#, .invalidValue, "sms, wrong or 6 digits"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"faults":[{"endpoint":"verifyClient","message":"X","body":"{}"}]}}"#, .invalidValue, "backend.faults[0] needs message"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"faults":[{"message":"X"}]}}"#, .missingKey, "backend.faults[0] has no endpoint"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"faults":[{"endpoint":"verifyClient","message":"X","status":99}]}}"#, .invalidValue, "backend.faults[0].status"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"faults":{"endpoint":"verifyClient"}}}"#, .invalidValue, "a list of objects"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"apiKeyIOSBundleIDs":"com.a"}}"#, .invalidValue, "a list of strings"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":""}"#, .missingKey, "expect.outcome"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"faults":[{"endpoint":"verifyClient","mesage":"X"}]}}"#, .unknownKey, "bad.json.backend.faults[0]: unknown key mesage"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"backend":{"users":[{"localId":"u","disabled":"yes"}]}}"#, .invalidValue, "bad.json.backend.users[0].disabled must be true or false, not yes"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"apple":{"flow":"signin"}}"#, .invalidValue, "bad.json.apple.flow must be signIn, wrongNonce"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"app":{"urlSchemes":["a",3]}}"#, .invalidValue, "bad.json.app.urlSchemes[1] must be a string, not 3"),
        (#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"network":{"pushLatencyMs":2.5}}"#, .invalidValue, "bad.json.network.pushLatencyMs must be a whole number"),
        (#"[1, 2]"#, .notJSON, "not a JSON object"),
    ])
    func badFiles(_ json: String, code: ScenarioFileError.Code, mentions: String) {
        do {
            _ = try ScenarioSpec(json: Data(json.utf8), source: "bad.json")
            Issue.record("accepted: \(json)")
        } catch {
            #expect(error.code == code, "\(error.message)")
            #expect(error.message.contains(mentions), "\(error.message)")
        }
    }

    @Test("an embedded.mobileprovision made in-process is a real CMS envelope that openssl verifies and the SDK reads")
    func provisioningProfile() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let credentials = try CertsDirectory(folder.appendingPathComponent("Certs")).ensure()
        let file = folder.appendingPathComponent("embedded.mobileprovision")
        try ProvisioningProfileFile.make(apsEnvironment: "development", bundleID: "com.example.authsim", teamID: "ABCDE12345",
                                         credentials: credentials).write(to: file)
        #expect(ProvisioningProfile.apsEnvironment(at: file) == "development")
        #expect(ProvisioningProfile.resolve(isSimulator: false, profile: file) == .sandbox)
        guard await toolAvailable(["openssl", "version"]) else { return }
        let verified = try await runProgram(["openssl", "cms", "-verify", "-noverify", "-inform", "DER", "-in", file.path])
        #expect(verified.status == 0)
        #expect(verified.output.contains("<key>aps-environment</key>"))
        #expect(verified.output.contains("ABCDE12345.com.example.authsim"))
    }
}

@Suite("authsim run: the timeline as JSON lines and as a sequence diagram")
struct RunOutputTests {
    @Test("--json gives one event per line that reads back; --diagram writes Mermaid and HTML")
    func outputs() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        let mermaid = folder.appendingPathComponent("run.mmd")
        let run = try await runProgram([authsim, "run", "debug-build-declares-prod", "--json",
                                        "--scenarios", repositoryRoot.appendingPathComponent("Scenarios").path,
                                        "--certs", folder.appendingPathComponent("Certs").path,
                                        "--state", folder.appendingPathComponent("State").path, "--diagram", mermaid.path])
        #expect(run.status == 0)
        let events = try TimelineRendering.events(fromJSONLines: run.output)
        #expect(events.count == run.output.split(separator: "\n").count)
        #expect(events.allSatisfy { $0.scenario == "debug-build-declares-prod" })
        let rejected = try #require(events.first { $0.event.kind == .pushRejected }?.event)
        guard case .pushRejected(_, let environment, let reason, _, _) = rejected.fact else {
            Issue.record("no rejection fact")
            return
        }
        #expect(reason == .badDeviceToken)
        #expect(environment == .production)
        #expect(rejected.fact?.facts["reason"] == "BadDeviceToken")
        #expect(rejected.part == Part.receiver && rejected.to == Part.sender)
        guard case .outcome(_, _, _, let passed) = events.last?.event.fact else {
            Issue.record("no outcome")
            return
        }
        #expect(passed)

        let diagram = try String(contentsOf: mermaid, encoding: .utf8)
        #expect(diagram.hasPrefix("sequenceDiagram\n"))
        #expect(diagram.contains("    app->>backend: "))
        #expect(diagram.contains("    receiver->>sender: "))
        #expect(!diagram.contains(";"))

        let html = folder.appendingPathComponent("run.html")
        let again = try await runProgram([authsim, "run", repositoryRoot.appendingPathComponent("Scenarios/13-simulator.json").path,
                                          "--certs", folder.appendingPathComponent("Certs").path,
                                          "--state", folder.appendingPathComponent("State2").path, "--diagram", html.path])
        #expect(again.status == 0)
        #expect(again.output.contains("✔ simulator: signed in via reCAPTCHA"))
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("<section><h2>simulator"))
        #expect(page.contains("class=\"arrow"))
        #expect(!page.contains("<script"))
    }

    @Test("a scenario that does not end as expected fails the run with exit status 1")
    func unexpected() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("wrong.json")
        try #"{"format":"authsim-scenario/1","name":"optimist","summary":"expects a silent push from a simulator","app":{"simulator":true},"expect":{"outcome":"signed in"}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let run = try await runProgram([try executable("authsim"), "run", file.path, "--certs", folder.appendingPathComponent("Certs").path,
                                        "--state", folder.appendingPathComponent("State").path])
        #expect(run.status == 1)
        #expect(run.output.contains("✘ optimist: expected signed in, got signed in via reCAPTCHA"))
    }
}

@Suite("authsim explain: the root cause of each shipped misconfiguration")
struct ExplainTests {
    @Test("each shipped scenario's explanation names the cause its file states", arguments: shippedScenarios.filter { $0.expectedCause != nil }.map(\.name))
    func causes(_ name: String) async throws {
        let spec = try #require(shippedScenarios.first { $0.name == name })
        let folder = temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = await ScenarioRunner.run(spec, certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"))
        let diagnosis = Explainer.explain(result.timeline)
        #expect(diagnosis.cause.contains(spec.expectedCause!), "\(diagnosis.cause)")
        #expect(diagnosis.code != .unknown && diagnosis.code != .ok)
        #expect(!diagnosis.fix.isEmpty)
        // Decided by the events' typed facts, never by the words of a message (issue 31): the same
        // events with every message blanked give the same diagnosis.
        let silent = result.timeline.map { TimelineEvent(milliseconds: $0.milliseconds, part: $0.part, to: $0.to, message: "", fact: $0.fact) }
        #expect(Explainer.explain(silent).code == diagnosis.code)
    }

    @Test("authsim demo's APNs-channel scenarios are explained from their facts, each with its cause")
    func channelScenarios() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let results = try await ChannelDemo.run(certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"))
        let expected: [String: Diagnosis.Code] = [
            "apns-silent-push": .ok, "apns-sandbox-token-to-production": .tokenTypeMismatch,
            "apns-production-token-to-sandbox": .tokenTypeMismatch, "apns-key-and-team-swapped": .keyAndTeamSwapped,
            "apns-provider-clock-behind": .expiredProviderToken, "apns-app-uninstalled": .pushRejected,
        ]
        #expect(Set(results.map(\.scenario.name)) == Set(expected.keys))
        for result in results {
            let diagnosis = Explainer.explain(result.timeline)
            #expect(diagnosis.code == expected[result.scenario.name], "\(result.scenario.name): \(diagnosis)")
        }
        let uninstalled = try #require(results.first { $0.scenario.name == "apns-app-uninstalled" })
        #expect(Explainer.explain(uninstalled.timeline).fix == APNsReason.unregistered.fix)
    }

    @Test("every APNs reason's fix says what to change, not what went wrong; no cause or fix ends in two periods", arguments: APNsReason.all)
    func reasonFixes(_ reason: APNsReason) {
        #expect(!reason.fix.isEmpty && reason.fix != reason.meaning && !reason.fix.hasSuffix("."), "\(reason): \(reason.fix)")
        let diagnosis = PushRefusals.diagnose(token: "abcd", sentTo: .sandbox, reason: reason, detail: nil)
        #expect(!"\(diagnosis.cause).".contains("..") && !"\(diagnosis.fix).".contains(".."), "\(diagnosis)")
        if ![APNsReason.badDeviceToken, .invalidProviderToken, .expiredProviderToken].contains(reason) {
            #expect(diagnosis.fix == reason.fix)
        }
    }

    @Test("explain is one table: every cause is named by a row, each row's codes its own, in the order the docs give")
    func table() {
        let rows = Explainer.causes
        // Each cause named by the table, the receiver's tally, or (pushUnanswered) the inspector's
        // push without an answer, PushRefusals.unanswered; unknown when no row applies.
        let named = Set(rows.flatMap(\.codes) + ReceiverStateExplainer.codes + [.pushUnanswered, .unknown])
        #expect(named == Set(Diagnosis.Code.allCases), "not named: \(Set(Diagnosis.Code.allCases).subtracting(named))")
        // A row's codes are its own: only `ok` (Apple's and the others') and userDisabled (the
        // SDK's error, and the backend's refusal) are named by two rows.
        var seen: [Diagnosis.Code: String] = [:]
        for row in rows {
            for code in row.codes where code != .ok && code != .userDisabled {
                #expect(seen[code] == nil, "\(code) in \(seen[code] ?? "") and \(row.about)")
                seen[code] = row.about
            }
        }
        // No events, no cause.
        #expect(Explainer.explain([]).code == .unknown)
    }

    @Test("a redirect the app refused because its delegate does not forward URLs is redirectNotForwarded, from the refusal's code alone")
    func notForwarded() {
        let events = [TimelineEvent(milliseconds: 0, part: .app, message: "", fact: .redirect(handling: .refused, refusal: .notForwarded))]
        #expect(Explainer.explain(events).code == .redirectNotForwarded)
        let other = [TimelineEvent(milliseconds: 0, part: .app, message: "notForwarded, says the text", fact: .redirect(handling: .refused, refusal: .replayed))]
        #expect(Explainer.explain(other).code == .redirectRefused)
    }

    @Test("the token-type mismatch is explained from --json lines by the command, naming token, environments and the declared type")
    func command() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        let run = try await runProgram([authsim, "run", "debug-build-declares-prod", "release-build-declares-sandbox", "--json",
                                        "--scenarios", repositoryRoot.appendingPathComponent("Scenarios").path,
                                        "--certs", folder.appendingPathComponent("Certs").path, "--state", folder.appendingPathComponent("State").path])
        #expect(run.status == 0)
        let events = folder.appendingPathComponent("events.jsonl")
        try run.output.write(to: events, atomically: true, encoding: .utf8)
        let explained = try await runProgram([authsim, "explain", events.path])
        #expect(explained.status == 0)
        let token = try #require(try TimelineRendering.events(fromJSONLines: run.output).map(\.event).first { fact -> String? in
            if case .deviceToken(let token, _, _, _) = fact { token } else { nil }
        }?.value)
        #expect(explained.output.contains("debug-build-declares-prod: the push to \(token.prefix(4).uppercased())… was rejected by production with BadDeviceToken: the token was issued in sandbox (a debug build) but the app declared type .prod"))
        #expect(explained.output.contains("release-build-declares-sandbox: the push to"))
        #expect(explained.output.contains("issued in production (a TestFlight / App Store build, provisioning profile aps-environment=production) but the app declared type .sandbox"))
        #expect(explained.output.contains("fix: call setAPNSToken(token, type: .sandbox)"))

        let none = try await runProgram(["sh", "-c", "echo 'not json' | \(authsim) explain"])
        #expect(none.status != 0)
    }
}
