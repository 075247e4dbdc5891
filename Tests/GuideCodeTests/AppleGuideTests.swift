import AuthBackend
import FirebaseAuth
import FirebaseCore
import Foundation
import Scenarios
import Testing

/// "Authenticate Using Apple on Apple platforms" (firebase.google.com/docs/auth/ios/apple), its
/// Swift as the guide writes it: the credential with the full name, `signIn(with:)` with a
/// completion, reauthentication with `credential(providerID: .apple, idToken:rawNonce:)` (the guide's `withProviderID:IDToken:` is the Objective-C name), linking with
/// the updated credential from the NSError's userInfo, revocation and deletion in the async form.
extension GuideCode {
    @Suite("Sign in with Apple, as the Apple sign-in guide writes it")
    struct AppleGuide {
        @Test("sign in with a completion: the name Apple gave on the first authorization becomes the display name; getIDToken(completion:) and getIDTokenForcingRefresh on the main queue")
        func signIn() async throws {
            try await withGuideWorld { guide in
                let apple = try await guide.appleAuthorization("ada")
                let check = CompletionCheck()
                // What the completion read (an AuthDataResult is not Sendable, as in 12.19: it stays
                // on the main queue, where the completion runs).
                let result: (String?, (provider: String, isNewUser: Bool)?, (any Error)?) = await withCheckedContinuation { done in
                    // Initialize a Firebase credential, including the user's full name.
                    let credential = OAuthProvider.appleCredential(withIDToken: apple.idTokenString,
                                                                   rawNonce: apple.nonce,
                                                                   fullName: apple.fullName)
                    // Sign in with Firebase.
                    Auth.auth().signIn(with: credential) { (authResult, error) in
                        MainActor.assumeIsolated { check.called("signIn") }  // 12.19 calls it on the main queue, as a plain closure
                        if let error {
                            // Error. If error.code == .MissingOrInvalidNonce, make sure
                            // you're sending the SHA256-hashed nonce as a hex string with
                            // your request to Apple.
                            done.resume(returning: (nil, nil, error))
                            return
                        }
                        // User is signed in to Firebase with Apple.
                        let info = authResult?.additionalUserInfo
                        done.resume(returning: (authResult?.user.uid, info.map { ($0.providerID, $0.isNewUser) }, nil))
                    }
                }
                #expect(result.2 == nil)
                let user = try #require(Auth.auth().currentUser)
                #expect(user.uid == result.0)
                #expect(user.displayName == "Ada Lovelace")
                #expect(result.1?.provider == "apple.com")
                #expect(result.1?.isNewUser == true)
                #expect(user.providerData.map(\.providerID) == ["apple.com"])

                // The tokens, and what each call's error said (a stress run once saw the forced
                // refresh fail after the test had run 112 s; the errors say why if it happens again).
                let tokens: (String?, String?, String) = await withCheckedContinuation { done in
                    Task { @MainActor in
                        // The current user, read here: a User is not Sendable (as in 12.19).
                        guard let user = Auth.auth().currentUser else { return done.resume(returning: (nil, nil, "no current user")) }
                        user.getIDToken { token, error in
                            check.called("getIDToken")
                            let first = error.map { "getIDToken: \($0 as NSError)" } ?? ""
                            user.getIDTokenForcingRefresh(true) { refreshed, error in
                                check.called("getIDTokenForcingRefresh")
                                done.resume(returning: (token, refreshed, first + (error.map { " getIDTokenForcingRefresh: \($0 as NSError)" } ?? "")))
                            }
                        }
                    }
                }
                #expect(tokens.0 != nil && tokens.1 != nil, "\(tokens.2)")
                await check.expectEachOnce()
            }
        }

