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
    package var status: Int? { Self.statusByReason[rawValue] }

    /// Apple's one-line meaning of the reason, from "Handling notification responses from APNs".
    package var meaning: String { Self.meanings[rawValue] ?? "a reason this toolkit does not know" }

    /// What a provider changes so the push is accepted (not a restatement of ``meaning``).
    package var fix: String { Self.fixes[rawValue] ?? "see Apple's \"Handling notification responses from APNs\" for \(rawValue)" }

    // 400
    package static let badCollapseId = APNsReason(rawValue: "BadCollapseId")
    package static let badDeviceToken = APNsReason(rawValue: "BadDeviceToken")
    package static let badExpirationDate = APNsReason(rawValue: "BadExpirationDate")
    package static let badMessageId = APNsReason(rawValue: "BadMessageId")
    package static let badPriority = APNsReason(rawValue: "BadPriority")
    package static let badTopic = APNsReason(rawValue: "BadTopic")
    package static let deviceTokenNotForTopic = APNsReason(rawValue: "DeviceTokenNotForTopic")
    package static let duplicateHeaders = APNsReason(rawValue: "DuplicateHeaders")
    package static let idleTimeout = APNsReason(rawValue: "IdleTimeout")
    package static let invalidPushType = APNsReason(rawValue: "InvalidPushType")
    package static let missingDeviceToken = APNsReason(rawValue: "MissingDeviceToken")
    package static let missingTopic = APNsReason(rawValue: "MissingTopic")
    package static let payloadEmpty = APNsReason(rawValue: "PayloadEmpty")
    package static let topicDisallowed = APNsReason(rawValue: "TopicDisallowed")
    // 403
    package static let badCertificate = APNsReason(rawValue: "BadCertificate")
    package static let badCertificateEnvironment = APNsReason(rawValue: "BadCertificateEnvironment")
    package static let expiredProviderToken = APNsReason(rawValue: "ExpiredProviderToken")
    package static let forbidden = APNsReason(rawValue: "Forbidden")
    package static let invalidProviderToken = APNsReason(rawValue: "InvalidProviderToken")
    package static let missingProviderToken = APNsReason(rawValue: "MissingProviderToken")
    package static let unrelatedKeyIdInToken = APNsReason(rawValue: "UnrelatedKeyIdInToken")
    /// Documented as `BadEnvironmentKeyIdInToken`; APNs sends `BadEnvironmentKeyInToken` on the wire,
    /// so that is what the receiver sends. ``init(wire:)`` accepts both spellings.
    package static let badEnvironmentKeyInToken = APNsReason(rawValue: "BadEnvironmentKeyInToken")
    // 404, 405
    package static let badPath = APNsReason(rawValue: "BadPath")
    package static let methodNotAllowed = APNsReason(rawValue: "MethodNotAllowed")
    // 410
    package static let expiredToken = APNsReason(rawValue: "ExpiredToken")
    package static let unregistered = APNsReason(rawValue: "Unregistered")
    // 413
    package static let payloadTooLarge = APNsReason(rawValue: "PayloadTooLarge")
    // 429
    package static let tooManyProviderTokenUpdates = APNsReason(rawValue: "TooManyProviderTokenUpdates")
    package static let tooManyRequests = APNsReason(rawValue: "TooManyRequests")
    // 500, 503
    package static let internalServerError = APNsReason(rawValue: "InternalServerError")
    package static let serviceUnavailable = APNsReason(rawValue: "ServiceUnavailable")
    package static let shutdown = APNsReason(rawValue: "Shutdown")

    /// Parses a reason read off the wire, folding Apple's documented spelling
    /// `BadEnvironmentKeyIdInToken` into the one APNs sends.
    package init(wire: String) {
        self.rawValue = wire == "BadEnvironmentKeyIdInToken" ? Self.badEnvironmentKeyInToken.rawValue : wire
    }

    /// Every reason in Apple's table, in table order.
    package static let all: [APNsReason] = table.map(\.reason)

    /// The one table that maps each reason to its status, meaning and fix.
    private static let table: [(reason: APNsReason, status: Int, meaning: String, fix: String)] = [
        (.badCollapseId, 400, "The collapse identifier exceeds the maximum allowed size.", "keep apns-collapse-id to 64 bytes or fewer"),
        (.badDeviceToken, 400, "The specified device token is invalid. Verify that the request contains a valid token and that the token matches the environment.", "send the hex token the app got from didRegisterForRemoteNotificationsWithDeviceToken, to the environment that issued it (a debug build's token to sandbox, a TestFlight or App Store build's to production)"),
        (.badExpirationDate, 400, "The apns-expiration value is invalid.", "send apns-expiration as a UNIX time in seconds (0: deliver now or never)"),
        (.badMessageId, 400, "The apns-id value is invalid.", "send apns-id as a UUID in its 8-4-4-4-12 form, or leave it out and APNs makes one"),
        (.badPriority, 400, "The apns-priority value is invalid.", "send apns-priority 10, 5 or 1 (a background push: 5 or 1)"),
        (.badTopic, 400, "The apns-topic value is invalid.", "send apns-topic as the app's bundle ID, with the push type's suffix where it has one (.voip, .complication, .pushkit.fileprovider)"),
        (.deviceTokenNotForTopic, 400, "The device token doesn't match the specified topic.", "send apns-topic as the bundle ID of the app that registered this token (its App ID in the provisioning profile), or push this topic to that app's own tokens"),
        (.duplicateHeaders, 400, "One or more headers are repeated.", "send each apns- header once"),
        (.idleTimeout, 400, "Idle timeout.", "nothing to change in the push: open a new connection and send it again (APNs closes connections idle for about an hour)"),
        (.invalidPushType, 400, "The apns-push-type value is invalid.", "send apns-push-type as one of alert, background, voip, complication, fileprovider, mdm, liveactivity, location, pushtotalk, widgets"),
        (.missingDeviceToken, 400, "The device token isn't specified in the request :path.", "POST to /3/device/<the device token in hex>"),
        (.missingTopic, 400, "The apns-topic header of the request isn't specified and is required.", "send apns-topic: the app's bundle ID (token authentication requires it)"),
        (.payloadEmpty, 400, "The message payload is empty.", "send a JSON object as the body; a silent push is {\"aps\":{\"content-available\":1}}"),
        (.topicDisallowed, 400, "Pushing to this topic is not allowed.", "push to a topic this key may use, or sign with a key of the team that owns the topic and is not limited to other topics"),
        (.badCertificate, 403, "The certificate is invalid.", "connect with the app's APNs certificate (or use token authentication)"),
        (.badCertificateEnvironment, 403, "The client certificate is for the wrong environment.", "connect with a certificate of this environment, or to the environment the certificate is for"),
        (.expiredProviderToken, 403, "The provider token is stale and a new token should be generated.", "sign a new provider token: its iat must be under an hour old (refresh it every 20 to 60 minutes), and the provider's clock right"),
        (.forbidden, 403, "The specified action is not allowed.", "check the key's access in Apple Developer → Keys (APNs enabled, not revoked)"),
        (.invalidProviderToken, 403, "The provider token is not valid, or the token signature can't be verified.", "sign with the .p8 whose Key ID is the token's kid, put the Team ID that owns the app in iss (swapped IDs are common), and use ES256"),
        (.missingProviderToken, 403, "No provider certificate was used to connect to APNs, and the authorization header is missing or no provider token is specified.", "send authorization: bearer <an ES256 provider token>, or connect with a certificate"),
        (.unrelatedKeyIdInToken, 403, "The key ID in the provider token isn't related to the key ID of the token used in the first push of this connection.", "use one team's key per connection: open another connection for another team's key"),
        (.badEnvironmentKeyInToken, 403, "The key ID in the provider token is for the wrong environment.", "sign with a key enabled for this environment (Apple Developer → Keys), or push to the environment the key is for"),
        (.badPath, 404, "The request contained an invalid :path value.", "POST to /3/device/<the device token in hex>"),
        (.methodNotAllowed, 405, "The specified :method value isn't POST.", "send the push as a POST"),
        (.expiredToken, 410, "The device token has expired.", "stop pushing to this token and drop it: the app's newer token replaces it"),
        (.unregistered, 410, "The device token is inactive for the specified topic.", "stop pushing to this token and remove it from your store: the app was removed or can no longer receive pushes; it sends a new token when it registers again"),
        (.payloadTooLarge, 413, "The message payload is too large.", "keep the payload to 4096 bytes (5120 for VoIP): send an identifier and let the app fetch the rest"),
        (.tooManyProviderTokenUpdates, 429, "The provider's authentication token is being updated too often.", "reuse each provider token for at least 20 minutes, across all your connections"),
        (.tooManyRequests, 429, "Too many requests were made consecutively to the same device token.", "send fewer pushes to this one device token: spread them out, or let apns-collapse-id replace the ones not yet delivered"),
        (.internalServerError, 500, "An internal server error occurred.", "retry later, with backoff"),
        (.serviceUnavailable, 503, "The service is unavailable.", "retry later, with backoff"),
        (.shutdown, 503, "The APNs server is shutting down.", "open a new connection and send again"),
    ]
    private static let statusByReason: [String: Int] = Dictionary(
        uniqueKeysWithValues: table.map { ($0.reason.rawValue, $0.status) })
    private static let meanings: [String: String] = Dictionary(
        uniqueKeysWithValues: table.map { ($0.reason.rawValue, $0.meaning) })
    private static let fixes: [String: String] = Dictionary(
        uniqueKeysWithValues: table.map { ($0.reason.rawValue, $0.fix) })
}
