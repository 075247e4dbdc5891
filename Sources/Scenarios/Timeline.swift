import APNsReceiver
import APNsWire
import AuthBackend
import DeviceOS
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Synchronization

/// The parts of a run, as they appear in a timeline and in the sequence diagram.
public enum Part: String, Sendable, CaseIterable, Codable {
    case app, browser, backend, sender, receiver, device, interceptor, authsim
}

/// One step of a run: when (milliseconds since the run began), which part, what; for a message
/// between parts, whom it went to; and for the steps `authsim explain` reasons over, the typed
/// ``RunFact`` behind the sentence.
public struct TimelineEvent: Sendable, Hashable {
    public let milliseconds: Int
    public let part: Part
    /// The part a message went to (an arrow in the diagram); nil for a step within `part`.
    public let to: Part?
    public let message: String
    /// What happened, for machines; nil for narration.
    public let fact: RunFact?

    public init(milliseconds: Int, part: Part, to: Part? = nil, message: String, fact: RunFact? = nil) {
        self.milliseconds = milliseconds
        self.part = part
        self.to = to
        self.message = message
        self.fact = fact
    }

    /// The fact's stable kind (the `kind` of `--json` lines).
    public var kind: EventKind? { fact?.kind }
}

/// What a verification code was asked for: a first factor, or a second one (enrolling it, or
/// finishing a sign-in with it).
public enum VerificationPurpose: String, Sendable, Hashable, Codable {
    case firstFactor, mfaEnrollment, mfaSignIn
}

/// How a phone sign-in ended up proving the app, or what else signed the user in.
public enum SignInPath: Sendable, Hashable, RawRepresentable, Codable, CaseIterable {
    /// By phone, the app proved as the backend saw it.
    case phone(AppVerification)
    case apple
    /// The account was deleted (the Apple revoke-then-delete flow's end).
    case deleted

    public static let silentPush = SignInPath.phone(.silentPush)
    public static let reCAPTCHA = SignInPath.phone(.reCAPTCHA)
    public static let testMode = SignInPath.phone(.testMode)
    public static let recaptchaEnterprise = SignInPath.phone(.recaptchaEnterprise)

    public static var allCases: [SignInPath] { AppVerification.allCases.map(SignInPath.phone) + [.apple, .deleted] }

    /// The timeline's `path`: the verification's raw value, `apple.com` or `deleted`.
    public var rawValue: String {
        switch self {
        case .phone(let proof): proof.rawValue
        case .apple: "apple.com"
        case .deleted: "deleted"
        }
    }

    public init?(rawValue: String) {
        switch rawValue {
        case "apple.com": self = .apple
        case "deleted": self = .deleted
        default:
            guard let proof = AppVerification(rawValue: rawValue) else { return nil }
            self = .phone(proof)
        }
    }
}

/// What became of a redirect handed to the app.
public enum RedirectHandling: String, Sendable, Hashable, Codable {
    /// `Auth.canHandle(url)` took it.
    case handled = "true"
    /// It was not Auth's (see the refusal).
    case refused = "false"
    /// The page sent it; the OS has yet to hand it over.
    case pending
}

