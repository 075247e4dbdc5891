import APNsReceiver
import APNsWire
import AuthBackend
import DeviceOS
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Synchronization
import Utilities

/// The parts of a run, as they appear in a timeline and in the sequence diagram.
package enum Part: String, Sendable, CaseIterable, Codable {
    case app, browser, backend, sender, receiver, device, interceptor, authsim
}

/// One step of a run: when (milliseconds since the run began), which part, what; for a message
/// between parts, whom it went to; and for the steps `authsim explain` reasons over, the typed
/// ``RunFact`` behind the sentence.
package struct TimelineEvent: Sendable, Hashable {
    package let milliseconds: Int
    package let part: Part
    /// The part a message went to (an arrow in the diagram); nil for a step within `part`.
    package let to: Part?
    package let message: String
    /// What happened, for machines; nil for narration.
    package let fact: RunFact?
    /// The sign-in a backend event is a step of (``SignInID``), by which the inspector groups them.
    package let signIn: SignInID?

    package init(milliseconds: Int, part: Part, to: Part? = nil, message: String, fact: RunFact? = nil, signIn: SignInID? = nil) {
        self.milliseconds = milliseconds
        self.part = part
        self.to = to
        self.message = message
        self.fact = fact
        self.signIn = signIn
    }

    /// The fact's stable kind (the `kind` of `--json` lines).
    package var kind: EventKind? { fact?.kind }
}

/// What a verification code was asked for: a first factor, or a second one (enrolling it, or
/// finishing a sign-in with it).
package enum VerificationPurpose: String, Sendable, Hashable, Codable {
    case firstFactor, mfaEnrollment, mfaSignIn
}

/// How a phone sign-in ended up proving the app, or what else signed the user in.
package enum SignInPath: Sendable, Hashable, RawRepresentable, Codable, CaseIterable {
    /// By phone, the app proved as the backend saw it.
    case phone(AppVerification)
    case apple
    /// On an identity provider's web page (`OAuthProvider`).
    case identityProvider
    /// The account was deleted (the Apple revoke-then-delete flow's end).
    case deleted

    package static let silentPush = SignInPath.phone(.silentPush)
    package static let reCAPTCHA = SignInPath.phone(.reCAPTCHA)
    package static let testMode = SignInPath.phone(.testMode)
    package static let recaptchaEnterprise = SignInPath.phone(.recaptchaEnterprise)

    package static var allCases: [SignInPath] { AppVerification.allCases.map(SignInPath.phone) + [.apple, .identityProvider, .deleted] }

    /// The timeline's `path`: the verification's raw value, `apple.com` or `deleted`.
    package var rawValue: String {
        switch self {
        case .phone(let proof): proof.rawValue
        case .apple: ProviderID.apple.rawValue
        case .identityProvider: "identityProvider"
        case .deleted: "deleted"
        }
    }

    package init?(rawValue: String) {
        switch rawValue {
        case ProviderID.apple.rawValue: self = .apple
        case "identityProvider": self = .identityProvider
        case "deleted": self = .deleted
        default:
            guard let proof = AppVerification(rawValue: rawValue) else { return nil }
            self = .phone(proof)
        }
    }
}

/// What became of a redirect handed to the app.
package enum RedirectHandling: String, Sendable, Hashable, Codable {
    /// `Auth.canHandle(url)` took it.
    case handled = "true"
    /// It was not Auth's (see the refusal).
    case refused = "false"
    /// The page sent it; the OS has yet to hand it over.
    case pending
    /// The OS opened it in another app that registers the same scheme: Auth never saw it.
    case otherApp
}

