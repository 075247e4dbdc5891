import Foundation

/// The request header names APNs defines.
package enum APNsHeader {
    package static let authorization = "authorization"
    package static let id = "apns-id"
    package static let uniqueID = "apns-unique-id"
    package static let expiration = "apns-expiration"
    package static let priority = "apns-priority"
    package static let topic = "apns-topic"
    package static let collapseID = "apns-collapse-id"
    package static let pushType = "apns-push-type"

    /// Headers that may appear at most once (a repeat is `DuplicateHeaders`).
    package static let singular: Set<String> = [authorization, id, expiration, priority, topic, collapseID, pushType]

    /// The most bytes `apns-collapse-id` may hold.
    package static let maximumCollapseIDBytes = 64
}

/// The headers of one push, as a provider sets them.
///
/// ``headerFields(authorization:)`` gives them in the order they go on the wire. Values left `nil`
/// are not sent, and APNs applies its defaults.
package struct PushHeaders: Sendable, Hashable {
    package var pushType: APNsPushType?
    package var topic: String?
    package var priority: APNsPriority?
    /// Seconds since the epoch; `0` means "deliver once, do not store".
    package var expiration: Int?
    package var collapseID: String?
    /// A canonical UUID. When `nil`, APNs makes one and answers with it.
    package var apnsID: UUID?

    package init(
        pushType: APNsPushType? = nil, topic: String? = nil, priority: APNsPriority? = nil,
        expiration: Int? = nil, collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    /// The request headers after the pseudo-headers, `authorization` first when given.
    package func headerFields(authorization: String?) -> [(name: String, value: String)] {
        var fields: [(String, String)] = []
        if let authorization { fields.append((APNsHeader.authorization, "bearer \(authorization)")) }
        if let pushType { fields.append((APNsHeader.pushType, pushType.rawValue)) }
        if let topic { fields.append((APNsHeader.topic, topic)) }
        if let priority { fields.append((APNsHeader.priority, priority.description)) }
        if let expiration { fields.append((APNsHeader.expiration, String(expiration))) }
        if let collapseID { fields.append((APNsHeader.collapseID, collapseID)) }
        if let apnsID { fields.append((APNsHeader.id, apnsID.uuidString.lowercased())) }
        return fields
    }

    /// The request path for a device token.
    package static func path(for token: DeviceToken) -> String { "/3/device/\(token.hex)" }
    /// The request path for a raw token string, sent as given (for sending deliberately bad tokens).
    package static func path(forRaw token: String) -> String { "/3/device/\(token)" }
}

/// Parses `apns-id`: a canonical 8-4-4-4-12 UUID in either case.
package func parseAPNsID(_ value: String) -> UUID? {
    guard value.utf8.count == 36 else { return nil }
    return UUID(uuidString: value)
}
