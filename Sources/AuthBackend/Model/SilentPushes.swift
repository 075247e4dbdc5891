import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation

/// What became of one silent push verifyClient sent: APNs' status and reason, or why it could not
/// be sent at all.
public struct SilentPushRecord: Codable, Sendable, Hashable {
    /// The device token, lowercase hex.
    public var appToken: String
    public var environment: String
    /// RFC 3339.
    public var at: String
    public var status: Int?
    public var reason: String?
    /// Set when the push never reached APNs (nothing listening, TLS refused, …).
    public var error: String?
}

/// `GET /emulator/v1/projects/{p}/silentPushes`.
public struct SilentPushesResponse: Codable, Sendable, Hashable {
    public var silentPushes: [SilentPushRecord]
}

/// Sends the silent push that carries an app credential's secret. The backend's only way out to APNs.
public protocol SilentPusher: Sendable {
    func push(token: DeviceToken, environment: APNsEnvironment, topic: String, payload: [UInt8]) async -> PushResult
}

/// What APNs said to the backend's push (for timelines and explanations).
public struct PushResult: Sendable, Hashable {
    public var status: Int?
    /// APNs' reason, with an error status.
    public var reason: APNsReason?
    public var error: String?
    public init(status: Int? = nil, reason: APNsReason? = nil, error: String? = nil) {
        self.status = status
        self.reason = reason
        self.error = error
    }
    public var accepted: Bool { status == 200 }
}

/// One SMS the backend "sent": readable by tests and by the emulator endpoint.
public struct SMSMessage: Sendable, Hashable, Codable {
    public var phoneNumber: String
    public var code: String
    public var sessionInfo: String
    public var languageCode: String?
    public var text: String
    public var sentAt: Date
}