        /// `User/AdditionalUserInfo.swift` and `Backend/RPC/VerifyAssertionResponse.swift` 158–167: the
        /// profile is the answer's `rawUserInfo` (for Apple, the identity token's claims, as the Auth
        /// Emulator answers), archived under the SDK's keys.
        @Test("additionalUserInfo after Sign in with Apple: the token's claims as profile, newUser(), archived and read back with secure coding")
        func additionalUserInfo() async throws {
            try await withGuideWorld { guide in
                let apple = try await guide.appleAuthorization("ada")
                let first = try await Auth.auth().signIn(with: OAuthProvider.appleCredential(withIDToken: apple.idTokenString, rawNonce: apple.nonce,
                                                                                             fullName: apple.fullName))
                let info = try #require(first.additionalUserInfo)
                #expect(info.providerID == "apple.com" && info.isNewUser && info.newUser() && info.username == nil)
                let profile = try #require(info.profile)
                #expect(profile["iss"] as? String == "https://appleid.apple.com")
                #expect(profile["aud"] as? String == guide.bundleID)
                #expect((profile["sub"] as? String)?.isEmpty == false)
                #expect((profile["nonce"] as? String)?.count == 64, "the SHA-256 of the raw nonce, in hex")

                #expect(AdditionalUserInfo.supportsSecureCoding)
                let archived = try NSKeyedArchiver.archivedData(withRootObject: info, requiringSecureCoding: true)
                let read = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: AdditionalUserInfo.self, from: archived))
                #expect(read.providerID == info.providerID && read.isNewUser && read.username == nil)
                #expect(read.profile?["sub"] as? String == profile["sub"] as? String)

