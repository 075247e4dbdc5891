import APNsSender
import APNsWire
import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import InMemoryLogging
import Logging
import Scenarios
import Testing
import TestSupport

/// The libraries log, through swift-log, what a user debugging a run wants to see; nothing unless
/// given a logger.
@Suite("What the libraries log")
struct LoggingTests {
    /// A pusher for the backend whose pushes APNs refuses, or that cannot reach APNs at all.
    struct FailingPusher: SilentPusher {
        let result: PushResult
        func push(token: DeviceToken, environment: APNsEnvironment, topic: String, payload: [UInt8]) async -> PushResult { result }
    }

    @Test("the backend: a silent push APNs refused or that could not be sent is a warning with the token; a refused request is info")
    func backend() async throws {
        for result in [PushResult(status: 400, reason: .badDeviceToken), PushResult(error: "connection refused")] {
            let log = InMemoryLogHandler()
            let toolkit = try IdentityToolkit(pusher: FailingPusher(result: result), logger: Logger(label: "test") { _ in log })
            _ = try await toolkit.verifyClient(VerifyClientRequest(appToken: "AB12", isSandbox: true))
            let warning = try #require(log.entries.first { $0.level == .warning })
            #expect(warning.metadata["device-token"] == "ab12")
            #expect(warning.metadata["environment"] == "sandbox")
            #expect("\(warning.message)".contains(result.status == nil ? "could not be sent" : "APNs refused"))
            _ = try? await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+1"))
            let refused = try #require(log.entries.first { $0.level == .info })
            #expect(refused.metadata["endpoint"] == "sendVerificationCode")
            #expect(refused.metadata["error"] == "INVALID_PHONE_NUMBER : TOO_SHORT")
        }
    }

    @Test("the app: why verification fell back to reCAPTCHA is a notice; what the backend refused is info")
    func app() async throws {
        try await withWorld { world, _ in
            let log = InMemoryLogHandler()
            let options = world.options(for: AppProfile())
            options.bundleID = "com.example.authsim"
            let host = AppHost(AppHost.Configuration(bundleID: options.bundleID, urlSchemes: [options.encodedAppIDScheme], isSimulator: true), transport: world.transport, logger: Logger(label: "app") { _ in log })
            let auth = world.auth(options: options, host: host)
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil)
            let fallback = try #require(log.entries.first { $0.level == .notice })
            #expect(fallback.metadata["why"]?.description.contains("simulator") == true)
            _ = try? await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+1650", uiDelegate: nil)
            #expect(log.entries.contains { $0.level == .info && $0.metadata["error"] == "INVALID_PHONE_NUMBER : TOO_SHORT" })
        }
    }

    @Test("the receiver: a rejected push is a notice with its apns-id, token, status and reason")
    func receiver() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = InMemoryLogHandler()
        let channel = try await LocalAPNsChannel.start(certs: folder.appendingPathComponent("Certs"),
                                                       state: folder.appendingPathComponent("State"),
                                                       logger: Logger(label: "receiver") { _ in log })
        let client = try channel.client(environment: .sandbox)
        let token = DeviceToken.random()
        let response = try await client.send(PushRequest(deviceToken: token, headers: PushHeaders(pushType: .background, topic: "com.example.authsim",
                                                                                                  priority: .consideringPower),
                                                         payload: Array(#"{"aps":{"content-available":1}}"#.utf8)))
        #expect(response.status == 400)
        let rejected = try #require(log.entries.first { $0.level == .notice })
        #expect("\(rejected.message)" == "push rejected")
        #expect(rejected.metadata["reason"] == "BadDeviceToken")
        #expect(rejected.metadata["status"] == "400")
        #expect(rejected.metadata["device-token"]?.description == String(token.hex.prefix(16)))
        #expect(rejected.metadata["apns-id"] != nil)
        await client.shutdown()
        await channel.shutdown()
    }

    @Test("without a logger nothing is logged, and nothing crashes")
    func silentByDefault() async throws {
        let toolkit = try IdentityToolkit(pusher: FailingPusher(result: PushResult(error: "no APNs")))
        _ = try await toolkit.verifyClient(VerifyClientRequest(appToken: "AB12", isSandbox: false))
    }
}