/// What `authsim explain` reasons over: each case one kind of event, its associated values the
/// facts behind the sentence. On `--json` lines each is a `kind` and a `facts` object of strings
/// (`docs/timeline-events.md` lists them).
package enum RunFact: Sendable, Hashable, Codable {
    /// The device got an APNs token.
    case deviceToken(token: String, environment: APNsEnvironment, bundleID: String, simulator: Bool)
    /// The app turned on `isAppVerificationDisabledForTesting`.
    case testMode
    /// The app passed the token to Auth: the type its code declared and what Auth made of it.
    case setAPNSToken(declaredType: String, resolvedType: String, apsEnvironment: String)
    /// The app asked for a verification code, for a first factor or a second one.
    case verifyPhoneNumber(number: String, purpose: VerificationPurpose)
    /// The receiver accepted a push.
    case pushAccepted(token: String, environment: APNsEnvironment)
    /// The receiver refused a push.
    case pushRejected(token: String, environment: APNsEnvironment, reason: APNsReason, status: Int?, detail: String)
    /// The receiver injected a fault.
    case receiverFault(fault: Fault)
    /// APNs accepted the push but the device never got it.
    case pushLost(token: String, environment: APNsEnvironment)
    /// The push reached the app's delegate; `handled`: Auth took it.
    case pushDelivered(token: String, handled: Bool)
    /// No app credential: the app presents reCAPTCHA, and why: the SDK's branch (`code`; nil in
    /// timelines written before it was recorded) and its sentence.
    case fallback(reason: String, code: ReCAPTCHAFallbackReason.Code?, url: String)
    /// What the reCAPTCHA presenter did (``FirebaseAuthCore/PresenterEvent/Kind`` raw value).
    case presenter(kind: String)
    /// The page's redirect went to the app; for a refusal, its ``FirebaseAuthCore/URLRefusal`` code.
    case redirect(handling: RedirectHandling, refusal: URLRefusal.Code?)
    /// The app got a verification ID.
    case verificationID
    /// The app signed in (or linked, reauthenticated, deleted).
    case signedIn(uid: String, path: SignInPath)
    /// An SDK error ended the flow: its `AuthErrorCode` number and name.
    case authError(code: Int, name: String, message: String, updatedCredential: Bool?)
    /// The Sign in with Apple sheet returned a credential.
    case appleAuthorized(sub: String, nonce: String, aud: String, firstAuthorization: Bool, ageSeconds: Int)
    /// The app handed Firebase an Apple credential (`rawNonce` empty: none).
    case appleCredential(rawNonce: String, rawNonceHash: String, tokenNonce: String)
    /// The app sent the same Apple credential again.
    case appleCredentialReplayed
    /// The app signs in on `providerID`'s web page (`OAuthProvider`'s web flow).
    case providerSignIn(providerID: String)
    /// How the scenario's backend signs provider tokens, and what the receiver trusts.
    case providerSetup(keyID: String, teamID: String, trustedKeyID: String, trustedTeamID: String, providerClockOffset: Int)
    /// The app got `secondFactorRequired` (17078) with a resolver listing `hints` factors.
    case secondFactorRequired(hints: Int)
    /// The OS could not register the app for remote notifications (`didFailToRegister…`).
    case apnsRegistrationFailed(reason: String)
    /// The custom URL scheme the reCAPTCHA page returns to, and whether the app's Info.plist
    /// registers it (without it the SDK stops before anything is sent).
    case callbackScheme(scheme: String, registered: Bool)
    /// Something the backend did, as it is (its push, code, SMS, sign-in, refusal…): on `--json`
    /// lines kind `backend`, the event's case name as fact `event` and its values beside it.
    case backend(BackendEvent)
    /// The scenario's end.
    case outcome(scenario: String, expected: String, actual: String, passed: Bool)
}

