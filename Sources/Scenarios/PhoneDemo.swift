import APNsReceiver
import APNsWire
import AuthBackend
import FirebaseAuthCore
import Foundation

/// A finished demo scenario of any kind: what was expected, what happened.
public struct DemoResult: Sendable {
    public let name: String
    public let summary: String
    public let expected: String
    public let actual: String
    public let timeline: [TimelineEvent]
    public var passed: Bool { expected == actual }
}

/// One phone sign-in scenario: an app profile and backend set-up, and the outcome it should end with.
public struct PhoneScenario: Sendable {
    public let name: String
    public let summary: String
    /// "signed in", or the SDK error it must end with ("17054 notificationNotForwarded").
    public let expected: String
    public let profile: AppProfile
    public let number: String

    public init(name: String, summary: String, expected: String, profile: AppProfile, number: String = "+16505551234") {
        self.name = name
        self.summary = summary
        self.expected = expected
        self.profile = profile
        self.number = number
    }
}

/// Silent-push phone sign-in scenarios, run through every part: the app's auth core, the backend
/// over HTTP, apns-sender's client, push-receiver, the device.
public enum PhoneDemo {
    public static let testNumber = "+16505553434"
    public static let testCode = "654321"

    public static var scenarios: [PhoneScenario] {
        var mismatch = AppProfile()
        mismatch.declaredTokenType = .prod
        var noForwarding = AppProfile()
        noForwarding.forwardsNotifications = false
        var testMode = AppProfile()
        testMode.appVerificationDisabledForTesting = true
        var simulator = AppProfile()
        simulator.isSimulator = true
        var urlsDropped = AppProfile()
        urlsDropped.isSimulator = true
        urlsDropped.forwardsURLs = false
        var noScheme = AppProfile()
        noScheme.urlSchemes = ["com.example.authsim"]
        return [
            PhoneScenario(name: "phone-silent-push",
                          summary: "A debug build proves itself with a silent push, gets the SMS code and signs in.",
                          expected: "signed in", profile: AppProfile()),
            PhoneScenario(name: "phone-token-type-mismatch",
                          summary: "A debug build's code says setAPNSToken(token, type: .prod): the backend pushes through production, APNs answers BadDeviceToken, no push comes, and reCAPTCHA takes over.",
                          expected: "signed in via reCAPTCHA", profile: mismatch),
            PhoneScenario(name: "phone-simulator",
                          summary: "The app runs in a simulator, which gets no silent pushes: the SDK goes straight to reCAPTCHA.",
                          expected: "signed in via reCAPTCHA", profile: simulator),
            PhoneScenario(name: "phone-url-not-forwarded",
                          summary: "Swizzling is off and the delegate does not pass opened URLs to Auth.canHandle(url): the reCAPTCHA redirect is dropped, the page never closes, and the user's only way out is cancel.",
                          expected: "17058 webContextCancelled", profile: urlsDropped),
            PhoneScenario(name: "phone-scheme-not-registered",
                          summary: "Info.plist lacks the encoded app ID scheme: the SDK stops at once (fatalError) naming the scheme to add.",
                          expected: "17998 appConfigurationError", profile: noScheme),
            PhoneScenario(name: "phone-not-forwarded",
                          summary: "Swizzling is off and the app delegate does not forward notifications: the SDK's 1 s probe fails.",
                          expected: "17054 notificationNotForwarded", profile: noForwarding),
            PhoneScenario(name: "phone-test-number",
                          summary: "App verification disabled for testing, a test number with its fixed code: no push, no SMS.",
                          expected: "signed in", profile: testMode, number: testNumber),
        ]
    }