/// What `authsim explain` reasons over: each case one kind of event, its associated values the
/// facts behind the sentence. On `--json` lines each is a `kind` and a `facts` object of strings
/// (`Scenarios/README.md` lists them).
public enum RunFact: Sendable, Hashable {
    /// The device got an APNs token.
    case deviceToken(token: String, environment: APNsEnvironment, bundleID: String, simulator: Bool)
    /// The app turned on `isAppVerificationDisabledForTesting`.
    case testMode
    /// The app passed the token to Auth: the type its code declared and what Auth made of it.
    case setAPNSToken(declaredType: String, resolvedType: String, apsEnvironment: String)
    /// The app asked for a verification code, for a first factor or a second one.
    case verifyPhoneNumber(number: String, purpose: VerificationPurpose)
    /// The backend got verifyClient and pushes the secret.
    case verifyClient(token: String, environment: APNsEnvironment, receipt: String)
    /// The backend's APNs client got its answer (status nil: no answer, see `error`).
    case pushAnswer(token: String, environment: APNsEnvironment, status: Int?, reason: APNsReason?, error: String?)
    /// The receiver accepted a push.
    case pushAccepted(token: String, environment: APNsEnvironment)
    /// The receiver refused a push.
    case pushRejected(token: String, environment: APNsEnvironment, reason: APNsReason, status: Int?, detail: String)
    /// The receiver injected a fault.
    case receiverFault(Fault)
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
    /// The backend texted a code.
    case smsSent(number: String)
    /// The backend refused a request; `cause` where the error alone does not say which fix applies.
    case backendRejected(endpoint: String, error: String, detail: String?, cause: RejectionCause?)
    /// The app got a verification ID.
    case verificationID
    /// The app signed in (or linked, reauthenticated, deleted).
    case signedIn(uid: String, path: SignInPath)
    /// The backend signed an Apple ID in, or linked it.
    case appleSignIn(uid: String, sub: String, linked: Bool)
    /// An SDK error ended the flow: its `AuthErrorCode` number and name.
    case authError(code: Int, name: String, message: String, updatedCredential: Bool?)
    /// The Sign in with Apple sheet returned a credential.
    case appleAuthorized(sub: String, nonce: String, aud: String, firstAuthorization: Bool, ageSeconds: Int)
    /// The app handed Firebase an Apple credential (`rawNonce` empty: none).
    case appleCredential(rawNonce: String, rawNonceHash: String, tokenNonce: String)
    /// The app sent the same Apple credential again.
    case appleCredentialReplayed
    /// How the scenario's backend signs provider tokens, and what the receiver trusts.
    case providerSetup(keyID: String, teamID: String, trustedKeyID: String, trustedTeamID: String, clockOffsetSeconds: Int)
    /// A first factor for a user with a second factor: the backend answered a pending credential.
    case mfaPending(uid: String, provider: String)
    /// The app got `secondFactorRequired` (17078) with a resolver listing `hints` factors.
    case secondFactorRequired(hints: Int)
    /// The backend enrolled a phone as a second factor.
    case mfaEnrolled(uid: String, enrollmentID: String, phoneNumber: String)
    /// A second factor completed a sign-in.
    case mfaSignedIn(uid: String, enrollmentID: String)
    /// The app fetched the project's reCAPTCHA config: the phone provider's SMS defense.
    case smsDefense(state: RecaptchaEnforcement)
    /// SMS defense assessed a code request's reCAPTCHA Enterprise token.
    case recaptchaAssessment(endpoint: String, enforcement: RecaptchaEnforcement, verdict: RecaptchaAssessment.Verdict, riskScore: Double?, detail: String)
    /// The OS could not register the app for remote notifications (`didFailToRegister…`).
    case apnsRegistrationFailed(reason: String)
    /// The scenario's end.
    case outcome(scenario: String, expected: String, actual: String, passed: Bool)
}

/// The kinds of events runs record (the `kind` of `--json` lines).
public enum EventKind: String, Sendable, CaseIterable, Codable {
    case deviceToken = "device.token"
    case testMode = "app.testMode"
    case setAPNSToken = "app.setAPNSToken"
    case verifyPhoneNumber = "app.verifyPhoneNumber"
    case verifyClient = "backend.verifyClient"
    case pushAnswer = "sender.answer"
    case pushAccepted = "receiver.accepted"
    case pushRejected = "receiver.rejected"
    case receiverFault = "receiver.fault"
    case pushLost = "device.lost"
    case pushDelivered = "device.delivered"
    case fallback = "app.fallback"
    case presenter = "browser.presenter"
    case redirect = "app.redirect"
    case smsSent = "backend.sms"
    case backendRejected = "backend.rejected"
    case verificationID = "app.verificationID"
    case signedIn = "app.signedIn"
    case appleSignIn = "backend.appleSignIn"
    case authError = "app.error"
    case appleAuthorized = "device.appleAuthorized"
    case appleCredential = "app.appleCredential"
    case providerSetup = "authsim.providerSetup"
    case mfaPending = "backend.mfaPending"
    case secondFactorRequired = "app.secondFactorRequired"
    case mfaEnrolled = "backend.mfaEnrolled"
    case mfaSignedIn = "backend.mfaSignedIn"
    case smsDefense = "app.recaptchaConfig"
    case recaptchaAssessment = "backend.recaptchaAssessment"
    case apnsRegistrationFailed = "device.registrationFailed"
    case outcome = "scenario.outcome"
}

