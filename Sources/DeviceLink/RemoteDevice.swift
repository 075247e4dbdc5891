import APNsReceiver
import APNsWire
import DeviceOS
import Foundation
import HTTPTransport
import NIOHTTPTransport
import Utilities

/// A push as a device in another process receives it from the ``DeviceGateway``.
package struct RemotePush: Sendable {
    package let apnsID: String
    package let bundleID: String
    package let pushType: String
    package let environment: APNsEnvironment
    /// The payload, as JSON bytes.
    package let payload: [UInt8]
}

/// A simulated device in this process, linked to a push-receiver in another one through its
/// ``DeviceGateway``: registers for a token, then keeps the notification stream open
/// (`GatewayClient`, the device's side of the gateway). Talks HTTP through the transport it is
/// given (one for all of a process's devices).
package final class RemoteDevice: Sendable {
    package let token: DeviceToken
    package let environment: APNsEnvironment
    private let stream: any LineStreaming

    private init(token: DeviceToken, environment: APNsEnvironment, stream: any LineStreaming) {
        self.token = token
        self.environment = environment
        self.stream = stream
    }

    /// Asks the gateway for a token for `bundleID` in `environment` (as `registerForRemoteNotifications` does).
    /// - Throws: ``ReceiverError`` saying what is unreachable or what the gateway refused.
    /// - Parameter adminToken: the deployment's admin token, for a gateway beyond loopback.
    /// - Parameter timeout: how long the gateway has to answer.
    package static func register(gatewayHost: String, gatewayPort: Int, environment: APNsEnvironment, bundleID: String,
                                adminToken: String? = nil, transport: any HTTPTransport,
                                timeout: Duration = .seconds(10)) async throws(ReceiverError) -> DeviceToken {
        let hex: String
        do throws(GatewayLinkError) {
            hex = try await GatewayClient.register(gateway: "\(gatewayHost):\(gatewayPort)", environment: environment.rawValue, bundleID: bundleID,
                                                   adminToken: adminToken, transport: transport, timeout: timeout)
        } catch {
            throw ReceiverError(.configuration, error.message)
        }
        guard let token = DeviceToken(hex: hex) else {
            throw ReceiverError(.configuration, "the device gateway at \(gatewayHost):\(gatewayPort) answered \(hex), not a device token")
        }
        return token
    }

    /// Opens the notification stream for `token`; returns once the gateway says it is connected
    /// (within `timeout`).
    package static func connect(gatewayHost: String, gatewayPort: Int, token: DeviceToken, environment: APNsEnvironment,
                               adminToken: String? = nil, transport: NIOHTTP1Transport, timeout: Duration = .seconds(10),
                               onPush: @escaping @Sendable (RemotePush) -> Void) async throws(ReceiverError) -> RemoteDevice {
        do throws(GatewayLinkError) {
            let stream = try await GatewayClient.connect(gateway: "\(gatewayHost):\(gatewayPort)", token: token.hex, environment: environment.rawValue,
                                                         adminToken: adminToken, transport: transport, timeout: timeout) { push in
                guard let payload = try? JSONEncoder.sortedKeys.encode(push.payload) else { return }
                onPush(RemotePush(apnsID: push.apnsID, bundleID: push.bundleID, pushType: push.pushType,
                                  environment: APNsEnvironment(rawValue: push.environment) ?? environment, payload: Array(payload)))
            }
            return RemoteDevice(token: token, environment: environment, stream: stream)
        } catch {
            throw ReceiverError(.configuration, error.message)
        }
    }

    package func disconnect() async { await stream.close() }
}

extension JSONEncoder {
    /// Keys sorted, slashes as they are: payload bytes as the app's JSON parser sees them.
    static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
