import Foundation
import Synchronization
import Utilities
#if canImport(Glibc)
import Glibc
#endif

/// How the parts talk HTTP as clients: one request, one whole answer. The auth core's `Auth` is
/// given one through its app's host (so that thousands of simulated apps share one connection
/// pool) or makes its own; devices in another process than push-receiver use one for the device
/// gateway.
///
/// For the auth core this is the SDK's seam: `AuthBackendRPCIssuer` (FirebaseAuth 12.19
/// `Backend/AuthBackendRPCIssuer.swift`), one per `Auth`, around a `GTMSessionFetcherService`.
package protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the whole answer, whatever its status. Throws only when no
    /// answer came (no connection, a timeout, a connection closed mid-answer, an answer over the
    /// size limit).
    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse

    /// ``send(_:)`` for a request to `url` whose header fields and body `content` makes only when
    /// the request can go out: requests waiting for a connection (ten thousand simulated apps
    /// share 128) do not hold their bodies meanwhile. An error `content` throws ends the call.
    func send(method: String, url: URL, timeout: Duration,
              content: () throws(TransportError) -> TransportContent) async throws(TransportError) -> TransportResponse

    /// Sends `request` on a connection of its own and hands each line of the answer's body to
    /// `onLine` as it comes (a stream of JSON lines, as the device gateway sends pushes). Returns
    /// once the answer's head came with status 200; another status is thrown with the answer's
    /// body. `onEnd` hears once when the stream ends: `nil` when the server ended it, the error
    /// otherwise (the connection lost, a line over the transport's limit).
    /// ``LineStreaming/close()`` ends it from this side (then `onEnd` is not called).
    func lines(_ request: TransportRequest, onLine: @escaping @Sendable ([UInt8]) -> Void,
               onEnd: @escaping @Sendable (TransportError?) -> Void) async throws(TransportError) -> any LineStreaming
}

/// An answer streamed line by line (``HTTPTransport/lines(_:onLine:onEnd:)``).
package protocol LineStreaming: Sendable {
    /// Ends the stream from this side and closes its connection.
    func close() async
}

extension HTTPTransport {
    /// Makes the request at once and sends it: for transports without a queue of their own.
    package func send(method: String, url: URL, timeout: Duration,
                     content: () throws(TransportError) -> TransportContent) async throws(TransportError) -> TransportResponse {
        try await send(TransportRequest(method: method, url: url, content: try content(), timeout: timeout))
    }

    /// ``lines(_:onLine:onEnd:)`` for a caller that does not need to hear the stream's end.
    package func lines(_ request: TransportRequest, onLine: @escaping @Sendable ([UInt8]) -> Void) async throws(TransportError) -> any LineStreaming {
        try await lines(request, onLine: onLine, onEnd: { _ in })
    }
}

/// A request's header fields, in order, and body.
package struct TransportContent: Sendable {
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]?

    package init(headers: [(name: String, value: String)], body: [UInt8]?) {
        self.headers = headers
        self.body = body
    }
}

/// An HTTP request as the auth core makes them.
package struct TransportRequest: Sendable {
    package var method: String
    package var url: URL
    /// Header fields, in order.
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]?
    /// How long to wait for the whole answer.
    package var timeout: Duration

    package init(method: String, url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
                timeout: Duration = .seconds(60)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// A request to `url` with the header fields and body of `content`.
    package init(method: String, url: URL, content: TransportContent, timeout: Duration = .seconds(60)) {
        self.init(method: method, url: url, headers: content.headers, body: content.body, timeout: timeout)
    }
}

/// An answer: status, header fields (names lowercased) and body.
package struct TransportResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header field `name` (any case).
    package func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }
}

/// Why a request got no answer.
package struct TransportError: CodedError {
    package enum Code: String, Sendable {
        /// No connection could be made.
        case unreachable
        /// No whole answer within the request's timeout.
        case timedOut
        /// The connection closed before the whole answer came.
        case closed
        /// The answer's body was larger than the transport takes.
        case tooLarge
        /// The URL is not one this transport can call.
        case badURL
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A counting semaphore for async callers, first come first served.
package final class Limiter: Sendable {
    private struct State {
        var available: Int
        /// Waiters in arrival order from `head` on (a queue without `removeFirst`'s O(n) per release).
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0
    }
    private let state: Mutex<State>

    package init(_ count: Int) { state = Mutex(State(available: count)) }

    package func acquire() async {
        // A free slot is taken without suspending (a continuation costs an allocation and a check).
        if state.withLock({ Self.takeFree(&$0) }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if Self.takeFree(&state) { return true }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Takes a free slot if there is one.
    private static func takeFree(_ state: inout State) -> Bool {
        guard state.available > 0 else { return false }
        state.available -= 1
        return true
    }

    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiters.count else {
                state.available += 1
                return nil
            }
            let next = state.waiters[state.head]
            state.head += 1
            if state.head == state.waiters.count {
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 1024, state.head * 2 >= state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return next
        }
        next?.resume()
    }
}

/// Where a request goes: scheme, host and port, and the pool's key for them.
package struct TransportTarget: Sendable {
    package let host: String
    package let port: Int
    package let secure: Bool
    package let key: String

    package init(_ url: URL) throws(TransportError) {
        guard let scheme = url.scheme, scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw TransportError(.badURL, "\(url.absoluteString) is not an http:// or https:// URL with a host")
        }
        self.host = host
        secure = scheme == "https"
        port = url.port ?? (secure ? 443 : 80)
        key = "\(scheme)://\(host):\(port)"
    }

    /// The host without an IPv6 literal's brackets.
    package var bareHost: String { host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host }

    /// The `Host` field for a request to `url` (RFC 9112 §3.2): an IPv6 literal in brackets, and
    /// the port when the URL names one. (`URL.host` drops the brackets: `::1:8080` is no host.)
    package func hostField(for url: URL) -> String {
        // Only an IPv6 literal has a colon; the target may hold it bracketed or not.
        let name = host.hasPrefix("[") || !host.utf8.contains(UInt8(ascii: ":")) ? host : "[\(host)]"
        return url.port == nil ? name : "\(name):\(port)"
    }
}

extension TransportTarget {
    /// Whether `host` is an IPv4 or IPv6 literal.
    package static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
