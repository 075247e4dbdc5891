import APNsWire
import FirebaseAuthCore
import Foundation
import Scenarios
import Testing

/// One description of an app (``AppProfile``, `AuthsimTesting`'s `SimulatedApp`), with one set of
/// defaults: the app the phone-auth guide builds, a debug build signed with a development
/// profile whose app delegate leaves the token's type to the SDK (its proxy passes `.unknown`,
/// and FirebaseAuth Sources/Swift/SystemService/AuthAPNSTokenManager.swift reads the type from
/// `embedded.mobileprovision`). The scenario format keeps the defaults its files were written with.
@Suite("One description of an app, one set of defaults")
struct AppProfileTests {
    let phone = "+16505550199"

    @Test("AppProfile(): a debug build with the profile made for it, the type left to the SDK; installed, its token is sandbox and the push signs in")
    func guideDefaults() async throws {
        let app = AppProfile()
        #expect(app.build == .debug && app.provisioningProfile == .forBuild && app.declaredTokenType == nil && app.tokenTypePassed == .unknown)
        #expect(AppProfile.Build.debug.apsEnvironment == "development" && AppProfile.Build.release.apsEnvironment == "production")
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(app)
            #expect(auth.apnsTokenType == .sandbox)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(auth.lastAppVerification == .silentPush)
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
        }
    }

    @Test("a release build: production tokens, a production profile, the SDK types the token .prod, and the push still signs in")
    func releaseBuild() async throws {
        var app = AppProfile()
        app.build = .release
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(app)
            #expect(auth.apnsTokenType == .prod)
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(auth.lastAppVerification == .silentPush)
        }
    }

    @Test("the scenario format's defaults stay its own: the app's code declares .sandbox, no provisioning profile")
    func scenarioFormat() throws {
        let spec = ScenarioSpec(name: "s", summary: "", expectedOutcome: "signed in")
        #expect(spec.app.declaredTokenType == .sandbox && spec.app.provisioningProfile == .none && spec.app.build == .debug)
        let file = try ScenarioSpec(json: Data(#"{"format":"authsim-scenario/1","name":"x","summary":"","expect":{"outcome":"signed in"},"app":{"build":"release"}}"#.utf8),
                                    source: "x.json")
        #expect(file.app.build == .release && file.app.declaredTokenType == .sandbox && file.app.provisioningProfile == .none)
    }
}
