import APNsWire
import AuthBackend
import Causes
import Foundation
import IdentityToolkitAPI
import Synchronization
import Utilities

/// One sign-in as the backend saw it: its steps (the backend's events, each as its
/// ``BackendEvent/Line``, the wording timelines use), how the app proved itself
/// (``AppVerification``; a second factor), how it ended, and why (from ``Causes``).
public struct InspectedFlow: Codable, Sendable, Hashable {
    public struct Step: Codable, Sendable, Hashable {
        public var time: Date
        public var from: BackendEvent.Party
        public var to: BackendEvent.Party?
        public var message: String
        public var bad: Bool
        /// The ``BackendEvent`` case it comes from (`codeRequested`).
        public var event: String
        /// The backend node of the fleet that made it (`--node-name`); `nil` without a fleet.
        public var node: String?
    }
    public var id: Int
    public var started: Date
    public var phoneNumber: String?
    public var uid: String?
    /// How the app proved itself for a code; `nil` until one was asked for, and for Sign in
    /// with Apple.
    public var proof: AppVerification?
    /// Whether the code was for a second factor.
    public var secondFactor: Bool
    /// The path in words: the proof's (`silent push`, `… (second factor)`), or `Sign in with Apple`.
    public var path: String?
    /// How it ended so far.
    public var outcome: FlowOutcome
    public var cause: String?
    public var fix: String?
    public var steps: [Step]
    /// The device token (hex) its silent push went to, when it had one.
    public var deviceToken: String? = nil

    /// The sign-in as a sequence diagram (``SequenceDiagram``, as `authsim run --diagram` draws
    /// runs): app, backend and APNs as they took part, milliseconds from the first step.
    public var diagram: String {
        let parts = [BackendEvent.Party.app, .backend, .apns].filter { part in steps.contains { $0.from == part || $0.to == part } }
        let start = steps.first?.time ?? started
        let rows = steps.map { step in
            SequenceDiagram.Row(time: "+\(Int((step.time.timeIntervalSince(start) * 1000).rounded())) ms", from: step.from.rawValue, to: step.to?.rawValue,
                                text: step.message + (step.node.map { " [\($0)]" } ?? ""), classes: step.bad ? ["bad"] : [])
        }
        return SequenceDiagram.html(parts: parts.map(\.rawValue), rows: rows, timeColumn: "5em")
    }
}

/// How a sign-in ended, as the backend saw it; its ``description`` is what the inspector shows.
public enum FlowOutcome: Sendable, Hashable, Codable, CustomStringConvertible {
    case inProgress
    case signedIn
    /// An Apple ID linked to a signed-in user.
    case linked
    /// A first factor answered with a pending credential: the second factor is next.
    case secondFactorRequired
    case secondFactorEnrolled
    /// Identity Toolkit refused a request with this code.
    case refused(IdentityToolkitError.Code)
    /// Google's front end refused a request before Identity Toolkit saw it.
    case refusedByFrontEnd(IdentityToolkitError.Code)

    public var description: String {
        switch self {
        case .inProgress: "in progress"
        case .signedIn: "signed in"
        case .linked: "linked"
        case .secondFactorRequired: "second factor required"
        case .secondFactorEnrolled: "second factor enrolled"
        case .refused(let code): "refused: \(code.rawValue)"
        case .refusedByFrontEnd: "refused by Google's front end"
        }
    }

    /// The service's code, when refused.
    public var error: IdentityToolkitError.Code? {
        switch self {
        case .refused(let code), .refusedByFrontEnd(let code): code
        default: nil
        }
    }
}

