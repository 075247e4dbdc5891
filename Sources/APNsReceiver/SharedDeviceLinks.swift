import APNsWire
import Foundation

/// A device connected to a node's device gateway, as a fleet's store has it.
package struct ConnectedDevice: Sendable, Hashable {
    package var environment: APNsEnvironment
    package var token: DeviceToken
    /// The receiver whose gateway the device holds a stream open on (`--node-name`).
    package var node: String

    package init(environment: APNsEnvironment, token: DeviceToken, node: String) {
        self.environment = environment
        self.token = token
        self.node = node
    }
}

/// Where a fleet's devices are connected, and the pushes its receivers hand each other for them
/// (PostgreSQL, in `PostgresStores`): as APNs routes a push to the server its device is connected
/// to, a receiver that accepts a push for a device connected to another receiver's gateway hands
/// it to that receiver, which delivers it.
package protocol SharedDeviceLinks: Sendable {
    /// Where it is, for messages (no password).
    var address: String { get }
    /// This receiver's name: links and forwarded pushes are kept under it.
    var node: String { get }
    /// A device opened a stream on this node's gateway (committed before this returns).
    func link(_ token: DeviceToken, environment: APNsEnvironment) async throws(ReceiverError)
    /// One of the device's streams on this node's gateway ended.
    func unlink(_ token: DeviceToken, environment: APNsEnvironment) async throws(ReceiverError)
    /// The devices connected to the other nodes' gateways now.
    func links() async throws(ReceiverError) -> [ConnectedDevice]
    /// Hands `pushes` to `node`'s gateway, committed before this returns.
    func forward(_ pushes: [AcceptedPush], to node: String) async throws(ReceiverError)
    /// Takes the pushes other receivers handed this node, oldest first (each is taken once).
    func takeForwarded() async throws(ReceiverError) -> [AcceptedPush]
    /// Calls `linksChanged` when another node's devices connected or hung up, `forwarded` when
    /// pushes were handed to this node, and both after a lost connection is back (something may
    /// have been missed meanwhile), until ``close()``.
    func follow(linksChanged: @escaping @Sendable () -> Void, forwarded: @escaping @Sendable () -> Void)
    func close() async
}

/// An accepted push as JSON, whole (the payload in base64): what one receiver of a fleet hands
/// another for a device connected there.
extension AcceptedPush: Codable {
    enum CodingKeys: String, CodingKey {
        case receivedAt = "received-at", environment, apnsID = "apns-id", apnsUniqueID = "apns-unique-id", deviceToken = "device-token"
        case topic, bundleID = "bundle-id", pushType = "push-type", priority, expiration, collapseID = "collapse-id"
        case teamID = "team-id", keyID = "key-id", payload, isBackground = "background", dropped
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let payloadText = try container.decode(String.self, forKey: .payload)
        guard let payload = Data(base64Encoded: payloadText) else {
            throw DecodingError.dataCorruptedError(forKey: .payload, in: container, debugDescription: "the payload is base64")
        }
        self.init(receivedAt: Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .receivedAt)),
                  environment: try container.decode(APNsEnvironment.self, forKey: .environment),
                  apnsID: try container.decode(String.self, forKey: .apnsID),
                  apnsUniqueID: try container.decodeIfPresent(String.self, forKey: .apnsUniqueID),
                  deviceToken: try container.decode(DeviceToken.self, forKey: .deviceToken),
                  topic: try container.decode(String.self, forKey: .topic), bundleID: try container.decode(String.self, forKey: .bundleID),
                  pushType: try container.decode(APNsPushType.self, forKey: .pushType),
                  priority: try container.decode(APNsPriority.self, forKey: .priority),
                  expiration: try container.decodeIfPresent(Int.self, forKey: .expiration),
                  collapseID: try container.decodeIfPresent(String.self, forKey: .collapseID),
                  teamID: try container.decode(String.self, forKey: .teamID), keyID: try container.decode(String.self, forKey: .keyID),
                  payload: Array(payload), isBackground: try container.decode(Bool.self, forKey: .isBackground),
                  dropped: try container.decode(Bool.self, forKey: .dropped))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(receivedAt.timeIntervalSince1970, forKey: .receivedAt)
        try container.encode(environment, forKey: .environment)
        try container.encode(apnsID, forKey: .apnsID)
        try container.encodeIfPresent(apnsUniqueID, forKey: .apnsUniqueID)
        try container.encode(deviceToken, forKey: .deviceToken)
        try container.encode(topic, forKey: .topic)
        try container.encode(bundleID, forKey: .bundleID)
        try container.encode(pushType, forKey: .pushType)
        try container.encode(priority, forKey: .priority)
        try container.encodeIfPresent(expiration, forKey: .expiration)
        try container.encodeIfPresent(collapseID, forKey: .collapseID)
        try container.encode(teamID, forKey: .teamID)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(Data(payload).base64EncodedString(), forKey: .payload)
        try container.encode(isBackground, forKey: .isBackground)
        try container.encode(dropped, forKey: .dropped)
    }
}
