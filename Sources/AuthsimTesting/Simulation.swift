import APNsWire
import AuthBackend
import DeviceLink
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import LocalPKI
import Scenarios
import Utilities

@_exported import enum IdentityToolkitAPI.AppVerification

/// A test's device and channel, in one call: a backend that plays Firebase, push-receiver and its
/// device hub, and the simulated app on a device, installed as the process `FirebaseApp.configure()`
/// and `Auth.auth()` see. The app's own code runs unchanged inside ``run(_:app:_:)``:
///
/// ```swift
/// import AuthsimTesting
/// import FirebaseAuth
/// import FirebaseCore
///
/// @Test func signsInBySilentPush() async throws {
///     try await Simulation.run(.silentPushWorks) { simulation in
///         FirebaseApp.configure()
///         let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber("+16505551234", uiDelegate: nil)
///         let code = try await simulation.smsCode(to: "+16505551234")
///         let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: code)
///         let result = try await Auth.auth().signIn(with: credential)
///     }
/// }
/// ```
///
/// Each run has its own backend, receiver, device, folder and default `FirebaseApp`: tests run in
/// parallel (Swift Testing) or one by one (XCTest) without sharing state. The app is bound to the
/// body's task and to every task and completion handler the SDK's calls start from it; code that
/// hops to a `DispatchQueue` by itself leaves it behind (`Auth.auth()` there says so).
public final class Simulation: Sendable {
    public let world: SimulatedWorld
    public let app: SimulatedApp
    /// The app's bundle: `Info.plist`, `GoogleService-Info.plist`, `embedded.mobileprovision`.
    public let bundle: URL
    /// The device's APNs token (hex), as the receiver knows it.
    public let deviceToken: String
    /// `host:port` of the backend, as `FIREBASE_AUTH_EMULATOR_HOST` names it (Admin SDK, REST).
    public var emulatorHost: String { "\(phoneWorld.backendHost):\(phoneWorld.backendPort)" }
    /// The project the backend plays.
    public var projectID: String { phoneWorld.projectID }

    let phoneWorld: PhoneAuthWorld
    let process: AppProcess
    let folder: URL

    private init(world: SimulatedWorld, app: SimulatedApp, bundle: URL, deviceToken: String, phoneWorld: PhoneAuthWorld,
                 process: AppProcess, folder: URL) {
        self.world = world
        self.app = app
        self.bundle = bundle
        self.deviceToken = deviceToken
        self.phoneWorld = phoneWorld
        self.process = process
        self.folder = folder
    }

    /// Starts the world, installs `app` on a new device, runs `body` as that app's process, and
    /// stops everything, whatever `body` does.
    public static func run<T>(_ world: SimulatedWorld = .silentPushWorks, app: SimulatedApp = SimulatedApp(),
                              _ body: (Simulation) async throws -> T) async throws -> T {
        let simulation = try await start(world, app: app)
        do {
            let result = try await simulation.process.run { try await body(simulation) }
            await simulation.stop()
            return result
        } catch {
            await simulation.stop()
            throw error
        }
    }

    static func start(_ world: SimulatedWorld, app: SimulatedApp) async throws -> Simulation {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-testing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            return try await start(world, app: app, folder: folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw SimulationError("the simulation did not start: \(error)")
        }
    }

