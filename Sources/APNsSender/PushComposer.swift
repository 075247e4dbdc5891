import APNsWire
import Foundation

/// Turns a payload file and the provider's options into the headers Apple expects.
///
/// - Background payloads (`aps` holding only `content-available: 1`) get `apns-push-type:
///   background` and priority 5 unless told otherwise; anything else is `alert`, priority 10.
/// - The topic is the one given, else the payload's `"Simulator Target Bundle"` (with the suffix the
///   push type requires, such as `.voip`).
package struct PushComposer: Sendable {
    package var topic: String?
    package var pushType: APNsPushType?
    package var priority: APNsPriority?
    package var expiration: Int?
    package var collapseID: String?
    package var apnsID: UUID?

    package init(topic: String? = nil, pushType: APNsPushType? = nil, priority: APNsPriority? = nil,
                expiration: Int? = nil, collapseID: String? = nil, apnsID: UUID? = nil) {
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    /// The headers for `payload`.
    ///
    /// - Throws: ``SenderError`` when no topic is given and the payload names no target bundle.
    package func headers(for payload: NotificationPayload) throws(SenderError) -> PushHeaders {
        let type = pushType ?? payload.impliedPushType
        let resolvedTopic: String
        if let topic {
            resolvedTopic = topic
        } else if let bundle = payload.simulatorTargetBundle {
            resolvedTopic = bundle + (type.requiredTopicSuffix ?? "")
        } else {
            throw SenderError(.configuration, "no topic: give --topic <bundle ID> or use a payload with \"Simulator Target Bundle\"")
        }
        return PushHeaders(pushType: type, topic: resolvedTopic, priority: priority ?? .default(for: type),
                           expiration: expiration, collapseID: collapseID, apnsID: apnsID)
    }
}
