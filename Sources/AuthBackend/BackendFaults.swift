import Foundation
import IdentityToolkitAPI
import Synchronization

/// An answer the backend gives instead of the service's, for the next `times` calls of one
/// endpoint: how a test or a scenario makes an app meet any answer the real service can give (a
/// server code the backend never produces by itself, an envelope without a message, a body that is
/// not JSON) through the real HTTP path.
///
/// ```swift
/// toolkit.faults.add(.error("USER_DISABLED", on: "sendVerificationCode"))
/// toolkit.faults.add(.raw(status: 502, body: "<html>Bad Gateway</html>", on: "verifyClient"))
/// ```
package struct BackendFault: Sendable, Hashable, Codable {
    /// The endpoint, as its path ends: `sendVerificationCode`, `verifyClient`, `getAccountInfo`,
    /// `accounts/mfaSignIn:start`, `recaptchaConfig`, `token` (any path ending `/<endpoint>`).
    package var endpoint: String
    package var status: Int
    /// The body, as sent.
    package var body: String
    /// How many calls get it (then the endpoint answers as itself again).
    package var times: Int

    package init(endpoint: String, status: Int, body: String, times: Int = 1) {
        self.endpoint = endpoint
        self.status = status
        self.body = body
        self.times = times
    }

    /// Google's envelope with `message` (`CODE` or `CODE : detail`), `errors[0].reason` (by
    /// default what the service writes for the status) and, when given, `status`.
    package static func error(_ message: String, status: Int = 400, reason: String? = nil, googleStatus: String? = nil,
                             on endpoint: String, times: Int = 1) -> BackendFault {
        let reason = reason ?? (status == 403 ? "forbidden" : status == 404 ? "notFound" : "invalid")
        let envelope = ErrorResponse(error: .init(code: status, message: message, errors: [.init(message: message, reason: reason, domain: "global")],
                                                  status: googleStatus))
        let body = (try? IdentityToolkitJSON.encode(envelope)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return BackendFault(endpoint: endpoint, status: status, body: body, times: times)
    }

    /// Any status and body.
    package static func raw(status: Int, body: String, on endpoint: String, times: Int = 1) -> BackendFault {
        BackendFault(endpoint: endpoint, status: status, body: body, times: times)
    }

    /// The envelope's message (`CODE : detail`), when the body is one.
    package var serverMessage: String? {
        (try? IdentityToolkitJSON.decode(ErrorResponse.self, from: Array(body.utf8)))?.error.message
    }

    /// The server code the envelope carries (`USER_DISABLED`), or `HTTP_<status>` without one.
    package var serverCode: String {
        serverMessage.map { IdentityToolkitError(message: $0, status: status).code.rawValue } ?? "HTTP_\(status)"
    }

    /// Whether a request for `path` is one of this fault's endpoint's.
    func matches(path: String) -> Bool { path.hasSuffix("/" + endpoint) }
}

/// The faults waiting for their calls, first added first used. A lock: the router's handlers take
/// from it on the server's threads while a test adds to it.
package final class BackendFaults: Sendable {
    private let queue = Mutex<[BackendFault]>([])

    package init() {}

    package func add(_ fault: BackendFault) {
        guard fault.times > 0 else { return }
        queue.withLock { $0.append(fault) }
    }

    /// Drops every fault not used yet.
    package func removeAll() { queue.withLock { $0.removeAll() } }

    /// The faults not used up yet.
    package var pending: [BackendFault] { queue.withLock { $0 } }

    /// The fault for a request to `path`, counting one use of it.
    func take(path: String) -> BackendFault? {
        queue.withLock { queue in
            guard let index = queue.firstIndex(where: { $0.matches(path: path) }) else { return nil }
            let fault = queue[index]
            queue[index].times -= 1
            if queue[index].times == 0 { queue.remove(at: index) }
            return fault
        }
    }
}
