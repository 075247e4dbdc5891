import APNsReceiver
import APNsSender
import APNsWire
import Utilities
import Foundation
import LocalPKI
import Scenarios
import TestSupport
import Testing

/// A real receiver on ephemeral loopback ports, with keys and certificates made for this test.
struct Fixture {
    static let bundleID = "com.example.authsim"
    static let silent = Array(#"{"aps":{"content-available":1},"com.google.firebase.auth":{"receipt":"R1","secret":"S1"}}"#.utf8)

    let folder: URL
    let channel: LocalAPNsChannel
    let clock: any WallClock
    /// A key of the same team limited to another app's topic.
    let topicLimitedKey: APNsAuthKey
    /// A key of the same team limited to production.
    let productionOnlyKey: APNsAuthKey
    /// A key of another team.
    let otherTeamKey: APNsAuthKey

    var key: APNsAuthKey { channel.credentials.authKey }

    static func start(clock: any WallClock = SystemWallClock(), policy: ReceiverPolicy = ReceiverPolicy(),
                      observer: (@Sendable (ReceiverEvent) -> Void)? = nil, name: String = #function) async throws -> Fixture {
        let folder = temporaryDirectory(name)
        let certs = folder.appendingPathComponent("Certs")
        let main = try CertsDirectory(certs).ensureAuthKey()
        let topicLimited = APNsAuthKey.generate(teamID: main.teamID)
        let productionOnly = APNsAuthKey.generate(teamID: main.teamID)
        let otherTeam = APNsAuthKey.generate()
        let channel = try await LocalAPNsChannel.start(
            certs: certs, state: folder.appendingPathComponent("State"), clock: clock,
            extraKeys: [topicLimited.trusted(topics: ["com.example.other"]),
                        productionOnly.trusted(environments: [.production]), otherTeam.trusted()],
            policy: policy, observer: observer)
        return Fixture(folder: folder, channel: channel, clock: clock, topicLimitedKey: topicLimited,
                       productionOnlyKey: productionOnly, otherTeamKey: otherTeam)
    }

    func stop() async {
        await channel.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A fresh device token registered for the test app.
    func device(_ environment: APNsEnvironment = .sandbox, bundleID: String = Fixture.bundleID) throws -> DeviceToken {
        let token = DeviceToken.random()
        try channel.register(token, environment: environment, bundleID: bundleID)
        return token
    }

    /// A sender to the fixture's receiver. Its pushes wait up to 120 s for their answer (the client's
    /// default is 10): the limit bounds a failure, it does not measure a busy machine.
    func client(_ environment: APNsEnvironment = .sandbox, key: APNsAuthKey? = nil, retries: Int = 2) throws -> APNsClient {
        try channel.client(environment: environment, key: key, clock: clock, retries: retries, timeout: 120)
    }

    /// A provider token signed now (or `offset` seconds from now) with `key`.
    func jwt(_ key: APNsAuthKey? = nil, offset: TimeInterval = 0) -> String {
        (key ?? self.key).signer.token(issuedAt: clock.now.addingTimeInterval(offset))
    }

    /// The headers of a good background push, as a raw list.
    func goodFields(jwt: String? = nil) -> [(name: String, value: String)] {
        [("authorization", "bearer \(jwt ?? self.jwt())"), ("apns-push-type", "background"),
         ("apns-topic", Fixture.bundleID), ("apns-priority", "5")]
    }

    func deliveryLog() throws -> [DeliveryLog.Entry] {
        guard FileManager.default.fileExists(atPath: channel.deliveryLogFile.path) else { return [] }
        return try DeliveryLog.entries(in: channel.deliveryLogFile)
    }
}


/// Runs `body` with a started fixture and always stops it.
func withFixture<T>(clock: any WallClock = SystemWallClock(), policy: ReceiverPolicy = ReceiverPolicy(),
                    observer: (@Sendable (ReceiverEvent) -> Void)? = nil, name: String = #function,
                    _ body: (Fixture) async throws -> T) async throws -> T {
    let fixture = try await Fixture.start(clock: clock, policy: policy, observer: observer, name: name)
    do {
        let result = try await body(fixture)
        await fixture.stop()
        return result
    } catch {
        await fixture.stop()
        throw error
    }
}
