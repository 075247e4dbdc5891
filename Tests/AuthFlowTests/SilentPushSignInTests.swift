import APNsReceiver
import APNsWire
import Utilities
import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Scenarios
import TestSupport
import Testing

@Suite("Silent-push phone sign-in, end to end")
struct SilentPushSignInTests {
    @Test("a debug build with a sandbox token: silent push, SMS, sign-in; the ID token carries the real claims")
    func happyPath() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let provider = PhoneAuthProvider.provider(auth: auth)
            let verificationID = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            #expect(auth.cachedCredential != nil)
            #expect(auth.pendingReceipts.isEmpty)
            let code = try #require(await world.lastCode(for: phone))
            let result = try await auth.signIn(with: provider.credential(withVerificationID: verificationID, verificationCode: code))
            #expect(result.isNewUser)
            #expect(result.user.phoneNumber == phone)
            #expect(auth.currentUser?.uid == result.user.uid)

            let token = try await result.user.getIDToken()
            let parts = token.split(separator: ".")
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[1])!)) as? [String: Any])
            #expect(claims["iss"] as? String == "https://securetoken.google.com/authsim-demo")
            #expect(claims["aud"] as? String == "authsim-demo")
            #expect(claims["sub"] as? String == result.user.uid)
            #expect(claims["phone_number"] as? String == phone)
            #expect((claims["firebase"] as? [String: Any])?["sign_in_provider"] as? String == "phone")
            // Signed with the key the backend publishes.
            let (jwks, _) = try await URLSession.shared.data(from: URL(string: world.backendURL + JSONWebKeySet.firebaseIDTokenKeysPath)!)
            let signature = try RS256Check.verify(token: token, jwks: jwks)
            #expect(signature)

            // A second verification reuses the cached credential: no second verifyClient push.
            let before = try fixtureLogCount(world)
            _ = try await provider.verifyPhoneNumber("+16505550000", uiDelegate: nil)
            #expect(try fixtureLogCount(world) == before)
        }
    }

    @Test("with no APNs latency at all, each push reaches its app after the app kept verifyClient's receipt: 24 apps on a frozen clock all verify by silent push")
    func pushNeverOvertakesTheReceipt() async throws {
        // FirebaseAuth drops a push whose receipt it has not kept yet (AuthAppCredentialManager.swift,
        // canFinishVerification); on a frozen clock such an app would wait for ever. Before the
        // device ordered the two by event, a loaded machine could deliver the push first.
        try await withWorld(pushLatency: .zero) { world, _ in
            let verified = await withLimit(.seconds(120)) {
                await withTaskGroup(of: Bool.self) { group in
                    for index in 0..<24 {
                        group.addTask {
                            guard let (auth, _) = try? await world.install(AppProfile()),
                                  (try? await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+1650555\(String(format: "%04d", index))", uiDelegate: nil)) != nil
                            else { return false }
                            return auth.cachedCredential != nil
                        }
                    }
                    return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
            }
            #expect(verified == 24)
            let tally = await world.toolkit!.silentPushTally
            #expect(tally.accepted == 24 && tally.refused == 0 && tally.unsent == 0)
        }
    }

    @Test("a debug build whose code says .prod: the push dies at production with BadDeviceToken, reCAPTCHA takes over")
    func tokenTypeMismatch() async throws {
        let clock = ManualClock()
        try await withWorld { world, _ in
            var profile = AppProfile()
            profile.declaredTokenType = .prod
            let (auth, _) = try await world.install(profile, clock: clock)
            let attempt = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in try await provider.verifyPhoneNumber(phone, uiDelegate: nil) }
            // The probe's 1 s, then suggestedTimeout's 5 s.
            try await waitForSleepers(clock)
            clock.advance(by: .seconds(1))
            try await waitForSleepers(clock)
            clock.advance(by: .seconds(5))
            _ = try await attempt.value
            #expect(auth.cachedCredential == nil)
            #expect(auth.pendingReceipts.count == 1)
            #expect(try fixtureLogCount(world) == 0)
            // Counted for whoever expected every push through (authsim bench flows fails on it).
            let tally = await world.toolkit!.silentPushTally
            #expect(tally.refused == 1 && tally.accepted == 0 && tally.firstProblem == "APNs answered 400 BadDeviceToken")
            guard auth.lastAppVerification == .reCAPTCHA, auth.lastFallbackReason != nil else {
                Issue.record("no fallback")
                return
            }
        }
    }
}

/// The pushes of a delivery log, as JSON objects (its format stamp left out), payload included.
func loggedPushes(in file: URL) throws -> [[String: Any]] {
    try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line in
        line.hasPrefix(#"{"authsim-format""#) ? nil : try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }
}

func fixtureLogCount(_ world: PhoneAuthWorld) throws -> Int {
    guard FileManager.default.fileExists(atPath: world.channel!.deliveryLogFile.path) else { return 0 }
    return try DeliveryLog.count(in: world.channel!.deliveryLogFile)
}
