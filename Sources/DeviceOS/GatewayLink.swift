import Foundation
import HTTPTransport
import Synchronization
import Utilities

// A device's link to push-receiver's device gateway, from the device's side: a token for an app,
// then the stream of the token's pushes. The gateway (DeviceLink) serves it; a device in another
// process (DeviceLink's RemoteDevice, FirebaseCore's test host) joins through it.

/// `POST /devices`.
package struct DeviceRegistration: Codable, Sendable, Hashable {
    /// `sandbox` or `production`.
    package var environment: String
    package var bundleID: String
    /// A token to register; a random one when absent.
    package var token: String?
    package var label: String?
    package init(environment: String, bundleID: String, token: String? = nil, label: String? = nil) {
        self.environment = environment
        self.bundleID = bundleID
        self.token = token
        self.label = label
    }
}

/// The answer to a registration.
package struct RegisteredToken: Codable, Sendable, Hashable {
    package var token: String
    package var environment: String
    package init(token: String, environment: String) {
        self.token = token
        self.environment = environment
    }
}

/// One line of a device's notification stream.
package struct GatewayPush: Codable, Sendable, Hashable {
    package var apnsID: String
    package var environment: String
    package var deviceToken: String
    package var bundleID: String
    package var pushType: String
    package var payload: JSONValue
    enum CodingKeys: String, CodingKey {
        case environment, payload
        case apnsID = "apns-id", deviceToken = "device-token", bundleID = "bundle-id", pushType = "push-type"
    }
}

/// Why a device could not join the gateway.
package struct GatewayLinkError: CodedError {
    package enum Code: String, Sendable {
        /// Nothing listens there, or it did not answer.
        case unreachable
        /// The gateway answered with a refusal, or something that is not its answer.
        case refused
        /// The address or the request is not one.
        case configuration
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// The device's side of the gateway's two calls.
package enum GatewayClient {
    /// `POST /devices`: a token (hex) for `bundleID` in `environment` (`sandbox` or `production`),
    /// as `registerForRemoteNotifications` gets one from APNs.
    /// - Parameter adminToken: the deployment's admin token, for a gateway beyond loopback.
    package static func register(gateway: String, environment: String, bundleID: String, adminToken: String? = nil,
                                 transport: any HTTPTransport, timeout: Duration = .seconds(10)) async throws(GatewayLinkError) -> String {
        guard let url = URL(string: "http://\(gateway)/devices") else {
            throw GatewayLinkError(.configuration, "\(gateway) is not a host:port for the device gateway")
        }
        let body: [UInt8]
        do { body = Array(try JSONEncoder().encode(DeviceRegistration(environment: environment, bundleID: bundleID))) } catch {
            throw GatewayLinkError(.configuration, "cannot encode the registration: \(error)")
        }
        let answer: TransportResponse
        do {
            answer = try await transport.send(TransportRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")] + authorization(adminToken),
                                                               body: body, timeout: timeout))
        } catch {
            throw unreachable(gateway, error)
        }
        guard answer.status == 200, let registered = try? JSONDecoder().decode(RegisteredToken.self, from: Data(answer.body)) else {
            throw GatewayLinkError(.refused, "the device gateway at \(gateway) refused the registration (HTTP \(answer.status)): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return registered.token
    }

    /// Opens the notification stream of `token` (hex); returns once the gateway says it is
    /// connected (within `timeout`). Each push comes to `onPush` as the gateway's line.
    package static func connect(gateway: String, token: String, environment: String, adminToken: String? = nil,
                                transport: any HTTPTransport, timeout: Duration = .seconds(10),
                                onPush: @escaping @Sendable (GatewayPush) -> Void) async throws(GatewayLinkError) -> any LineStreaming {
        guard let url = URL(string: "http://\(gateway)/devices/\(environment)/\(token)/notifications") else {
            throw GatewayLinkError(.configuration, "\(gateway) is not a host:port for the device gateway")
        }
        let connected = Confirmation()
        let stream: any LineStreaming
        do {
            stream = try await transport.lines(TransportRequest(method: "GET", url: url, headers: authorization(adminToken), timeout: timeout)) { line in
                if line == Array(#"{"connected":true}"#.utf8) {
                    connected.confirm()
                    return
                }
                guard let push = try? JSONDecoder().decode(GatewayPush.self, from: Data(line)) else { return }
                onPush(push)
            }
        } catch {
            throw unreachable(gateway, error)
        }
        guard await connected.wait(timeout: timeout) else {
            await stream.close()
            throw GatewayLinkError(.unreachable, "the device gateway at \(gateway) did not confirm the notification stream within \(timeout)")
        }
        return stream
    }

    private static func authorization(_ adminToken: String?) -> [(name: String, value: String)] {
        adminToken.map { [("Authorization", "Bearer \($0)")] } ?? []
    }

    private static func unreachable(_ gateway: String, _ error: TransportError) -> GatewayLinkError {
        switch error.code {
        case .unreachable:
            GatewayLinkError(.unreachable, "cannot reach the device gateway at \(gateway) (\(error.message)): start push-receiver (its device gateway listens on 127.0.0.1:5223 by default), or give --gateway the host:port it prints")
        default:
            GatewayLinkError(.unreachable, "the device gateway at \(gateway) did not answer: \(error.message)")
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

extension AppHost {
    /// The device hands the app delegate a push's payload (JSON bytes) as `userInfo`, in the order
    /// pushes reached the device, never while the app reads an answer a push may follow; `taken`
    /// hears whether an interceptor (Auth) took it, then `done` runs.
    package func deliverRemoteNotification(_ payload: [UInt8], taken: @escaping @Sendable (Bool) -> Void = { _ in },
                                           done: @escaping @Sendable () -> Void = {}) {
        deliverPush { [weak self] in
            if let self, let userInfo = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] {
                taken(self.didReceiveRemoteNotification(userInfo))
            }
            done()
        }
    }
}
