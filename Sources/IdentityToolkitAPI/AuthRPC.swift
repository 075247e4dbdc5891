import Foundation
import Utilities

/// One Identity Toolkit call, typed: the request's fields (its JSON body, or its query for a GET),
/// the endpoint it goes to, and the type of the answer. The same types are the auth core's requests
/// and the backend's decoded input, so a field added here is checked by the compiler on both sides.
///
/// Named after the SDK's `AuthRPCRequest` (FirebaseAuth 12.19 `Backend/AuthRPCRequest.swift`);
/// each conforming type is named after the SDK's RPC class (`VerifyClientRequest`, …) and carries
/// the same fields under their wire names.
package protocol AuthRPCRequest: Codable, Sendable {
    associatedtype Response: Codable, Sendable
    /// Where the call goes (its default path; the backend may serve it under aliases too).
    static var endpoint: IdentityToolkitEndpoint { get }
    /// The query a GET request carries (after `key=`); empty for a POST, whose fields are its body.
    var queryItems: [URLQueryItem] { get }
    /// The tenant the request is for: its `tenantId` field (an Admin SDK's path
    /// `…/projects/{p}/tenants/{t}/…` fills it). nil for the project's own users, and always nil
    /// for a message whose schema has no `tenantId` (setting it there changes nothing:
    /// `CallTableTests` holds every row served under a tenant's path to a message that has one).
    var tenantId: String? { get set }
    /// Whether the SDK puts its `Auth.tenantID` in this request (`IdentityToolkitRequest.tenantID`,
    /// which each of 12.19's RPC classes writes as `tenantId` or not: `GetAccountInfoRequest`,
    /// `DeleteAccountRequest`, `VerifyClientRequest` and `SecureTokenRequest` do not).
    static var sdkSendsTenantID: Bool { get }
}

extension AuthRPCRequest {
    package var queryItems: [URLQueryItem] { [] }
    package var tenantId: String? {
        get { nil }
        set {}
    }
    package static var sdkSendsTenantID: Bool { false }
}

/// A request that travels as a query (a GET): it can be read back from one.
package protocol AuthRPCQueryRequest: AuthRPCRequest {
    /// Reads the request from a query; throws when a value is malformed.
    init(queryItems: [URLQueryItem]) throws(IdentityToolkitError)
}

/// An answer with no fields (`{}`), as `accounts:revokeToken` gives.
package struct EmptyResponse: Codable, Sendable, Hashable {
    package init() {}
}

/// The JSON coders every side uses for Identity Toolkit bodies: unknown fields are ignored (as the
/// SDK ignores them), `nil` fields are left out (as the SDK's request dictionaries leave them out),
/// keys sorted so that bodies are stable in logs and tests.
package enum IdentityToolkitJSON {
    package static func encode(_ value: some Encodable) throws(IdentityToolkitError) -> [UInt8] {
        do { return try encoder.encode(value) } catch {
            throw IdentityToolkitError(.invalidJSON, "cannot encode \(type(of: value)): \(error)")
        }
    }

    /// Decodes `bytes` as `type`; a malformed body or a field of the wrong type is an
    /// ``IdentityToolkitError`` saying which field, as the real service does ("Invalid value at
    /// 'is_sandbox' (TYPE_BOOL), "yes"").
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws(IdentityToolkitError) -> T {
        do { return try decoder.decode(type, from: bytes) } catch let error as DecodingError {
            throw IdentityToolkitError(.invalidJSON, describe(error))
        } catch {
            throw IdentityToolkitError(.invalidJSON, "Invalid JSON payload received. \(error)")
        }
    }

    /// Foundation's `JSONDecoder`, its values and its errors, with a fast path for well-formed
    /// bodies (every sign-in decodes nine).
    private static let decoder = StrictJSONDecoder()
    /// Foundation's `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]`, byte for byte, at
    /// a fraction of its cost (every sign-in encodes nine bodies).
    private static let encoder = SortedJSONEncoder(escapesSlashes: false)

    /// Google's wording for a payload its JSON parser refuses.
    static func describe(_ error: DecodingError) -> String {
        func field(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "Invalid value at '\(field(context.codingPath))' (\(type)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "Invalid JSON payload received. Missing field '\(field(context.codingPath + [key]))'."
        case .dataCorrupted(let context):
            let at = context.codingPath.isEmpty ? "" : " at '\(field(context.codingPath))'"
            return "Invalid JSON payload received\(at). \(context.debugDescription)"
        @unknown default:
            return "Invalid JSON payload received. \(error)"
        }
    }
}