extension RunFact {
    public var kind: EventKind {
        switch self {
        case .deviceToken: .deviceToken
        case .testMode: .testMode
        case .setAPNSToken: .setAPNSToken
        case .verifyPhoneNumber: .verifyPhoneNumber
        case .verifyClient: .verifyClient
        case .pushAnswer: .pushAnswer
        case .pushAccepted: .pushAccepted
        case .pushRejected: .pushRejected
        case .receiverFault: .receiverFault
        case .pushLost: .pushLost
        case .pushDelivered: .pushDelivered
        case .fallback: .fallback
        case .presenter: .presenter
        case .redirect: .redirect
        case .smsSent: .smsSent
        case .backendRejected: .backendRejected
        case .verificationID: .verificationID
        case .signedIn: .signedIn
        case .appleSignIn: .appleSignIn
        case .authError: .authError
        case .appleAuthorized: .appleAuthorized
        case .appleCredential, .appleCredentialReplayed: .appleCredential
        case .providerSetup: .providerSetup
        case .mfaPending: .mfaPending
        case .secondFactorRequired: .secondFactorRequired
        case .mfaEnrolled: .mfaEnrolled
        case .mfaSignedIn: .mfaSignedIn
        case .smsDefense: .smsDefense
        case .recaptchaAssessment: .recaptchaAssessment
        case .apnsRegistrationFailed: .apnsRegistrationFailed
        case .outcome: .outcome
        }
    }

    /// The `facts` object of a `--json` line: every value a string.
    public var facts: [String: String] {
        switch self {
        case .deviceToken(let token, let environment, let bundleID, let simulator):
            ["token": token, "environment": environment.rawValue, "bundleID": bundleID, "simulator": String(simulator)]
        case .testMode: ["testMode": "true"]
        case .setAPNSToken(let declared, let resolved, let aps):
            ["declaredType": declared, "resolvedType": resolved, "apsEnvironment": aps]
        case .verifyPhoneNumber(let number, let purpose): ["number": number, "purpose": purpose.rawValue]
        case .verifyClient(let token, let environment, let receipt):
            ["token": token, "environment": environment.rawValue, "receipt": receipt]
        case .pushAnswer(let token, let environment, let status, let reason, let error):
            ["token": token, "environment": environment.rawValue, "status": status.map(String.init) ?? "", "reason": reason?.rawValue ?? "",
             "error": error ?? ""]
        case .pushAccepted(let token, let environment), .pushLost(let token, let environment):
            ["token": token, "environment": environment.rawValue]
        case .pushRejected(let token, let environment, let reason, let status, let detail):
            ["token": token, "environment": environment.rawValue, "reason": reason.rawValue, "status": status.map(String.init) ?? "",
             "detail": detail]
        case .receiverFault(let fault): ["fault": fault.description]
        case .pushDelivered(let token, let handled): ["token": token, "handled": String(handled)]
        case .fallback(let reason, let code, let url):
            code.map { ["reason": reason, "code": $0.rawValue, "url": url] } ?? ["reason": reason, "url": url]
        case .presenter(let kind): ["presenter": kind]
        case .redirect(let handling, let refusal):
            refusal.map { ["handled": handling.rawValue, "refusal": $0.rawValue] } ?? ["handled": handling.rawValue]
        case .smsSent(let number): ["number": number]
        case .backendRejected(let endpoint, let error, let detail, let cause):
            ["endpoint": endpoint, "error": error, "detail": detail ?? ""].merging(cause.map { ["cause": $0.rawValue] } ?? [:]) { a, _ in a }
        case .verificationID: [:]
        case .signedIn(let uid, let path): ["uid": uid, "path": path.rawValue]
        case .appleSignIn(let uid, let sub, let linked): ["uid": uid, "sub": sub, "linked": String(linked)]
        case .authError(let code, let name, let message, let updated):
            updated.map { ["code": String(code), "name": name, "message": message, "updatedCredential": String($0)] }
                ?? ["code": String(code), "name": name, "message": message]
        case .appleAuthorized(let sub, let nonce, let aud, let first, let age):
            ["sub": sub, "nonce": nonce, "aud": aud, "firstAuthorization": String(first), "ageSeconds": String(age)]
        case .appleCredential(let raw, let rawHash, let tokenNonce):
            ["rawNonce": raw, "rawNonceHash": rawHash, "tokenNonce": tokenNonce]
        case .appleCredentialReplayed: ["replay": "true"]
        case .providerSetup(let keyID, let teamID, let trustedKeyID, let trustedTeamID, let offset):
            ["keyID": keyID, "teamID": teamID, "trustedKeyID": trustedKeyID, "trustedTeamID": trustedTeamID,
             "providerClockOffset": String(offset)]
        case .mfaPending(let uid, let provider): ["uid": uid, "provider": provider]
        case .secondFactorRequired(let hints): ["hints": String(hints)]
        case .mfaEnrolled(let uid, let enrollmentID, let phoneNumber): ["uid": uid, "enrollmentID": enrollmentID, "number": phoneNumber]
        case .mfaSignedIn(let uid, let enrollmentID): ["uid": uid, "enrollmentID": enrollmentID]
        case .smsDefense(let state): ["state": state.rawValue]
        case .apnsRegistrationFailed(let reason): ["reason": reason]
        case .recaptchaAssessment(let endpoint, let enforcement, let verdict, let score, let detail):
            ["endpoint": endpoint, "enforcement": enforcement.rawValue, "verdict": verdict.rawValue, "riskScore": score.map { String($0) } ?? "",
             "detail": detail]
        case .outcome(let scenario, let expected, let actual, let passed):
            ["scenario": scenario, "expected": expected, "actual": actual, "passed": String(passed)]
        }
    }

