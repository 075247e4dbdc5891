import APNsWire
import Foundation
import Synchronization

/// A fault the receiver injects, for testing how providers and apps cope.
package enum Fault: Sendable, Hashable, CustomStringConvertible {
    /// Answer (and deliver) only after this many milliseconds.
    case delay(milliseconds: Int)
    /// Answer 200 but never deliver: the push that never arrives.
    case drop
    /// Answer with this reason (and its status) without looking at the push.
    case reject(APNsReason)
    /// Send GOAWAY with `{"reason":…}` as debug data and close the connection.
    case goaway(APNsReason)
    /// Reset the stream with REFUSED_STREAM.
    case refuseStream

    /// Whether the push is refused (answered with an error, reset or cut off) rather than accepted.
    var refuses: Bool {
        switch self {
        case .delay, .drop: return false
        case .reject, .goaway, .refuseStream: return true
        }
    }

    package var description: String {
        switch self {
        case .delay(let ms): return "delay=\(ms)"
        case .drop: return "drop"
        case .reject(let reason): return "reject=\(reason)"
        case .goaway(let reason): return "goaway=\(reason)"
        case .refuseStream: return "refuse-stream"
        }
    }
}

/// A fault as text: its spec, as `push-receiver --fault` takes it (`drop`, `delay=250`).
extension Fault: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let spec = try container.decode(String.self)
        do throws(ReceiverError) { self = try FaultRule(parsing: spec).fault } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a fault spec: \(error.message)")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// One rule of a fault plan: which pushes it applies to and how many times.
package struct FaultRule: Sendable, Hashable, CustomStringConvertible {
    package var fault: Fault
    /// Only pushes to this token; `nil`: any.
    package var deviceToken: DeviceToken?
    /// Only this environment; `nil`: both.
    package var environment: APNsEnvironment?
    /// How many pushes it applies to; `nil`: all.
    package var count: Int?
    /// The share of matching pushes it applies to (0 < p ≤ 1); `nil`: every one.
    package var probability: Double?

    package init(_ fault: Fault, deviceToken: DeviceToken? = nil, environment: APNsEnvironment? = nil, count: Int? = nil,
                probability: Double? = nil) {
        self.fault = fault
        self.deviceToken = deviceToken
        self.environment = environment
        self.count = count
        self.probability = probability
    }

    /// Parses `FAULT[,token=HEX][,environment=sandbox|production][,count=N]` where FAULT is
    /// `delay=MS`, `drop`, `reject=REASON`, `goaway=REASON` or `refuse-stream`.
    package init(parsing spec: String) throws(ReceiverError) {
        var fault: Fault?
        var token: DeviceToken?
        var environment: APNsEnvironment?
        var count: Int?
        var probability: Double?
        for part in spec.split(separator: ",").map(String.init) {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            let name = pieces[0]
            let value = pieces.count > 1 ? pieces[1] : nil
            func reason() throws(ReceiverError) -> APNsReason {
                let reason = APNsReason(wire: value ?? "")
                guard reason.status != nil else {
                    throw ReceiverError(.configuration, "\(name)=\(value ?? "") is not an APNs reason; one of: \(APNsReason.all.map(\.rawValue).joined(separator: ", "))")
                }
                return reason
            }
            switch name {
            case "delay":
                guard let ms = value.flatMap(Int.init), ms >= 0 else {
                    throw ReceiverError(.configuration, "delay needs milliseconds: delay=250")
                }
                fault = .delay(milliseconds: ms)
            case "drop": fault = .drop
            case "reject": fault = .reject(try reason())
            case "goaway": fault = .goaway(try reason())
            case "refuse-stream": fault = .refuseStream
            case "token":
                guard let parsed = value.flatMap(DeviceToken.init(hex:)) else {
                    throw ReceiverError(.configuration, "token=\(value ?? "") is not an even-length hex device token")
                }
                token = parsed
            case "environment":
                guard let parsed = value.flatMap(APNsEnvironment.init(rawValue:)) else {
                    throw ReceiverError(.configuration, "environment must be sandbox or production")
                }
                environment = parsed
            case "count":
                guard let parsed = value.flatMap(Int.init), parsed > 0 else {
                    throw ReceiverError(.configuration, "count must be a positive number")
                }
                count = parsed
            case "probability":
                guard let parsed = value.flatMap(Double.init), parsed > 0, parsed <= 1 else {
                    throw ReceiverError(.configuration, "probability must be a number above 0 and at most 1")
                }
                probability = parsed
            default:
                throw ReceiverError(.configuration, "unknown fault part \"\(part)\" in \"\(spec)\"; faults: delay=MS, drop, reject=REASON, goaway=REASON, refuse-stream; filters: token=HEX, environment=ENV, count=N, probability=P")
            }
        }
        guard let fault else {
            throw ReceiverError(.configuration, "\"\(spec)\" names no fault: delay=MS, drop, reject=REASON, goaway=REASON or refuse-stream")
        }
        self.init(fault, deviceToken: token, environment: environment, count: count, probability: probability)
    }

    package var description: String {
        var text = fault.description
        if let deviceToken { text += ",token=\(deviceToken.hex)" }
        if let environment { text += ",environment=\(environment)" }
        if let count { text += ",count=\(count)" }
        if let probability { text += ",probability=\(probability)" }
        return text
    }
}

