import Foundation
import HTTPTransport
import IdentityToolkitAPI
import Logging

/// Calls Identity Toolkit endpoints as the SDK does (`AuthBackend.call(with:)`), typed: a request
/// goes out as JSON (a GET's as its query), the answer comes back as the request's response type,
/// and an error envelope becomes the SDK's ``AuthError``.
struct BackendClient: Sendable {
    /// `host:port` of an emulator (the local backend), or `nil` for Google's hosts.
    let emulator: String?
    let apiKey: String
    let languageCode: String?
    let transport: any HTTPTransport
    let logger: Logger

    func call<Request: AuthRPCRequest>(_ request: Request) async throws(AuthError) -> Request.Response {
        let endpoint = Request.endpoint
        guard let url = endpoint.url(emulator: emulator, apiKey: apiKey, query: request.queryItems) else {
            throw AuthError(.appConfigurationError, "cannot make a URL for \(endpoint.name) from the emulator host \(emulator ?? "-") and API key \(apiKey)")
        }
        var headers: [(name: String, value: String)] = []
        var body: [UInt8]?
        if endpoint.method != .get {
            headers.append(("Content-Type", "application/json"))
            do { body = try IdentityToolkitJSON.encode(request) } catch {
                throw AuthError(.internalError, "cannot encode \(endpoint.name): \(error.message)")
            }
        }
        if let languageCode, !languageCode.isEmpty { headers.append(("X-Firebase-Locale", languageCode)) }
        let answer: TransportResponse
        do {
            answer = try await transport.send(TransportRequest(method: endpoint.method.rawValue, url: url, headers: headers, body: body))
        } catch {
            logger.info("no answer from the backend", metadata: ["endpoint": "\(endpoint.name)", "error": "\(error.message)"])
            throw AuthError(.internalError, "network error calling \(endpoint.name): \(error.message)")
        }
        guard answer.status == 200 else {
            if let envelope = try? IdentityToolkitJSON.decode(ErrorResponse.self, from: answer.body) {
                logger.info("the backend refused", metadata: ["endpoint": "\(endpoint.name)", "status": "\(answer.status)",
                                                              "error": "\(envelope.error.message)"])
                throw AuthError.fromServer(envelope.error.message)
            }
            throw AuthError(.internalError, "\(endpoint.name) answered HTTP \(answer.status) without an error body")
        }
        do { return try IdentityToolkitJSON.decode(Request.Response.self, from: answer.body) } catch {
            throw AuthError(.appConfigurationError, "\(endpoint.name) answered 200 with a body that is not a \(Request.Response.self): \(error.message)")
        }
    }
}