    /// Reads a `--json` line's `kind` and `facts` back. Lines written before kinds were typed carry
    /// some facts without a kind (`testMode`, `keyID`, `fault`, `presenter`, `sub`): those are read
    /// too. Narration (no kind, no such facts) is `nil`.
    /// - Throws: ``TimelineFormatError`` for an unknown kind or a fact missing or malformed.
    public init?(kind: String?, facts: [String: String]) throws(TimelineFormatError) {
        let reader = FactReader(kind: kind ?? "(no kind)", facts: facts)
        guard let kind else {
            if facts["testMode"] == "true" { self = .testMode; return }
            if facts["keyID"] != nil { try self.init(kind: EventKind.providerSetup.rawValue, facts: facts); return }
            if facts["fault"] != nil { try self.init(kind: EventKind.receiverFault.rawValue, facts: facts); return }
            if facts["presenter"] != nil { try self.init(kind: EventKind.presenter.rawValue, facts: facts); return }
            if facts["sub"] != nil, facts["linked"] != nil { try self.init(kind: EventKind.appleSignIn.rawValue, facts: facts); return }
            return nil
        }
        guard let known = EventKind(rawValue: kind) else {
            throw TimelineFormatError("unknown event kind \(kind) (this authsim knows \(EventKind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        switch known {
        case .deviceToken:
            self = .deviceToken(token: try reader.string("token"), environment: try reader.environment("environment"),
                                bundleID: try reader.string("bundleID"), simulator: try reader.bool("simulator", default: false))
        case .testMode: self = .testMode
        case .setAPNSToken:
            self = .setAPNSToken(declaredType: try reader.string("declaredType"), resolvedType: try reader.string("resolvedType"),
                                 apsEnvironment: facts["apsEnvironment"] ?? "none")
        case .verifyPhoneNumber:
            // Lines written before second factors had no purpose: a first factor.
            guard let purpose = VerificationPurpose(rawValue: facts["purpose"] ?? VerificationPurpose.firstFactor.rawValue) else {
                throw reader.malformed("purpose", "firstFactor, mfaEnrollment or mfaSignIn")
            }
            self = .verifyPhoneNumber(number: try reader.string("number"), purpose: purpose)
        case .verifyClient:
            self = .verifyClient(token: try reader.string("token"), environment: try reader.environment("environment"),
                                 receipt: facts["receipt"] ?? "")
        case .pushAnswer:
            self = .pushAnswer(token: facts["token"] ?? "", environment: try reader.environment("environment"),
                               status: try reader.optionalInt("status"), reason: reader.optional("reason").map(APNsReason.init(rawValue:)),
                               error: reader.optional("error"))
        case .pushAccepted: self = .pushAccepted(token: try reader.string("token"), environment: try reader.environment("environment"))
        case .pushRejected:
            self = .pushRejected(token: try reader.string("token"), environment: try reader.environment("environment"),
                                 reason: APNsReason(rawValue: try reader.string("reason")), status: try reader.optionalInt("status"),
                                 detail: facts["detail"] ?? "")
        case .receiverFault:
            // Written as the fault's spec (`drop`, `delay=250`, `reject=BadDeviceToken`…), as push-receiver --fault takes it.
            let spec = try reader.string("fault")
            do throws(ReceiverError) { self = .receiverFault(try FaultRule(parsing: spec).fault) } catch {
                throw reader.malformed("fault", "a fault spec: \(error.message)")
            }
        case .pushLost: self = .pushLost(token: try reader.string("token"), environment: try reader.environment("environment"))
        case .pushDelivered: self = .pushDelivered(token: try reader.string("token"), handled: try reader.bool("handled"))
        case .fallback:
            self = .fallback(reason: facts["reason"] ?? "", code: try reader.optionalValue("code", as: ReCAPTCHAFallbackReason.Code.self),
                             url: facts["url"] ?? "")
        case .presenter: self = .presenter(kind: try reader.string("presenter"))
        case .redirect:
            guard let handling = RedirectHandling(rawValue: try reader.string("handled")) else {
                throw reader.malformed("handled", "true, false or pending")
            }
            self = .redirect(handling: handling, refusal: try reader.optionalValue("refusal", as: URLRefusal.Code.self))
        case .smsSent: self = .smsSent(number: try reader.string("number"))
        case .backendRejected:
            self = .backendRejected(endpoint: try reader.string("endpoint"), error: try reader.string("error"), detail: reader.optional("detail"),
                                    cause: try reader.optionalValue("cause", as: RejectionCause.self))
        case .verificationID: self = .verificationID
        case .signedIn:
            guard let path = SignInPath(rawValue: try reader.string("path")) else {
                throw reader.malformed("path", SignInPath.allCases.map(\.rawValue).joined(separator: ", "))
            }
            self = .signedIn(uid: try reader.string("uid"), path: path)
        case .appleSignIn:
            self = .appleSignIn(uid: try reader.string("uid"), sub: try reader.string("sub"), linked: try reader.bool("linked"))
        case .authError:
            self = .authError(code: try reader.int("code"), name: facts["name"] ?? "", message: facts["message"] ?? "",
                              updatedCredential: try reader.optionalBool("updatedCredential"))
        case .appleAuthorized:
            self = .appleAuthorized(sub: try reader.string("sub"), nonce: try reader.string("nonce"), aud: try reader.string("aud"),
                                    firstAuthorization: try reader.bool("firstAuthorization"),
                                    ageSeconds: try reader.optionalInt("ageSeconds") ?? 0)
        case .appleCredential:
            if facts["replay"] == "true" { self = .appleCredentialReplayed; return }
            self = .appleCredential(rawNonce: facts["rawNonce"] ?? "", rawNonceHash: facts["rawNonceHash"] ?? "",
                                    tokenNonce: try reader.string("tokenNonce"))
        case .providerSetup:
            self = .providerSetup(keyID: try reader.string("keyID"), teamID: try reader.string("teamID"),
                                  trustedKeyID: try reader.string("trustedKeyID"), trustedTeamID: try reader.string("trustedTeamID"),
                                  clockOffsetSeconds: try reader.optionalInt("providerClockOffset") ?? 0)
        case .mfaPending: self = .mfaPending(uid: try reader.string("uid"), provider: try reader.string("provider"))
        case .secondFactorRequired: self = .secondFactorRequired(hints: try reader.int("hints"))
        case .mfaEnrolled:
            self = .mfaEnrolled(uid: try reader.string("uid"), enrollmentID: try reader.string("enrollmentID"), phoneNumber: try reader.string("number"))
        case .mfaSignedIn: self = .mfaSignedIn(uid: try reader.string("uid"), enrollmentID: try reader.string("enrollmentID"))
        case .smsDefense: self = .smsDefense(state: try reader.value("state", as: RecaptchaEnforcement.self))
        case .apnsRegistrationFailed: self = .apnsRegistrationFailed(reason: try reader.string("reason"))
        case .recaptchaAssessment:
            let score = try reader.optional("riskScore").map { text throws(TimelineFormatError) -> Double in
                guard let value = Double(text) else { throw reader.malformed("riskScore", "a number") }
                return value
            }
            self = .recaptchaAssessment(endpoint: try reader.string("endpoint"), enforcement: try reader.value("enforcement", as: RecaptchaEnforcement.self),
                                        verdict: try reader.value("verdict", as: RecaptchaAssessment.Verdict.self), riskScore: score,
                                        detail: facts["detail"] ?? "")
        case .outcome:
            self = .outcome(scenario: facts["scenario"] ?? "", expected: try reader.string("expected"), actual: try reader.string("actual"),
                            passed: try reader.bool("passed"))
        }
    }
}

/// A `--json` line the reader cannot take: which kind, which fact, what was expected.
public struct TimelineFormatError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Reads typed facts from a `facts` object of strings.
private struct FactReader {
    let kind: String
    let facts: [String: String]