    private static func start(_ world: SimulatedWorld, app: SimulatedApp, folder: URL) async throws -> Simulation {
        try refuseScenarioScript(app)
        var configuration = BackendConfiguration()
        configuration.bundleID = app.bundleID
        configuration.suggestedTimeout = world.suggestedTimeout
        configuration.phoneRecaptchaEnforcement = switch world.smsDefense {
        case .off: .off
        case .audit: .audit
        case .enforce: .enforce
        }
        switch world.recaptcha {
        case .passes: configuration.recaptchaOutcome = .pass
        case .cancelled: configuration.recaptchaOutcome = .userCancels
        }
        // Where the push comes, every SDK wait ends by its event (a clock nobody advances: a slow
        // machine never turns into a reCAPTCHA fallback); where it does not, the SDK's timeouts
        // run in real time, as on the phone.
        let appClock: any Clock<Duration> = world.push == .delivered ? ManualClock() : ContinuousClock()
        let phoneWorld = try await PhoneAuthWorld.start(certs: folder.appendingPathComponent("Certs"),
                                                        state: folder.appendingPathComponent("State"),
                                                        configuration: configuration, pushLatency: .zero, appClock: appClock)
        do {
            let bundle = folder.appendingPathComponent("\(app.bundleID).app")
            try write(app, configuration: configuration, to: bundle, world: phoneWorld)
            let files = try AppBundle(directory: bundle)
            let configuration = AppHost.Configuration(bundle: files, isSimulator: app.isSimulator, forwardsNotifications: app.forwardsNotifications,
                                                      forwardsURLs: app.forwardsURLs)
            let host = AppHost(configuration, recaptchaEnterprise: app.recaptchaEnterpriseSDK(service: phoneWorld.backendURL),
                               clock: appClock, transport: phoneWorld.transport)
            let token = try await phoneWorld.devices.installDevice(for: host, environment: app.build.environment) { _, _ in }
            host.answerRegistrations(on: token, with: app.apnsRegistration.outcome)
            let process = AppProcess(host: host, bundle: bundle, backend: AppProcess.Backend(host: phoneWorld.backendHost, port: phoneWorld.backendPort))
            if let declared = declaredType(app: app, world: world) {
                // The app delegate's own didRegisterForRemoteNotificationsWithDeviceToken.
                host.setRegistrationDelegate { [weak process] registration in
                    guard let process, let firebase = process.defaultApp else { return }
                    let auth = Auth.auth(app: firebase)
                    switch registration {
                    case .token(let data): auth.setAPNSToken(data, type: declared)
                    case .failed(let reason):
                        auth.application(host, didFailToRegisterForRemoteNotificationsWithError: RegistrationFailure(reason))
                    }
                }
            }
            if world.push == .lost, let channel = phoneWorld.channel { await channel.hub.setLosesPushes(true) }
            return Simulation(world: world, app: app, bundle: bundle, deviceToken: token.hex, phoneWorld: phoneWorld, process: process,
                              folder: folder)
        } catch {
            await phoneWorld.shutdown()
            throw error
        }
    }

    /// The type the app's code passes, if it passes one: the other one in a token-type-mismatch world.
    static func declaredType(app: SimulatedApp, world: SimulatedWorld) -> AuthAPNSTokenType? {
        guard world.push == .tokenTypeMismatch else { return app.declaredTokenType }
        return app.build.environment == .sandbox ? .prod : .sandbox
    }

    /// What a scenario scripts about the app's code and life is the test's own code here: set on
    /// the app, it would be ignored, so it is refused, saying what to write instead.
    static func refuseScenarioScript(_ app: SimulatedApp) throws {
        let instead: [(Bool, String)] = [
            (app.languageCode != nil, "languageCode: set Auth.auth().languageCode in the test's code"),
            (app.appVerificationDisabledForTesting, "appVerificationDisabledForTesting: set Auth.auth().settings?.isAppVerificationDisabledForTesting in the test's code"),
            (app.restartAfterSMS, "restartAfterSMS is a scenario's (authsim run); a test restarts the app by running a second Simulation on its files"),
            (app.killedBeforePush, "killedBeforePush is a scenario's (authsim run)"),
            (app.uiDelegate != nil, "uiDelegate: pass it to verifyPhoneNumber(_:uiDelegate:) in the test's code"),
            (app.schemeDirectory != nil, "schemeDirectory is authsim phone's; a Simulation hands the reCAPTCHA redirect to the app itself"),
            (app.bundle != nil, "bundle: a Simulation writes the app's files from the profile's fields (bundleID, googleAppID, clientID, urlSchemes, build, provisioningProfile)"),
        ]
        let refused = instead.filter(\.0).map(\.1)
        guard refused.isEmpty else { throw SimulationError("the app sets what a Simulation does not do: " + refused.joined(separator: "; ")) }
    }

