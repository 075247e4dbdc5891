import DeviceOS
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
    /// The Auth's `tenantID`, put in each request the SDK puts it in (``AuthRPCRequest/sdkSendsTenantID``).
    let tenantID: String?
    /// The app's fixed header fields (``Auth/requestHeaders``).
    let headers: [(name: String, value: String)]
    let transport: any HTTPTransport
    let logger: Logger
    /// The app: a killed one sends nothing more.
    let host: AppHost

    /// Sends `request` and reads its answer. Only the request's URL lives across the wait for one
    /// of the transport's connections: the header fields and the body are made when the request
    /// can go (the transport asks for them). Ten thousand sign-ins at once wait for 128
    /// connections, and each waiting `getAccountInfo` held its ID token's JSON body meanwhile.
    /// Building the request and reading the answer are synchronous helpers, so this async frame
    /// stays small (it is held by every sign-in in flight).
    ///
    /// - Throws: the backend's error mapped as the SDK maps it; `networkError` (17020, the
    ///   transport's error underneath, as the SDK's `AuthBackend.swift` does) when no answer came.
    @inline(never)
    func call<Request: AuthRPCRequest>(_ request: Request) async throws(AuthError) -> Request.Response {
        if host.isTerminated { throw AuthError(.internalError, "the app's process was killed") }
        var request = request
        if Request.sdkSendsTenantID, let tenantID { request.tenantId = tenantID }
        let url = try url(for: request)
        // Set when the request cannot be encoded (the transport is then told why, and gives up).
        var unencodable: AuthError?
        let answer: TransportResponse
        do throws(TransportError) {
            answer = try await transport.send(method: Request.endpoint.method.rawValue, url: url, timeout: .seconds(60)) { () throws(TransportError) in
                do throws(AuthError) { return try content(of: request) } catch {
                    unencodable = error
                    throw TransportError(.badURL, error.message)
                }
            }
        } catch {
            if let unencodable { throw unencodable }
            throw networkError(error, endpoint: Request.endpoint)
        }
        return try read(Request.Response.self, from: answer, endpoint: Request.endpoint)
    }

    /// The endpoint's URL with the key (and a GET's query).
    @inline(never)
    private func url<Request: AuthRPCRequest>(for request: Request) throws(AuthError) -> URL {
        let endpoint = Request.endpoint
        guard let url = endpoint.url(emulator: emulator, apiKey: apiKey, query: request.queryItems) else {
            throw AuthError(.appConfigurationError, "cannot make a URL for \(endpoint.name) from the emulator host \(emulator ?? "-") and API key \(apiKey)")
        }
        return url
    }

    /// The request's header fields and body: JSON, the locale.
    @inline(never)
    private func content<Request: AuthRPCRequest>(of request: Request) throws(AuthError) -> TransportContent {
        let endpoint = Request.endpoint
        // Content-Type on every request, a GET's too, as the SDK sets it.
        var headers = [(name: "Content-Type", value: "application/json")] + self.headers
        var body: [UInt8]?
        if endpoint.method != .get {
            do { body = try IdentityToolkitJSON.encode(request) } catch {
                throw AuthError(.internalError, "cannot encode \(endpoint.name): \(error.message)")
            }
        }
        if let languageCode, !languageCode.isEmpty { headers.append(("X-Firebase-Locale", languageCode)) }
        return TransportContent(headers: headers, body: body)
    }

    private func networkError(_ error: TransportError, endpoint: IdentityToolkitEndpoint) -> AuthError {
        logger.info("no answer from the backend", metadata: ["endpoint": "\(endpoint.name)", "error": "\(error.message)"])
        return AuthError(.networkError, "network error calling \(endpoint.name): \(error.message)",
                         underlyingError: error as NSError)
    }

    /// The answer: the response type for a 2xx, the backend's error read as the SDK reads it
    /// otherwise (GTMSessionFetcher calls any status from 300 an error).
    private func read<Response: Decodable>(_ type: Response.Type, from answer: TransportResponse,
                                          endpoint: IdentityToolkitEndpoint) throws(AuthError) -> Response {
        guard (200..<300).contains(answer.status) else {
            let error = AuthError.fromErrorAnswer(status: answer.status, body: answer.body, endpoint: endpoint.name)
            logger.info("the backend refused", metadata: ["endpoint": "\(endpoint.name)", "status": "\(answer.status)",
                                                          "error": "\(error.serverMessage ?? error.message)"])
            throw error
        }
        do { return try IdentityToolkitJSON.decode(Response.self, from: answer.body) } catch {
            throw AuthError.fromUndecodableAnswer(body: answer.body, endpoint: endpoint.name, why: error.message)
        }
    }
}
