import APNsReceiver
import APNsWire
import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import LocalPKI
import RedirectInterceptor
import Synchronization
import Utilities

/// How the app side of a scenario is run beyond what the file says (options of `authsim phone`).
package struct AppRunOptions: Sendable {
    /// The app's files instead of the scenario's app section.
    package var bundle: AppBundle?
    /// The reCAPTCHA presenter (nil: a headless one that records into the timeline).
    package var uiDelegate: (any AuthUIDelegate & Sendable)?
    /// Claim the app's schemes here for `redirect-interceptor`.
    package var schemeDirectory: SchemeDirectory?
    /// Overrides the code the scenario says the user types.
    package var code: String?
    package init() {}
}

/// Runs scenario files: each in a world of its own (receiver, backend, provider, devices), with a
/// timeline of every part's steps and messages.
package enum ScenarioRunner {
    /// The backend configuration a scenario asks for.
    package static func configuration(for spec: ScenarioSpec) -> BackendConfiguration {
        var configuration = BackendConfiguration()
        configuration.bundleID = spec.app.bundleID
        configuration.suggestedTimeout = spec.backend.suggestedTimeout
        configuration.testPhoneNumbers = spec.backend.testPhoneNumbers
        configuration.smsRegionPolicy = spec.backend.smsRegionPolicy
        configuration.smsPerNumberPerDay = spec.backend.smsPerNumberPerDay
        configuration.smsPerProjectPerDay = spec.backend.smsPerProjectPerDay
        configuration.recaptchaOutcome = spec.backend.recaptcha
        if let lifetime = spec.backend.codeLifetimeSeconds { configuration.codeLifetime = lifetime }
        configuration.phoneRecaptchaEnforcement = spec.backend.recaptchaEnforcement
        configuration.tollFraudRiskScore = spec.backend.tollFraudRiskScore
        configuration.tollFraudThreshold = spec.backend.tollFraudThreshold
        configuration.apiKeyIOSBundleIDs = spec.backend.apiKeyIOSBundleIDs
        return configuration
    }

    /// Runs `spec` in a new world in this process; `state` gets its delivery log, users and files.
    package static func run(_ spec: ScenarioSpec, certs: URL, state: URL, options: AppRunOptions = AppRunOptions(),
                           printer: (@Sendable (TimelineEvent) -> Void)? = nil) async -> DemoResult {
        let timeline = Timeline(printer: printer)
        let backendClock = AdjustableWallClock()
        // The apps' waits and the network's latency on one clock that stands still while the app
        // works: "APNs takes 4 s, the app waits 1 s" ends the same way on a quiet and a busy machine.
        let clock = WaitingClock()
        let outcome: ScenarioOutcome
        do {
            try? FileManager.default.removeItem(at: state)
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            let credentials = try CertsDirectory(certs).ensure()
            var providerKey: APNsAuthKey?
            if spec.provider.keyAndTeamSwapped {
                let key = credentials.authKey
                providerKey = try APNsAuthKey(keyID: key.teamID, teamID: key.keyID, privateKey: key.privateKey)
            }
            let world = try await PhoneAuthWorld.start(
                certs: certs, state: state, configuration: configuration(for: spec), backendClock: backendClock,
                pushLatency: .milliseconds(spec.network.pushLatencyMilliseconds), providerKey: providerKey,
                providerClock: OffsetWallClock(offset: spec.provider.clockOffsetSeconds),
                appClock: clock, pushClock: clock.passive,
                receiverObserver: { record($0, into: timeline) }, backendObserver: { record($0, signIn: $1, into: timeline) })
            if spec.network.pushesLost {
                await world.channel?.hub.setLosesPushes(true) { push in
                    timeline.record(.device, "the push to \(push.deviceToken.short) never reaches the device: it is offline",
                                    .pushLost(token: push.deviceToken.hex, environment: push.environment))
                }
            }
            for rule in spec.network.receiverFaults { try world.channel?.faults.add(rule) }
            if !spec.backend.users.isEmpty, let toolkit = world.toolkit {
                let answer = try await toolkit.call(ToolkitCalls.adminBatchCreate, UploadAccountRequest(users: spec.backend.users, allowOverwrite: true))
                if let failure = answer.error?.first {
                    throw ScenarioFileError(.invalidValue, "backend.users[\(failure.index)]: \(failure.message)")
                }
                for user in spec.backend.users {
                    timeline.record(.authsim, "an admin made user \(user.localId)\(user.phoneNumber.map { " (\($0))" } ?? "")\(user.disabled == true ? ", disabled" : "")")
                }
            }
            for fault in spec.backend.faults {
                world.toolkit?.faults.add(fault)
                timeline.record(.authsim, "the backend will answer \(fault.endpoint) \(fault.times == 1 ? "once" : "\(fault.times) times") with HTTP \(fault.status) \(fault.serverMessage ?? fault.body.prefix(60).description)")
            }
            let signer = providerKey ?? credentials.authKey
            timeline.record(.authsim, "scenario \(spec.name): backend signs provider tokens kid=\(signer.keyID) iss=\(signer.teamID)\(spec.provider.clockOffsetSeconds != 0 ? " with its clock \(Int(spec.provider.clockOffsetSeconds)) s off" : "")",
                            .providerSetup(keyID: signer.keyID, teamID: signer.teamID, trustedKeyID: credentials.authKey.keyID,
                                           trustedTeamID: credentials.authKey.teamID,
                                           providerClockOffset: Int(spec.provider.clockOffsetSeconds)))
            if let multiFactor = spec.multiFactor {
                outcome = await MultiFactorScenario.run(spec, multiFactor: multiFactor, world: world, timeline: timeline, work: state,
                                                        credentials: credentials, backendClock: backendClock)
            } else if let apple = spec.apple {
                outcome = await AppleScenario.run(spec, apple: apple, world: world, timeline: timeline)
            } else if let identityProvider = spec.identityProvider {
                outcome = await IdentityProviderScenario.run(spec, identityProvider, world: world, timeline: timeline, work: state,
                                                             credentials: credentials, options: options)
            } else {
                outcome = await runApp(spec, world: world, timeline: timeline, work: state, credentials: credentials,
                                       backendClock: backendClock, options: options)
            }
            // Pushes still on their way are part of the story (a late push is cached for next time).
            // Woken by each event; the bound is the network's latency and 5 s more, as before.
            // Nobody waits on the clock any more: time passes on its own until they arrive.
            clock.runFreely()
            _ = await timeline.wait(until: { events in
                events.count { $0.kind == .pushDelivered || $0.kind == .pushLost } >= events.count { $0.kind == .pushAccepted }
            }, atMost: .milliseconds(spec.network.pushLatencyMilliseconds + 5000))
            await world.shutdown()
        } catch {
            timeline.record(.authsim, "error: \(error)")
            outcome = .failed("\(error)")
        }
        let passed = outcome.description == spec.expectedOutcome
        timeline.record(.authsim, "\(passed ? "as expected" : "expected \(spec.expectedOutcome)"): \(outcome)",
                        .outcome(scenario: spec.name, expected: spec.expectedOutcome, actual: outcome.description, passed: passed))
        return DemoResult(name: spec.name, summary: spec.summary, expected: spec.expectedOutcome, actual: outcome.description, timeline: timeline.all)
    }

    /// The app's side: install, register for pushes, verify the number, type the code, sign in.
    /// Returns how it ended: signed in (and how the app was proved), or the SDK's error.
    package static func runApp(_ spec: ScenarioSpec, world: PhoneAuthWorld, timeline: Timeline, work: URL,
                              credentials: LocalCredentials?, backendClock: AdjustableWallClock?,
                              options: AppRunOptions = AppRunOptions()) async -> ScenarioOutcome {
        do {
            var (auth, profile, defaults, device) = try await prepareApp(spec, world: world, timeline: timeline, work: work,
                                                                         credentials: credentials, options: options)
            let number = spec.user.phoneNumber
            if spec.app.killedBeforePush {
                auth = try await killBeforePush(spec, auth: auth, profile: profile, defaults: defaults, device: device, world: world,
                                                timeline: timeline, work: work)
            }
            let provider = PhoneAuthProvider.provider(auth: auth)
            let presenter = RecordingPresenter(inner: profile.uiDelegate ?? HeadlessPresenter { record($0, into: timeline) },
                                               auth: auth, timeline: timeline)
            timeline.record(.app, to: .backend,
                            "PhoneAuthProvider.provider().verifyPhoneNumber(\"\(number)\", uiDelegate: \(profile.uiDelegate.map { "\(type(of: $0))()" } ?? "nil"))",
                            .verifyPhoneNumber(number: number, purpose: .firstFactor))
            let verificationID = try await provider.verifyPhoneNumber(number, uiDelegate: presenter)
            let (proof, path) = Self.via(auth)
            let via = ScenarioOutcome.suffix(proof)
            timeline.record(.app, "got verification ID \(verificationID.prefix(10))…; saves it in UserDefaults", .verificationID)
            defaults.set(verificationID, forKey: "authVerificationID")

            var signingAuth = auth
            var signingDefaults = defaults
            if spec.app.restartAfterSMS {
                timeline.record(.app, "the app is killed while the user reads the SMS, and started again")
                signingDefaults = UserDefaultsStore(file: defaults.file)
                // The same device and keychain: the new process's Auth finds what the old one kept.
                let (restarted, _) = try await install(profile, world: world, timeline: timeline, userDefaults: signingDefaults,
                                                       keychain: Keychain(file: keychainFile(spec, work: work)), device: device)
                signingAuth = restarted
                timeline.record(.app, "its Auth reads the keychain (firebase_auth_\(profile.googleAppID)): \(restarted.cachedCredential == nil ? "no app credential" : "the app credential")\(restarted.pendingReceipts.isEmpty ? "" : ", \(restarted.pendingReceipts.count) pending receipt(s)")")
                guard let restored = signingDefaults.string(forKey: "authVerificationID") else {
                    throw AuthError(.missingVerificationID, "the restarted app found no verification ID in UserDefaults")
                }
                timeline.record(.app, "restores verification ID \(restored.prefix(10))… from UserDefaults")
            }
            let code = try await typedCode(spec, number: number, world: world, timeline: timeline, backendClock: backendClock,
                                           options: options, testMode: profile.appVerificationDisabledForTesting)
            let restored = signingDefaults.string(forKey: "authVerificationID") ?? verificationID
            timeline.record(.app, to: .backend, "the user types \(code); signIn(with: credential(withVerificationID:verificationCode:))")
            let result = try await signingAuth.signIn(with: provider.credential(withVerificationID: restored, verificationCode: code))
            timeline.record(.app, "signed in\(via): uid \(result.user.uid.prefix(8))…, phone \(result.user.phoneNumber ?? "-")",
                            .signedIn(uid: result.user.uid, path: path))
            return .signedIn(via: proof)
        } catch {
            return ScenarioRunner.outcome(of: error, in: timeline)
        }
    }

    /// How the last code request proved the app, and the path.
    static func via(_ auth: Auth) -> (AppVerification, SignInPath) {
        let proof = auth.lastAppVerification ?? .silentPush
        return (proof, .phone(proof))
    }

    /// The app installed on a device as the scenario builds it, in the timeline: the device's APNs
    /// token, test mode, and `setAPNSToken` with what Auth made of the declared type.
    /// The first verifyPhoneNumber, cut short: iOS kills the app once verifyClient has answered
    /// (the receipt is in the keychain) and before the push; the push starts the app again on the
    /// same device, and its new `Auth` takes the push for the old receipt. Returns the new `Auth`.
    static func killBeforePush(_ spec: ScenarioSpec, auth: Auth, profile: AppProfile, defaults: UserDefaultsStore, device: DeviceToken,
                               world: PhoneAuthWorld, timeline: Timeline, work: URL) async throws -> Auth {
        let number = spec.user.phoneNumber
        timeline.record(.app, to: .backend, "PhoneAuthProvider.provider().verifyPhoneNumber(\"\(number)\", uiDelegate: nil)",
                        .verifyPhoneNumber(number: number, purpose: .firstFactor))
        // The push waits on the network until the app has been started again (a push cannot
        // outrun the kill in this story); across processes there is no such hold.
        await world.channel?.hub.setPaused(true)
        // Killed once the receipt is in the keychain (the SDK saves it as verifyClient answers): the
        // keychain says when it wrote an item, and the first verifyPhoneNumber ending says that no
        // receipt will come. Events, not a clock: under load verifyClient may answer after many
        // seconds, and a wait that gave up after 10 s killed an app that had nothing to resume.
        let (events, signal) = AsyncStream<Bool>.makeStream()
        let account = Auth.keychainAccountPrefix + Auth.appCredentialsKey
        let weakAuth = WeakAuth(auth: auth)
        auth.host.keychain.onChange { [service = auth.keychainService] items in
            if items.contains(where: { $0.service == service && $0.account == account }), weakAuth.auth?.pendingReceipts.isEmpty == false {
                signal.yield(true)
            }
        }
        let provider = PhoneAuthProvider.provider(auth: auth)
        let first = Task {
            _ = try? await provider.verifyPhoneNumber(number, uiDelegate: HeadlessPresenter())
            signal.yield(false)
        }
        var receiptSaved = false
        for await saved in events {
            receiptSaved = saved
            break
        }
        guard receiptSaved, let receipt = auth.pendingReceipts.first else {
            await world.channel?.hub.setPaused(false)
            first.cancel()
            throw AuthError(.internalError, "verifyPhoneNumber ended before verifyClient's receipt was in the keychain, so there was nothing to kill the app after")
        }
        auth.host.terminate()
        timeline.record(.app, "iOS kills the app after verifyClient answered (receipt \(receipt.prefix(8))… in the keychain) and before the push")
        let killedAt = timeline.all.count
        let (relaunched, _) = try await install(profile, world: world, timeline: timeline, userDefaults: UserDefaultsStore(file: defaults.file),
                                                keychain: Keychain(file: keychainFile(spec, work: work)), device: device)
        _ = await first.value
        await world.channel?.hub.setPaused(false)
        timeline.record(.app, "the push starts the app again on the same device: its Auth reads the keychain: \(relaunched.pendingReceipts.count) pending receipt(s)")
        relaunched.setAPNSToken(Data(device.bytes), type: profile.tokenTypePassed)
        // Woken by the push's fate: handed to the relaunched app (which takes it or not), lost, or
        // refused. A push accepted and then never delivered reports nothing: after 10 s the story
        // goes on without it (the user asks for the code again; a new push proves the app).
        let fates: Set<EventKind> = [.pushDelivered, .pushLost, .pushRejected]
        _ = await timeline.wait(until: { events in events.dropFirst(killedAt).contains { $0.kind.map(fates.contains) ?? false } },
                                atMost: .seconds(10))
        timeline.record(.app, relaunched.cachedCredential == nil
                        ? "the push never came: the relaunched app holds no app credential"
                        : "Auth took the push for the receipt the killed process asked for: the app credential is cached, in the keychain too; the user asks for the code again")
        return relaunched
    }

    /// The app's keychain, a file in the run's folder (kept across a restart).
    static func keychainFile(_ spec: ScenarioSpec, work: URL) -> URL {
        work.appendingPathComponent("Keychain-\(spec.name).json")
    }

    /// The app's `FirebaseApp` name, as a real app's default app is named.
    static let appName = "__FIRAPP_DEFAULT"

    static func prepareApp(_ spec: ScenarioSpec, world: PhoneAuthWorld, timeline: Timeline, work: URL, credentials: LocalCredentials?,
                           options: AppRunOptions) async throws -> (Auth, AppProfile, UserDefaultsStore, DeviceToken) {
        let profile = try appProfile(spec, work: work, credentials: credentials, options: options)
        let defaults = UserDefaultsStore(file: work.appendingPathComponent("UserDefaults-\(spec.name).json"))
        let bundleID = profile.bundle?.info.bundleID ?? profile.bundleID
        let build = spec.app.build.rawValue
        let registration = spec.app.apnsRegistration
        try? FileManager.default.removeItem(at: keychainFile(spec, work: work))
        let (auth, token) = try await install(profile, world: world, timeline: timeline, userDefaults: defaults,
                                              keychain: Keychain(file: keychainFile(spec, work: work))) { outcome, token in
            // What the app delegate gets when the SDK (not the app) asked for registration.
            guard registration != .atLaunch else { return }
            switch outcome {
            case .token:
                timeline.record(.device, to: .app,
                                "registerForRemoteNotifications(), called by FirebaseAuth: APNs \(profile.build.environment) issues token \(token.short); the app delegate passes it: setAPNSToken(token, type: .\(profile.tokenTypePassed))",
                                .deviceToken(token: token.hex, environment: profile.build.environment, bundleID: bundleID, simulator: profile.isSimulator))
            case .failed(let reason):
                timeline.record(.device, to: .app, "registerForRemoteNotifications() fails: \(reason); the SDK's app-delegate proxy tells Auth (didFailToRegisterForRemoteNotificationsWithError)",
                                .apnsRegistrationFailed(reason: reason))
            }
        }
        let scheme = PhoneAuthProvider.provider(auth: auth).callbackScheme
        let registered = CallbackScheme.isRegistered(scheme, in: auth.host.urlSchemes)
        let page = spec.identityProvider.map { "\($0.providerID)'s sign-in page" } ?? "the reCAPTCHA page"
        timeline.record(.app, "\(page) returns to \(scheme)://, which Info.plist \(registered ? "registers" : "does not register") (CFBundleURLSchemes: \(auth.host.urlSchemes.joined(separator: ", ")))",
                        .callbackScheme(scheme: scheme, registered: registered))
        if profile.appVerificationDisabledForTesting {
            auth.settings?.isAppVerificationDisabledForTesting = true
            timeline.record(.app, "auth.settings?.isAppVerificationDisabledForTesting = true", .testMode)
        }
        switch registration {
        case .whenAuthAsks:
            timeline.record(.app, "\(bundleID) (\(build) build) does not register for remote notifications at launch: FirebaseAuth will, when it needs the token")
            return (auth, profile, defaults, token)
        case .fails:
            timeline.record(.device, "\(bundleID) (\(build) build) registers for remote notifications at launch: it fails: \(AppProfile.noEntitlementError)",
                            .apnsRegistrationFailed(reason: AppProfile.noEntitlementError))
            return (auth, profile, defaults, token)
        case .neverAnswers:
            timeline.record(.device, "\(bundleID) (\(build) build) registers for remote notifications at launch: the device cannot reach APNs, no answer comes")
            return (auth, profile, defaults, token)
        case .atLaunch:
            break
        }
        timeline.record(.device,
                        "\(bundleID) (\(build) build) registers for remote notifications: APNs \(profile.build.environment) issues token \(token.short)",
                        .deviceToken(token: token.hex, environment: profile.build.environment, bundleID: bundleID,
                                     simulator: profile.isSimulator))
        auth.setAPNSToken(Data(token.bytes), type: profile.tokenTypePassed)
        // What Auth made of the declared type (`.unknown` is resolved from the profile there).
        let resolved = auth.apnsTokenType ?? profile.tokenTypePassed
        // The app's own profile: the scenario's, or the one inside a built app's folder (--app).
        let apsEnvironment = (profile.provisioningProfile.file ?? profile.bundle?.provisioningProfile)
            .flatMap { ProvisioningProfile.apsEnvironment(at: $0) } ?? "none"
        timeline.record(.app,
                        "Auth.auth().setAPNSToken(token, type: .\(profile.tokenTypePassed))\(profile.tokenTypePassed == .unknown ? " → .\(resolved) (embedded.mobileprovision aps-environment: \(apsEnvironment))" : "")",
                        .setAPNSToken(declaredType: "\(profile.tokenTypePassed)", resolvedType: "\(resolved)", apsEnvironment: apsEnvironment))
        return (auth, profile, defaults, token)
    }

    /// The code the user types for `number`: the SMS's (or the test number's fixed code), a wrong
    /// one, or the file's digits; typed `codeEnteredAfterSeconds` later (the backend's clock jumps).
    static func typedCode(_ spec: ScenarioSpec, number: String, world: PhoneAuthWorld, timeline: Timeline,
                          backendClock: AdjustableWallClock?, options: AppRunOptions, testMode: Bool) async throws -> String {
        if spec.user.codeEnteredAfterSeconds > 0 {
            guard let backendClock else {
                throw AuthError(.internalError, "codeEnteredAfterSeconds needs the backend in this process")
            }
            backendClock.advance(by: spec.user.codeEnteredAfterSeconds)
            timeline.record(.authsim, "the user types the code \(Int(spec.user.codeEnteredAfterSeconds)) s later (the backend's clock jumps ahead)")
        }
        // Test numbers get no SMS: their code is the fixed one.
        var sms = spec.backend.testPhoneNumbers[number]
        if sms == nil, !testMode { sms = await world.lastCode(for: number) }
        switch (options.code, spec.user.code) {
        case (let given?, _): return given
        case (nil, .fixed(let digits)): return digits
        case (nil, .wrong): return sms == "000000" ? "111111" : "000000"
        case (nil, .fromSMS): return sms ?? ""
        }
    }

    /// An error that ended a flow, in the timeline, as the flow's outcome.
    static func outcome(of error: any Error, in timeline: Timeline) -> ScenarioOutcome {
        guard let error = AuthError(thrown: error) else {
            timeline.record(.authsim, "error: \(error)")
            return .failed("\(error)")
        }
        timeline.record(.app, "error \(error.code.rawValue) \(error.code): \(error.message)",
                        .authError(code: error.code.rawValue, name: "\(error.code)", message: error.message, updatedCredential: nil))
        return .authError(error.code)
    }

    /// The simulated app a scenario describes, as it runs here: its provisioning profile made and
    /// signed with the world's credentials, the built app and the presenter the run was given.
    static func appProfile(_ spec: ScenarioSpec, work: URL, credentials: LocalCredentials?, options: AppRunOptions) throws -> AppProfile {
        var profile = spec.app
        profile.bundle = options.bundle
        profile.uiDelegate = options.uiDelegate
        profile.schemeDirectory = options.schemeDirectory
        return try profile.withProvisioningProfileMade(in: work, credentials: credentials)
    }

    static func install(_ profile: AppProfile, world: PhoneAuthWorld, timeline: Timeline, userDefaults: UserDefaultsStore,
                        keychain: Keychain, device: DeviceToken? = nil,
                        onRegistration: @escaping @Sendable (AppHost.RemoteNotificationRegistration, DeviceToken) -> Void = { _, _ in })
    async throws -> (Auth, DeviceToken) {
        let token = Mutex<DeviceToken?>(nil)
        let installed = try await world.install(profile, userDefaults: userDefaults, keychain: keychain, appName: appName, device: device,
                                                setToken: false, onURL: { url, handling in
            switch handling {
            case .handled(let what):
                timeline.record(.interceptor, to: .app, "opens \(url.scheme ?? "?")://… in the app: Auth.canHandle(url) took \(what)",
                                .redirect(handling: .handled, refusal: nil))
            case .refused(let refusal):
                timeline.record(.interceptor, to: .app, "opens \(url.scheme ?? "?")://… in the app: not handled (\(refusal.code.rawValue)): \(refusal.message)",
                                .redirect(handling: .refused, refusal: refusal.code))
            }
        }, onPush: { token, handled in
            timeline.record(.device, to: .app,
                            "hands the push to the app delegate: \(handled ? "Auth.canHandleNotification took it" : "nobody passed it to Auth.canHandleNotification")",
                            .pushDelivered(token: token.hex, handled: handled))
        }, onRegistration: { outcome in
            // Later registrations (the SDK's) come after install returned the token.
            if let issued = token.withLock({ $0 }) { onRegistration(outcome, issued) }
        })
        token.withLock { $0 = installed.1 }
        return installed
    }

    /// A presenter's events, in the timeline: the redirect is a message from the page to the app.
    package static func record(_ event: PresenterEvent, into timeline: Timeline) {
        switch event.kind {
        case .redirect: timeline.record(.browser, to: .app, event.message, .redirect(handling: .pending, refusal: nil))
        case .handingOff: timeline.record(.browser, to: .interceptor, event.message)
        case .refused: timeline.record(.app, event.message, .redirect(handling: .refused, refusal: event.refusal))
        default: timeline.record(.browser, event.message, .presenter(kind: event.kind.rawValue))
        }
    }

    /// The receiver's events, in the scenario's timeline.
    static func record(_ event: ReceiverEvent, into timeline: Timeline) {
        switch event {
        case .accepted(let push):
            timeline.record(.receiver, to: .device,
                            "\(push.environment) accepts the silent push to \(push.deviceToken.short) and logs it",
                            .pushAccepted(token: push.deviceToken.hex, environment: push.environment))
        case .rejected(let rejection, _, let environment, let token):
            timeline.record(.receiver, to: .sender,
                            "\(environment) answers \(rejection.reason.status.map(String.init) ?? "?") \(rejection.reason): \(rejection.detail)",
                            .pushRejected(token: token.lowercased(), environment: environment, reason: rejection.reason,
                                          status: rejection.reason.status, detail: rejection.detail))
        case .fault(let fault, let environment):
            timeline.record(.receiver, "\(environment) injects fault \(fault)", .receiverFault(fault: fault))
        case .handshakeTimedOut(let seconds):
            timeline.record(.receiver, "closes a connection that did not finish TLS and the HTTP/2 preface in \(seconds) s")
        case .idledOut(let seconds, let environment):
            timeline.record(.receiver, "\(environment) sends GOAWAY IdleTimeout to a connection idle for \(seconds) s")
        case .connection, .refused: break
        }
    }

    /// The backend's events, in the scenario's timeline: each as its line (``BackendEvent/line``,
    /// the wording the inspector's sign-ins use too) and, as it is, the fact `explain` reads.
    package static func record(_ event: BackendEvent, signIn: SignInID?, into timeline: Timeline) {
        let line = event.line
        @Sendable func part(_ party: BackendEvent.Party) -> Part {
            switch party {
            case .app: .app
            case .backend: .backend
            case .apns: .sender
            }
        }
        timeline.record(part(line.from), to: line.to.map(part), line.text, .backend(event), signIn: signIn)
        if case .pushing(let token, let environment, _) = event {
            timeline.record(.sender, to: .receiver, "POST /3/device/\(token.prefix(8))… to \(environment.appleHost) (background, priority 5)")
        }
    }
}

/// Records the moment the SDK falls back to reCAPTCHA (and why), then presents as `inner` does.
/// `@unchecked Sendable`: it holds the app's `Auth` (not Sendable, as in 12.19), whose state is
/// under its own locks, and reads it only.
struct RecordingPresenter: AuthUIDelegate, @unchecked Sendable {
    let inner: any AuthUIDelegate & Sendable
    let auth: Auth
    let timeline: Timeline

    func present(_ url: URL, host: AppHost) async {
        var reason: ReCAPTCHAFallbackReason?
        if auth.lastAppVerification == .reCAPTCHA, let why = auth.lastFallbackReason { reason = why }
        let why = reason.map(String.init(describing:)) ?? "no app credential"
        timeline.record(.app, to: .browser, "no app credential (\(why)): presents the reCAPTCHA page \(url.path)?…eventId=…",
                        .fallback(reason: why, code: reason?.code, url: url.absoluteString))
        await inner.present(url, host: host)
    }
}