/// The kind of an event: its ``RunFact`` case. On `--json` lines it is the case's name, or for
/// the kinds written before there were these readers, the name they were written under
/// (`device.token`, `app.signedIn`).
package struct EventKind: Hashable, Sendable, CustomStringConvertible {
    /// The ``RunFact`` case's name.
    package let caseName: String
    /// The `kind` of `--json` lines.
    package let rawValue: String

    private init(_ caseName: String, _ rawValue: String) {
        self.caseName = caseName
        self.rawValue = rawValue
    }

    /// The kind of the case named `caseName`.
    package init(caseName: String) {
        self = Self.written.first { $0.caseName == caseName } ?? EventKind(caseName, caseName)
    }

    /// The kind a `--json` line names.
    package init(rawValue: String) {
        self = Self.written.first { $0.rawValue == rawValue } ?? EventKind(rawValue, rawValue)
    }

    package var description: String { rawValue }

    package static let deviceToken = EventKind("deviceToken", "device.token")
    package static let testMode = EventKind("testMode", "app.testMode")
    package static let setAPNSToken = EventKind("setAPNSToken", "app.setAPNSToken")
    package static let verifyPhoneNumber = EventKind("verifyPhoneNumber", "app.verifyPhoneNumber")
    package static let pushAccepted = EventKind("pushAccepted", "receiver.accepted")
    package static let pushRejected = EventKind("pushRejected", "receiver.rejected")
    package static let receiverFault = EventKind("receiverFault", "receiver.fault")
    package static let pushLost = EventKind("pushLost", "device.lost")
    package static let pushDelivered = EventKind("pushDelivered", "device.delivered")
    package static let fallback = EventKind("fallback", "app.fallback")
    package static let presenter = EventKind("presenter", "browser.presenter")
    package static let redirect = EventKind("redirect", "app.redirect")
    package static let verificationID = EventKind("verificationID", "app.verificationID")
    package static let signedIn = EventKind("signedIn", "app.signedIn")
    package static let authError = EventKind("authError", "app.error")
    package static let appleAuthorized = EventKind("appleAuthorized", "device.appleAuthorized")
    package static let appleCredential = EventKind("appleCredential", "app.appleCredential")
    package static let appleCredentialReplayed = EventKind("appleCredentialReplayed", "app.appleCredentialReplayed")
    package static let providerSetup = EventKind("providerSetup", "authsim.providerSetup")
    package static let secondFactorRequired = EventKind("secondFactorRequired", "app.secondFactorRequired")
    package static let apnsRegistrationFailed = EventKind("apnsRegistrationFailed", "device.registrationFailed")
    package static let outcome = EventKind("outcome", "scenario.outcome")
    package static let backend = EventKind("backend", "backend")

    /// The kinds with a name of their own on `--json` lines (a kind added since is written as its
    /// case's name and needs no line here).
    package static let written: [EventKind] = [
        deviceToken, testMode, setAPNSToken, verifyPhoneNumber, pushAccepted, pushRejected, receiverFault,
        pushLost, pushDelivered, fallback, presenter, redirect, verificationID, signedIn,
        authError, appleAuthorized, appleCredential, appleCredentialReplayed, providerSetup, secondFactorRequired,
        apnsRegistrationFailed, outcome,
    ]
}

extension RunFact {
    /// The case's name (`pushRejected`).
    package var caseName: String { enumCaseName(self) }

    package var kind: EventKind { EventKind(caseName: caseName) }

    /// The `facts` object of a `--json` line: the case's values, each as a string
    /// (RunFact's synthesized Codable, through ``FactCoding``).
    package var facts: [String: String] { FactCoding.encode(self).facts }

    /// Facts that lines written by older versions left out, and what they meant.
    static let olderLinesLeftOut: [String: [String: String]] = [
        "deviceToken": ["simulator": "false"],
        "verifyPhoneNumber": ["purpose": VerificationPurpose.firstFactor.rawValue],
        "setAPNSToken": ["apsEnvironment": "none"],
        "pushRejected": ["detail": ""],
        "fallback": ["reason": "", "url": ""],
        "authError": ["name": "", "message": ""],
        "appleAuthorized": ["ageSeconds": "0"],
        "appleCredential": ["rawNonce": "", "rawNonceHash": ""],
        "providerSetup": ["providerClockOffset": "0"],
        "outcome": ["scenario": ""],
    ]

    /// Reads a `--json` line's `kind` and `facts` back. Lines written before kinds were typed carry
    /// some facts without a kind (`testMode`, `keyID`, `fault`, `presenter`, `sub`): those are read
    /// too, as is an Apple credential sent again (once `app.appleCredential` with `replay`), and
    /// the backend's facts from before it was kept as its events (``OlderBackendFact``).
    /// Narration (no kind, no such facts) is `nil`.
    /// - Throws: ``TimelineFormatError`` for an unknown kind or a fact missing or malformed.
    package init?(kind: String?, facts: [String: String]) throws(TimelineFormatError) {
        guard let kind else {
            if facts["testMode"] == "true" { self = .testMode; return }
            if facts["keyID"] != nil { try self.init(kind: EventKind.providerSetup.rawValue, facts: facts); return }
            if facts["fault"] != nil { try self.init(kind: EventKind.receiverFault.rawValue, facts: facts); return }
            if facts["presenter"] != nil { try self.init(kind: EventKind.presenter.rawValue, facts: facts); return }
            if facts["sub"] != nil, facts["linked"] != nil { try self.init(kind: "backend.appleSignIn", facts: facts); return }
            return nil
        }
        if kind == EventKind.appleCredential.rawValue, facts["replay"] == "true" { self = .appleCredentialReplayed; return }
        if let event = try OlderBackendFact.event(kind: kind, facts: facts) { self = .backend(event); return }
        let known = EventKind(rawValue: kind)
        var facts = facts
        for (name, meaning) in Self.olderLinesLeftOut[known.caseName] ?? [:] where facts[name] == nil { facts[name] = meaning }
        guard let fact = try FactCoding.decode(name: known.caseName, facts: facts, kind: kind) else {
            throw TimelineFormatError("unknown event kind \(kind) (this authsim knows \(EventKind.written.map(\.rawValue).joined(separator: ", ")), backend and the names of newer kinds)")
        }
        self = fact
    }
}