/// A change to a fault plan: what `--fault`, `push-receiver faults` and the inspector's Faults
/// page ask of it.
package enum FaultPlanChange: Sendable, Hashable {
    /// Appends a rule.
    case add(FaultRule)
    /// Puts these rules in place of the current ones, at once.
    case replace([FaultRule])
    /// Removes every rule.
    case clear
}

/// A fleet's fault plan as of one version of the fleet's registry (the plan shares its versions):
/// the rules, each counted rule with the uses it had left when read.
package struct FaultPlanRecord: Sendable, Hashable {
    package var rules: [FaultRule]
    package var version: Int64

    package init(rules: [FaultRule], version: Int64) {
        self.rules = rules
        self.version = version
    }
}

/// One use of a counted rule of a fleet's plan, to be claimed in the store before it applies, so
/// that `count=N` applies to N pushes of the whole fleet.
package struct FaultClaim: Sendable, Hashable {
    /// The plan's version and the rule's place in it.
    package var planVersion: Int64
    package var position: Int
}

/// The faults a receiver injects. The first matching rule with uses left applies to a push.
///
/// A fleet's plan (``init(shared:)``) is a copy of the one in the fleet's store, which every
/// receiver of the fleet applies: its changes go to the store first (``change(_:)``); a counted
/// rule's use is claimed in the store before it applies (``claim(_:)``), so that `count=N`
/// means N pushes fleet-wide; the copy is kept current with the device registry's copy, whose
/// versions it shares.
package final class FaultPlan: Sendable {
    private struct State {
        var rules: [FaultRule]
        /// A fleet's copy: the plan's version, and its counted rules this receiver found used up.
        var version: Int64 = 0
        var spent: Set<Int> = []
    }
    private let state: Mutex<State>
    /// The fleet's store this plan is a copy of; `nil` for a receiver's own plan.
    package let shared: (any SharedDeviceRegistry)?

    package init(_ rules: [FaultRule] = []) {
        state = Mutex(State(rules: rules))
        shared = nil
    }

    /// A copy of a fleet's plan, empty until the registry's copy reads the store
    /// (``DeviceRegistry/init(shared:)`` makes it).
    init(shared: any SharedDeviceRegistry) {
        state = Mutex(State(rules: []))
        self.shared = shared
    }

    /// Appends a rule to a receiver's own plan (a fleet's changes through ``change(_:)``).
    package func add(_ rule: FaultRule) throws(ReceiverError) { try mutate { $0.append(rule) } }
    /// Removes every rule of a receiver's own plan.
    package func clear() throws(ReceiverError) { try mutate { $0.removeAll() } }
    /// Puts `rules` in place of a receiver's own plan's, at once.
    package func replace(with new: [FaultRule]) throws(ReceiverError) { try mutate { $0 = new } }

    private func mutate(_ change: (inout [FaultRule]) -> Void) throws(ReceiverError) {
        if let shared {
            throw ReceiverError(.configuration, "the fleet's fault plan (\(shared.address)) changes through change(_:), which writes to the store first")
        }
        state.withLock { change(&$0.rules) }
    }

    /// Makes `change`: in a fleet's store first (this copy has it when this returns; the other
    /// receivers when the store tells them), else at once.
    package func change(_ change: FaultPlanChange) async throws(ReceiverError) {
        guard let shared else {
            switch change {
            case .add(let rule): try add(rule)
            case .replace(let rules): try replace(with: rules)
            case .clear: try clear()
            }
            return
        }
        install(try await shared.write(change))
    }

    /// The rules, each counted rule with the uses left (a fleet's: as the store has them now).
    package func rules() async throws(ReceiverError) -> [FaultRule] {
        guard let shared else { return current }
        let record = try await shared.faultPlan()
        install(record)
        return record.rules.filter { $0.count != 0 }
    }

    /// The rules as this copy has them (a fleet's counts as of the copy's last read or claim).
    package var current: [FaultRule] {
        state.withLock { state in
            state.rules.enumerated().compactMap { index, rule in state.spent.contains(index) ? nil : rule }
        }
    }

    /// The copy's version of a fleet's plan.
    var version: Int64 { state.withLock { $0.version } }

    /// Puts a fleet's plan in place, when newer than the copy's.
    func install(_ record: FaultPlanRecord) {
        state.withLock { state in
            guard record.version > state.version || (record.version == state.version && record.rules != state.rules) else { return }
            if record.version > state.version { state.spent = [] }
            state.rules = record.rules
            state.version = record.version
            for (index, rule) in record.rules.enumerated() where rule.count == 0 { state.spent.insert(index) }
        }
    }

    /// What ``take(token:environment:)`` found: the fault (if any), the plan's version it was read
    /// from, and for a fleet's counted rule, the use to claim in the store before it applies.
    struct Take {
        let fault: Fault?
        let planVersion: Int64
        let claim: FaultClaim?
    }

    /// The fault for a push to `token` in `environment`. A receiver's own plan uses up one of the
    /// rule's count at once; a fleet's copy leaves that to ``claim(_:)``.
    func take(token: String, environment: APNsEnvironment) -> Take {
        state.withLock { state in
            guard !state.rules.isEmpty else { return Take(fault: nil, planVersion: state.version, claim: nil) }
            for index in state.rules.indices where !state.spent.contains(index) {
                let rule = state.rules[index]
                if let wanted = rule.deviceToken, wanted.hex != token.lowercased() { continue }
                if let wanted = rule.environment, wanted != environment { continue }
                if let probability = rule.probability, Double.random(in: 0..<1) >= probability { continue }
                if let count = rule.count {
                    if shared != nil {
                        return Take(fault: rule.fault, planVersion: state.version, claim: FaultClaim(planVersion: state.version, position: index))
                    }
                    if count <= 1 { state.rules.remove(at: index) } else { state.rules[index].count = count - 1 }
                }
                return Take(fault: rule.fault, planVersion: state.version, claim: nil)
            }
            return Take(fault: nil, planVersion: state.version, claim: nil)
        }
    }

    /// Claims one use of a fleet's counted rule in the store. False when none is left (used up
    /// by other pushes, or the plan changed since): this copy then skips the rule until the plan
    /// changes.
    func claim(_ claim: FaultClaim) async throws(ReceiverError) -> Bool {
        guard let shared else { return true }
        let left = try await shared.claim(claim)
        state.withLock { state in
            guard state.version == claim.planVersion, state.rules.indices.contains(claim.position) else { return }
            if let left {
                state.rules[claim.position].count = left
                if left == 0 { state.spent.insert(claim.position) }
            } else {
                state.spent.insert(claim.position)
            }
        }
        return left != nil
    }
}
