import AuthBackend
import DeviceOS
@testable import FirebaseAuthCore
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import Testing
import TestSupport
import Utilities

/// Every test of the guides' own code, one at a time: the guides use the default app
/// (`FirebaseApp.configure()`, `Auth.auth()`, `PhoneAuthProvider.provider()`), which is one per
/// process, so these tests take turns with it.
@Suite("The phone-auth, multi-factor and Apple sign-in guides' own Swift, run against the real backend", .serialized)
struct GuideCode {}

/// A world for the guides' code: the receiver, the backend over HTTP (sending its silent pushes
/// through the real APNs client), a device, and the default `FirebaseApp` configured as
/// `GoogleService-Info.plist` would configure it, talking to the backend as `useEmulator` does.
struct GuideWorld {
    let world: PhoneAuthWorld
    let host: AppHost
    let folder: URL
    let toolkit: IdentityToolkit
    /// The backend's events, as a scenario's timeline keeps them.
    let timeline: Timeline
    /// The backend's wall clock: a test moves it on to have a refresh give a new ID token (two
    /// tokens issued in the same second are the same token, as Google's are).
    let backendClock: AdjustableWallClock
    let bundleID = "com.example.authsim"

    /// Starts the world and configures the default app on a debug-build device (sandbox token).
    static func start(_ name: String, configuration: BackendConfiguration = BackendConfiguration(),
                      tokenType: AuthAPNSTokenType = .sandbox) async throws -> GuideWorld {
        let folder = temporaryDirectory(name)
        let timeline = Timeline()
        let backendClock = AdjustableWallClock()
        let world = try await PhoneAuthWorld.start(certs: folder.appendingPathComponent("Certs"), state: folder.appendingPathComponent("State"),
                                                   configuration: configuration, backendClock: backendClock, pushLatency: .zero,
                                                   appClock: ManualClock(), backendObserver: { ScenarioRunner.record($0, signIn: $1, into: timeline) })
        let options = FirebaseOptions(googleAppID: "1:123456789012:ios:a1b2c3d4e5f60718", gcmSenderID: "123456789012")
        options.apiKey = world.apiKey
        options.projectID = world.projectID
        options.bundleID = configuration.bundleID
        let host = AppHost(AppHost.Configuration(bundleID: configuration.bundleID, urlSchemes: [options.encodedAppIDScheme]), clock: world.appClock, transport: world.transport)
        FirebaseApp.configure(options: options, host: host)
        Auth.auth().useEmulator(withHost: world.backendHost, port: world.backendPort)
        // useEmulator turns app verification off, as the SDK's does; these apps prove themselves.
        Auth.auth().settings?.isAppVerificationDisabledForTesting = false
        let token = try await world.devices.installDevice(for: host, environment: .sandbox) { _, _ in }
        Auth.auth().setAPNSToken(Data(token.bytes), type: tokenType)
        guard let toolkit = world.toolkit else { throw GuideError("the world runs its backend elsewhere") }
        return GuideWorld(world: world, host: host, folder: folder, toolkit: toolkit, timeline: timeline, backendClock: backendClock)
    }

    func shutdown() async {
        await world.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The code the backend texted to `number` last: what the user reads off the SMS.
    func sms(to number: String) async -> String? { await world.lastCode(for: number) }

    /// What the Apple sign-in guide's `ASAuthorizationControllerDelegate` gets for `who`: the
    /// identity token (as a string), the raw nonce the app kept, the name and the authorization
    /// code, through the simulated Sign in with Apple sheet.
    func appleAuthorization(_ who: String) async throws -> (idTokenString: String, nonce: String, fullName: PersonNameComponents?,
                                                           authorizationCode: String) {
        let nonce = AppleNonce.random()
        let sheet = try await world.appleSheet.authorize(clientID: bundleID, appleUser: who, nonce: AppleNonce.sha256(nonce))
        return (sheet.identityToken, nonce, sheet.fullName, sheet.authorizationCode)
    }
}

extension GuideWorld {
    /// How the default app proved itself on its last code request (authsim's, not the SDK's: the
    /// guides' files import FirebaseAuth, which does not have it).
    var lastAppVerification: AppVerification? { Auth.auth().lastAppVerification }
}

/// The SDK's message for `code` (`AuthErrorCode.errorDescription`, internal in the SDK).
func sdkDescription(_ code: AuthErrorCode) -> String { code.errorDescription }

/// A resolver whose pending credential this backend never issued, as the SDK's own unit tests build
/// them (its initializer is internal in the SDK, so the guides' files cannot).
func forgedResolver(like resolver: MultiFactorResolver) -> MultiFactorResolver {
    MultiFactorResolver(mfaPendingCredential: "not-a-pending-credential", hints: resolver.hints, auth: Auth.auth())
}

struct GuideError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` in a fresh ``GuideWorld`` and shuts it down, whatever happens.
func withGuideWorld<T>(_ name: String = #function, configuration: BackendConfiguration = BackendConfiguration(),
                       tokenType: AuthAPNSTokenType = .sandbox, _ body: (GuideWorld) async throws -> T) async throws -> T {
    let guide = try await GuideWorld.start(name, configuration: configuration, tokenType: tokenType)
    do {
        let result = try await body(guide)
        await guide.shutdown()
        return result
    } catch {
        await guide.shutdown()
        throw error
    }
}

/// Counts the calls of a completion and checks each runs on the main queue, as the SDK promises.
@MainActor
final class CompletionCheck {
    private(set) var calls: [String: Int] = [:]

    /// Records a call of `name`'s completion; fails the test off the main queue.
    func called(_ name: String) {
        dispatchPrecondition(condition: .onQueue(.main))
        calls[name, default: 0] += 1
    }

    /// Every completion recorded was called exactly once.
    func expectEachOnce(sourceLocation: SourceLocation = #_sourceLocation) {
        for (name, count) in calls { #expect(count == 1, "\(name) completion called \(count) times", sourceLocation: sourceLocation) }
    }
}
