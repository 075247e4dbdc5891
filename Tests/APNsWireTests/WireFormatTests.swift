import APNsWire
import Utilities
import Foundation
import Testing

@Suite("APNs wire formats")
struct WireFormatTests {
    @Test("every reason in Apple's table has its status")
    func reasonTable() {
        let expected: [Int: [String]] = [
            400: ["BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
                  "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
                  "MissingTopic", "PayloadEmpty", "TopicDisallowed"],
            403: ["BadCertificate", "BadCertificateEnvironment", "ExpiredProviderToken", "Forbidden", "InvalidProviderToken",
                  "MissingProviderToken", "UnrelatedKeyIdInToken", "BadEnvironmentKeyInToken"],
            404: ["BadPath"], 405: ["MethodNotAllowed"], 410: ["ExpiredToken", "Unregistered"], 413: ["PayloadTooLarge"],
            429: ["TooManyProviderTokenUpdates", "TooManyRequests"], 500: ["InternalServerError"],
            503: ["ServiceUnavailable", "Shutdown"],
        ]
        #expect(APNsReason.all.count == expected.values.map(\.count).reduce(0, +))
        for (status, reasons) in expected {
            for reason in reasons { #expect(APNsReason(rawValue: reason).status == status, "\(reason)") }
        }
        #expect(APNsReason(wire: "BadEnvironmentKeyIdInToken") == .badEnvironmentKeyInToken)
        #expect(APNsReason(rawValue: "SomethingNew").status == nil)
    }

    @Test("error bodies are Apple's JSON, with timestamp only when given")
    func errorBody() {
        #expect(String(decoding: APNsErrorBody(reason: .badTopic).encoded(), as: UTF8.self) == #"{"reason":"BadTopic"}"#)
        #expect(String(decoding: APNsErrorBody(reason: .unregistered, timestamp: 1_700_000_000_000).encoded(), as: UTF8.self)
                == #"{"reason":"Unregistered","timestamp":1700000000000}"#)
        #expect(APNsErrorBody.decode(Array(#"{"reason":"Shutdown"}"#.utf8))?.reason == "Shutdown")
        #expect(APNsErrorBody.decode(Array("nope".utf8)) == nil)
    }

    @Test("device tokens: any even-length hex, normalised to lowercase", arguments: [
        ("5F3A", true), ("5f3a", true), (String(repeating: "ab", count: 32), true), (String(repeating: "0", count: 160), true),
        ("", false), ("abc", false), ("zz", false), ("5f 3a", false), (String(repeating: "ab", count: 201), false),
    ])
    func deviceTokens(hex: String, valid: Bool) {
        let token = DeviceToken(hex: hex)
        #expect((token != nil) == valid)
        if let token {
            #expect(token.hex == hex.lowercased())
            #expect(DeviceToken(bytes: token.bytes) == token)
        }
    }

    @Test("random device tokens: the length asked for, every byte drawn")
    func randomTokens() {
        for count in [1, 7, 8, 9, 32, 100] {
            let tokens = (0..<50).map { _ in DeviceToken.random(byteCount: count) }
            #expect(tokens.allSatisfy { $0.bytes.count == count })
            // Each position takes more than one value over 50 tokens (a byte left at zero would not).
            for position in 0..<count { #expect(Set(tokens.map { $0.bytes[position] }).count > 1, "byte \(position) of \(count)") }
        }
    }

    @Test("push types know their topic suffixes and payload limits")
    func pushTypes() {
        #expect(APNsPushType.voip.requiredTopicSuffix == ".voip")
        #expect(APNsPushType.voip.maximumPayloadSize == 5120)
        #expect(APNsPushType.background.maximumPayloadSize == 4096)
        #expect(APNsPushType.liveactivity.bundleID(forTopic: "com.a.b.push-type.liveactivity") == "com.a.b")
        #expect(!APNsPushType(rawValue: "pager").isKnown)
        #expect(APNsPriority.default(for: .background) == .consideringPower)
        #expect(APNsPriority(rawValue: 7) == nil)
    }

    @Test("headers go on the wire in Apple's names, apns-id lowercase")
    func headers() {
        let id = UUID()
        let fields = PushHeaders(pushType: .background, topic: "com.a", priority: .consideringPower, expiration: 0,
                                 collapseID: "c", apnsID: id).headerFields(authorization: "JWT")
        #expect(fields.map(\.name) == ["authorization", "apns-push-type", "apns-topic", "apns-priority", "apns-expiration",
                                       "apns-collapse-id", "apns-id"])
        #expect(fields[0].value == "bearer JWT")
        #expect(fields.last?.value == id.uuidString.lowercased())
        #expect(parseAPNsID("not-a-uuid") == nil)
        #expect(parseAPNsID(id.uuidString) != nil)
    }

