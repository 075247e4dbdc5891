import Foundation

/// What APNs answered to one push.
package struct APNsResponse: Sendable, Hashable, Codable {
    /// The HTTP status: 200 on success.
    package var status: Int
    /// The `apns-id` APNs answered with (echoed or generated).
    package var apnsID: String?
    /// `apns-unique-id`, sent by the sandbox environment only.
    package var apnsUniqueID: String?
    /// The reason from the error body, on failure.
    package var reason: APNsReason?
    /// Milliseconds since the epoch at which the token stopped being valid (410 only).
    package var timestamp: Int64?

    package init(status: Int, apnsID: String? = nil, apnsUniqueID: String? = nil,
                reason: APNsReason? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.reason = reason
        self.timestamp = timestamp
    }

    package var isSuccess: Bool { status == 200 }
}

/// The JSON error body APNs sends in one DATA frame: `{"reason":"…"}`, plus `"timestamp"` for 410.
package struct APNsErrorBody: Sendable, Hashable, Codable {
    package var reason: String
    package var timestamp: Int64?

    package init(reason: APNsReason, timestamp: Int64? = nil) {
        self.reason = reason.rawValue
        self.timestamp = timestamp
    }

    /// The exact bytes APNs sends.
    package func encoded() -> [UInt8] {
        // Reasons are ASCII identifiers, so this cannot need escaping; built by hand for a stable key order.
        if let timestamp { return Array("{\"reason\":\"\(reason)\",\"timestamp\":\(timestamp)}".utf8) }
        return Array("{\"reason\":\"\(reason)\"}".utf8)
    }

    /// Parses an error body; `nil` when it is not one.
    package static func decode(_ bytes: some Collection<UInt8>) -> APNsErrorBody? {
        guard let body = try? JSONDecoder().decode(APNsErrorBody.self, from: Data(bytes)) else { return nil }
        return body
    }
}
