import APNsReceiver
import APNsWire
import Foundation
import HTTPTransport
import Synchronization
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
/// ``DeviceGateway``: registers for a token, then keeps the notification stream open. Talks HTTP
/// through the transport it is given (one for all of a process's devices).
package final class RemoteDevice: Sendable {
    package let token: DeviceToken
    package let environment: APNsEnvironment
    private let stream: LineStream

    private init(token: DeviceToken, environment: APNsEnvironment, stream: LineStream) {
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
        let gateway = "\(gatewayHost):\(gatewayPort)"
        guard let url = URL(string: "http://\(gateway)/devices") else {
            throw ReceiverError(.configuration, "\(gateway) is not a host:port for the device gateway")
        }
        let body: [UInt8]
        do { body = Array(try JSONEncoder().encode(DeviceRegistration(environment: environment.rawValue, bundleID: bundleID))) } catch {
            throw ReceiverError(.configuration, "cannot encode the registration: \(error)")
        }
        let answer: TransportResponse
        do {
            answer = try await transport.send(TransportRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")] + authorization(adminToken),
                                                               body: body, timeout: timeout))
        } catch {
            throw ReceiverError(.configuration, unreachable(gateway, error))
        }
        guard answer.status == 200, let registered = try? JSONDecoder().decode(RegisteredToken.self, from: Data(answer.body)),
              let token = DeviceToken(hex: registered.token)
        else {
            throw ReceiverError(.configuration, "the device gateway at \(gateway) refused the registration (HTTP \(answer.status)): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return token
    }

    /// Opens the notification stream for `token`; returns once the gateway says it is connected
    /// (within `timeout`).
    package static func connect(gatewayHost: String, gatewayPort: Int, token: DeviceToken, environment: APNsEnvironment,
                               adminToken: String? = nil, transport: NIOHTTP1Transport, timeout: Duration = .seconds(10),
                               onPush: @escaping @Sendable (RemotePush) -> Void) async throws(ReceiverError) -> RemoteDevice {
        let gateway = "\(gatewayHost):\(gatewayPort)"
        guard let url = URL(string: "http://\(gateway)/devices/\(environment.rawValue)/\(token.hex)/notifications") else {
            throw ReceiverError(.configuration, "\(gateway) is not a host:port for the device gateway")
        }
        let connected = Confirmation()
        let stream: LineStream
        do {
            stream = try await transport.lines(TransportRequest(method: "GET", url: url, headers: authorization(adminToken), timeout: timeout)) { line in
                if line == Array(#"{"connected":true}"#.utf8) {
                    connected.confirm()
                    return
                }
                guard let push = try? JSONDecoder().decode(GatewayPush.self, from: Data(line)),
                      let payload = try? JSONEncoder.sortedKeys.encode(push.payload) else { return }
                onPush(RemotePush(apnsID: push.apnsID, bundleID: push.bundleID, pushType: push.pushType,
                                  environment: APNsEnvironment(rawValue: push.environment) ?? environment, payload: Array(payload)))
            }
        } catch {
            throw ReceiverError(.configuration, unreachable(gateway, error))
        }
        guard await connected.wait(timeout: timeout) else {
            await stream.close()
            throw ReceiverError(.configuration, "the device gateway at \(gateway) did not confirm the notification stream within \(timeout)")
        }
        return RemoteDevice(token: token, environment: environment, stream: stream)
    }

    package func disconnect() async { await stream.close() }

    private static func authorization(_ adminToken: String?) -> [(name: String, value: String)] {
        adminToken.map { [("Authorization", "Bearer \($0)")] } ?? []
    }

    private static func unreachable(_ gateway: String, _ error: TransportError) -> String {
        switch error.code {
        case .unreachable:
            "cannot reach the device gateway at \(gateway) (\(error.message)): start push-receiver (its device gateway listens on 127.0.0.1:5223 by default), or give --gateway the host:port it prints"
        default:
            "the device gateway at \(gateway) did not answer: \(error.message)"
        }
    }
}

/// The gateway's `{"connected":true}`, awaited with a deadline: the first of the two decides.
private final class Confirmation: Sendable {
    private let state = Mutex<(result: Bool?, waiter: CheckedContinuation<Bool, Never>?)>((nil, nil))

    func confirm() { finish(true) }

    private func finish(_ value: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.result == nil else { return nil }
            state.result = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    /// Whether the confirmation came within `timeout`.
    func wait(timeout: Duration) async -> Bool {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            finish(false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

extension JSONEncoder {
    /// Keys sorted, slashes as they are: payload bytes as the app's JSON parser sees them.
    static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
