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

/// How verifyClient's silent pushes went since the backend started: every one counted, unlike
/// ``SilentPushRecord``s, of which only the latest are kept. A benchmark or a test that expects every
/// push through says why some were not from this.
public struct SilentPushTally: Sendable, Hashable {
    /// Answered 200 by APNs.
    public var accepted = 0
    /// Answered with an error status (`BadDeviceToken`, `TooManyProviderTokenUpdates`, …).
    public var refused = 0
    /// Never answered: nothing listening, TLS refused, a timeout, no sender.
    public var unsent = 0
    /// The first refusal's or failure's account, as the backend logged it.
    public var firstProblem: String?
    public init() {}

    mutating func add(_ result: PushResult) {
        if result.accepted { accepted += 1; return }
        if let status = result.status {
            refused += 1
            if firstProblem == nil { firstProblem = "APNs answered \(status)\(result.reason.map { " \($0.rawValue)" } ?? "")" }
        } else {
            unsent += 1
            if firstProblem == nil { firstProblem = "not sent: \(result.error ?? "no reason given")" }
        }
    }
}

/// Sends the silent push that carries an app credential's secret. The backend's only way out to APNs.
public protocol SilentPusher: Sendable {
    func push(token: DeviceToken, environment: APNsEnvironment, topic: String, payload: [UInt8]) async -> PushResult
}

/// What APNs said to the backend's push (for timelines and explanations).
public struct PushResult: Sendable, Hashable, Codable {
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

    public init(phoneNumber: String, code: String, sessionInfo: String, languageCode: String?, text: String, sentAt: Date) {
        self.phoneNumber = phoneNumber
        self.code = code
        self.sessionInfo = sessionInfo
        self.languageCode = languageCode
        self.text = text
        self.sentAt = sentAt
    }
}
