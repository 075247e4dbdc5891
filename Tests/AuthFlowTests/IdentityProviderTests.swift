import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import Testing

/// Google, Facebook, GitHub and Twitter credentials through `import FirebaseAuth`'s calls, as
/// FirebaseAuth 12.19 sends them (AuthProvider/GoogleAuthProvider.swift and its siblings:
/// `id_token`, `access_token`, `oauth_token_secret` in signInWithIdp's postBody; Backend/
/// AuthBackend.swift 263–279: an answer's errorMessage, needConfirmation 17007), against the Auth
/// Emulator's rules for fake provider tokens (firebase-tools src/emulator/auth/operations.ts
/// signInWithIdp, handleIdpSigninEmailRequired, handleLinkIdp; idp.spec.ts): claims as JSON.
@Suite("Identity providers' credentials: Google, Facebook, GitHub, Twitter, as the Auth Emulator fakes them")
struct IdentityProviderTests {
    @Test("a new Google user with its profile, the same one again; Facebook linked to it; a GitHub account another user holds is 17025 with the credential that signs in to that user")
    func signInAndLink() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let google = GoogleAuthProvider.credential(withIDToken: #"{"sub":"g-1","email":"ada@example.com","email_verified":true,"name":"Ada"}"#,
                                                       accessToken: "google-access")
            let first = try await auth.signIn(with: google)
            #expect(first.additionalUserInfo?.isNewUser == true && first.additionalUserInfo?.providerID == "google.com")
            #expect(first.additionalUserInfo?.profile?["name"] as? String == "Ada")
            #expect(first.user.email == "ada@example.com" && first.user.isEmailVerified && first.user.displayName == "Ada")
            #expect(first.user.providerData.map(\.providerID) == ["google.com"])
            #expect(try await first.user.getIDTokenResult().signInProvider == "google.com")
            let again = try await auth.signIn(with: google)
            #expect(again.user.uid == first.user.uid && again.additionalUserInfo?.isNewUser == false)

            let facebook = FacebookAuthProvider.credential(withAccessToken: #"{"sub":"fb-1","name":"Ada L."}"#)
            let linked = try await again.user.link(with: facebook)
            #expect(Set(linked.user.providerData.map(\.providerID)) == ["google.com", "facebook.com"])

            // Another user holds a GitHub account: linking it is 17025, and its credential signs in to that user.
            try auth.signOut()
            let github = GitHubAuthProvider.credential(withToken: #"{"sub":"gh-9"}"#)
            let other = try await auth.signIn(with: github).user
            try auth.signOut()
            let ada = try await auth.signIn(with: google).user
            let inUse = await expectAuthError(.credentialAlreadyInUse) { try await ada.link(with: github) }
            let updated = try #require(inUse?.updatedCredential)
            #expect(updated.provider == "github.com")
            #expect(try await auth.signIn(with: updated).user.uid == other.uid)
        }
    }

    @Test("an email another account has: an unverified provider email is 17007 with the email and credential; a verified one signs in to that account")
    func sameEmail() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let owner = try await auth.createUser(withEmail: "bob@example.com", password: "secret1").user
            try auth.signOut()
            let unverified = TwitterAuthProvider.credential(withToken: #"{"sub":"tw-1","email":"bob@example.com"}"#, secret: "tw-secret")
            let exists = await expectAuthError(.accountExistsWithDifferentCredential) { try await auth.signIn(with: unverified) }
            #expect(exists?.email == "bob@example.com")
            #expect(exists?.updatedCredential?.provider == "twitter.com")
            let verified = GoogleAuthProvider.credential(withIDToken: #"{"sub":"g-2","email":"bob@example.com","email_verified":true}"#,
                                                         accessToken: "a")
            let signedIn = try await auth.signIn(with: verified)
            #expect(signedIn.user.uid == owner.uid && signedIn.additionalUserInfo?.isNewUser == false)
            #expect(signedIn.user.providerData.map(\.providerID).contains("google.com"))
            // Not JSON, not a JWT: the emulator's INVALID_IDP_RESPONSE (17004 invalidCredential).
            _ = await expectAuthError(.invalidCredential) {
                try await auth.signIn(with: GoogleAuthProvider.credential(withIDToken: "not-a-token", accessToken: "a"))
            }
        }
    }
}
