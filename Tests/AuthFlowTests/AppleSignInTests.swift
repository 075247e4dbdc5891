import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import Scenarios
import Testing
import TestSupport
import Utilities

/// An app with Firebase configured against `world`'s backend (no device needed for Apple sign-in).
func appleApp(_ world: PhoneAuthWorld) -> Auth {
    let options = world.options(for: AppProfile())
    return world.auth(options: options, host: AppHost(AppHost.Configuration(bundleID: options.bundleID, urlSchemes: [options.encodedAppIDScheme]), clock: world.appClock, transport: world.transport))
}

/// The ID token's claims (no verification: the backend's JWKS does that).
func claims(_ token: String) -> [String: Any] {
    let parts = token.split(separator: ".")
    guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
    return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
}

@Suite("Sign in with Apple: nonce, identity tokens, credentials, reauthentication, linking, revocation, through the real backend")
struct AppleSignInTests {
    let bundleID = AppProfile().bundleID

    @Test("nonces: 32 characters from the sample's charset, unpredictable; the SHA-256 is lowercase hex")
    func nonce() {
        let nonces = (0..<200).map { _ in AppleNonce.random() }
        #expect(Set(nonces).count == 200)
        #expect(nonces.allSatisfy { $0.count == 32 && $0.allSatisfy { "0123456789ABCDEFGHIJKLMNOPQRSTUVXYZabcdefghijklmnopqrstuvwxyz-._".contains($0) } })
        #expect(AppleNonce.sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("an identity token verifies with PyJWT against the published JWKS (RS256, issuer, audience, expiry)")
    func independentVerifier() async throws {
        guard await toolAvailable(["python3", "-c", "import jwt, cryptography"]) else { return }
        try await withWorld { world, _ in
            let sheet = try await world.appleSheet.authorize(clientID: bundleID, appleUser: "hal", nonce: AppleNonce.sha256("raw"))
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Clients/verify_apple_token.py").standardized.path
            let verified = try await runProgram(["python3", script, "\(world.backendURL)/appleid/auth/keys", sheet.identityToken, bundleID])
            #expect(verified.status == 0)
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(verified.output.utf8)) as? [String: Any])
            #expect(claims["sub"] as? String == sheet.user)
            #expect(claims["nonce"] as? String == AppleNonce.sha256("raw"))
            let wrongAudience = try await runProgram(["python3", script, "\(world.backendURL)/appleid/auth/keys", sheet.identityToken, "com.example.other"])
            #expect(wrongAudience.status != 0)
        }
    }

    @Test("happy path: the first sign-in creates the user with Apple's name and relay email; later sign-ins get no name and find the same user")
    func happyPath() async throws {
        try await withWorld { world, _ in
            let auth = appleApp(world)
            let raw = AppleNonce.random()
            let sheet = try await world.appleSheet.authorize(clientID: bundleID, appleUser: "ada", nonce: AppleNonce.sha256(raw), hideEmail: true)
            #expect(sheet.email?.hasSuffix("@privaterelay.appleid.com") == true)
            let token = claims(sheet.identityToken)
            #expect(token["iss"] as? String == "https://appleid.apple.com")
            #expect(token["aud"] as? String == bundleID)
            #expect(token["nonce"] as? String == AppleNonce.sha256(raw))
            #expect(token["is_private_email"] as? String == "true")

            let first = try await auth.signIn(with: OAuthProvider.appleCredential(withIDToken: sheet.identityToken, rawNonce: raw, fullName: sheet.fullName))
            #expect(first.isNewUser)
            #expect(first.user.displayName == "Ada Lovelace")
            #expect(first.user.email == sheet.email)
            #expect(first.user.photoURL == nil)
            #expect(first.user.providerData.map(\.providerID) == ["apple.com"])
            // The answer carries Apple's token back (oauthIdToken), so the result has a credential,
            // as from Google (OAuthCredential.swift 72–83 makes none without one).
            #expect(first.credential?.idToken == sheet.identityToken)
            let firebaseToken = claims(try await first.user.getIDToken())
            #expect((firebaseToken["firebase"] as? [String: Any])?["sign_in_provider"] as? String == "apple.com")

            try auth.signOut()
            let raw2 = AppleNonce.random()
            let again = try await world.appleSheet.authorize(clientID: bundleID, appleUser: "ada", nonce: AppleNonce.sha256(raw2))
            #expect(again.fullName == nil && again.email == nil)  // Apple sends them once
            let second = try await auth.signIn(with: OAuthProvider.credential(providerID: .apple, idToken: again.identityToken, rawNonce: raw2))
            #expect(!second.isNewUser)
            #expect(second.user.uid == first.user.uid)
            #expect(second.user.displayName == "Ada Lovelace")
        }
    }

    @Test("a wrong or missing nonce, a replayed token, an expired one, another audience, a forged signature: the backend's exact refusals")
    func refusals() async throws {
        try await withWorld { world, _ in
            let auth = appleApp(world)
            func credential(nonce raw: String = AppleNonce.random(), rawSent: String?? = nil, clientID: String? = nil,
                            issuedAt: Date? = nil) async throws -> OAuthCredential {
                let sheet = try await world.appleSheet.authorize(clientID: clientID ?? bundleID, appleUser: "bob",
                                                                 nonce: AppleNonce.sha256(raw), issuedAt: issuedAt)
                return OAuthProvider.appleCredential(withIDToken: sheet.identityToken, rawNonce: rawSent ?? raw, fullName: nil)
            }
            func failure(_ credential: OAuthCredential) async -> AuthError? {
                do throws(AuthError) { _ = try await AuthError.catching { try await auth.signIn(with: credential) }; return nil } catch { return error }
            }
            let wrong = await failure(try await credential(rawSent: "not-the-nonce"))
            #expect(wrong?.code == .missingOrInvalidNonce)
            #expect(wrong?.serverMessage?.hasPrefix("MISSING_OR_INVALID_NONCE : The nonce in ID Token \"") == true)
            #expect(wrong?.serverMessage?.hasSuffix("does not match the SHA256 hash of the raw nonce \"not-the-nonce\" in the request.") == true)

            let missing = await failure(try await credential(rawSent: .some(nil)))
            #expect(missing?.serverMessage == "MISSING_OR_INVALID_NONCE : Nonce is missing in the request.")

            let good = try await credential()
            _ = try await auth.signIn(with: good)
            let replay = await failure(good)
            #expect(replay?.code == .missingOrInvalidNonce)
            #expect(replay?.serverMessage == "MISSING_OR_INVALID_NONCE : Duplicate credential received. Please try again with a new credential.")

            let expired = await failure(try await credential(issuedAt: Date().addingTimeInterval(-700)))
            #expect(expired?.code == .invalidCredential)

            let otherApp = await failure(try await credential(clientID: "com.example.other"))
            #expect(otherApp?.code == .invalidCredential)
            #expect(otherApp?.serverMessage?.contains("aud com.example.other") == true)

            let sheet = try await world.appleSheet.authorize(clientID: bundleID, appleUser: "bob", nonce: AppleNonce.sha256("n"))
            let parts = sheet.identityToken.split(separator: ".")
            let forged = parts[0] + "." + parts[1] + "." + Base64URL.encode([UInt8](repeating: 7, count: 256))
            let bad = await failure(OAuthProvider.appleCredential(withIDToken: String(forged), rawNonce: "n", fullName: nil))
            #expect(bad?.code == .invalidCredential)
            #expect(bad?.serverMessage?.contains("signature") == true)
        }
    }

    @Test("reauthentication renews the same user's token; another Apple ID's credential is userMismatch")
    func reauthenticate() async throws {
        // The backend's clock moves when told: a new ID token needs a new iat (this slept 1.1 s until issue 26).
        let backendClock = ManualWallClock(Date())
        try await withWorld(backendClock: backendClock) { world, _ in
            let auth = appleApp(world)
            func credential(_ who: String) async throws -> OAuthCredential {
                let raw = AppleNonce.random()
                let sheet = try await world.appleSheet.authorize(clientID: bundleID, appleUser: who, nonce: AppleNonce.sha256(raw))
                return OAuthProvider.credential(providerID: .apple, idToken: sheet.identityToken, rawNonce: raw)
            }
            let user = try await auth.signIn(with: credential("carol")).user
            let before = try await user.getIDToken()
            backendClock.advance(by: 2)  // a new iat
            try await user.reauthenticate(with: credential("carol"))
            #expect(try await user.getIDToken() != before)
            await expectAuthError(.userMismatch) { _ = try await user.reauthenticate(with: credential("dave")) }
        }
    }

    @Test("link an Apple ID to a phone user; an Apple ID another account holds is credentialAlreadyInUse with a single-use updated credential")
    func link() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505553434": "654321", "+16505553535": "765432"]
        try await withWorld(configuration: configuration) { world, _ in
            var profile = AppProfile()
            profile.appVerificationDisabledForTesting = true
            let (auth, _) = try await world.install(profile)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber("+16505553434", uiDelegate: nil)
            let phoneUser = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: "654321")).user

            func credential(_ who: String) async throws -> OAuthCredential {
                let raw = AppleNonce.random()
                let sheet = try await world.appleSheet.authorize(clientID: bundleID, appleUser: who, nonce: AppleNonce.sha256(raw))
                return OAuthProvider.appleCredential(withIDToken: sheet.identityToken, rawNonce: raw, fullName: sheet.fullName)
            }
            try await phoneUser.link(with: credential("erin"))
            #expect(phoneUser.providerData.map(\.providerID).sorted() == ["apple.com", "phone"])
            // A provider's uid is its federatedId (UserInfoImpl.swift 25–38), which Google and the
            // Auth Emulator give the phone provider none of: "" on a device (audit 3, B-6).
            let phone = phoneUser.providerData.first { $0.providerID == "phone" }
            #expect(phone?.uid == "" && phone?.phoneNumber == phoneUser.phoneNumber)
            let identities = (claims(try await phoneUser.getIDToken())["firebase"] as? [String: Any])?["identities"] as? [String: Any]
            #expect(identities?["phone"] != nil && identities?["apple.com"] != nil)

            // Erin's Apple ID now signs in to the phone user's account.
            let other = appleApp(world)
            #expect(try await other.signIn(with: credential("erin")).user.uid == phoneUser.uid)

            // A second Apple ID for a user who has one: providerAlreadyLinked (17015) before any
            // request, as the SDK checks providerData first (User.swift 679–688).
            let rejectedBefore = await world.toolkit!.allUsers.count
            let frankFirst = try await credential("frank")
            var already: AuthError?
            do throws(AuthError) { _ = try await AuthError.catching { try await phoneUser.link(with: frankFirst) } } catch { already = error }
            #expect(already?.code == .providerAlreadyLinked)
            #expect(await world.toolkit!.allUsers.count == rejectedBefore)

            // Frank has his own Apple account; linking it to another phone user fails, with a way in to Frank's.
            let id2 = try await provider.verifyPhoneNumber("+16505553535", uiDelegate: nil)
            let secondPhoneUser = try await auth.signIn(with: provider.credential(withVerificationID: id2, verificationCode: "765432")).user
            let frank = try await appleApp(world).signIn(with: credential("frank")).user
            let frankAgain = try await credential("frank")
            var linkError: AuthError?
            do throws(AuthError) { _ = try await AuthError.catching { try await secondPhoneUser.link(with: frankAgain) } } catch { linkError = error }
            do {
                let error = try #require(linkError, "linked an Apple ID that another account holds")
                #expect(error.code == .credentialAlreadyInUse)
                let updated = try #require(error.updatedCredential as? OAuthCredential)
                #expect(updated.idToken == frankAgain.idToken, "the 17025 credential carries the oauthIdToken the answer gave")
                let signedIn = try await appleApp(world).signIn(with: updated)
                #expect(signedIn.user.uid == frank.uid)
                #expect(signedIn.credential == nil, "an answer to a pending token has no OAuth token: no credential, as in the SDK")
                await expectAuthError(.invalidCredential) { _ = try await appleApp(world).signIn(with: updated) }
            }
        }
    }

    @Test("revoke the Apple grant, then delete the account: the next sign-in is a new user, and Apple asks for the name again")
    func revokeThenDelete() async throws {
        try await withWorld { world, _ in
            let auth = appleApp(world)
            let raw = AppleNonce.random()
            let sheet = try await world.appleSheet.authorize(clientID: bundleID, appleUser: "gina", nonce: AppleNonce.sha256(raw))
            let user = try await auth.signIn(with: OAuthProvider.appleCredential(withIDToken: sheet.identityToken, rawNonce: raw, fullName: sheet.fullName)).user
            try await auth.revokeToken(withAuthorizationCode: sheet.authorizationCode)
            await expectAuthError(.invalidCredential) { try await auth.revokeToken(withAuthorizationCode: sheet.authorizationCode) }
            try await user.delete()
            #expect(auth.currentUser == nil)
            #expect(await world.toolkit!.allUsers.isEmpty)

            let raw2 = AppleNonce.random()
            let again = try await world.appleSheet.authorize(clientID: bundleID, appleUser: "gina", nonce: AppleNonce.sha256(raw2))
            #expect(again.fullName != nil)  // the grant was revoked: a first authorization again
            let fresh = try await auth.signIn(with: OAuthProvider.appleCredential(withIDToken: again.identityToken, rawNonce: raw2, fullName: again.fullName))
            #expect(fresh.isNewUser)
            #expect(fresh.user.uid != user.uid)
        }
    }
}
