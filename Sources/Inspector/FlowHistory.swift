import APNsWire
import AuthBackend
import Causes
import Foundation
import IdentityToolkitAPI
import Synchronization
import Utilities

/// One sign-in as the backend saw it: its steps (a timeline for a sequence diagram), how the app
/// proved itself (silent push, reCAPTCHA, reCAPTCHA Enterprise, test number; a second factor),
/// how it ended, and why.
public struct InspectedFlow: Codable, Sendable, Hashable {
    public struct Step: Codable, Sendable, Hashable {
        public var time: Date
        /// `app`, `backend`, `apns`.
        public var from: String
        public var to: String?
        public var message: String
        public var bad: Bool
    }
    public var id: Int
    public var started: Date
    public var phoneNumber: String?
    public var uid: String?
    /// How the app proved itself; `nil` until a code was asked for.
    public var path: String?
    /// `in progress`, `signed in`, `refused: CODE`, …
    public var outcome: String
    public var cause: String?
    public var steps: [Step]

    /// The sign-in as a sequence diagram (``SequenceDiagram``, as `authsim run --diagram` draws
    /// runs): app, backend and APNs as they took part, milliseconds from the first step.
    public var diagram: String {
        let parts = ["app", "backend", "apns"].filter { part in steps.contains { $0.from == part || $0.to == part } }
        let start = steps.first?.time ?? started
        let rows = steps.map { step in
            SequenceDiagram.Row(time: "+\(Int((step.time.timeIntervalSince(start) * 1000).rounded())) ms", from: step.from, to: step.to,
                                text: step.message, classes: step.bad ? ["bad"] : [])
        }
        return SequenceDiagram.html(parts: parts, rows: rows, timeColumn: "5em")
    }
}

/// The backend's sign-ins, grouped from its events (``BackendEvent``): a flow starts with a
/// silent push (verifyClient), a code request without one, or an Apple sign-in; the push's
/// receipt, then the phone number, then the user ID tie later events to it. A refusal that names
/// neither (the service's errors carry no number) goes to the flow that moved last: with several
/// sign-ins at once, read the steps with that in mind. The newest ``capacity`` are kept.
public final class FlowHistory: Sendable {
    public let capacity: Int
    private struct State {
        var flows: [InspectedFlow] = []
        var nextID = 1
        var byReceipt: [String: Int] = [:]
        var byPhone: [String: Int] = [:]
        var byUID: [String: Int] = [:]
        var lastActive: Int?
        /// A recaptchaConfig answer waiting for the flow it starts.
        var pendingConfig: InspectedFlow.Step?
    }
    private let state = Mutex(State())

    public init(capacity: Int = 1000) { self.capacity = max(1, capacity) }

    public var all: [InspectedFlow] { state.withLock { $0.flows } }
    public func flow(id: Int) -> InspectedFlow? { state.withLock { $0.flows.first { $0.id == id } } }

