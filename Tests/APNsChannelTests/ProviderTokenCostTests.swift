@testable import APNsReceiver
import APNsWire
import Foundation
import LocalPKI
import Testing

/// What a connection's provider tokens cost the receiver (PushValidator's `authenticate`): a
/// token's ES256 signature is verified once per connection, also when the token is refused after
/// it verified, so a provider that keeps sending an expired token costs a comparison a push, not
/// a verify.
@Suite("Provider tokens verified once per connection")
struct ProviderTokenCostTests {
    let key = APNsAuthKey.generate()
    let device = DeviceToken.random()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    var validator: PushValidator {
        PushValidator(tokens: ProviderTokenVerifier(keys: [key.trusted()]),
                      registry: DeviceRegistry(devices: [RegisteredDevice(token: device, environment: .sandbox, bundleID: Fixture.bundleID)]))
    }

    func push(_ jwt: String) -> IncomingPush {
        IncomingPush(method: "POST", path: "/3/device/\(device.hex)",
                     headers: [("authorization", "bearer \(jwt)"), ("apns-push-type", "background"), ("apns-topic", Fixture.bundleID), ("apns-priority", "5")],
                     body: Fixture.silent)
    }

    /// The reason of each of `count` pushes carrying `jwt` at `at`, on `auth`'s connection (nil: accepted).
    func reasons(_ jwt: String, _ count: Int, at: Date, _ auth: inout ConnectionAuthState) -> [APNsReason?] {
        (0..<count).map { _ in
            if case .failure(let rejection) = validator.validate(push(jwt), environment: .sandbox, auth: &auth, now: at) { return rejection.reason }
            return nil
        }
    }

    @Test("an expired token: ExpiredProviderToken every push, its signature verified once")
    func expiredVerifiedOnce() {
        var auth = ConnectionAuthState()
        let expired = key.signer.token(issuedAt: now.addingTimeInterval(-3700))
        #expect(reasons(expired, 5, at: now, &auth) == Array(repeating: .expiredProviderToken, count: 5))
        #expect(auth.tokensVerified == 1)
        #expect(auth.tokensAccepted == 0)
    }

    @Test("a token issued ahead of the clock: refused, then taken once its time comes, verified once; a token with a bad signature is verified each time")
    func earlyTokenTakenLater() {
        var auth = ConnectionAuthState()
        let early = key.signer.token(issuedAt: now.addingTimeInterval(600))
        #expect(reasons(early, 2, at: now, &auth) == [.invalidProviderToken, .invalidProviderToken])
        #expect(reasons(early, 2, at: now.addingTimeInterval(400), &auth) == [nil, nil])
        #expect(auth.tokensVerified == 1)
        #expect(auth.tokensAccepted == 1)
        // Taken at its acceptance, not at its first verification: a new token 15 minutes after
        // that is too soon (20 minutes after the verification), one 20 minutes after it is not.
        let soon = key.signer.token(issuedAt: now.addingTimeInterval(1300))
        #expect(reasons(soon, 1, at: now.addingTimeInterval(1300), &auth) == [.tooManyProviderTokenUpdates])
        let next = key.signer.token(issuedAt: now.addingTimeInterval(400 + 1200))
        #expect(reasons(next, 1, at: now.addingTimeInterval(400 + 1200), &auth) == [nil])

        var forged = ConnectionAuthState()
        let other = APNsAuthKey.generate()
        let wrong = other.signer.token(issuedAt: now)
        #expect(reasons(wrong, 3, at: now, &forged) == Array(repeating: .invalidProviderToken, count: 3))
        #expect(forged.tokensVerified == 3)
    }
}
