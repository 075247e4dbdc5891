import APNsReceiver
import APNsWire
import ArgumentParser
import CommandSupport
import DeviceLink
import Diagnostics
import FirebaseAuthCore
import FirebaseCore
import Foundation
import LocalPKI
import RedirectInterceptor
import Scenarios

/// `authsim phone`: one app signs in by phone against a backend and a push-receiver running as
/// other processes.
struct Phone: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one phone sign-in in this process against `authsim backend` and `push-receiver` running elsewhere.",
        discussion: "Exit status 0 when the app signs in, 1 when verification or sign-in fails (the SDK error is printed).")

    @Option(help: "The backend, host:port (authsim backend).") var backend = "127.0.0.1:9099"
    @Option(help: "The push-receiver's device gateway, host:port.") var gateway = "127.0.0.1:5223"
    @Option(help: ArgumentHelp("A file holding the deployment's admin token, for a backend and gateway beyond loopback (their SMS outbox, device registration). Also from AUTHSIM_ADMIN_TOKEN.",
                               valueName: "file")) var adminTokenFile: String?
    @Option(help: "Phone number.") var number = "+16505551234"
    @Option(help: "The environment the app's build gets its APNs token from (default: the --app's embedded.mobileprovision aps-environment, else sandbox).")
    var build: APNsEnvironment?
    @Option(help: "The type the app passes to setAPNSToken: sandbox, prod or unknown.") var declaredType = "sandbox"
    @Flag(help: "The app delegate does not forward notifications (swizzling off).") var noForwarding = false
    @Flag(help: "auth.settings?.isAppVerificationDisabledForTesting = true (give the test code with --code).") var testMode = false
    @Option(help: "The code to type (default: read the SMS from the backend's outbox).") var code: String?
    @Option(help: ArgumentHelp("A built app's folder with Info.plist and GoogleService-Info.plist (XML or binary) and optionally embedded.mobileprovision.",
                               discussion: "Bundle ID, URL schemes, Firebase options and provisioning profile then come from these files.",
                               valueName: "dir")) var app: String?
    @Flag(help: "The app runs in a simulator (no silent pushes: straight to reCAPTCHA).") var simulator = false
    @Flag(help: "The app delegate does not pass opened URLs to Auth.canHandle(url).") var noUrlForwarding = false
    @Option(help: ArgumentHelp("Where the app claims its URL schemes for redirect-interceptor.", valueName: "dir")) var runtimeDir: String?
    @Option(help: ArgumentHelp("Load the reCAPTCHA page headless and hand its redirect to this command (e.g. xdg-open, or \"redirect-interceptor open\") instead of straight to the app.",
                               valueName: "command")) var openRedirectsWith: String?
    @Option(help: ArgumentHelp("Present the reCAPTCHA page in a real browser with this command (e.g. xdg-open, chromium); the redirect must come back through redirect-interceptor.",
                               valueName: "command")) var browser: String?
    @Option(help: "How long the browser page may take, in seconds.") var browserTimeout = 300
    @Option(help: ArgumentHelp("Sign in on this identity provider's web page instead of by phone (OAuthProvider's web flow: microsoft.com, yahoo.com, oidc.…); with --browser a person picks or makes the account there.",
                               valueName: "provider")) var signInWith: String?

    @Option(help: ArgumentHelp("Take the app and the user from this scenario file (its backend and network sections belong to the other processes).",
                               valueName: "file")) var scenario: String?
    @Option(help: "Folder for the app's files (UserDefaults, a provisioning profile).") var state = "State/phone"
    @Option(help: ArgumentHelp("What must happen for exit status 0: silent-push, recaptcha, recaptcha-enterprise or test-mode (signed in that way), or an SDK error (17044, invalidVerificationCode, or the whole outcome). Default: signed in, any way (a fallback to reCAPTCHA is reported, not failed).",
                               valueName: "outcome")) var expect: String?
    @Flag(help: "One JSON object per event on standard output, instead of the timeline (as `authsim run --json`).") var json = false
    @Option(help: ArgumentHelp("Also write the run as a sequence diagram: a .mmd file (Mermaid) or a .html page.", valueName: "file"))
    var diagram: String?
    @Option(help: "Folder with the credentials: the local CA the device trusts (the backend's HTTPS reCAPTCHA page) and the key that signs a scenario's provisioning profile; use the backend's --certs.") var certs = "Certs"

    func run() async throws {
        func split(_ text: String) throws -> (String, Int) {
            let parts = text.split(separator: ":")
            guard parts.count == 2, let port = Int(parts[1]) else { throw ValidationError("\(text) is not host:port") }
            return (String(parts[0]), port)
        }
        let types: [String: AuthAPNSTokenType] = ["sandbox": .sandbox, "prod": .prod, "unknown": .unknown]
        guard let type = types[declaredType] else { throw ValidationError("--declared-type is sandbox, prod or unknown") }
        let (backendHost, backendPort) = try split(backend)
        let (gatewayHost, gatewayPort) = try split(gateway)
        var spec = ScenarioSpec(name: "phone", summary: "one phone sign-in across processes", expectedOutcome: "signed in")
        if let scenario {
            do { spec = try ScenarioSpec(contentsOf: URL(fileURLWithPath: scenario)) } catch { throw ValidationError(error.message) }
        } else {
            spec.app.declaredTokenType = type
            spec.app.forwardsNotifications = !noForwarding
            spec.app.forwardsURLs = !noUrlForwarding
            spec.app.isSimulator = simulator
            spec.app.appVerificationDisabledForTesting = testMode
            spec.user.phoneNumber = number
        }
        if let signInWith {
            guard !signInWith.isEmpty, !signInWith.contains(" ") else { throw ValidationError("--sign-in-with takes a provider ID: microsoft.com, oidc.example") }
            var provider = spec.identityProvider ?? ScenarioSpec.IdentityProviderSpec()
            provider.providerID = signInWith
            spec.identityProvider = provider
        }
        var options = AppRunOptions()
        options.code = code
        if let app {
            do { options.bundle = try AppBundle(directory: URL(fileURLWithPath: app)) } catch {
                throw ValidationError("--app \(app): \(error.message)")
            }
        }
        if scenario == nil {
            // A built app's profile says which APNs issues its tokens, as on a device: development →
            // sandbox (a debug build), production → production (TestFlight, App Store).
            let fromProfile = options.bundle?.provisioningProfile.flatMap { ProvisioningProfile.apsEnvironment(at: $0) }
                .map { APNsEnvironment(apsEnvironment: $0) ?? .production }
            spec.app.build = AppProfile.Build(environment: build ?? fromProfile ?? .sandbox)
        }
        guard openRedirectsWith == nil || browser == nil else { throw ValidationError("--open-redirects-with and --browser exclude each other") }
        options.schemeDirectory = runtimeDir.map { SchemeDirectory(url: URL(fileURLWithPath: $0).standardizedFileURL) } ?? .standard()
        let jsonOutput = json
        let timeline = Timeline { event in
            say(jsonOutput ? TimelineRendering.json(event, scenario: "phone") : TimelineRendering.line(event))
        }
        if let command = openRedirectsWith?.split(separator: " ").map(String.init), !command.isEmpty {
            options.uiDelegate = HeadlessPresenter(handOff: .command(command)) { ScenarioRunner.record($0, into: timeline) }
        }
        if let command = browser?.split(separator: " ").map(String.init), !command.isEmpty {
            options.uiDelegate = BrowserPresenter(command: command, timeout: .seconds(browserTimeout)) { ScenarioRunner.record($0, into: timeline) }
        }
        // The device trusts the local CA (the backend's HTTPS reCAPTCHA page), when there is one.
        let caFile = CertsDirectory(URL(fileURLWithPath: certs)).caCertificateFile
        let caPEM = try? String(contentsOf: caFile, encoding: .utf8)
        if caPEM == nil {
            say("note: no CA at \(caFile.path): the device trusts only the system's roots, so the backend's HTTPS reCAPTCHA page will not load (give the backend's --certs)")
        }
        // Sent as it is given: the servers say whether it is theirs.
        let adminToken = try AdminAccessOptions.secret(token: nil, file: adminTokenFile)?.secret
        let world = await PhoneAuthWorld.connect(backendHost: backendHost, backendPort: backendPort,
                                           devices: RemoteDeviceNetwork(host: gatewayHost, port: gatewayPort, adminToken: adminToken), caPEM: caPEM,
                                           adminToken: adminToken)
        if !json {
            say("phone sign-in across processes: backend http://\(backend), device gateway \(gateway)")
            if let directory = options.schemeDirectory {
                say("the app claims its URL schemes in \(directory.url.path) (redirect-interceptor hands it URLs there)")
            }
        }
        let work = URL(fileURLWithPath: state)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let credentials = spec.app.provisioningProfile == .none ? nil : try CertsDirectory(URL(fileURLWithPath: certs)).ensure()
        let pushesBefore = await world.silentPushResults()?.count ?? 0
        let follower = Task { await world.followSilentPushes(into: timeline, after: pushesBefore) }
        let outcome = if let identityProvider = spec.identityProvider {
            await IdentityProviderScenario.run(spec, identityProvider, world: world, timeline: timeline, work: work, credentials: credentials, options: options)
        } else {
            await ScenarioRunner.runApp(spec, world: world, timeline: timeline, work: work, credentials: credentials, backendClock: nil, options: options)
        }
        follower.cancel()
        let pushes = await world.reportSilentPushes(into: timeline, after: await follower.value) - pushesBefore
        await world.shutdown()
        let path = timeline.all.lazy.compactMap { event -> SignInPath? in
            if case .signedIn(_, let path)? = event.fact { path } else { nil }
        }.first
        let verdict = PhoneExpectation.judge(outcome: outcome, path: path, expect: scenario == nil ? expect : expect ?? spec.expectedOutcome,
                                             pushed: pushes > 0)
        if !json {
            say(verdict.passed ? "✔ \(outcome)" : "✘ \(outcome)\(verdict.expected.map { " (expected \($0))" } ?? "")")
            if let note = verdict.note { say("note: \(note)") }
        }
        if let diagram {
            let result = DemoResult(name: "phone \(spec.user.phoneNumber)", summary: "authsim phone against \(backend)",
                                    expected: verdict.passed ? outcome.description : (verdict.expected ?? "signed in"), actual: outcome.description, timeline: timeline.all)
            let file = URL(fileURLWithPath: diagram)
            let cause = Explainer.explain(timeline.all).cause
            let text = file.pathExtension == "html" ? TimelineRendering.html([result], causes: [result.name: cause]) : TimelineRendering.mermaid(result)
            do { try text.write(to: file, atomically: true, encoding: .utf8) } catch {
                throw ValidationError("cannot write \(file.path): \(error.localizedDescription)")
            }
            if !json { say("sequence diagram: \(file.path)") }
        }
        if !verdict.passed { throw ExitCode(1) }
    }
}

