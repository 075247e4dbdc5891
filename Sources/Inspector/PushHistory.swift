import APNsReceiver
import APNsWire
import Diagnostics
import Foundation
import Synchronization
import Utilities

/// One push as the inspector shows it: what the receiver answered, what the request carried,
/// its provider token decoded, and for a refusal the cause and fix in `authsim explain`'s words.
public struct InspectedPush: Codable, Sendable, Hashable {
    /// The token a provider token's header and claims hold, and what the receiver made of it.
    public struct ProviderToken: Codable, Sendable, Hashable {
        public var alg: String?
        public var kid: String?
        public var iss: String?
        public var iat: Int?
        /// `verified: …` for an accepted push; the refusal's words otherwise.
        public var verdict: String
    }
    public struct Header: Codable, Sendable, Hashable {
        public var name: String
        public var value: String
    }
    /// Increasing, from 1: the push's place in the history (`GET /api/v1/pushes/{id}`).
    public var id: Int
    public var time: Date
    public var environment: APNsEnvironment
    public var apnsID: String
    public var deviceToken: String
    public var topic: String?
    public var pushType: String?
    public var priority: Int?
    public var expiration: Int?
    public var collapseID: String?
    public var status: Int
    public var reason: String?
    public var detail: String?
    /// A fault rule made the receiver answer so (or drop the push).
    public var injected: Bool
    /// Answered 200 but never delivered (a drop fault).
    public var dropped: Bool
    /// The payload as received (text; JSON when it parsed).
    public var payload: String
    public var headers: [Header]
    public var providerToken: ProviderToken?
    public var cause: String?
    public var fix: String?
}

/// What the inspector keeps of the receiver's pushes: the newest ``capacity`` (the delivery and
/// rejection logs keep everything; this is the view), counters for `/metrics`, and the live
/// subscribers of `/api/v1/events`. One lock: the receiver's event loops only append under it.
public final class PushHistory: Sendable {
    public let capacity: Int
    private let registry: DeviceRegistry?

    struct CounterKey: Hashable { let environment: String; let status: Int; let reason: String }
    private struct State {
        var entries: [InspectedPush] = []
        /// Index of the oldest entry once the buffer is full (a ring).
        var start = 0
        var nextID = 1
        var droppedFromView = 0
        var counters: [CounterKey: Int] = [:]
        var subscribers: [UUID: AsyncStream<InspectedPush>.Continuation] = [:]
    }
    private let state = Mutex(State())

    /// - Parameter registry: the receiver's devices, to tell a token-type mismatch from a bad token.
    public init(capacity: Int = 10_000, registry: DeviceRegistry? = nil) {
        self.capacity = max(1, capacity)
        self.registry = registry
    }

    /// The receiver's observer: records accepted and refused pushes.
    public func record(_ event: ReceiverEvent) {
        switch event {
        case .accepted(let push): add(Self.inspect(push))
        case .refused(let request): add(inspect(request))
        default: break
        }
    }

    private func add(_ made: (Int) -> InspectedPush) {
        let subscribers = state.withLock { state -> ([AsyncStream<InspectedPush>.Continuation], InspectedPush) in
            let push = made(state.nextID)
            state.nextID += 1
            state.counters[CounterKey(environment: push.environment.rawValue, status: push.status, reason: push.reason ?? ""), default: 0] += 1
            if state.entries.count < capacity {
                state.entries.append(push)
            } else {
                state.entries[state.start] = push
                state.start = (state.start + 1) % capacity
                state.droppedFromView += 1
            }
            return (Array(state.subscribers.values), push)
        }
        for subscriber in subscribers.0 { subscriber.yield(subscribers.1) }
    }

    /// The pushes in view, oldest first.
    public var all: [InspectedPush] {
        state.withLock { Array($0.entries[$0.start...]) + Array($0.entries[..<$0.start]) }
    }

    public func push(id: Int) -> InspectedPush? {
        state.withLock { state in
            // IDs are consecutive: the one asked for is at a known place, if still in view.
            guard let first = (state.entries.isEmpty ? nil : state.entries[state.start].id), id >= first, id < state.nextID else { return nil }
            return state.entries[(state.start + (id - first)) % state.entries.count]
        }
    }

    /// Forgets the pushes in view (the logs keep them); counters stay, as Prometheus wants.
    public func clear() {
        state.withLock { state in
            state.entries.removeAll()
            state.start = 0
        }
    }

    /// Pushes answered, by environment, status and reason (since start).
    var counters: [CounterKey: Int] { state.withLock { $0.counters } }
    var droppedFromView: Int { state.withLock { $0.droppedFromView } }