/// The backend's sign-ins, grouped from its events (``BackendEvent``): a flow starts with a
/// silent push (verifyClient), a code request without one, or an Apple sign-in; the push's
/// receipt, then the phone number, then the user ID tie later events to it. The reCAPTCHA
/// fallback's code request, which names no push, continues the one sign-in whose push went
/// unanswered by a code (``fallbackWindow``), so the fallback and the push that caused it are one
/// row with the push's cause. A refusal that names neither (the service's errors carry no number)
/// goes to the flow that moved last: with several sign-ins at once, read the steps with that in
/// mind. The newest ``capacity`` are kept.
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

        /// The sign-in a code request without a receipt continues: the SDK's reCAPTCHA fallback
        /// after its silent push did not come (FirebaseAuth Sources/Swift/AuthProvider/
        /// PhoneAuthProvider.swift: verifyClient, then reCAPTCHA when no push arrives in time) asks
        /// for its code with a reCAPTCHA token and nothing that names the push. It joins the one
        /// sign-in that sent a push and has no code yet, started within ``fallbackWindow``; with
        /// none, or several (sign-ins at once: which is whose cannot be told), it starts its own.
        func waitingForFallback(at time: Date) -> Int? {
            let waiting = flows.filter { flow in
                flow.outcome == .inProgress && flow.deviceToken != nil && flow.phoneNumber == nil
                    && time.timeIntervalSince(flow.started) <= FlowHistory.fallbackWindow
            }
            return waiting.count == 1 ? waiting[0].id : nil
        }
    }
    /// How long after its push a sign-in may continue with the reCAPTCHA fallback's code request.
    public static let fallbackWindow: TimeInterval = 600
    private let state = Mutex(State())

    public init(capacity: Int = 1000) { self.capacity = max(1, capacity) }

    public var all: [InspectedFlow] { state.withLock { $0.flows } }
    public func flow(id: Int) -> InspectedFlow? { state.withLock { $0.flows.first { $0.id == id } } }

    /// The backend's observer; with a fleet, each node's events in the fleet's order (``FleetFlowOrder``).
    public func record(_ event: BackendEvent, at time: Date = Date(), node: String? = nil) {
        let line = event.line
        let step = InspectedFlow.Step(time: time, from: line.from, to: line.to, message: line.text, bad: line.bad, event: event.kind, node: node)
        state.withLock { state in
            func start() -> Int {
                let id = state.nextID
                state.nextID += 1
                var steps: [InspectedFlow.Step] = []
                if let config = state.pendingConfig, time.timeIntervalSince(config.time) < 10 { steps.append(config) }
                state.pendingConfig = nil
                state.flows.append(InspectedFlow(id: id, started: steps.first?.time ?? time, phoneNumber: nil, uid: nil, proof: nil, secondFactor: false,
                                                 path: nil, outcome: .inProgress, cause: nil, fix: nil, steps: steps))
                if state.flows.count > capacity { state.flows.removeFirst(state.flows.count - capacity) }
                state.lastActive = id
                return id
            }
            /// Adds the event's step to flow `id` (none: the event belongs to no flow in view).
            func add(to id: Int?, _ change: (inout InspectedFlow) -> Void = { _ in }) {
                guard let id, let index = state.flows.lastIndex(where: { $0.id == id }) else { return }
                state.flows[index].steps.append(step)
                change(&state.flows[index])
                state.lastActive = id
            }
            func refused(_ flow: inout InspectedFlow, _ outcome: FlowOutcome, _ diagnosis: Diagnosis) {
                flow.outcome = outcome
                flow.cause = diagnosis.cause
                flow.fix = diagnosis.fix
            }
            switch event {
            case .recaptchaConfig:
                state.pendingConfig = step
            case .pushing(let token, _, let receipt):
                let id = start()
                add(to: id) { $0.deviceToken = token }
                state.byReceipt[receipt] = id
            case .verifyClient(let token, let environment, let receipt, let push):
                add(to: state.byReceipt[receipt]) { flow in
                    guard !push.accepted else { return }
                    let diagnosis = if let status = push.status {
                        PushRefusals.diagnose(token: token, sentTo: environment, reason: push.reason ?? APNsReason(rawValue: "HTTP \(status)"), detail: nil)
                    } else {
                        PushRefusals.unanswered(token: token, sentTo: environment, error: push.error ?? "no answer")
                    }
                    flow.cause = diagnosis.cause
                    flow.fix = diagnosis.fix
                }
            case .codeRequested(let phone, let proof, let receipt, let endpoint):
                let id = receipt.flatMap { state.byReceipt[$0] } ?? (proof == .silentPush ? nil : state.waitingForFallback(at: time)) ?? start()
                let secondFactor = BackendOperation.secondFactorOperations.contains(endpoint)
                add(to: id) { flow in
                    flow.phoneNumber = phone
                    flow.proof = proof
                    flow.secondFactor = secondFactor
                    flow.path = proof.description + (secondFactor ? " (second factor)" : "")
                }
                state.byPhone[phone] = id
            case .smsSent(let message):
                add(to: state.byPhone[message.phoneNumber])
            case .codeReused(let phone):
                add(to: state.byPhone[phone])
            case .signedIn(let uid, let phone, _):
                let id = state.byPhone[phone] ?? start()
                add(to: id) { flow in
                    flow.uid = uid
                    flow.phoneNumber = phone
                    flow.outcome = .signedIn
                }
                state.byUID[uid] = id
            case .appleSignIn(let uid, _, _, let linked):
                let id = start()
                add(to: id) { flow in
                    flow.uid = uid
                    flow.path = "Sign in with Apple"
                    flow.outcome = linked ? .linked : .signedIn
                }
                state.byUID[uid] = id
            case .accountSignIn(let uid, let provider, _, _):
                let id = start()
                add(to: id) { flow in
                    flow.uid = uid
                    flow.path = switch provider {
                    case .password: "email and password"
                    case .emailLink: "email link"
                    default: provider.rawValue
                    }
                    flow.outcome = .signedIn
                }
                state.byUID[uid] = id
            case .emailSent:
                break
            case .secondFactorRequired(let uid, _):
                let id = state.byUID[uid].flatMap { existing in state.flows.last { $0.id == existing && $0.outcome == .inProgress }?.id } ?? start()
                add(to: id) { flow in
                    flow.uid = uid
                    flow.outcome = .secondFactorRequired
                }
                state.byUID[uid] = id
            case .secondFactorEnrolled(let uid, _, let phone):
                add(to: state.byPhone[phone] ?? state.byUID[uid]) { flow in
                    flow.uid = uid
                    flow.outcome = .secondFactorEnrolled
                }
            case .secondFactorSignedIn(let uid, _):
                add(to: state.byUID[uid] ?? state.lastActive) { $0.outcome = .signedIn }
            case .secondFactorWithdrawn(let uid, _):
                // A step of the user's latest sign-in; it does not change how that ended.
                add(to: state.byUID[uid])
            case .recaptchaAssessment, .faultAnswered, .signInMethodsAsked:
                add(to: state.lastActive)
            case .rejected(let endpoint, let error, let cause):
                add(to: state.lastActive ?? start()) { flow in
                    refused(&flow, .refused(error.code),
                            BackendRefusals.diagnose(endpoint: endpoint.rawValue, error: error.code, detail: error.detail, cause: cause, message: error.message))
                }
            case .frontendRefused(let path, let error):
                add(to: state.lastActive ?? start()) { flow in
                    refused(&flow, .refusedByFrontEnd(error.code),
                            BackendRefusals.diagnose(endpoint: BackendEvent.endpoint(path), error: error.code, detail: error.detail, cause: nil,
                                                     message: error.message))
                }
            case .accountDeleted, .appleRevoked:
                break
            }
        }
    }
}