                try Auth.auth().signOut()
                let again = try await guide.appleAuthorization("ada")
                let second = try await Auth.auth().signIn(with: OAuthProvider.appleCredential(withIDToken: again.idTokenString, rawNonce: again.nonce,
                                                                                              fullName: nil))
                #expect(second.additionalUserInfo?.newUser() == false)
                #expect(second.additionalUserInfo?.profile?["sub"] as? String == profile["sub"] as? String)
                // Email and password, phone, anonymous: no profile, as the SDK builds theirs.
                try Auth.auth().signOut()
                let anonymous = try await Auth.auth().signInAnonymously()
                #expect(anonymous.additionalUserInfo?.profile == nil && anonymous.additionalUserInfo?.providerID == "")
            }
        }

        /// The guide writes `credential(withProviderID: "apple.com", IDToken:rawNonce:)`, the Objective-C
        /// name: FirebaseAuth 12.19 gives Swift `credential(providerID: .apple, idToken:rawNonce:)`
        /// (OAuthProvider.swift 181–216), so the guide's line is written in that spelling here
        /// (ModuleSurfaceTests shows the guide's own spelling refused with the rename).
        @Test("reauthenticate the current user with credential(providerID: .apple, idToken:rawNonce:) and a completion; another Apple ID is userMismatch (17024)")
        func reauthenticate() async throws {
            try await withGuideWorld { guide in
                let apple = try await guide.appleAuthorization("ada")
                _ = try await Auth.auth().signIn(with: OAuthProvider.appleCredential(withIDToken: apple.idTokenString, rawNonce: apple.nonce,
                                                                                      fullName: apple.fullName))
                for (who, expected) in [("ada", nil), ("bob", AuthErrorCode.userMismatch)] as [(String, AuthErrorCode?)] {
                    let fresh = try await guide.appleAuthorization(who)
                    let error: (any Error)? = await withCheckedContinuation { done in
                        Task { @MainActor in
                            // Initialize a fresh Firebase credential.
                            let credential = OAuthProvider.credential(providerID: .apple,
                                                                      idToken: fresh.idTokenString,
                                                                      rawNonce: fresh.nonce)
                            // Reauthenticate current Apple user with fresh Apple credential.
                            Auth.auth().currentUser?.reauthenticate(with: credential) { (authResult, error) in
                                guard error != nil else { done.resume(returning: nil); return }
                                done.resume(returning: error)
                            }
                        }
                    }
                    #expect((error as NSError?)?.code == expected?.rawValue, "\(who)")
                }
                #expect(Auth.auth().currentUser != nil)
            }
        }

        @Test("link an Apple ID another account holds: credentialAlreadyInUse (17025); the guide signs in with userInfo[AuthErrorUserInfoUpdatedCredentialKey] as? OAuthCredential")
        func linkWithUpdatedCredential() async throws {
            var configuration = BackendConfiguration()
            configuration.testPhoneNumbers = ["+16505554567": "123456"]
            try await withGuideWorld(configuration: configuration) { guide in
                // Erin has an Apple account of her own.
                let erin = try await guide.appleAuthorization("erin")
                let erinsAccount = try await Auth.auth().signIn(with: OAuthProvider.appleCredential(withIDToken: erin.idTokenString, rawNonce: erin.nonce,
                                                                                                      fullName: erin.fullName)).user.uid
                try Auth.auth().signOut()
                // Signed in by phone, she links her Apple ID.
                Auth.auth().settings?.isAppVerificationDisabledForTesting = true
                let id = try await PhoneAuthProvider.provider().verifyPhoneNumber("+16505554567", uiDelegate: nil)
                let user = try await Auth.auth().signIn(with: PhoneAuthProvider.provider().credential(withVerificationID: id, verificationCode: "123456")).user
                let again = try await guide.appleAuthorization("erin")
                let credential = OAuthProvider.appleCredential(withIDToken: again.idTokenString, rawNonce: again.nonce, fullName: nil)
                let signedInTo: String? = await withCheckedContinuation { done in
                    Task { @MainActor in
                        guard let user = Auth.auth().currentUser else { return done.resume(returning: nil) }
                        // Link the current user with the Apple credential...
                        user.link(with: credential) { authResult, error in
                            if let error = error, (error as NSError).code == AuthErrorCode.credentialAlreadyInUse.rawValue {
                                if let updatedCredential = (error as NSError).userInfo[AuthErrorUserInfoUpdatedCredentialKey] as? OAuthCredential {
                                    // Signing in using the updated credentials
                                    Auth.auth().signIn(with: updatedCredential) { (authResult, error) in
                                        done.resume(returning: authResult?.user.uid)
                                    }
                                    return
                                }
                            }
                            done.resume(returning: nil)
                        }
                    }
                }
                #expect(signedInTo == erinsAccount)
            }
        }

        @Test("revoke the Apple grant, then delete the user, in the async form; without a user revokeToken says so instead of never calling back")
        func revokeAndDelete() async throws {
            try await withGuideWorld { guide in
                let apple = try await guide.appleAuthorization("ada")
                let user = try await Auth.auth().signIn(with: OAuthProvider.appleCredential(withIDToken: apple.idTokenString, rawNonce: apple.nonce,
                                                                                          fullName: apple.fullName)).user
                do {
                    try await Auth.auth().revokeToken(withAuthorizationCode: apple.authorizationCode)
                    try await user.delete()
                } catch {
                    Issue.record("\(error)")
                }
                #expect(Auth.auth().currentUser == nil)
                #expect(await guide.toolkit.allUsers.isEmpty)

                let error: (any Error)? = await withCheckedContinuation { done in
                    Auth.auth().revokeToken(withAuthorizationCode: "code") { error in done.resume(returning: error) }
                }
                #expect((error as NSError?)?.code == AuthErrorCode.nullUser.rawValue)
            }
        }

        @Test("sign out as the guide catches it: try Auth.auth().signOut() with `let signOutError as NSError`")
        func signOut() async throws {
            try await withGuideWorld { guide in
                let apple = try await guide.appleAuthorization("ada")
                _ = try await Auth.auth().signIn(with: OAuthProvider.appleCredential(withIDToken: apple.idTokenString, rawNonce: apple.nonce, fullName: nil))
                let firebaseAuth = Auth.auth()
                do {
                    try firebaseAuth.signOut()
                } catch let signOutError as NSError {
                    Issue.record("Error signing out: \(signOutError)")
                }
                #expect(Auth.auth().currentUser == nil)
            }
        }

        @Test("delete(completion:) and link(with:completion:) for a second Apple ID: providerAlreadyLinked (17015) without a request")
        func completions() async throws {
            try await withGuideWorld { guide in
                let apple = try await guide.appleAuthorization("ada")
                let user = try await Auth.auth().signIn(with: OAuthProvider.appleCredential(withIDToken: apple.idTokenString, rawNonce: apple.nonce,
                                                                                          fullName: nil)).user
                let other = try await guide.appleAuthorization("bob")
                let check = CompletionCheck()
                let linkError: (any Error)? = await withCheckedContinuation { done in
                    user.link(with: OAuthProvider.credential(providerID: .apple, idToken: other.idTokenString, rawNonce: other.nonce)) { _, error in
                        MainActor.assumeIsolated { check.called("link") }  // 12.19 calls it on the main queue, as a plain closure
                        done.resume(returning: error)
                    }
                }
                #expect((linkError as NSError?)?.code == AuthErrorCode.providerAlreadyLinked.rawValue)
                #expect((linkError as NSError?)?.userInfo[AuthErrorUserInfoNameKey] as? String == "ERROR_PROVIDER_ALREADY_LINKED")
                let deleteError: (any Error)? = await withCheckedContinuation { done in
                    user.delete { error in
                        MainActor.assumeIsolated { check.called("delete") }  // 12.19 calls it on the main queue, as a plain closure
                        done.resume(returning: error)
                    }
                }
                #expect(deleteError == nil)
                #expect(Auth.auth().currentUser == nil)
                await check.expectEachOnce()
            }
        }
    }
}
