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
package struct InspectedFlow: Codable, Sendable, Hashable {
    package struct Step: Codable, Sendable, Hashable {
        package var time: Date
        package var from: BackendEvent.Party
        package var to: BackendEvent.Party?
        package var message: String
        package var bad: Bool
        /// The ``BackendEvent`` case it comes from (`codeRequested`).
        package var event: String
        /// The backend node of the fleet that made it (`--node-name`); `nil` without a fleet.
        package var node: String?
    }
    package var id: Int
    /// The backend's ID of the sign-in (``SignInID``), which every one of its events carries.
    package var signIn: String
    package var started: Date
    package var phoneNumber: String?
    package var uid: String?
    /// How the app proved itself for a code; `nil` until one was asked for, and for Sign in
    /// with Apple.
    package var proof: AppVerification?
    /// Whether the code was for a second factor.
    package var secondFactor: Bool
    /// The path in words: the proof's (`silent push`, `… (second factor)`), or `Sign in with Apple`.
    package var path: String?
    /// How it ended so far.
    package var outcome: FlowOutcome
    package var cause: String?
    package var fix: String?
    package var steps: [Step]
    /// The device token (hex) its silent push went to, when it had one.
    package var deviceToken: String? = nil

    /// The sign-in as a sequence diagram (``SequenceDiagram``, as `authsim run --diagram` draws
    /// runs): app, backend and APNs as they took part, milliseconds from the first step.
    package var diagram: String {
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
package enum FlowOutcome: Sendable, Hashable, Codable, CustomStringConvertible {
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

    package var description: String {
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
    package var error: IdentityToolkitError.Code? {
        switch self {
        case .refused(let code), .refusedByFrontEnd(let code): code
        default: nil
        }
    }
}

/// The backend's sign-ins, from its events: each event that is a step of a sign-in carries its
/// ``SignInID`` (the backend's rules give it to the call that starts a sign-in and carry it
/// through the receipt, the session, the pending credential and the reCAPTCHA fallback's token),
/// and the steps of one ID are one row. The one event no sign-in names, the app's read of the
/// project's reCAPTCHA config (FirebaseAuth 12.19 reads it before its first code request, and at
/// launch with `initializeRecaptchaConfig`), is shown as the first step of the sign-in that starts
/// within 10 seconds after it. Other events that are no sign-in's step (an account deleted, the
/// sign-in methods of an address) are not shown here. The newest ``capacity`` are kept.
package final class FlowHistory: Sendable {
    package let capacity: Int
    private struct State {
        var flows: [InspectedFlow] = []
        var nextID = 1
        var bySignIn: [SignInID: Int] = [:]
        /// A recaptchaConfig answer waiting for the flow it starts.
        var pendingConfig: InspectedFlow.Step?
    }
    private let state = Mutex(State())

    package init(capacity: Int = 1000) { self.capacity = max(1, capacity) }

    package var all: [InspectedFlow] { state.withLock { $0.flows } }
    package func flow(id: Int) -> InspectedFlow? { state.withLock { $0.flows.first { $0.id == id } } }

    /// The backend's observer (an event, and the sign-in it is a step of); with a fleet, each
    /// node's events in the fleet's order (``FleetFlowOrder``).
    package func record(_ event: BackendEvent, signIn: SignInID?, at time: Date = Date(), node: String? = nil) {
        let line = event.line
        let step = InspectedFlow.Step(time: time, from: line.from, to: line.to, message: line.text, bad: line.bad, event: event.kind, node: node)
        state.withLock { state in
            guard let signIn else {
                if case .recaptchaConfig = event { state.pendingConfig = step }
                return
            }
            let index: Int
            if let id = state.bySignIn[signIn], let existing = state.flows.lastIndex(where: { $0.id == id }) {
                index = existing
            } else {
                let id = state.nextID
                state.nextID += 1
                var steps: [InspectedFlow.Step] = []
                if let config = state.pendingConfig, time.timeIntervalSince(config.time) < 10 { steps.append(config) }
                state.pendingConfig = nil
                state.flows.append(InspectedFlow(id: id, signIn: signIn.rawValue, started: steps.first?.time ?? time, phoneNumber: nil, uid: nil,
                                                 proof: nil, secondFactor: false, path: nil, outcome: .inProgress, cause: nil, fix: nil, steps: steps))
                state.bySignIn[signIn] = id
                if state.flows.count > capacity {
                    for gone in state.flows.prefix(state.flows.count - capacity) { state.bySignIn[SignInID(rawValue: gone.signIn)] = nil }
                    state.flows.removeFirst(state.flows.count - capacity)
                }
                index = state.flows.count - 1
            }
            state.flows[index].steps.append(step)
            Self.apply(event, to: &state.flows[index])
        }
    }

    /// What `event` tells of its sign-in: who, how the app proved itself, how it ended and why.
    private static func apply(_ event: BackendEvent, to flow: inout InspectedFlow) {
        func refused(_ outcome: FlowOutcome, _ diagnosis: Diagnosis) {
            flow.outcome = outcome
            flow.cause = diagnosis.cause
            flow.fix = diagnosis.fix
        }
        switch event {
        case .pushing(let token, _, _):
            flow.deviceToken = token
        case .verifyClient(let token, let environment, _, let push):
            guard !push.accepted else { return }
            let diagnosis = if let status = push.status {
                PushRefusals.diagnose(token: token, sentTo: environment, reason: push.reason ?? APNsReason(rawValue: "HTTP \(status)"), detail: nil)
            } else {
                PushRefusals.unanswered(token: token, sentTo: environment, error: push.error ?? "no answer")
            }
            flow.cause = diagnosis.cause
            flow.fix = diagnosis.fix
        case .codeRequested(let phone, let proof, _, let endpoint):
            let secondFactor = BackendOperation.secondFactorOperations.contains(endpoint)
            flow.phoneNumber = phone
            flow.proof = proof
            flow.secondFactor = secondFactor
            flow.path = proof.description + (secondFactor ? " (second factor)" : "")
        case .signedIn(let uid, let phone, _):
            flow.uid = uid
            flow.phoneNumber = phone
            flow.outcome = .signedIn
        case .appleSignIn(let uid, _, _, let linked):
            flow.uid = uid
            flow.path = "Sign in with Apple"
            flow.outcome = linked ? .linked : .signedIn
        case .accountSignIn(let uid, let provider, _, _):
            flow.uid = uid
            flow.path = switch provider {
            case .password: "email and password"
            case .emailLink: "email link"
            default: provider.rawValue
            }
            flow.outcome = .signedIn
        case .secondFactorRequired(let uid, _):
            flow.uid = uid
            flow.outcome = .secondFactorRequired
        case .secondFactorEnrolled(let uid, _, _):
            flow.uid = uid
            flow.outcome = .secondFactorEnrolled
        case .secondFactorSignedIn(let uid, _):
            flow.uid = uid
            flow.outcome = .signedIn
        case .rejected(let endpoint, let error, let cause):
            refused(.refused(error.code),
                    BackendRefusals.diagnose(endpoint: endpoint.rawValue, error: error.code, detail: error.detail, cause: cause, message: error.message))
        case .frontendRefused(let path, let error):
            refused(.refusedByFrontEnd(error.code),
                    BackendRefusals.diagnose(endpoint: BackendEvent.endpoint(path), error: error.code, detail: error.detail, cause: nil, message: error.message))
        case .smsSent, .codeReused, .recaptchaAssessment, .faultAnswered, .recaptchaConfig, .signInMethodsAsked, .emailSent, .emailLinkGenerated, .providerPage,
             .secondFactorWithdrawn, .accountDeleted, .appleRevoked:
            break
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
package final class FleetFlowOrder: Sendable {
    /// How long an event waits for earlier ones that were kept later.
    package static let settle: TimeInterval = 1
    private let pending = Mutex<[(event: FleetBackendEvent, read: Date)]>([])

    package init() {}

    /// Takes the events just read (at `now`), and returns those that have waited ``settle``, in order.
    package func release(adding events: [FleetBackendEvent], now: Date) -> [FleetBackendEvent] {
        pending.withLock { pending in
            pending += events.map { ($0, now) }
            let ready = pending.filter { now.timeIntervalSince($0.read) >= Self.settle }.map(\.event)
            pending.removeAll { now.timeIntervalSince($0.read) >= Self.settle }
            return ready.sorted { ($0.position, $0.time, $0.sequence) < ($1.position, $1.time, $1.sequence) }
        }
    }
}
