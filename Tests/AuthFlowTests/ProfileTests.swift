import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import TestSupport
import Testing

/// A user's profile and providers changed by the app: `createProfileChangeRequest()` /
/// `commitChanges()` (FirebaseAuth 12.19 `User/UserProfileChangeRequest.swift`, sent as
/// `UserProfileUpdate.executeUserUpdateWithChanges` sends it: getAccountInfo, then setAccountInfo
/// with `returnSecureToken`) and `unlink(fromProvider:)` (`UserProfileUpdate.unlink`).
@Suite("Profile change requests and unlinking")
struct ProfileTests {
    /// A phone user signed in on an app whose requests are recorded.
    func signedIn(_ world: PhoneAuthWorld) async throws -> (Auth, User, RecordingTransport) {
        let (auth, recording) = try await recordingApp(world)
        let provider = PhoneAuthProvider.provider(auth: auth)
        let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
        let code = try #require(await world.lastCode(for: phone))
        return (auth, try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code)).user, recording)
    }

    @Test("commitChanges sends what was set, the user and the backend take it, a new token comes back; nothing set sends nothing")
    func profileChange() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, user, recording) = try await signedIn(world)
            let sent = recording.requests.withLock { $0.count }
            let request = user.createProfileChangeRequest()
            request.displayName = "Ada Lovelace"
            request.photoURL = URL(string: "https://example.com/ada.png")
            try await request.commitChanges()
            // As the SDK sends it: the account read, then the update with only what was set.
            let calls = recording.requests.withLock { $0.dropFirst(sent).map(\.url.lastPathComponent) }
            #expect(calls == ["getAccountInfo", "setAccountInfo"], "\(calls)")
            let update = try #require(requestBodies(recording, "setAccountInfo").last)
            #expect(Set(update.keys) == ["idToken", "displayName", "photoUrl", "returnSecureToken"], "\(update)")
            #expect(update["returnSecureToken"] as? Bool == true)
            #expect(user.displayName == "Ada Lovelace" && user.photoURL?.absoluteString == "https://example.com/ada.png")
            let stored = try #require(await toolkit.allUsers.first { $0.localId == user.uid })
            #expect(stored.displayName == "Ada Lovelace" && stored.photoUrl == "https://example.com/ada.png")
            // The new ID token says so (the backend signs name and picture in).
            let result = try await user.getIDTokenResult()
            let claims = result.claims
            #expect(claims["name"] as? String == "Ada Lovelace" && claims["picture"] as? String == "https://example.com/ada.png")
            // Archived as 12.19 archives it (Auth/AuthTokenResult.swift: the token under "token"), and read back.
            #expect(AuthTokenResult.supportsSecureCoding)
            let archived = try NSKeyedArchiver.archivedData(withRootObject: result, requiringSecureCoding: true)
            let read = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: AuthTokenResult.self, from: archived))
            #expect(read.token == result.token && read.expirationDate == result.expirationDate && read.signInProvider == result.signInProvider)
            #expect(read.claims["name"] as? String == "Ada Lovelace")

            // Only the photo: the name stays, on the device and on the backend, across a reload.
            let photoOnly = user.createProfileChangeRequest()
            photoOnly.photoURL = URL(string: "https://example.com/ada2.png")
            try await photoOnly.commitChanges()
            try await user.reload()
            #expect(user.displayName == "Ada Lovelace" && user.photoURL?.absoluteString == "https://example.com/ada2.png")
            #expect(auth.currentUser === user)

            // Nothing set: nothing sent, and the completion still comes once, on the main queue.
            let before = recording.requests.withLock { $0.count }
            let empty = user.createProfileChangeRequest()
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                empty.commitChanges { error in
                    dispatchPrecondition(condition: .onQueue(.main))
                    #expect(error == nil)
                    done.resume()
                }
            }
            #expect(recording.requests.withLock { $0.count } == before)
        }
    }

    @Test("unlink: a provider the user lacks is noSuchProvider (17016) with no request; unlinking phone drops the number")
    func unlink() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (_, user, recording) = try await signedIn(world)
            let sent = recording.requests.withLock { $0.count }
            let missing = await expectAuthError { _ = try await user.unlink(fromProvider: "apple.com") }
            #expect(missing?.code == .noSuchProvider)
            #expect((missing.map { $0 as NSError })?.code == 17016)
            #expect(recording.requests.withLock { $0.count } == sent, "no request for a provider the user lacks")

            // Apple linked, then unlinked: the user keeps the phone.
            let raw = AppleNonce.random()
            let sheet = try await world.appleSheet.authorize(clientID: AppProfile().bundleID, appleUser: "ada", nonce: AppleNonce.sha256(raw))
            try await user.link(with: OAuthProvider.appleCredential(withIDToken: sheet.identityToken, rawNonce: raw, fullName: nil))
            #expect(user.providerData.map(\.providerID).sorted() == ["apple.com", "phone"])
            #expect(try await user.unlink(fromProvider: "apple.com") === user)
            let unlinkBody = try #require(requestBodies(recording, "setAccountInfo").last)
            #expect(unlinkBody["deleteProvider"] as? [String] == ["apple.com"] && unlinkBody["returnSecureToken"] as? Bool == true)
            #expect(user.providerData.map(\.providerID) == ["phone"])
            #expect(try #require(await toolkit.allUsers.first { $0.localId == user.uid }).appleSub == nil)

            // The phone itself: the number goes too, on the device and on the backend.
            try await user.unlink(fromProvider: "phone")
            #expect(user.providerData.isEmpty && user.phoneNumber == nil)
            #expect(try #require(await toolkit.allUsers.first { $0.localId == user.uid }).phoneNumber == nil)
        }
    }

    /// `updatePhoneNumber(_:)` (FirebaseAuth 12.19 `User/User.swift` 256–290,
    /// `internalUpdateOrLinkPhoneNumber`): verifyPhoneNumber with operation UPDATE and the ID token.
    @Test("updatePhoneNumber: the new number's code changes the number (operation UPDATE); another account's number is credentialAlreadyInUse (17025)")
    func updatePhoneNumber() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, user, recording) = try await signedIn(world)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let newNumber = "+16505550177"
            let id = try await provider.verifyPhoneNumber(newNumber, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: newNumber))
            try await user.updatePhoneNumber(provider.credential(withVerificationID: id, verificationCode: code))
            let sent = try #require(requestBodies(recording, "verifyPhoneNumber").last)
            #expect(sent["operation"] as? String == "UPDATE" && sent["idToken"] != nil, "\(sent)")
            #expect(user.phoneNumber == newNumber && auth.currentUser === user)
            #expect(await toolkit.allUsers.first { $0.localId == user.uid }?.phoneNumber == newNumber)

            // A number another account holds: 17025 with the credential that signs in to it.
            let (other, _) = try await recordingApp(world)
            let otherProvider = PhoneAuthProvider.provider(auth: other)
            let taken = "+16505550188"
            let otherID = try await otherProvider.verifyPhoneNumber(taken, uiDelegate: nil)
            let otherCode = try #require(await world.lastCode(for: taken))
            _ = try await other.signIn(with: otherProvider.credential(withVerificationID: otherID, verificationCode: otherCode))
            let again = try await provider.verifyPhoneNumber(taken, uiDelegate: nil)
            let againCode = try #require(await world.lastCode(for: taken))
            let inUse = await expectAuthError {
                try await user.updatePhoneNumber(provider.credential(withVerificationID: again, verificationCode: againCode))
            }
            #expect(inUse?.code == .credentialAlreadyInUse && inUse?.updatedCredential is PhoneAuthCredential)
            #expect(user.phoneNumber == newNumber, "the number stays")
        }
    }
}