    static func write(_ app: SimulatedApp, configuration: BackendConfiguration, to bundle: URL, world: PhoneAuthWorld) throws {
        var sample = SampleApp()
        sample.bundleID = app.bundleID
        sample.googleAppID = app.googleAppID
        sample.apiKey = configuration.apiKey
        sample.projectID = configuration.projectID
        sample.clientID = app.clientID
        sample.urlSchemes = app.urlSchemes
        try sample.write(to: bundle)
        // The profile the build is signed with (by default one for its build), where Xcode puts it.
        guard let profile = try app.withProvisioningProfileMade(in: bundle.deletingLastPathComponent(),
                                                                credentials: world.channel?.credentials).provisioningProfile.file else { return }
        try FileManager.default.copyItem(at: profile, to: bundle.appendingPathComponent("embedded.mobileprovision"))
    }

    func stop() async {
        process.deleteAllApps()
        await phoneWorld.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: What the test asks the world

    /// The code the backend texted to `phoneNumber` last, as the user reads it off the SMS
    /// (spaces, dashes and brackets in the number are ignored). Throws when none was sent.
    public func smsCode(to phoneNumber: String) async throws -> String {
        let number = phoneNumber.filter { $0 == "+" || $0.isNumber }
        guard let code = await phoneWorld.lastCode(for: number) else {
            throw SimulationError("no SMS was sent to \(number)")
        }
        return code
    }

    /// The code of the last email sent to `email` whose code is still unused (a password reset,
    /// an email verification), as the user would copy it from the email's link.
    public func emailCode(to email: String) async throws -> String {
        guard let toolkit = phoneWorld.toolkit else { throw SimulationError("the backend runs elsewhere: read its …/oobCodes") }
        let outbox: [OobEmail]
        do throws(IdentityToolkitError) { outbox = try await toolkit.emailOutbox() } catch {
            throw SimulationError("the backend's email outbox cannot be read: \(error)")
        }
        guard let message = outbox.last(where: { $0.email == email.lowercased() }) else {
            throw SimulationError("no email with an unused code was sent to \(email)")
        }
        return message.code
    }

    /// What became of the backend's silent pushes to this app, oldest first.
    public func silentPushes() async -> [SilentPushRecord] { await phoneWorld.silentPushResults() ?? [] }

    /// Enrolls `phoneNumber` as a phone second factor of the user `uid`, as the Firebase console or
    /// the Admin SDK does. (Firebase refuses a phone second factor on a user whose first factor is
    /// a phone number: sign the user in another way first, with ``appleAuthorization(_:)``.)
    public func enrollSecondFactor(uid: String, phoneNumber: String, displayName: String? = nil) async throws {
        guard let toolkit = phoneWorld.toolkit else { throw SimulationError("the backend runs elsewhere") }
        do throws(IdentityToolkitError) {
            _ = try await toolkit.enrollSecondFactor(localId: uid, phoneNumber: phoneNumber, displayName: displayName)
        } catch {
            throw SimulationError("the backend refused to enroll \(phoneNumber) for \(uid): \(error)")
        }
    }

    /// Disables the user `uid`, as the Firebase console or the Admin SDK's `update_user(uid,
    /// disabled=True)` does: the app's next token refresh fails with `userDisabled` (17005), and
    /// the SDK signs the user out.
    public func disableUser(uid: String) async throws {
        guard let toolkit = phoneWorld.toolkit else { throw SimulationError("the backend runs elsewhere") }
        do throws(IdentityToolkitError) {
            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: uid, disableUser: true))
        } catch {
            throw SimulationError("the backend refused to disable \(uid): \(error)")
        }
    }

    /// What the app's `ASAuthorizationControllerDelegate` gets when `appleUser` signs in with Apple
    /// on the system sheet: the identity token (as a string), the raw nonce the app kept (its
    /// SHA-256 went to Apple), the name (first authorization only) and the authorization code.
    public func appleAuthorization(_ appleUser: String) async throws -> AppleAuthorization {
        let nonce = AppleNonce.random()
        let sheet = try await phoneWorld.appleSheet.authorize(clientID: app.bundleID, appleUser: appleUser, nonce: AppleNonce.sha256(nonce))
        return AppleAuthorization(idToken: sheet.identityToken, rawNonce: nonce, fullName: sheet.fullName,
                                  authorizationCode: sheet.authorizationCode)
    }

    /// What the user does on the next identity provider's page the app opens (`OAuthProvider`'s
    /// web flow: `signIn(with:uiDelegate:)`, `getCredentialWith(_:)`), where a person would pick
    /// or make an account. Pages after it answer as the world does: the account `login_hint`
    /// names, else the provider's first account, else a new one.
    public func answerProviderPage(_ answer: ProviderPageAnswer) async throws {
        guard let toolkit = phoneWorld.toolkit else { throw SimulationError("the backend runs elsewhere: start it with --provider-page") }
        await toolkit.answerNextProviderPage(answer.outcome)
    }

    /// A provider's token as the backend (and the Auth Emulator) takes it in place of the one the
    /// provider's own SDK gives the app: its claims as JSON (`sub`, `email`, `email_verified`,
    /// `name`), for `GoogleAuthProvider.credential(withIDToken:accessToken:)`,
    /// `FacebookAuthProvider.credential(withAccessToken:)` and the others. `sub` is the
    /// provider's user ID: the same `sub` is the same provider account.
    public func providerToken(sub: String, email: String? = nil, emailVerified: Bool = true, name: String? = nil) -> String {
        var claims: [String: JSONValue] = ["sub": .string(sub), "email_verified": .bool(emailVerified)]
        if let email { claims["email"] = .string(email) }
        if let name { claims["name"] = .string(name) }
        return (try? IdentityToolkitJSON.encode(claims)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The code an authenticator app shows now for the TOTP secret of `qrCodeURL`
    /// (`TOTPSecret.generateQRCodeURL(withAccountName:issuer:)`), or `stepsAhead` 30-second steps
    /// later: a code is taken once, so a sign-in after the enrollment types a later one.
    public func authenticatorCode(qrCodeURL: String, stepsAhead: Int = 0) throws -> String {
        guard let code = TOTPCodes.authenticatorCode(otpauthURL: qrCodeURL, at: Date(), stepsAhead: stepsAhead) else {
            throw SimulationError("\(qrCodeURL) is not an otpauth:// URL with a Base32 secret")
        }
        return code
    }

    /// How the app proved itself on its last code request (the silent push, reCAPTCHA, reCAPTCHA
    /// Enterprise), as the default app's `Auth` saw it; nil before any, or with no default app.
    public var lastAppVerification: AppVerification? {
        process.defaultApp.flatMap { Auth.auth(app: $0).lastAppVerification }
    }

    /// Why the last code request fell back to reCAPTCHA, in the SDK's terms; nil if it did not.
    public var lastFallbackReason: String? {
        process.defaultApp.flatMap { Auth.auth(app: $0).lastFallbackReason }.map { "\($0)" }
    }
}

/// What the user does on an identity provider's sign-in page (``Simulation/answerProviderPage(_:)``).
public enum ProviderPageAnswer: Sendable, Hashable {
    /// Signs in as the provider's account with this email (made if the provider has none).
    case account(email: String)
    /// Makes a new account (a random ID and email) and signs in as it.
    case newAccount
    /// The account `login_hint` names, else the provider's first account, else a new one.
    case firstAccount
    /// Closes the page: the app gets `webContextCancelled` (17058).
    case cancel
    /// The page reports this `firebaseError` code (`auth/internal-error` is 17062; codes the SDK
    /// does not know are 17063).
    case error(code: String, message: String = "An error occurred.")

    var outcome: ProviderPageOutcome {
        switch self {
        case .account(let email): .account(email: email)
        case .newAccount: .newAccount
        case .firstAccount: .firstAccount
        case .cancel: .userCancels
        case .error(let code, let message): .firebaseError(code: code, message: message)
        }
    }
}

/// Sign in with Apple's answer, as `ASAuthorizationAppleIDCredential` gives it to the app.
public struct AppleAuthorization: Sendable {
    public let idToken: String
    public let rawNonce: String
    public let fullName: PersonNameComponents?
    public let authorizationCode: String
}

/// Why the simulation could not do what the test asked.
public struct SimulationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