    func malformed(_ name: String, _ expected: String) -> TimelineFormatError {
        TimelineFormatError("\(kind): fact \(name) is \(facts[name].map { "\"\($0)\"" } ?? "missing"), expected \(expected)")
    }
    func string(_ name: String) throws(TimelineFormatError) -> String {
        guard let value = facts[name] else { throw malformed(name, "a string") }
        return value
    }
    func optional(_ name: String) -> String? { facts[name].flatMap { $0.isEmpty ? nil : $0 } }
    /// One of an enum's raw values; anything else is an error that lists them.
    func value<T: RawRepresentable & CaseIterable>(_ name: String, as type: T.Type) throws(TimelineFormatError) -> T where T.RawValue == String {
        guard let value = facts[name].flatMap(T.init(rawValue:)) else {
            throw malformed(name, "one of " + T.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }
    /// ``value(_:as:)`` for a fact that may be absent (written lines leave it out; present, it must be one of the values).
    func optionalValue<T: RawRepresentable & CaseIterable>(_ name: String, as type: T.Type) throws(TimelineFormatError) -> T? where T.RawValue == String {
        facts[name] == nil ? nil : try value(name, as: type)
    }
    func int(_ name: String) throws(TimelineFormatError) -> Int {
        guard let value = facts[name].flatMap({ Int($0) }) else { throw malformed(name, "an integer") }
        return value
    }
    func optionalInt(_ name: String) throws(TimelineFormatError) -> Int? {
        guard let text = optional(name) else { return nil }
        guard let value = Int(text) else { throw malformed(name, "an integer") }
        return value
    }
    func bool(_ name: String, default fallback: Bool? = nil) throws(TimelineFormatError) -> Bool {
        if facts[name] == nil, let fallback { return fallback }
        guard let value = try optionalBool(name) else { throw malformed(name, "true or false") }
        return value
    }
    func optionalBool(_ name: String) throws(TimelineFormatError) -> Bool? {
        switch facts[name] {
        case nil, "": return nil
        case "true": return true
        case "false": return false
        default: throw malformed(name, "true or false")
        }
    }
    func environment(_ name: String) throws(TimelineFormatError) -> APNsEnvironment {
        guard let value = facts[name].flatMap(APNsEnvironment.init(rawValue:)) else { throw malformed(name, "sandbox or production") }
        return value
    }
}

/// Records what each part did, with elapsed milliseconds, and prints it as it happens. A run
/// waits for what it expects with ``wait(until:)``: woken by each event, never by polling.
public final class Timeline: Sendable {
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

    public init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    public func record(_ part: Part, to: Part? = nil, _ message: String, _ fact: RunFact? = nil) {
        let elapsed = ContinuousClock.now - start
        let ms = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        let event = TimelineEvent(milliseconds: ms, part: part, to: to, message: message, fact: fact)
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.events.append(event)
            let met = state.waiters.filter { $0.value.condition(state.events) }
            for id in met.keys { state.waiters[id] = nil }
            return met.values.map(\.continuation)
        }
        printer?(event)
        for continuation in ready { continuation.resume() }
    }

    public var all: [TimelineEvent] { state.withLock { $0.events } }

    /// Returns once `condition` holds for the events recorded so far (checked now, then after each
    /// new event), or when the task is cancelled.
    public func wait(until condition: @escaping @Sendable ([TimelineEvent]) -> Bool) async {
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
    public func wait(until condition: @escaping @Sendable ([TimelineEvent]) -> Bool, atMost limit: Duration) async -> Bool {
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
public final class CurrentTimeline: Sendable {
    private let current = Mutex<Timeline?>(nil)
    private let printer: (@Sendable (TimelineEvent) -> Void)?

    public init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    /// Records into the running scenario's timeline, if one runs.
    public func record(_ part: Part, to: Part? = nil, _ message: @autoclosure () -> String, _ fact: @autoclosure () -> RunFact? = nil) {
        current.withLock { $0 }?.record(part, to: to, message(), fact())
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

extension Sequence<TimelineEvent> {
    /// The first event whose fact `extract` takes, with what it took.
    public func first<Value>(_ extract: (RunFact) -> Value?) -> (event: TimelineEvent, value: Value)? {
        for event in self {
            if let fact = event.fact, let value = extract(fact) { return (event, value) }
        }
        return nil
    }

    /// Whether any event's fact is `fact`'s kind.
    public func contains(_ kind: EventKind) -> Bool { contains { $0.kind == kind } }
}
