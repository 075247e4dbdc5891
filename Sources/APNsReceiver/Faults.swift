import APNsWire
import Foundation
import Synchronization

/// A fault the receiver injects, for testing how providers and apps cope.
public enum Fault: Sendable, Hashable, CustomStringConvertible {
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

    public var description: String {
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
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let spec = try container.decode(String.self)
        do throws(ReceiverError) { self = try FaultRule(parsing: spec).fault } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a fault spec: \(error.message)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// One rule of a fault plan: which pushes it applies to and how many times.
public struct FaultRule: Sendable, Hashable, CustomStringConvertible {
    public var fault: Fault
    /// Only pushes to this token; `nil`: any.
    public var deviceToken: DeviceToken?
    /// Only this environment; `nil`: both.
    public var environment: APNsEnvironment?
    /// How many pushes it applies to; `nil`: all.
    public var count: Int?
    /// The share of matching pushes it applies to (0 < p ≤ 1); `nil`: every one.
    public var probability: Double?

    public init(_ fault: Fault, deviceToken: DeviceToken? = nil, environment: APNsEnvironment? = nil, count: Int? = nil,
                probability: Double? = nil) {
        self.fault = fault
        self.deviceToken = deviceToken
        self.environment = environment
        self.count = count
        self.probability = probability
    }

    /// Parses `FAULT[,token=HEX][,environment=sandbox|production][,count=N]` where FAULT is
    /// `delay=MS`, `drop`, `reject=REASON`, `goaway=REASON` or `refuse-stream`.
    public init(parsing spec: String) throws(ReceiverError) {
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

    public var description: String {
        var text = fault.description
        if let deviceToken { text += ",token=\(deviceToken.hex)" }
        if let environment { text += ",environment=\(environment)" }
        if let count { text += ",count=\(count)" }
        if let probability { text += ",probability=\(probability)" }
        return text
    }
}

/// The faults a receiver injects. The first matching rule with uses left applies to a push.
public final class FaultPlan: Sendable {
    private let rules: Mutex<[FaultRule]>

    public init(_ rules: [FaultRule] = []) { self.rules = Mutex(rules) }

    public func add(_ rule: FaultRule) { rules.withLock { $0.append(rule) } }
    public func clear() { rules.withLock { $0.removeAll() } }
    /// Puts `rules` in place of the current ones, at once.
    public func replace(with new: [FaultRule]) { rules.withLock { $0 = new } }
    public var current: [FaultRule] { rules.withLock { $0 } }

    /// The fault for a push to `token` in `environment`, using up one of the rule's count.
    func take(token: String, environment: APNsEnvironment) -> Fault? {
        rules.withLock { rules in
            guard !rules.isEmpty else { return nil }
            for index in rules.indices {
                let rule = rules[index]
                if let wanted = rule.deviceToken, wanted.hex != token.lowercased() { continue }
                if let wanted = rule.environment, wanted != environment { continue }
                if let probability = rule.probability, Double.random(in: 0..<1) >= probability { continue }
                if let count = rule.count {
                    if count <= 1 { rules.remove(at: index) } else { rules[index].count = count - 1 }
                }
                return rule.fault
            }
            return nil
        }
    }
}
