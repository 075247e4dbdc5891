/// A reason APNs gives for rejecting a push, with the HTTP status Apple pairs it with.
///
/// A struct around the wire string (not a closed enum) so that reasons Apple adds later still
/// parse: ``APNsReason/status`` is `nil` for a reason this table does not know.
///
/// ```swift
/// let reason = APNsReason(rawValue: "BadDeviceToken")
/// reason.status // 400
/// ```
public struct APNsReason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The HTTP status APNs answers this reason with; `nil` for a reason unknown to this table.
    public var status: Int? { Self.statusByReason[rawValue] }

    /// Apple's one-line meaning of the reason, from "Handling notification responses from APNs".
    public var meaning: String { Self.meanings[rawValue] ?? "a reason this toolkit does not know" }

    // 400
    public static let badCollapseId = APNsReason(rawValue: "BadCollapseId")
    public static let badDeviceToken = APNsReason(rawValue: "BadDeviceToken")
    public static let badExpirationDate = APNsReason(rawValue: "BadExpirationDate")
    public static let badMessageId = APNsReason(rawValue: "BadMessageId")
    public static let badPriority = APNsReason(rawValue: "BadPriority")
    public static let badTopic = APNsReason(rawValue: "BadTopic")
    public static let deviceTokenNotForTopic = APNsReason(rawValue: "DeviceTokenNotForTopic")
    public static let duplicateHeaders = APNsReason(rawValue: "DuplicateHeaders")
    public static let idleTimeout = APNsReason(rawValue: "IdleTimeout")
    public static let invalidPushType = APNsReason(rawValue: "InvalidPushType")
    public static let missingDeviceToken = APNsReason(rawValue: "MissingDeviceToken")
    public static let missingTopic = APNsReason(rawValue: "MissingTopic")
    public static let payloadEmpty = APNsReason(rawValue: "PayloadEmpty")
    public static let topicDisallowed = APNsReason(rawValue: "TopicDisallowed")
    // 403
    public static let badCertificate = APNsReason(rawValue: "BadCertificate")
    public static let badCertificateEnvironment = APNsReason(rawValue: "BadCertificateEnvironment")
    public static let expiredProviderToken = APNsReason(rawValue: "ExpiredProviderToken")
    public static let forbidden = APNsReason(rawValue: "Forbidden")
    public static let invalidProviderToken = APNsReason(rawValue: "InvalidProviderToken")
    public static let missingProviderToken = APNsReason(rawValue: "MissingProviderToken")
    public static let unrelatedKeyIdInToken = APNsReason(rawValue: "UnrelatedKeyIdInToken")
    /// Documented as `BadEnvironmentKeyIdInToken`; APNs sends `BadEnvironmentKeyInToken` on the wire,
    /// so that is what the receiver sends. ``init(wire:)`` accepts both spellings.
    public static let badEnvironmentKeyInToken = APNsReason(rawValue: "BadEnvironmentKeyInToken")
    // 404, 405
    public static let badPath = APNsReason(rawValue: "BadPath")
    public static let methodNotAllowed = APNsReason(rawValue: "MethodNotAllowed")
    // 410
    public static let expiredToken = APNsReason(rawValue: "ExpiredToken")
    public static let unregistered = APNsReason(rawValue: "Unregistered")
    // 413
    public static let payloadTooLarge = APNsReason(rawValue: "PayloadTooLarge")
    // 429
    public static let tooManyProviderTokenUpdates = APNsReason(rawValue: "TooManyProviderTokenUpdates")
    public static let tooManyRequests = APNsReason(rawValue: "TooManyRequests")
    // 500, 503
    public static let internalServerError = APNsReason(rawValue: "InternalServerError")
    public static let serviceUnavailable = APNsReason(rawValue: "ServiceUnavailable")
    public static let shutdown = APNsReason(rawValue: "Shutdown")

    /// Parses a reason read off the wire, folding Apple's documented spelling
    /// `BadEnvironmentKeyIdInToken` into the one APNs sends.
    public init(wire: String) {
        self.rawValue = wire == "BadEnvironmentKeyIdInToken" ? Self.badEnvironmentKeyInToken.rawValue : wire
    }

    /// Every reason in Apple's table, in table order.
    public static let all: [APNsReason] = table.map(\.reason)

    /// The one table that maps each reason to its status and meaning.
    private static let table: [(reason: APNsReason, status: Int, meaning: String)] = [
        (.badCollapseId, 400, "The collapse identifier exceeds the maximum allowed size."),
        (.badDeviceToken, 400, "The specified device token is invalid. Verify that the request contains a valid token and that the token matches the environment."),
        (.badExpirationDate, 400, "The apns-expiration value is invalid."),
        (.badMessageId, 400, "The apns-id value is invalid."),
        (.badPriority, 400, "The apns-priority value is invalid."),
        (.badTopic, 400, "The apns-topic value is invalid."),
        (.deviceTokenNotForTopic, 400, "The device token doesn't match the specified topic."),
        (.duplicateHeaders, 400, "One or more headers are repeated."),
        (.idleTimeout, 400, "Idle timeout."),
        (.invalidPushType, 400, "The apns-push-type value is invalid."),
        (.missingDeviceToken, 400, "The device token isn't specified in the request :path."),
        (.missingTopic, 400, "The apns-topic header of the request isn't specified and is required."),
        (.payloadEmpty, 400, "The message payload is empty."),
        (.topicDisallowed, 400, "Pushing to this topic is not allowed."),
        (.badCertificate, 403, "The certificate is invalid."),
        (.badCertificateEnvironment, 403, "The client certificate is for the wrong environment."),
        (.expiredProviderToken, 403, "The provider token is stale and a new token should be generated."),
        (.forbidden, 403, "The specified action is not allowed."),
        (.invalidProviderToken, 403, "The provider token is not valid, or the token signature can't be verified."),
        (.missingProviderToken, 403, "No provider certificate was used to connect to APNs, and the authorization header is missing or no provider token is specified."),
        (.unrelatedKeyIdInToken, 403, "The key ID in the provider token isn't related to the key ID of the token used in the first push of this connection."),
        (.badEnvironmentKeyInToken, 403, "The key ID in the provider token is for the wrong environment."),
        (.badPath, 404, "The request contained an invalid :path value."),
        (.methodNotAllowed, 405, "The specified :method value isn't POST."),
        (.expiredToken, 410, "The device token has expired."),
        (.unregistered, 410, "The device token is inactive for the specified topic."),
        (.payloadTooLarge, 413, "The message payload is too large."),
        (.tooManyProviderTokenUpdates, 429, "The provider's authentication token is being updated too often."),
        (.tooManyRequests, 429, "Too many requests were made consecutively to the same device token."),
        (.internalServerError, 500, "An internal server error occurred."),
        (.serviceUnavailable, 503, "The service is unavailable."),
        (.shutdown, 503, "The APNs server is shutting down."),
    ]
    private static let statusByReason: [String: Int] = Dictionary(
        uniqueKeysWithValues: table.map { ($0.reason.rawValue, $0.status) })
    private static let meanings: [String: String] = Dictionary(
        uniqueKeysWithValues: table.map { ($0.reason.rawValue, $0.meaning) })
}
