import Foundation
import Synchronization

/// The parts of a run, as they appear in a timeline and in the sequence diagram.
public enum Part: String, Sendable, CaseIterable, Codable {
    case app, browser, backend, sender, receiver, device, interceptor, authsim
}

/// One step of a run: when (milliseconds since the run began), which part, what; for a message
/// between parts, whom it went to; for machines (`--json`, `authsim explain`), a stable kind and
/// the facts behind the sentence.
public struct TimelineEvent: Sendable, Hashable, Codable {
    public let milliseconds: Int
    public let part: Part
    /// The part a message went to (an arrow in the diagram); nil for a step within `part`.
    public let to: Part?
    /// A stable code (see ``EventKind``); nil for narration.
    public let kind: String?
    public let message: String
    /// What `explain` reasons over: reason, environment, token, declared type, …
    public let facts: [String: String]

    public init(milliseconds: Int, part: Part, to: Part? = nil, kind: String? = nil, message: String, facts: [String: String] = [:]) {
        self.milliseconds = milliseconds
        self.part = part
        self.to = to
        self.kind = kind
        self.message = message
        self.facts = facts
    }

    enum CodingKeys: String, CodingKey { case milliseconds = "ms", part, to, kind, message, facts }
}

/// The kinds of events runs record (the `kind` of `--json` lines).
public enum EventKind: String, Sendable, CaseIterable {
    /// The device got an APNs token (facts: token, environment, bundleID).
    case deviceToken = "device.token"
    /// The app passed the token to Auth (facts: declaredType, resolvedType, profile).
    case setAPNSToken = "app.setAPNSToken"
    /// The app asked for a verification code (facts: number).
    case verifyPhoneNumber = "app.verifyPhoneNumber"
    /// The backend got verifyClient and pushed (facts: token, environment, receipt, status, reason).
    case verifyClient = "backend.verifyClient"
    /// The backend's APNs client got its answer (facts: environment, status, reason).
    case pushAnswer = "sender.answer"
    /// The receiver accepted a push (facts: token, environment).
    case pushAccepted = "receiver.accepted"
    /// The receiver refused a push (facts: token, environment, reason, detail).
    case pushRejected = "receiver.rejected"
    /// APNs accepted the push but the device never got it (facts: token, environment).
    case pushLost = "device.lost"
    /// The push reached the app's delegate (facts: token, handled).
    case pushDelivered = "device.delivered"
    /// No app credential: the app presents reCAPTCHA (facts: reason).
    case fallback = "app.fallback"
    /// The page's redirect went to the app (facts: handled, refusal).
    case redirect = "app.redirect"
    /// The backend texted a code (facts: number).
    case smsSent = "backend.sms"
    /// The backend refused a request (facts: endpoint, error).
    case backendRejected = "backend.rejected"
    /// The app got a verification ID.
    case verificationID = "app.verificationID"
    /// The app signed in (facts: uid, path).
    case signedIn = "app.signedIn"
    /// An SDK error ended the flow (facts: code, name).
    case authError = "app.error"
    /// The Sign in with Apple sheet returned a credential (facts: sub, nonce, aud, firstAuthorization).
    case appleAuthorized = "device.appleAuthorized"
    /// The app handed Firebase an Apple credential (facts: rawNonce, rawNonceHash, tokenNonce).
    case appleCredential = "app.appleCredential"
    /// The scenario's end (facts: expected, actual, passed).
    case outcome = "scenario.outcome"
}

/// Records what each part did, with elapsed milliseconds, and prints it as it happens.
public final class Timeline: Sendable {
    private let start = ContinuousClock.now
    private let events = Mutex<[TimelineEvent]>([])
    private let printer: (@Sendable (TimelineEvent) -> Void)?

    public init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    public func record(_ part: Part, to: Part? = nil, kind: EventKind? = nil, _ message: String, facts: [String: String] = [:]) {
        let elapsed = ContinuousClock.now - start
        let ms = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        let event = TimelineEvent(milliseconds: ms, part: part, to: to, kind: kind?.rawValue, message: message, facts: facts)
        events.withLock { $0.append(event) }
        printer?(event)
    }

    public var all: [TimelineEvent] { events.withLock { $0 } }
}

/// The timeline of the scenario that is running now, for observers (receiver, backend) that
/// outlive one scenario: what they see between scenarios is not recorded.
public final class CurrentTimeline: Sendable {
    private let current = Mutex<Timeline?>(nil)
    private let printer: (@Sendable (TimelineEvent) -> Void)?

    public init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    /// Records into the running scenario's timeline, if one runs.
    public func record(_ part: Part, to: Part? = nil, kind: EventKind? = nil, _ message: @autoclosure () -> String,
                       facts: @autoclosure () -> [String: String] = [:]) {
        current.withLock { $0 }?.record(part, to: to, kind: kind, message(), facts: facts())
    }

    /// Starts the timeline of the next scenario.
    public func begin() -> Timeline {
        let timeline = Timeline(printer: printer)
        current.withLock { $0 = timeline }
        return timeline
    }

    /// No scenario runs any more.
    public func end() { current.withLock { $0 = nil } }
}