/// A `--json` line the reader cannot take: which kind, which fact, what was expected.
package struct TimelineFormatError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Records what each part did, with elapsed milliseconds, and prints it as it happens. A run
/// waits for what it expects with ``wait(until:)``: woken by each event, never by polling.
package final class Timeline: Sendable {
    private struct Waiter {
        let condition: @Sendable ([TimelineEvent]) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }
    private struct State {
        var events: [TimelineEvent] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let start = ContinuousClock.now
    /// Events and the waits they may end: one lock, so no event falls between a wait's check and its registration.
    private let state = Mutex(State())
    private let printer: (@Sendable (TimelineEvent) -> Void)?

    package init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    package func record(_ part: Part, to: Part? = nil, _ message: String, _ fact: RunFact? = nil, signIn: SignInID? = nil) {
        let elapsed = ContinuousClock.now - start
        let ms = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        let event = TimelineEvent(milliseconds: ms, part: part, to: to, message: message, fact: fact, signIn: signIn)
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.events.append(event)
            let met = state.waiters.filter { $0.value.condition(state.events) }
            for id in met.keys { state.waiters[id] = nil }
            return met.values.map(\.continuation)
        }
        printer?(event)
        for continuation in ready { continuation.resume() }
    }

    package var all: [TimelineEvent] { state.withLock { $0.events } }

    /// Returns once `condition` holds for the events recorded so far (checked now, then after each
    /// new event), or when the task is cancelled.
    package func wait(until condition: @escaping @Sendable ([TimelineEvent]) -> Bool) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if condition(state.events) || Task.isCancelled { return true }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    /// ``wait(until:)``, for at most `limit`: whether `condition` came to hold.
    package func wait(until condition: @escaping @Sendable ([TimelineEvent]) -> Bool, atMost limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(until: condition); return true }
            group.addTask { try? await Task.sleep(for: limit); return false }
            _ = await group.next()
            group.cancelAll()
            return condition(all)
        }
    }
}

/// The timeline of the scenario that is running now, for observers (receiver, backend) that
/// outlive one scenario: what they see between scenarios is not recorded.
package final class CurrentTimeline: Sendable {
    private let current = Mutex<Timeline?>(nil)
    private let printer: (@Sendable (TimelineEvent) -> Void)?

    package init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    /// Records into the running scenario's timeline, if one runs.
    package func record(_ part: Part, to: Part? = nil, _ message: @autoclosure () -> String, _ fact: @autoclosure () -> RunFact? = nil) {
        current.withLock { $0 }?.record(part, to: to, message(), fact())
    }

    /// Starts the timeline of the next scenario.
    package func begin() -> Timeline {
        let timeline = Timeline(printer: printer)
        current.withLock { $0 = timeline }
        return timeline
    }

    /// No scenario runs any more.
    package func end() { current.withLock { $0 = nil } }
}

extension TimelineEvent {
    /// The backend's event, when this is one.
    package var backend: BackendEvent? {
        if case .backend(let event) = fact { event } else { nil }
    }
}

extension Sequence<TimelineEvent> {
    /// The first backend event `extract` takes, with what it took.
    package func first<Value>(backend extract: (BackendEvent) -> Value?) -> (event: TimelineEvent, value: Value)? {
        first { fact -> Value? in
            if case .backend(let event) = fact { extract(event) } else { nil }
        }
    }

    /// Whether a backend event is one `matches` takes.
    package func contains(backend matches: (BackendEvent) -> Bool) -> Bool {
        first(backend: { matches($0) ? true : nil }) != nil
    }

    /// The first event whose fact `extract` takes, with what it took.
    package func first<Value>(_ extract: (RunFact) -> Value?) -> (event: TimelineEvent, value: Value)? {
        for event in self {
            if let fact = event.fact, let value = extract(fact) { return (event, value) }
        }
        return nil
    }

    /// Whether any event's fact is `fact`'s kind.
    package func contains(_ kind: EventKind) -> Bool { contains { $0.kind == kind } }
}