    /// The backend's observer.
    public func record(_ event: BackendEvent, at time: Date = Date()) {
        state.withLock { state in
            func step(_ from: String, _ to: String?, _ message: String, bad: Bool = false) -> InspectedFlow.Step {
                .init(time: time, from: from, to: to, message: message, bad: bad)
            }
            func start(_ first: InspectedFlow.Step) -> Int {
                let id = state.nextID
                state.nextID += 1
                var steps = [first]
                if let config = state.pendingConfig, time.timeIntervalSince(config.time) < 10 { steps.insert(config, at: 0) }
                state.pendingConfig = nil
                state.flows.append(InspectedFlow(id: id, started: steps[0].time, phoneNumber: nil, uid: nil, path: nil,
                                                 outcome: "in progress", cause: nil, steps: steps))
                if state.flows.count > capacity { state.flows.removeFirst(state.flows.count - capacity) }
                state.lastActive = id
                return id
            }
            func update(_ id: Int?, _ change: (inout InspectedFlow) -> Void) {
                guard let id, let index = state.flows.lastIndex(where: { $0.id == id }) else { return }
                change(&state.flows[index])
                state.lastActive = id
            }
            switch event {
            case .recaptchaConfig(let phone):
                state.pendingConfig = step("app", "backend", "GET recaptchaConfig: phone SMS defense \(phone.rawValue)")
            case .pushing(let token, let environment, let receipt):
                let id = start(step("backend", "apns", "verifyClient: receipt \(receipt.prefix(8))… for token \(token.prefix(8))…; the secret goes by silent push (\(environment))"))
                state.byReceipt[receipt] = id
            case .verifyClient(_, let environment, let receipt, let push):
                let answer = [push.status.map(String.init), push.reason?.rawValue, push.error].compactMap { $0 }.joined(separator: " ")
                update(state.byReceipt[receipt]) { flow in
                    flow.steps.append(step("apns", "backend", "\(environment) answered \(answer)", bad: !push.accepted))
                    if !push.accepted {
                        flow.cause = push.reason == .badDeviceToken
                            ? "APNs \(environment) refused the silent push with BadDeviceToken: the token was issued by the other environment (the app declared the wrong token type, or the backend uses the wrong APNs host). The app waits, then falls back to reCAPTCHA."
                            : "the silent push could not be delivered (\(answer)): the app waits for it, then falls back to reCAPTCHA"
                    }
                }
            case .codeRequested(let phone, let proof, let receipt, let endpoint):
                let secondFactor = BackendOperation.secondFactorOperations.contains(endpoint)
                let id: Int
                if let receipt, let existing = state.byReceipt[receipt] {
                    id = existing
                } else {
                    id = start(step("app", "backend", "\(endpoint.rawValue) for \(phone)"))
                }
                update(id) { flow in
                    flow.phoneNumber = phone
                    flow.path = proof.description + (secondFactor ? " (second factor)" : "")
                    flow.steps.append(step("app", "backend", "\(endpoint.rawValue) for \(phone), proved by \(proof.description)"))
                }
                state.byPhone[phone] = id
            case .smsSent(let message):
                update(state.byPhone[message.phoneNumber]) { $0.steps.append(step("backend", "app", "SMS to \(message.phoneNumber): \(message.text)")) }
            case .codeReused(let phone):
                update(state.byPhone[phone]) { $0.steps.append(step("backend", nil, "a code for \(phone) is still valid: no second SMS")) }
            case .signedIn(let uid, let phone, let isNewUser):
                let id = state.byPhone[phone] ?? start(step("app", "backend", "signInWithPhoneNumber for \(phone)"))
                update(id) { flow in
                    flow.uid = uid
                    flow.phoneNumber = phone
                    flow.outcome = "signed in"
                    flow.steps.append(step("backend", "app", "signed in as \(uid)\(isNewUser ? " (a new user)" : "")"))
                }
                state.byUID[uid] = id
            case .appleSignIn(let uid, let sub, let isNewUser, let linked):
                let id = start(step("app", "backend", "signInWithIdp: apple.com, Apple ID \(sub.prefix(12))…"))
                update(id) { flow in
                    flow.uid = uid
                    flow.path = "Sign in with Apple"
                    flow.outcome = linked ? "linked" : "signed in"
                    flow.steps.append(step("backend", "app", "\(linked ? "linked to" : "signed in as") \(uid)\(isNewUser ? " (a new user)" : "")"))
                }
                state.byUID[uid] = id
            case .secondFactorRequired(let uid, let provider):
                let id = state.byUID[uid].flatMap { existing in state.flows.last { $0.id == existing && $0.outcome == "in progress" }?.id }
                    ?? start(step("app", "backend", "first factor: \(provider)"))
                update(id) { flow in
                    flow.uid = uid
                    flow.outcome = "second factor required"
                    flow.steps.append(step("backend", "app", "a second factor is required: mfaPendingCredential and the enrolled factors' hints"))
                }
                state.byUID[uid] = id
            case .secondFactorEnrolled(let uid, let enrollmentID, let phone):
                update(state.byPhone[phone] ?? state.byUID[uid]) { flow in
                    flow.uid = uid
                    flow.outcome = "second factor enrolled"
                    flow.steps.append(step("backend", "app", "\(phone) enrolled as a second factor (\(enrollmentID.prefix(8))…)"))
                }
            case .secondFactorSignedIn(let uid, let enrollmentID):
                update(state.byUID[uid] ?? state.lastActive) { flow in
                    flow.outcome = "signed in"
                    flow.steps.append(step("backend", "app", "the second factor (\(enrollmentID.prefix(8))…) completed the sign-in"))
                }
            case .recaptchaAssessment(let endpoint, let enforcement, let assessment):
                update(state.lastActive) {
                    $0.steps.append(step("backend", nil, "\(endpoint.rawValue): SMS defense (\(enforcement.rawValue)) assesses the reCAPTCHA Enterprise token: \(assessment.verdict.rawValue): \(assessment.detail)"))
                }
            case .rejected(let endpoint, let error, let cause):
                let id = state.lastActive ?? start(step("app", "backend", endpoint.rawValue))
                update(id) { flow in
                    flow.outcome = "refused: \(error.code.rawValue)"
                    flow.cause = BackendRefusals.diagnose(endpoint: endpoint.rawValue, error: error.code, detail: error.detail, cause: cause,
                                                          message: error.message).cause
                    flow.steps.append(step("backend", "app", "\(endpoint.rawValue) refuses: \(error.message)", bad: true))
                }
            case .frontendRefused(let path, let error):
                let endpoint = path.split(separator: "/").last.map(String.init) ?? path
                let id = state.lastActive ?? start(step("app", "backend", endpoint))
                update(id) { flow in
                    flow.outcome = "refused by Google's front end"
                    flow.cause = error.message
                    flow.steps.append(step("backend", "app", "Google's front end refuses \(endpoint): HTTP \(error.httpStatus) \(error.message)", bad: true))
                }
            case .faultAnswered(let path, let fault):
                update(state.lastActive) {
                    $0.steps.append(step("backend", "app", "\(path.split(separator: "/").last ?? "") answers an injected HTTP \(fault.status)", bad: true))
                }
            case .accountDeleted, .appleRevoked:
                break
            }
        }
    }
}
