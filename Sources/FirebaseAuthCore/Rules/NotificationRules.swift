import Foundation

/// What a remote notification is to Auth, as FirebaseAuth 12.19's
/// `AuthNotificationManager.canHandle(notification:)` reads it: the forwarding probe, a silent push
/// carrying an app credential's receipt and secret, or not Auth's. The payload's
/// `com.google.firebase.auth` value may be a dictionary or a JSON string of one.
package enum AuthNotification: Hashable, Sendable {
    case probe
    case credential(receipt: String, secret: String)
    case notAuths

    static let payloadKey = "com.google.firebase.auth"
    /// The probe notification the SDK hands the app delegate.
    static let probeWarning = "This fake notification should be forwarded to Firebase Auth."

    package static func read(_ userInfo: [AnyHashable: Any]) -> AuthNotification {
        guard let raw = userInfo[payloadKey] else { return .notAuths }
        var payload = raw as? [String: Any]
        if payload == nil, let text = raw as? String, let data = text.data(using: .utf8) {
            payload = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
        guard let payload else { return .notAuths }
        // Any `warning` is the probe, whatever its text (AuthNotificationManager.swift 174–188).
        if payload["warning"] != nil { return .probe }
        guard let receipt = payload["receipt"] as? String, let secret = payload["secret"] as? String else { return .notAuths }
        return .credential(receipt: receipt, secret: secret)
    }
}

/// The forwarding probe's rule (`AuthNotificationManager.checkNotificationForwarding`): it runs
/// once per process; a caller while it runs waits for it; later callers get its result. A value
/// over the wait it holds while the probe runs (`Wait`: `Auth`'s); `Auth` keeps one under its lock.
struct ForwardingProbe<Wait: Sendable>: Sendable {
    enum Phase: Sendable { case notRun, running(Wait), done(Bool) }
    private(set) var phase: Phase = .notRun
    /// A probe notification reached Auth before any check: the SDK notes that notifications are
    /// forwarded (`isNotificationBeingForwarded`), and the check then passes whatever its own
    /// probe does.
    private(set) var forwardedBeforeCheck = false

    /// What a caller does now.
    enum Next: Sendable {
        /// Hand the app delegate the probe and wait for it (the probe holds this wait as running).
        case run(Wait)
        /// Wait for the probe already running.
        case wait(Wait)
        /// The probe ran: its result.
        case result(Bool)
    }

    /// - Parameter start: makes the wait, when the probe is to run.
    mutating func next(start: () -> Wait) -> Next {
        switch phase {
        case .done(let result): return .result(result)
        case .running(let wait): return .wait(wait)
        case .notRun:
            let wait = start()
            phase = .running(wait)
            return .run(wait)
        }
    }

    /// The running probe's wait: a probe notification arriving now is its answer (one after the
    /// check is not Auth's).
    var running: Wait? {
        if case .running(let wait) = phase { wait } else { nil }
    }

    mutating func finish(_ result: Bool) { phase = .done(result || forwardedBeforeCheck) }

    /// A probe notification reached `canHandleNotification`: Auth's (true) until the check is
    /// done, and then not; while the probe runs, the wait to end (AuthNotificationManager.swift
    /// 174–188; audit 3, D1.3).
    mutating func probeArrived() -> (handled: Bool, wait: Wait?) {
        switch phase {
        case .notRun:
            forwardedBeforeCheck = true
            return (true, nil)
        case .running(let wait): return (true, wait)
        case .done: return (false, nil)
        }
    }
}

extension ForwardingProbe.Next: Equatable where Wait: Equatable {}
