import Foundation
import Utilities

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
}

extension HTTPTransport {
    /// Makes the request at once and sends it: for transports without a queue of their own.
    package func send(method: String, url: URL, timeout: Duration,
                     content: () throws(TransportError) -> TransportContent) async throws(TransportError) -> TransportResponse {
        try await send(TransportRequest(method: method, url: url, content: try content(), timeout: timeout))
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
