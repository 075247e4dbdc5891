import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The parts as processes, and HTTP to them, for the tests of several targets.

/// POSTs `body` to `url`: the status and the JSON object answered (empty when the body is not one).
package func post(_ url: String, _ body: String, headers: [String: String] = [:]) async throws -> (Int, [String: Any]) {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = "POST"
    request.httpBody = Data(body.utf8)
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as! HTTPURLResponse).statusCode, (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
}

package func errorMessage(_ object: [String: Any]) -> String? { (object["error"] as? [String: Any])?["message"] as? String }

/// push-receiver as its own process with keys in `folder`/Certs: the process, its APNs port and its device gateway's port.
package func startReceiver(in folder: URL) async throws -> (ServerProcess, apnsPort: Int, gatewayPort: Int) {
    let receiver = try ServerProcess([try executable("push-receiver"), "--certs", folder.appendingPathComponent("Certs").path,
                                      "--state", folder.appendingPathComponent("receiver").path,
                                      "--sandbox-port", "0", "--no-production-listener", "--device-port", "0"])
    do {
        _ = try await receiver.waitFor("delivery log:")
        return (receiver, try receiver.port(after: "https"), try receiver.port(after: "device gateway"))
    } catch {
        receiver.stop()
        throw error
    }
}

/// `authsim backend` as its own process on a free port, pushing to `receiverPort`, with its state
/// and keys in `folder` (keys in `folder`/Certs): the process and its port.
package func startBackend(in folder: URL, receiverPort: String, _ extra: [String] = []) async throws -> (ServerProcess, port: Int) {
    let backend = try ServerProcess([try executable("authsim"), "backend", "--port", "0", "--receiver-port", receiverPort,
                                     "--certs", folder.appendingPathComponent("Certs").path,
                                     "--state", folder.appendingPathComponent("backend").path] + extra)
    do {
        _ = try await backend.waitFor("SMS outbox")
        return (backend, try backend.port(after: "listening"))
    } catch {
        backend.stop()
        throw error
    }
}