    /// Every push recorded from now on, until the stream is dropped or ``finishSubscribers()``.
    public func subscribe() -> AsyncStream<InspectedPush> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<InspectedPush>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        state.withLock { $0.subscribers[id] = continuation }
        return stream
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Ends every live stream (so that a graceful shutdown does not wait for them).
    public func finishSubscribers() {
        let all = state.withLock { state -> [AsyncStream<InspectedPush>.Continuation] in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in all { continuation.finish() }
    }

    // MARK: Making entries

    static func inspect(_ push: AcceptedPush) -> (Int) -> InspectedPush {
        { id in
            InspectedPush(id: id, time: push.receivedAt, environment: push.environment, apnsID: push.apnsID, deviceToken: push.deviceToken.hex,
                          topic: push.topic, pushType: push.pushType.rawValue, priority: push.priority.rawValue, expiration: push.expiration,
                          collapseID: push.collapseID, status: 200, reason: nil, detail: nil, injected: push.dropped, dropped: push.dropped,
                          payload: String(decoding: push.payload, as: UTF8.self), headers: [],
                          providerToken: .init(alg: "ES256", kid: push.keyID, iss: push.teamID, iat: nil,
                                               verdict: "verified: signed by key \(push.keyID) of team \(push.teamID), which push-receiver trusts for \(push.environment)"),
                          cause: nil, fix: nil)
        }
    }

    func inspect(_ request: RefusedRequest) -> (Int) -> InspectedPush {
        let rejection = request.rejection
        let entry = RejectionLog.Entry(time: request.receivedAt, environment: request.environment, apnsID: request.apnsID,
                                       deviceToken: request.deviceToken.lowercased(), status: rejection.status,
                                       reason: rejection.reason.rawValue, detail: rejection.detail)
        let diagnosis = ReceiverStateExplainer.explain(entry, registry: registry ?? DeviceRegistry())
        let token = Self.providerToken(request.header("authorization"), rejection: rejection)
        return { id in
            InspectedPush(id: id, time: request.receivedAt, environment: request.environment, apnsID: request.apnsID,
                          deviceToken: request.deviceToken.lowercased(), topic: request.header("apns-topic"), pushType: request.header("apns-push-type"),
                          priority: request.header("apns-priority").flatMap(Int.init), expiration: request.header("apns-expiration").flatMap(Int.init),
                          collapseID: request.header("apns-collapse-id"), status: rejection.status, reason: rejection.reason.rawValue,
                          detail: rejection.detail, injected: request.injected, dropped: false,
                          payload: String(decoding: request.payload, as: UTF8.self),
                          headers: request.headers.map { InspectedPush.Header(name: $0.name, value: $0.name == "authorization" ? Self.redacted($0.value) : $0.value) },
                          providerToken: token,
                          cause: request.injected ? "a fault rule made push-receiver answer \(rejection.status) \(rejection.reason.rawValue)" : diagnosis.cause,
                          fix: request.injected ? "clear the fault (DELETE /api/v1/faults, or the Faults page)" : diagnosis.fix)
        }
    }

    /// A bearer token with its signature cut: the header and claims stay readable.
    static func redacted(_ value: String) -> String {
        guard let last = value.lastIndex(of: ".") else { return value }
        return String(value[...last]) + "…"
    }

    /// The provider token's header and claims, and what the receiver made of them.
    static func providerToken(_ authorization: String?, rejection: PushRejection) -> InspectedPush.ProviderToken? {
        let tokenReasons: Set<APNsReason> = [.invalidProviderToken, .expiredProviderToken, .missingProviderToken, .tooManyProviderTokenUpdates]
        let verdict = tokenReasons.contains(rejection.reason)
            ? "refused: \(rejection.reason.rawValue): \(rejection.detail)"
            : "not what was refused (the answer is \(rejection.reason.rawValue))"
        guard let authorization else { return .init(alg: nil, kid: nil, iss: nil, iat: nil, verdict: verdict) }
        let jwt = authorization.lowercased().hasPrefix("bearer ") ? String(authorization.dropFirst(7)) : authorization
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        struct Header: Decodable { let alg: String?; let kid: String? }
        struct Claims: Decodable {
            let iss: String?
            let iat: Int?
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                iss = try? container.decode(String.self, forKey: .iss)
                iat = (try? container.decode(Int.self, forKey: .iat)) ?? (try? container.decode(String.self, forKey: .iat)).flatMap(Int.init)
            }
            enum CodingKeys: String, CodingKey { case iss, iat }
        }
        let header = parts.count > 0 ? Base64URL.decode(parts[0]).flatMap { try? JSONDecoder().decode(Header.self, from: Data($0)) } : nil
        let claims = parts.count > 1 ? Base64URL.decode(parts[1]).flatMap { try? JSONDecoder().decode(Claims.self, from: Data($0)) } : nil
        return .init(alg: header?.alg, kid: header?.kid, iss: claims?.iss, iat: claims?.iat, verdict: verdict)
    }
}
