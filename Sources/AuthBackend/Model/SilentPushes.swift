import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation
import Logging

/// What became of one silent push verifyClient sent: the one shape of a push's outcome. The
/// backend tells of it as its `verifyClient` event (``event``), lists it at
/// `GET /emulator/v1/projects/{p}/silentPushes` (so that an app in another process says why no push
/// came, in the same event), counts it (``SilentPushTally``) and logs it (``logLine``), each from this.
public struct SilentPushRecord: Sendable, Hashable {
    /// The device token, lowercase hex.
    public var appToken: String
    public var environment: APNsEnvironment
    /// The app credential the push carried the secret of.
    public var receipt: String
    public var at: Date
    /// APNs' status and reason, or why the push was not sent at all.
    public var result: PushResult
    /// The sign-in the push was for.
    public var signIn: SignInID?

    package init(appToken: String, environment: APNsEnvironment, receipt: String, at: Date, result: PushResult, signIn: SignInID?) {
        self.appToken = appToken
        self.environment = environment
        self.receipt = receipt
        self.at = at
        self.result = result
        self.signIn = signIn
    }

    /// The backend's event for it (what timelines and the inspector draw).
    package var event: BackendEvent { .verifyClient(appToken: appToken, environment: environment, receipt: receipt, push: result) }

    /// How the backend logs it: the level and words for a user debugging a run, and its values.
    var logLine: (level: Logger.Level, message: String, metadata: Logger.Metadata) {
        var metadata: Logger.Metadata = ["device-token": "\(appToken)", "environment": "\(environment)", "receipt": "\(receipt.prefix(8))"]
        if let status = result.status { metadata["status"] = "\(status)" }
        if let reason = result.reason { metadata["reason"] = "\(reason)" }
        if let error = result.error { metadata["error"] = "\(error)" }
        if result.accepted { return (.debug, "verifyClient: silent push accepted", metadata) }
        if result.status != nil { return (.warning, "verifyClient: APNs refused the silent push; the app will fall back to reCAPTCHA", metadata) }
        return (.warning, "verifyClient: the silent push could not be sent; the app will fall back to reCAPTCHA", metadata)
    }
}

/// On the wire (the list's entries, a fleet's records): `appToken`, `environment`, `receipt`,
/// `at` (RFC 3339), `status`, `reason`, `error`, `signIn`, flat, as the list has always had them.
extension SilentPushRecord: Codable {
    private enum CodingKeys: String, CodingKey { case appToken, environment, receipt, at, status, reason, error, signIn }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appToken = try container.decode(String.self, forKey: .appToken)
        environment = try container.decode(APNsEnvironment.self, forKey: .environment)
        receipt = try container.decodeIfPresent(String.self, forKey: .receipt) ?? ""
        let text = try container.decode(String.self, forKey: .at)
        guard let at = RFC3339.date(text) else {
            throw DecodingError.dataCorruptedError(forKey: .at, in: container, debugDescription: "\(text) is not an RFC 3339 time")
        }
        self.at = at
        result = PushResult(status: try container.decodeIfPresent(Int.self, forKey: .status),
                            reason: try container.decodeIfPresent(APNsReason.self, forKey: .reason),
                            error: try container.decodeIfPresent(String.self, forKey: .error))
        signIn = try container.decodeIfPresent(SignInID.self, forKey: .signIn)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appToken, forKey: .appToken)
        try container.encode(environment, forKey: .environment)
        try container.encode(receipt, forKey: .receipt)
        try container.encode(RFC3339.string(at), forKey: .at)
        try container.encodeIfPresent(result.status, forKey: .status)
        try container.encodeIfPresent(result.reason, forKey: .reason)
        try container.encodeIfPresent(result.error, forKey: .error)
        try container.encodeIfPresent(signIn, forKey: .signIn)
    }
}

/// `GET /emulator/v1/projects/{p}/silentPushes`.
package struct SilentPushesResponse: Codable, Sendable, Hashable {
    package var silentPushes: [SilentPushRecord]
}

/// How verifyClient's silent pushes went since the backend started: every one counted, unlike
/// ``SilentPushRecord``s, of which only the latest are kept. A benchmark or a test that expects every
/// push through says why some were not from this.
package struct SilentPushTally: Sendable, Hashable {
    /// Answered 200 by APNs.
    package var accepted = 0
    /// Answered with an error status (`BadDeviceToken`, `TooManyProviderTokenUpdates`, …).
    package var refused = 0
    /// Never answered: nothing listening, TLS refused, a timeout, no sender.
    package var unsent = 0
    /// The first refusal's or failure's account, as the backend logged it.
    package var firstProblem: String?
    package init() {}

    mutating func add(_ push: SilentPushRecord) {
        let result = push.result
        if result.accepted { accepted += 1; return }
        if result.status != nil { refused += 1 } else { unsent += 1 }
        if firstProblem == nil { firstProblem = result.summary }
    }
}

/// Sends the silent push that carries an app credential's secret. The backend's only way out to APNs.
package protocol SilentPusher: Sendable {
    func push(token: DeviceToken, environment: APNsEnvironment, topic: String, payload: [UInt8]) async -> PushResult
}

/// What APNs said to the backend's push (for timelines and explanations).
public struct PushResult: Sendable, Hashable, Codable {
    public var status: Int?
    /// APNs' reason, with an error status.
    public var reason: APNsReason?
    public var error: String?
    package init(status: Int? = nil, reason: APNsReason? = nil, error: String? = nil) {
        self.status = status
        self.reason = reason
        self.error = error
    }
    public var accepted: Bool { status == 200 }

    /// In words: `APNs answered 400 BadDeviceToken`, `not sent: connection refused`.
    public var summary: String {
        if let status { return "APNs answered \(status)\(reason.map { " \($0.rawValue)" } ?? "")" }
        return "not sent: \(error ?? "no reason given")"
    }
}

/// One SMS the backend "sent": readable by tests and by the emulator endpoint.
package struct SMSMessage: Sendable, Hashable, Codable {
    package var phoneNumber: String
    package var code: String
    package var sessionInfo: String
    package var languageCode: String?
    package var text: String
    package var sentAt: Date
    /// The tenant of the sign-in it is for (nil: the project's own).
    package var tenant: String?

    package init(phoneNumber: String, code: String, sessionInfo: String, languageCode: String?, text: String, sentAt: Date) {
        self.phoneNumber = phoneNumber
        self.code = code
        self.sessionInfo = sessionInfo
        self.languageCode = languageCode
        self.text = text
        self.sentAt = sentAt
    }
}
