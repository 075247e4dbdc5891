import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import TestSupport
import Testing
import Utilities

/// What an admin does to a user (the Admin SDKs' `update_user`, `set_custom_user_claims`,
/// `revoke_refresh_tokens`) as the app sees it through the auth core, on one wall clock shared by
/// the app and the backend so that an hour can pass.
///
/// The SDK's side: `User.getIDToken(forcingRefresh:)` refreshes a token within five minutes of its
/// expiry (FirebaseAuth 12.19 `SecureTokenService.swift`, `kFiveMinutes`); the service's refusals
/// map as `AuthBackend.swift`'s table says: `USER_DISABLED` 17005, `TOKEN_EXPIRED` 17021.
@Suite("Admin actions as the app sees them")
struct AdminActionTests {
    @Test("an hour later getIDToken refreshes (custom claims set meanwhile appear); after revocation the refresh is userTokenExpired; disabled, userDisabled")
    func refreshRevokeDisable() async throws {
        let clock = ManualWallClock(Date())
        try await withWorld(backendClock: clock) { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, _) = try await world.install(AppProfile(), wallClock: clock)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: phone))
            let user = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code)).user
            let first = try await user.getIDToken()
            #expect(try await user.getIDToken() == first, "a fresh token is not refreshed")

            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: user.uid, customAttributes: #"{"role":"admin"}"#))
            clock.advance(by: 3600 - 299)  // within the SDK's five minutes of expiry
            let second = try await user.getIDToken()
            #expect(second != first)
            let claims = try #require(toolkit.tokenSigner.verifiedClaims(second, now: clock.now))
            #expect(claims.customClaims["role"] == .string("admin"))
            #expect(claims.authTime == Int(clock.now.addingTimeInterval(-(3600 - 299)).timeIntervalSince1970), "auth_time stays the sign-in's")

            clock.advance(by: 10)
            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: user.uid, validSince: String(Int64(clock.now.timeIntervalSince1970))))
            #expect(auth.currentUser === user)
            await expectAuthError(.userTokenExpired) { _ = try await user.getIDToken(forcingRefresh: true) }
            // The SDK signs the user out when its token is revoked (User.swift signOutIfTokenIsInvalid).
            #expect(auth.currentUser == nil)

            // A new sign-in works after revocation; an admin then disables the user.
            let id2 = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code2 = try #require(await world.lastCode(for: phone))
            let again = try await auth.signIn(with: provider.credential(withVerificationID: id2, verificationCode: code2)).user
            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: again.uid, disableUser: true))
            #expect(auth.currentUser === again)
            await expectAuthError(.userDisabled) { _ = try await again.getIDToken(forcingRefresh: true) }
            #expect(auth.currentUser == nil, "a disabled user is signed out")
            let id3 = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code3 = try #require(await world.lastCode(for: phone))
            let refused = await expectAuthError {
                _ = try await auth.signIn(with: provider.credential(withVerificationID: id3, verificationCode: code3))
            }
            #expect(refused?.code == .userDisabled)
            let bridged: any Error = try #require(refused)
            #expect((bridged as NSError).code == 17005)
        }
    }

    @Test("getIDTokenResult: the token's dates, sign-in provider and claims, custom ones included, as the SDK's AuthTokenResult reads them")
    func tokenResult() async throws {
        let clock = ManualWallClock(Date(timeIntervalSince1970: Double(Int(Date().timeIntervalSince1970))))
        try await withWorld(backendClock: clock) { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, _) = try await world.install(AppProfile(), wallClock: clock)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: phone))
            let user = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code)).user
            let signedIn = clock.now
            let first = try await user.getIDTokenResult()
            #expect(first.token == (try await user.getIDToken()))
            #expect(first.signInProvider == "phone" && first.signInSecondFactor == "")
            #expect(first.authDate == signedIn && first.issuedAtDate == signedIn && first.expirationDate == signedIn.addingTimeInterval(3600))
            #expect(first.claims["sub"] as? String == user.uid && first.claims["phone_number"] as? String == phone)

            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: user.uid, customAttributes: #"{"role":"admin","level":3}"#))
            clock.advance(by: 60)
            let second = try await user.getIDTokenResult(forcingRefresh: true)
            #expect(second.claims["role"] as? String == "admin" && (second.claims["level"] as? NSNumber)?.intValue == 3)
            #expect(second.authDate == signedIn, "auth_time stays the sign-in's")
            #expect(second.issuedAtDate == signedIn.addingTimeInterval(60))
        }
    }

    @Test("a user deleted by an admin: reload fails with userNotFound and the app's user is signed out, as the SDK signs it out")
    func deletedUserSignedOut() async throws {
        try await withWorld { world, _ in
            let toolkit = try #require(world.toolkit)
            let (auth, _) = try await world.install(AppProfile())
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: phone))
            let user = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code)).user
            _ = try await toolkit.call(ToolkitCalls.adminDelete, DeleteAccountRequest(idToken: nil, localId: user.uid))
            let error = await expectAuthError { try await user.reload() }
            #expect(error?.code == .userNotFound)
            #expect(auth.currentUser == nil)
        }
    }
}
