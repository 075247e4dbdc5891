import AuthBackend
import DeviceOS
import FirebaseAuthCore
import Foundation
import Scenarios
import Synchronization
import Testing
import TestSupport
import Utilities

/// Row 6: what FirebaseAuth keeps in the keychain (`AuthAppCredentialManager.swift` 33–48,
/// `Auth.swift` 1656, 1772–1793, 1986–2010), across an app's death and relaunch.
@Suite("Row 6: the keychain across a relaunch: app credential, pending receipts, the signed-in user")
struct KeychainTests {
    static let appName = "relaunched-app"
    static let service = "firebase_auth_1:123456789012:ios:a1b2c3d4e5f60718"

    func permissions(_ url: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("killed after verifyClient, before the push: relaunched on the same device with the same keychain, the app takes the late push for the pre-kill receipt, and the next verifyPhoneNumber uses that credential with no new verifyClient (AuthAppCredentialManager.swift 33–48)")
    func latePushAfterRelaunch() async throws {
        try await withWorld { world, folder in
            let file = folder.appendingPathComponent("Device/Keychain/com.example.authsim.json")
            let (first, device) = try await world.install(AppProfile(), keychain: Keychain(file: file), appName: Self.appName)
            // The push is held on its way (logged by APNs, not yet at the device), so that it
            // reaches the device only once the app has been killed and started again.
            let channel = try #require(world.channel)
            await channel.hub.setLosesPushes(true)
            // The receipt is in the keychain once verifyClient answers (the SDK saves on every change):
            // the keychain says when it wrote it (this waited 1 s, reading the file every 2 ms, until issue 26).
            let (saves, saved) = AsyncStream<Void>.makeStream()
            first.host.keychain.onChange { items in
                if items.contains(where: { $0.account == "firebase_auth_1_app_credentials" }) { saved.yield() }
            }
            let doomed = Task { [provider = PhoneAuthProvider.provider(auth: first)] in await verificationError(provider) }
            for await _ in saves { break }
            func stored() -> Data? { Keychain(file: file).data(service: Self.service, account: "firebase_auth_1_app_credentials") }
            let receipt = try #require(first.pendingReceipts.first)
            let stored = try #require(stored())
            let items = try #require(try JSONSerialization.jsonObject(with: stored) as? [String: Any])
            #expect(items["pending_receipts"] as? [String] == [receipt])
            #expect(first.cachedCredential == nil)

            // iOS kills the app: its verifyPhoneNumber stops there, nothing more is sent. The push
            // wakes a new process on the same device, which hands it to the app delegate.
            first.host.terminate()
            #expect(await doomed.value == .internalError)
            let (second, _) = try await world.install(AppProfile(), keychain: Keychain(file: file), appName: Self.appName, device: device)
            #expect(second.pendingReceipts == [receipt])
            await channel.hub.setLosesPushes(false)
            let push = try #require(try loggedPushes(in: channel.deliveryLogFile).first)
            #expect(push["device-token"] as? String == device.hex)
            #expect(second.host.didReceiveRemoteNotification(try #require(push["payload"] as? [String: Any])))
            let credential = try #require(second.cachedCredential)
            #expect(credential.receipt == receipt)
            #expect(second.pendingReceipts.isEmpty)

            // The next sign-in needs no push: the cached credential proves the app.
            let provider = PhoneAuthProvider.provider(auth: second)
            let id = try await provider.verifyPhoneNumber("+16505550177", uiDelegate: nil)
            #expect(second.lastAppVerification == .silentPush)
            #expect(try fixtureLogCount(world) == 1)
            let code = try #require(await world.lastCode(for: "+16505550177"))
            _ = try await second.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))

            // The file is the user's alone, in a folder that is too.
            #expect(try permissions(file) == 0o600)
            #expect(try permissions(file.deletingLastPathComponent()) == 0o700)
            // The killed process sent nothing after its death: one code, for the relaunched app.
            #expect(await world.toolkit!.messages.count == 1)
        }
    }

    @Test("the signed-in user survives a relaunch (Auth.swift 1772–1793): same uid and phone, tokens that refresh; signOut removes it from the keychain")
    func userRestored() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505554567": "123456"]
        try await withWorld(configuration: configuration) { world, folder in
            let file = folder.appendingPathComponent("keychain.json")
            var profile = AppProfile()
            profile.appVerificationDisabledForTesting = true
            let (first, device) = try await world.install(profile, keychain: Keychain(file: file), appName: Self.appName)
            let provider = PhoneAuthProvider.provider(auth: first)
            let id = try await provider.verifyPhoneNumber("+16505554567", uiDelegate: nil)
            let uid = try await first.signIn(with: provider.credential(withVerificationID: id, verificationCode: "123456")).user.uid
            #expect(Keychain(file: file).data(service: Self.service, account: "firebase_auth_1_\(Self.appName)_firebase_user") != nil)

            let (second, _) = try await world.install(profile, keychain: Keychain(file: file), appName: Self.appName, device: device)
            let restored = try #require(second.currentUser)
            #expect(restored.uid == uid)
            #expect(restored.phoneNumber == "+16505554567")
            #expect(restored.providerData.map(\.providerID) == ["phone"])
            let token = try await restored.getIDToken(forcingRefresh: true)
            let payload = try #require(Base64URL.decode(token.split(separator: ".")[1]))
            #expect((try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])?["sub"] as? String == uid)

            // Another app name is another user item: nothing restored there.
            let (other, _) = try await world.install(profile, keychain: Keychain(file: file), appName: "another-app", device: device)
            #expect(other.currentUser == nil)

            try second.signOut()
            #expect(Keychain(file: file).data(service: Self.service, account: "firebase_auth_1_\(Self.appName)_firebase_user") == nil)
            let (third, _) = try await world.install(profile, keychain: Keychain(file: file), appName: Self.appName, device: device)
            #expect(third.currentUser == nil)
        }
    }

    /// A file that is not a keychain is never written over; the keychain it stands for cannot be
    /// written, so a sign-in fails as the SDK fails it on a keychain write error (audit 3, D3.4).
    @Test("a keychain file that is not one is left untouched: Auth starts empty, a sign-in fails with keychainError (17995) naming the file, and the file keeps its bytes")
    func damagedFile() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505554567": "123456"]
        try await withWorld(configuration: configuration) { world, folder in
            let file = folder.appendingPathComponent("keychain.json")
            try Data("{\"half\": ".utf8).write(to: file)
            let keychain = Keychain(file: file)
            #expect(keychain.loadError?.contains("not a keychain file") == true)
            var profile = AppProfile()
            profile.appVerificationDisabledForTesting = true
            let (auth, _) = try await world.install(profile, keychain: keychain, appName: Self.appName)
            #expect(auth.currentUser == nil)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber("+16505554567", uiDelegate: nil)
            let refused = await expectAuthError(.keychainError) {
                try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: "123456"))
            }
            #expect(refused?.message.contains("\(file.path) is not a keychain file") == true, "\(String(describing: refused?.message))")
            #expect(auth.currentUser == nil)
            #expect(try Data(contentsOf: file) == Data("{\"half\": ".utf8))
            #expect(throws: KeychainError.self) { try keychain.set(Data([1]), service: "s", account: "a") }
        }
    }

    /// Keychain access groups, as FirebaseAuth 12.19 keeps a user in one (`Auth.swift` 203–218,
    /// 1476–1545; `SystemService/AuthStoredUserManager.swift`): the item's service is the API key,
    /// its account `firebase_auth_firebase_user`, readable by every app entitled to the group.
    @Test("access groups: two apps of a team share the user through their group, a third without the entitlement gets 17995, the choice survives a relaunch, iCloud and device-only users are apart")
    func accessGroups() async throws {
        try await withWorld { world, folder in
            let group = "ABCDE12345.com.example.shared"
            let shared = Keychain(file: folder.appendingPathComponent("Device/SharedKeychain.json"))
            let options = world.options(for: AppProfile())
            func app(_ bundleID: String, groups: [String], defaults: UserDefaultsStore = UserDefaultsStore()) -> Auth {
                let host = AppHost(AppHost.Configuration(bundleID: bundleID, urlSchemes: [options.encodedAppIDScheme]), userDefaults: defaults,
                                   sharedKeychain: shared, keychainAccessGroups: groups, clock: world.appClock, transport: world.transport)
                return world.auth(options: options, host: host)
            }
            let defaults = UserDefaultsStore(file: folder.appendingPathComponent("Device/a-defaults.json"))
            let a = app("com.example.a", groups: [group], defaults: defaults)
            #expect(a.userAccessGroup == nil && !a.shareAuthStateAcrossDevices)
            try a.useUserAccessGroup(group)
            #expect(a.userAccessGroup == group && a.currentUser == nil)
            let uid = try await a.signInAnonymously().user.uid
            let item = try #require(shared.items.first { $0.accessGroup == group })
            #expect(item.service == options.apiKey && item.account == "firebase_auth_firebase_user")
            #expect(item.accessible == Keychain.accessibleAfterFirstUnlockThisDeviceOnly && item.synchronizable == nil)
            #expect(a.host.keychain.items.allSatisfy { !$0.account.hasSuffix("_firebase_user") }, "the app's own user item is not written")

            // Another app of the team with the group: the same user, stored and made current.
            let b = app("com.example.b", groups: [group])
            #expect(try b.getStoredUser(forAccessGroup: group)?.uid == uid)
            #expect(b.currentUser == nil)
            try b.useUserAccessGroup(group)
            #expect(b.currentUser?.uid == uid)

            // An app without the entitlement: the Security framework's -34018, as keychainError.
            let c = app("com.example.c", groups: [])
            let refused = #expect(throws: (any Error).self) { try c.useUserAccessGroup(group) }
            #expect((refused as NSError?)?.code == AuthErrorCode.keychainError.rawValue)
            #expect(((refused as NSError?)?.userInfo[NSLocalizedFailureReasonErrorKey] as? String)?.contains("SecItemCopyMatching (-34018)") == true)
            #expect(c.currentUser == nil)

            // Relaunched, app A reads its choice from UserDefaults and its user from the group.
            let relaunched = app("com.example.a", groups: [group], defaults: UserDefaultsStore(file: folder.appendingPathComponent("Device/a-defaults.json")))
            #expect(relaunched.userAccessGroup == group)
            #expect(relaunched.currentUser?.uid == uid)

            // Shared across devices: the synchronizable bucket, empty until a user is saved there.
            b.shareAuthStateAcrossDevices = true
            try b.useUserAccessGroup(group)
            #expect(b.currentUser == nil)
            let synced = try await b.signInAnonymously().user.uid
            #expect(shared.items.contains { $0.synchronizable == true && $0.accessible == Keychain.accessibleAfterFirstUnlock })
            #expect(try a.getStoredUser(forAccessGroup: group)?.uid == uid, "the device-only user is still there for A")
            #expect(synced != uid)

            // Signing out removes the group's user; back to the app's own item with nil.
            try a.signOut()
            #expect(try a.getStoredUser(forAccessGroup: group) == nil)
            try a.useUserAccessGroup(nil)
            #expect(a.userAccessGroup == nil)
        }
    }
}
