import Utilities
import Foundation

/// An Identity Toolkit error: HTTP status, a code such as `INVALID_CODE`, and an optional detail.
/// On the wire the message is `CODE` or `CODE : detail`, inside Google's error envelope.
public struct BackendError: CodedError {
    public let code: String
    public let detail: String?
    public let status: Int

    public init(_ code: String, _ detail: String? = nil, status: Int = 400) {
        self.code = code
        self.detail = detail
        self.status = status
    }

    /// `CODE` or `CODE : detail`, as the real service writes it.
    public var message: String { detail.map { "\(code) : \($0)" } ?? code }

    /// `{"error":{"code":400,"message":"…","errors":[{"message":"…","reason":"invalid","domain":"global"}]}}`
    public var body: [UInt8] {
        let envelope: [String: Any] = ["error": [
            "code": status, "message": message,
            "errors": [["message": message, "reason": status == 403 ? "forbidden" : "invalid", "domain": "global"]],
        ]]
        return CompactJSON.bytes(envelope) ?? []
    }

    public static let missingAPIKey = BackendError("PERMISSION_DENIED", nil, status: 403)
}
