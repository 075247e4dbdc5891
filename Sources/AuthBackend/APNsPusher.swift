import APNsSender
import APNsWire
import Foundation
import Lifecycle

/// The backend's APNs provider: one `APNsClient` per environment, signing with the project's
/// `.p8`. Pointed at the local receiver, or at Apple.
package final class APNsPusher: SilentPusher {
    private let clients: [APNsEnvironment: APNsClient]

    package init(sandbox: APNsClient, production: APNsClient) {
        clients = [.sandbox: sandbox, .production: production]
    }

    package func push(token: DeviceToken, environment: APNsEnvironment, topic: String, payload: [UInt8]) async -> PushResult {
        guard let client = clients[environment] else { return PushResult(error: "no APNs client for \(environment)") }
        let headers = PushHeaders(pushType: .background, topic: topic, priority: .consideringPower)
        do {
            let response = try await client.send(PushRequest(deviceToken: token, headers: headers, payload: payload))
            return PushResult(status: response.status, reason: response.reason)
        } catch {
            return PushResult(error: error.message)
        }
    }

    package func shutdown() async {
        for client in clients.values { await client.shutdown() }
    }
}

extension APNsPusher: RunningPart {
    package var description: String { "the backend's APNs client" }
}
