import Foundation

/// What APNs answered to one push.
public struct APNsResponse: Sendable, Hashable, Codable {
    /// The HTTP status: 200 on success.
    public var status: Int
    /// The `apns-id` APNs answered with (echoed or generated).
    public var apnsID: String?
    /// `apns-unique-id`, sent by the sandbox environment only.
    public var apnsUniqueID: String?
    /// The reason from the error body, on failure.
    public var reason: APNsReason?
    /// Milliseconds since the epoch at which the token stopped being valid (410 only).
    public var timestamp: Int64?

    public init(status: Int, apnsID: String? = nil, apnsUniqueID: String? = nil,
                reason: APNsReason? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.reason = reason
        self.timestamp = timestamp
    }

    public var isSuccess: Bool { status == 200 }
}

/// The JSON error body APNs sends in one DATA frame: `{"reason":"…"}`, plus `"timestamp"` for 410.
public struct APNsErrorBody: Sendable, Hashable, Codable {
    public var reason: String
    public var timestamp: Int64?

    public init(reason: APNsReason, timestamp: Int64? = nil) {
        self.reason = reason.rawValue
        self.timestamp = timestamp
    }

    /// The exact bytes APNs sends.
    public func encoded() -> [UInt8] {
        // Reasons are ASCII identifiers, so this cannot need escaping; built by hand for a stable key order.
        if let timestamp { return Array("{\"reason\":\"\(reason)\",\"timestamp\":\(timestamp)}".utf8) }
        return Array("{\"reason\":\"\(reason)\"}".utf8)
    }

    /// Parses an error body; `nil` when it is not one.
    public static func decode(_ bytes: some Collection<UInt8>) -> APNsErrorBody? {
        guard let body = try? JSONDecoder().decode(APNsErrorBody.self, from: Data(bytes)) else { return nil }
        return body
    }
}