/// Whether a phone run ended as `--expect` asked.
enum PhoneExpectation {
    static let paths: [String: SignInPath] = ["silent-push": .silentPush, "recaptcha": .reCAPTCHA,
                                              "recaptcha-enterprise": .recaptchaEnterprise, "test-mode": .testMode]

    /// - Parameter pushed: whether the backend sent a silent push in this run (a simulator's app,
    ///   or one whose APNs token never reached Auth, asks for none).
    static func judge(outcome: ScenarioOutcome, path: SignInPath?, expect: String?, pushed: Bool = true) -> (passed: Bool, expected: String?, note: String?) {
        let signedIn = if case .signedInWithProvider = outcome { true } else { outcome.isSignedIn }
        guard let expect else {
            let note: String? = switch path {
            case .reCAPTCHA? where !pushed:
                "no silent push was sent (the app had no APNs token for Auth: a simulator, or registration failed): it used reCAPTCHA. --expect silent-push makes that a failure"
            case .reCAPTCHA?: "no silent push reached the app: it fell back to reCAPTCHA (see the backend's silent push above). --expect silent-push makes that a failure"
            case .recaptchaEnterprise?: "signed in with a reCAPTCHA Enterprise token (SMS defense), not a silent push"
            default: nil
            }
            return (signedIn, nil, note)
        }
        if let wanted = paths[expect] {
            return (signedIn && path == wanted, "signed in by \(expect)", nil)
        }
        // An SDK error: its code (17044), its name (invalidVerificationCode), or the whole outcome.
        let matches = outcome.description == expect
            || outcome.authErrorCode.map { expect == "\($0.rawValue)" || expect == "\($0)" } == true
        return (matches, expect, nil)
    }
}
