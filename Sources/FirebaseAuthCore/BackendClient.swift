import Utilities
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Calls the Identity Toolkit endpoints the iOS SDK calls (legacy v3 names), over HTTP.
struct BackendClient: Sendable {
    /// `https://www.googleapis.com`, or `http://host:port/www.googleapis.com` with the emulator.
    let base: String
    let apiKey: String
    let http: HTTPClient

    /// A v2 endpoint (`accounts:revokeToken`), on identitytoolkit.googleapis.com.
    func callV2(_ name: String, _ body: [String: any Sendable]) async throws(AuthError) -> [String: Any] {
        let host = base.replacingOccurrences(of: "/www.googleapis.com", with: "/identitytoolkit.googleapis.com")
        return try await call(name, body, languageCode: nil, url: "\(host)/v2/\(name)?key=\(apiKey)")
    }

    func call(_ name: String, _ body: [String: any Sendable], languageCode: String?, url override: String? = nil) async throws(AuthError) -> [String: Any] {
        guard let url = URL(string: override ?? "\(base)/identitytoolkit/v3/relyingparty/\(name)?key=\(apiKey)") else {
            throw AuthError(.appConfigurationError, "cannot make a URL from \(base) and API key \(apiKey)")
        }
        var headers = ["Content-Type": "application/json"]
        if let languageCode { headers["X-Firebase-Locale"] = languageCode }
        let answer: HTTPAnswer
        do {
            answer = try await http.request("POST", url, headers: headers,
                                            body: CompactJSON.bytes(body).map { Data($0) })
        } catch {
            throw AuthError(.internalError, "network error calling \(name): \(error)")
        }
        let data = answer.body
        let status = answer.status
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard status == 200 else {
            if let error = object?["error"] as? [String: Any], let message = error["message"] as? String {
                throw AuthError.fromServer(message)
            }
            throw AuthError(.internalError, "\(name) answered HTTP \(status) without an error body")
        }
        guard let object else {
            throw AuthError(.appConfigurationError, "\(name) answered 200 with a body that is not a JSON object")
        }
        return object
    }
}
