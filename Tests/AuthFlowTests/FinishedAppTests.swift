import FirebaseAuthCore
import FirebaseCore
import DeviceOS
import Foundation
import Scenarios
import TestSupport
import Testing

/// A simulated app that signed in and whose device left the run is freed: a run of many devices
/// one after another (`authsim bench flows`, `Benchmarks/run.sh growth`) holds only the devices
/// still signing in, not every phone that ever did.
@Suite("A finished app is freed")
struct FinishedAppTests {
    final class Weak<Object: AnyObject>: @unchecked Sendable {
        weak var object: Object?
        init(_ object: Object?) { self.object = object }
    }

    @Test("after a silent-push sign-in and its device retired, nothing holds the app's Auth, user or app")
    func freed() async throws {
        try await withWorld { world, _ in
            let (auth, user, app, host) = try await Self.signIn(world)
            #expect(auth.object == nil, "the Auth is still held")
            #expect(user.object == nil, "the User is still held")
            #expect(app.object == nil, "the FirebaseApp is still held")
            #expect(host.object == nil, "the AppHost is still held")
        }
    }

    @Test("a user kept after its Auth is gone says so when asked to refresh, where the SDK stops with fatalError in most calls")
    func userOutlivesAuth() async throws {
        try await withWorld { world, _ in
            let (auth, user) = try await Self.signInAndRetire(world)
            let gone = Weak(auth)
            _ = consume auth
            #expect(gone.object == nil, "the Auth is still held")
            do throws(AuthError) {
                _ = try await AuthError.catching { try await user.getIDToken(forcingRefresh: true) }
                Issue.record("a user without its Auth refreshed its token")
            } catch {
                #expect(error.code == .internalError)
                #expect(error.message.contains("this user's Auth is gone"), "\(error.message)")
            }
        }
    }

    /// Signs one app in, retires its device and returns weak references to what it made.
    static func signIn(_ world: PhoneAuthWorld) async throws -> (Weak<Auth>, Weak<User>, Weak<FirebaseApp>, Weak<AppHost>) {
        let (auth, user) = try await signInAndRetire(world)
        return (Weak(auth), Weak(user), Weak(auth.app), Weak(auth.app?.host))
    }

    /// One app signed in by silent push, its device then retired.
    static func signInAndRetire(_ world: PhoneAuthWorld) async throws -> (Auth, User) {
        let (auth, device) = try await world.install(AppProfile())
        let provider = PhoneAuthProvider.provider(auth: auth)
        let verificationID = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
        let code = try #require(await world.lastCode(for: phone))
        let result = try await auth.signIn(with: provider.credential(withVerificationID: verificationID, verificationCode: code))
        try await world.devices.retire(device, environment: AppProfile().build.environment)
        return (auth, result.user)
    }
}
