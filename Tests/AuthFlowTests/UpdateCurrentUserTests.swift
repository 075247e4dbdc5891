import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import Scenarios
import Testing

/// `Auth.updateCurrentUser(_:)` and its completion form, as FirebaseAuth 12.19 does them
/// (`Auth/Auth.swift` 220–269 and `updateCurrentUser(_:byForce:savingToDisk:)` 1959–1983): another
/// Auth's user made current and saved; a nil user `nullUser`; a user of another API key reloaded
/// with this Auth's configuration first, which it keeps.
@Suite("updateCurrentUser: another Auth's user made this one's current user")
struct UpdateCurrentUserTests {
    /// A second app in the world's process: its own name, keychain and transport.
    func secondAuth(_ world: PhoneAuthWorld, apiKey: String? = nil) -> (Auth, RecordingTransport) {
        let profile = AppProfile()
        let options = world.options(for: profile)
        options.bundleID = profile.bundleID
        if let apiKey { options.apiKey = apiKey }
        let recording = RecordingTransport(world.transport)
        let host = AppHost(AppHost.Configuration(bundleID: profile.bundleID, urlSchemes: [options.encodedAppIDScheme]), clock: world.appClock, transport: recording)
        return (world.auth(options: options, host: host), recording)
    }

    @Test("same API key: current at once, no request, kept in the keychain; nil: nullUser (17067); another key: reloaded with it, refused as Google refuses the key (17999), and the user keeps that key, as on a device")
    func updateCurrentUser() async throws {
        // Google's front end: only the project's key (the emulator's rule takes any).
        var configuration = BackendConfiguration()
        configuration.apiKeyCheck = .projectKey
        try await withWorld(configuration: configuration) { world, _ in
            let (first, _) = try await recordingApp(world)
            let user = try await first.createUser(withEmail: "ada@example.com", password: "secret1").user

            let (second, secondRequests) = secondAuth(world)
            try await second.updateCurrentUser(user)
            #expect(second.currentUser === user && first.currentUser === user)
            #expect(secondRequests.requests.withLock { $0.isEmpty }, "the same project's key: no reload")
            let account = Auth.keychainAccountPrefix + "\(try #require(second.app?.name))_firebase_user"
            let saved = try #require(second.host.keychain.data(service: second.keychainService, account: account), "saved in the second app's keychain")
            #expect(String(decoding: saved, as: UTF8.self).contains(user.uid))

            let noUser = await withCheckedContinuation { continuation in
                second.updateCurrentUser(nil) { error in continuation.resume(returning: error) }
            }
            #expect((noUser as NSError?)?.domain == AuthErrorDomain && (noUser as NSError?)?.code == AuthErrorCode.nullUser.rawValue)

            // Another project's key: the reload with it is refused, the user is not made current,
            // and its requests go with that key from now on (the SDK does not put the old one back).
            let (third, thirdRequests) = secondAuth(world, apiKey: "another-projects-key")
            do {
                try await third.updateCurrentUser(user)
                Issue.record("a user was reloaded with another project's key")
            } catch {
                // Google's answer to a key it does not know, which 12.19 does not map: 17999.
                #expect((error as NSError).code == AuthErrorCode.internalError.rawValue, "\(error)")
                #expect("\(error)".contains("API key not valid"), "\(error)")
            }
            #expect(third.currentUser == nil)
            #expect(thirdRequests.requests.withLock { $0.map(\.url.absoluteString) }.contains { $0.hasSuffix("/getAccountInfo?key=another-projects-key") },
                    "\(thirdRequests.requests.withLock { $0.map(\.url.absoluteString) })")
            do {
                _ = try await user.getIDToken(forcingRefresh: true)
                Issue.record("the refresh went with the user's old key")
            } catch {
                #expect((error as NSError).code == AuthErrorCode.internalError.rawValue && "\(error)".contains("API key not valid"), "\(error)")
            }
        }
    }

    @Test("a User and an AuthDataResult archived with NSKeyedArchiver come back with their profile and tokens, with no Auth until updateCurrentUser makes one theirs (User.swift 1773–1860, AuthDataResult.swift 51–72)")
    func archivedUser() async throws {
        try await withWorld { world, _ in
            let (first, _) = try await recordingApp(world)
            let result = try await first.createUser(withEmail: "ada@example.com", password: "secret1")
            try await result.user.updatePassword(to: "secret2")
            let data = try NSKeyedArchiver.archivedData(withRootObject: result, requiringSecureCoding: true)
            let classes: [AnyClass] = [AuthDataResult.self, User.self, AdditionalUserInfo.self, OAuthCredential.self, UserMetadata.self,
                                       MultiFactor.self, NSArray.self, MultiFactorInfo.self, PhoneMultiFactorInfo.self, NSData.self]
            let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: data) as? AuthDataResult)
            let user = back.user
            #expect(user !== result.user && user.uid == result.user.uid && user.email == "ada@example.com")
            #expect(user.providerData.map(\.providerID) == ["password"] && back.additionalUserInfo?.isNewUser == true)
            #expect(user.metadata.creationDate == result.user.metadata.creationDate)

            let (second, _) = UpdateCurrentUserTests().secondAuth(world)
            try await second.updateCurrentUser(user)
            #expect(second.currentUser === user)
            #expect(try await user.getIDToken(forcingRefresh: true).isEmpty == false)
        }
    }
}