/// A fleet's backend events in the order they happened, for ``FlowHistory``, which groups steps
/// into sign-ins as they come and so needs a sign-in's steps in order.
///
/// The store gives them in the order they were kept; each node keeps its events in batches after
/// its answers, so one node's later event can be kept before another's earlier one. Each event
/// carries the fleet position its node had reached (``FleetBackendEvent/position``): a node that
/// checks a code another node sent has replayed that node's change first, so its events carry a
/// higher position. Events wait here ``settle`` seconds after they are read (on the inspector's
/// clock, so that the nodes' clocks need not agree), and leave sorted by position, then time.
public final class FleetFlowOrder: Sendable {
    /// How long an event waits for earlier ones that were kept later.
    public static let settle: TimeInterval = 1
    private let pending = Mutex<[(event: FleetBackendEvent, read: Date)]>([])

    public init() {}

    /// Takes the events just read (at `now`), and returns those that have waited ``settle``, in order.
    public func release(adding events: [FleetBackendEvent], now: Date) -> [FleetBackendEvent] {
        pending.withLock { pending in
            pending += events.map { ($0, now) }
            let ready = pending.filter { now.timeIntervalSince($0.read) >= Self.settle }.map(\.event)
            pending.removeAll { now.timeIntervalSince($0.read) >= Self.settle }
            return ready.sorted { ($0.position, $0.time, $0.sequence) < ($1.position, $1.time, $1.sequence) }
        }
    }
}