    @Test("an .apns file's target bundle is read and stripped; background is recognised")
    func simctlPayload() throws {
        let payload = try NotificationPayload(json: Array(#"{"Simulator Target Bundle":"com.a","aps":{"content-available":1}}"#.utf8))
        #expect(payload.simulatorTargetBundle == "com.a")
        #expect(payload.isBackground)
        #expect(payload.impliedPushType == .background)
        #expect(!String(decoding: payload.bytes, as: UTF8.self).contains("Simulator"))
        let alert = try NotificationPayload(json: Array(#"{"aps":{"alert":"hi","content-available":1}}"#.utf8))
        #expect(!alert.isBackground)
        #expect(alert.impliedPushType == .alert)
    }

    @Test("bad payloads get specific errors", arguments: [
        ("", PayloadError.Code.empty), ("{", .invalidJSON), ("[1]", .notAnObject), (#"{"aps":3}"#, .apsNotAnObject),
        (#"{"Simulator Target Bundle":1}"#, .invalidTargetBundle),
    ])
    func badPayloads(text: String, code: PayloadError.Code) {
        #expect(throws: PayloadError(code, "")) { try NotificationPayload(json: Array(text.utf8)) }
    }

    @Test("the shipped payload files parse")
    func shippedPayloads() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Payloads")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") || $0.hasSuffix(".apns") }
        #expect(files.count >= 4)
        for file in files { _ = try NotificationPayload(contentsOf: folder.appendingPathComponent(file)) }
    }

    @Test("base64url round-trips and rejects the standard alphabet")
    func base64url() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 250) & 0xFF) }
            #expect(Base64URL.decode(Substring(Base64URL.encode(bytes))) == bytes)
        }
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("a") == nil)
    }

    @Test("environments are named by Apple's hosts")
    func environments() {
        #expect(APNsEnvironment.named(byHost: "api.push.apple.com") == .production)
        #expect(APNsEnvironment.named(byHost: "API.SANDBOX.PUSH.APPLE.COM") == .sandbox)
        #expect(APNsEnvironment.named(byHost: "api.development.push.apple.com") == .sandbox)
        #expect(APNsEnvironment.named(byHost: "localhost") == nil)
    }
}

@Suite("Random IDs")
struct RandomIDTests {
    @Test("apns-ids are canonical lowercase version-4 UUIDs, and do not repeat")
    func uuids() {
        var ids = RandomIDs()
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = ids.uuid()
            #expect(id.count == 36)
            #expect(id == id.lowercased())
            #expect(parseAPNsID(id) != nil)
            #expect(Array(id)[14] == "4")
            #expect("89ab".contains(Array(id)[19]))
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }

    /// Apple's entitlement (Entitlement Key Reference, `aps-environment`): `development` builds get
    /// sandbox tokens, `production` builds production ones; nothing else is a value.
    @Test("aps-environment: development is sandbox, production is production, both ways; anything else is none")
    func apsEnvironment() {
        #expect(APNsEnvironment(apsEnvironment: "development") == .sandbox)
        #expect(APNsEnvironment(apsEnvironment: "production") == .production)
        for environment in APNsEnvironment.allCases { #expect(APNsEnvironment(apsEnvironment: environment.apsEnvironment) == environment) }
        for other in ["sandbox", "Development", "", "prod"] { #expect(APNsEnvironment(apsEnvironment: other) == nil, "\(other)") }
    }
}