    /// Runs the scenarios in one world. `suggestedTimeout` is short so the demo is quick.
    public static func run(certs: URL, state: URL, only names: [String] = [], suggestedTimeout: Int = 2,
                           onStart: @Sendable (PhoneScenario, PhoneAuthWorld) -> Void = { _, _ in },
                           printer: (@Sendable (TimelineEvent) -> Void)? = nil) async throws -> [DemoResult] {
        let current = CurrentTimeline(printer: printer)
        var configuration = BackendConfiguration()
        configuration.suggestedTimeout = suggestedTimeout
        configuration.testPhoneNumbers = [testNumber: testCode]
        let world = try await PhoneAuthWorld.start(
            certs: certs, state: state, configuration: configuration,
            receiverObserver: { event in
                switch event {
                case .accepted(let push):
                    current.record(.receiver, "\(push.environment) accepts the silent push to \(push.deviceToken.short), logs it")
                case .rejected(let rejection, _, let environment, _):
                    current.record(.receiver, "\(environment) rejects the push: \(rejection.reason): \(rejection.detail)")
                default: break
                }
            },
            backendObserver: { event in
                switch event {
                case .verifyClient(let token, let environment, let receipt, let push):
                    current.record(.backend, "verifyClient: receipt \(receipt.prefix(8))… for token \(token.prefix(8))…; pushed the secret via \(environment): \([push.status.map(String.init), push.reason, push.error].compactMap { $0 }.joined(separator: " "))")
                case .smsSent(let message):
                    current.record(.backend, "sendVerificationCode: SMS to \(message.phoneNumber): \"\(message.text)\"")
                case .codeReused(let number):
                    current.record(.backend, "sendVerificationCode: a code for \(number) is still valid, no second SMS")
                case .signedIn(let uid, let number, let isNew):
                    current.record(.backend, "signInWithPhoneNumber: \(number) → uid \(uid.prefix(8))…\(isNew ? " (new user)" : "")")
                case .rejected(let endpoint, let error):
                    current.record(.backend, "\(endpoint) refuses: \(error.message)")
                }
            })
        var results: [DemoResult] = []
        for scenario in scenarios where names.isEmpty || names.contains(scenario.name) {
            onStart(scenario, world)
            let timeline = current.begin()
            let actual = await runOne(scenario, world: world, timeline: timeline)
            results.append(DemoResult(name: scenario.name, summary: scenario.summary, expected: scenario.expected,
                                      actual: actual, timeline: timeline.all))
        }
        current.end()
        await world.shutdown()
        return results
    }

    /// Runs one scenario in `world` and returns its outcome ("signed in" or the SDK error).
    /// `code` overrides the one read from the backend's outbox.
    public static func runOne(_ scenario: PhoneScenario, world: PhoneAuthWorld, timeline: Timeline, code: String? = nil) async -> String {
        do {
            let profile = scenario.profile
            let (auth, token) = try await world.install(profile, setToken: false) { url, handling in
                switch handling {
                case .handled(let what): timeline.record(.app, "opened \(url.scheme ?? "?")://… from the interceptor: Auth.canHandle(url) took \(what)")
                case .refused(let refusal): timeline.record(.app, "opened \(url.scheme ?? "?")://… from the interceptor: not handled (\(refusal.code.rawValue)): \(refusal.message)")
                }
            }
            let bundleID = profile.bundle?.info.bundleID ?? profile.bundleID
            timeline.record(.device, "\(bundleID) (\(profile.buildEnvironment == .sandbox ? "debug" : "release") build) gets APNs token \(token.short) from \(profile.buildEnvironment)")
            if !profile.appVerificationDisabledForTesting {
                auth.setAPNSToken(Data(token.bytes), type: profile.declaredTokenType)
                timeline.record(.app, "Auth.auth().setAPNSToken(token, type: .\(profile.declaredTokenType))")
            } else {
                timeline.record(.app, "auth.settings.isAppVerificationDisabledForTesting = true")
            }
            timeline.record(.app, "PhoneAuthProvider.provider().verifyPhoneNumber(\"\(scenario.number)\", uiDelegate: \(profile.uiDelegate.map { "\(type(of: $0))()" } ?? "nil"))")
            let provider = PhoneAuthProvider.provider(auth: auth)
            let presenter = profile.uiDelegate ?? HeadlessPresenter { timeline.record(.browser, $0) }
            let verificationID = try await provider.verifyPhoneNumber(scenario.number, uiDelegate: presenter)
            var via = ""
            if case .reCAPTCHAFallback(let why) = auth.lastAppVerification {
                timeline.record(.app, "no app credential (\(why)): presented the reCAPTCHA page, its redirect came back through canHandle(url)")
                via = " via reCAPTCHA"
            }
            timeline.record(.app, "got verification ID \(verificationID.prefix(10))…; saves it in UserDefaults")
            let fromOutbox = profile.appVerificationDisabledForTesting ? testCode : await world.lastCode(for: scenario.number)
            let code = code ?? fromOutbox ?? ""
            timeline.record(.app, "the user types \(code); signIn(with: credential(withVerificationID:verificationCode:))")
            let result = try await auth.signIn(with: provider.credential(withVerificationID: verificationID, verificationCode: code))
            timeline.record(.app, "signed in\(via): uid \(result.user.uid.prefix(8))…, phone \(result.user.phoneNumber ?? "-")")
            return "signed in\(via)"
        } catch let error as AuthError {
            timeline.record(.app, "error \(error.code.rawValue) \(error.code): \(error.message)")
            return "\(error.code.rawValue) \(error.code)"
        } catch {
            timeline.record(.authsim, "error: \(error)")
            return "error: \(error)"
        }
    }
}

extension ChannelScenarioResult {
    /// The same result in the demo's common shape.
    public var demoResult: DemoResult {
        DemoResult(name: scenario.name, summary: scenario.summary, expected: scenario.expected.description,
                   actual: actual?.description ?? "error: \(error ?? "?")", timeline: timeline)
    }
}
