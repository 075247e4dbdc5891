import APNsReceiver
import APNsWire
import Causes
import DeviceLink
import Foundation
import Synchronization
import Utilities

/// One push as the inspector shows it: what the receiver answered, what the request carried,
/// its provider token decoded, and for a refusal the cause and fix in `authsim explain`'s words.
package struct InspectedPush: Codable, Sendable, Hashable {
    /// The token a provider token's header and claims hold, and what the receiver made of it.
    package struct ProviderToken: Codable, Sendable, Hashable {
        package var alg: String?
        package var kid: String?
        package var iss: String?
        package var iat: Int?
        /// `verified: …` for an accepted push; the refusal's words otherwise.
        package var verdict: String
    }
    package struct Header: Codable, Sendable, Hashable {
        package var name: String
        package var value: String
    }
    /// Increasing, from 1: the push's place in the history (`GET /api/v1/pushes/{id}`).
    package var id: Int
    package var time: Date
    package var environment: APNsEnvironment
    package var apnsID: String
    package var deviceToken: String
    package var topic: String?
    package var pushType: String?
    package var priority: Int?
    package var expiration: Int?
    package var collapseID: String?
    package var status: Int
    package var reason: String?
    package var detail: String?
    /// A fault rule made the receiver answer so (or drop the push).
    package var injected: Bool
    /// Answered 200 but never delivered (a drop fault).
    package var dropped: Bool
    /// The payload as received (text; JSON when it parsed).
    package var payload: String
    package var headers: [Header]
    package var providerToken: ProviderToken?
    package var cause: String?
    package var fix: String?
    /// What became of an accepted push on the device side (delivered, no device, lost, an alert).
    package var device: String?
    /// The receiver of the fleet that answered it (`--node-name`); `nil` for this process's own.
    package var node: String?
}

/// What the inspector keeps of the receiver's pushes: the newest ``capacity`` (the delivery and
/// rejection logs keep everything; this is the view), counters for `/metrics`, and the live
/// subscribers of `/api/v1/events`.
///
/// The receiver's event loops call ``record(_:)`` for every push, so it only stores what it is
/// given (an ``AcceptedPush`` or ``RefusedRequest``, no copy of the bytes) under one lock; a push
/// becomes an ``InspectedPush`` (strings, the diagnosis) when the API or a stream reads it.
package final class PushHistory: Sendable {
    package let capacity: Int
    private let registry: DeviceRegistry?

    enum Raw: Sendable {
        case accepted(AcceptedPush)
        case refused(RefusedRequest)
        /// Answered by another receiver of the fleet (its logs' row).
        case fleet(FleetPush)
    }
    struct Stored: Sendable {
        let id: Int
        let raw: Raw
    }
    struct CounterKey: Hashable { let environment: APNsEnvironment; let status: Int; let reason: String }
    private struct State {
        var entries: [Stored] = []
        /// Index of the oldest entry once the buffer is full (a ring).
        var start = 0
        var nextID = 1
        var droppedFromView = 0
        var accepted: [APNsEnvironment: Int] = [:]
        var refused: [CounterKey: Int] = [:]
        var subscribers: [ObjectIdentifier: Subscription] = [:]
        /// What the device side did with a push, by apns-id (the newest `capacity`).
        var deliveries: [PushIDKey: DeliveryNote] = [:]
        /// The pushes with a delivery note, oldest first: the oldest note goes when one more comes.
        var deliveryOrder: RecentItems<PushIDKey>
    }
    private let state: Mutex<State>

    /// - Parameter registry: the receiver's devices, to tell a token-type mismatch from a bad token.
    package init(capacity: Int = 10_000, registry: DeviceRegistry? = nil) {
        self.capacity = max(1, capacity)
        self.registry = registry
        state = Mutex(State(deliveryOrder: RecentItems(capacity: max(1, capacity))))
    }

    /// The receiver's observer: records accepted and refused pushes.
    package func record(_ event: ReceiverEvent) {
        switch event {
        case .accepted(let push): add(.accepted(push))
        case .refused(let request): add(.refused(request))
        default: break
        }
    }

    /// Pushes other receivers of the fleet answered (``FleetPush``, from the fleet's store): in
    /// view and on the live streams beside this receiver's, with their node; not in this
    /// process's counters, which each node's `/metrics` has of its own.
    package func record(fleet pushes: [FleetPush]) {
        for push in pushes { add(.fleet(push)) }
    }

    private func add(_ raw: Raw) {
        state.withLock { state in
            let stored = Stored(id: state.nextID, raw: raw)
            state.nextID += 1
            switch raw {
            case .accepted(let push): state.accepted[push.environment, default: 0] += 1
            case .refused(let request):
                state.refused[CounterKey(environment: request.environment, status: request.rejection.status,
                                         reason: request.rejection.reason.rawValue), default: 0] += 1
            case .fleet: break
            }
            if state.entries.count < capacity {
                state.entries.append(stored)
            } else {
                state.entries[state.start] = stored
                state.start = (state.start + 1) % capacity
                state.droppedFromView += 1
            }
            for subscriber in state.subscribers.values { subscriber.offer(stored) }
        }
    }


    /// What the device side did with the push `apnsID` (the device hub's observer).
    /// Keeps the note as a value; its sentence is written when the push is read.
    package func noteDelivery(apnsID: String, _ what: DeliveryNote) {
        state.withLock { state in
            let key = PushIDKey(apnsID)
            guard state.deliveries.updateValue(what, forKey: key) == nil else { return }
            if let evicted = state.deliveryOrder.append(key) { state.deliveries[evicted] = nil }
        }
    }

    /// The pushes in view, oldest first.
    package var all: [InspectedPush] {
        withDeliveries { state in Array(state.entries[state.start...]) + Array(state.entries[..<state.start]) }.map(inspect)
    }

    package func push(id: Int) -> InspectedPush? {
        withDeliveries { state -> [Stored] in
            // IDs are consecutive: the one asked for is at a known place, if still in view.
            guard let first = (state.entries.isEmpty ? nil : state.entries[state.start].id), id >= first, id < state.nextID else { return [] }
            return [state.entries[(state.start + (id - first)) % state.entries.count]]
        }.first.map(inspect)
    }

    /// The pushes `pick` chooses, each with what the device side did with it, read under one lock
    /// (not one per push).
    private func withDeliveries(_ pick: (State) -> [Stored]) -> [(Stored, DeliveryNote?)] {
        state.withLock { state in
            pick(state).map { stored in
                if case .accepted(let push) = stored.raw { (stored, state.deliveries[PushIDKey(push.apnsID)]) } else { (stored, nil) }
            }
        }
    }

    /// Forgets the pushes in view (the logs keep them); counters stay, as Prometheus wants.
    package func clear() {
        state.withLock { state in
            state.entries.removeAll()
            state.start = 0
        }
    }

    /// Pushes answered, by environment, status and reason (since start).
    var counters: [(environment: String, status: Int, reason: String, count: Int)] {
        state.withLock { state in
            state.accepted.map { ($0.key.rawValue, 200, "", $0.value) }
                + state.refused.map { ($0.key.environment.rawValue, $0.key.status, $0.key.reason, $0.value) }
        }
    }
    var droppedFromView: Int { state.withLock { $0.droppedFromView } }

    /// A live view of the pushes recorded from now on (``Subscription/next()``), until
    /// ``unsubscribe(_:)`` or ``finishSubscribers()``.
    package func subscribe() -> Subscription {
        let subscription = Subscription()
        state.withLock { $0.subscribers[ObjectIdentifier(subscription)] = subscription }
        return subscription
    }

    package func unsubscribe(_ subscription: Subscription) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: ObjectIdentifier(subscription)) }
        subscription.finish()
    }

    package var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Ends every live stream (so that a graceful shutdown does not wait for them).
    package func finishSubscribers() {
        let all = state.withLock { state -> [Subscription] in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscription in all { subscription.finish() }
    }

    /// One live stream's pushes not yet sent: at most ``limit``, the newest (a watcher that
    /// cannot keep up is told how many it missed, and never holds up the receiver).
    package final class Subscription: Sendable {
        package static let limit = 50
        private struct Pending {
            var items: [Stored] = []
            var skipped = 0
            var waiter: CheckedContinuation<Void, Never>?
            var finished = false
        }
        private let pending = Mutex(Pending())

        func offer(_ item: Stored) {
            let waiter = pending.withLock { pending -> CheckedContinuation<Void, Never>? in
                if pending.items.count >= Self.limit {
                    pending.items.removeFirst()
                    pending.skipped += 1
                }
                pending.items.append(item)
                defer { pending.waiter = nil }
                return pending.waiter
            }
            waiter?.resume()
        }

        func finish() {
            let waiter = pending.withLock { pending -> CheckedContinuation<Void, Never>? in
                pending.finished = true
                defer { pending.waiter = nil }
                return pending.waiter
            }
            waiter?.resume()
        }

        /// The pushes waiting (oldest first) and how many were skipped; waits for one;
        /// `nil` once finished.
        func next() async -> (items: [Stored], skipped: Int)? {
            while true {
                enum Step { case take([Stored], Int), done, wait }
                let step = pending.withLock { pending -> Step in
                    if !pending.items.isEmpty {
                        defer { pending.items.removeAll(keepingCapacity: true); pending.skipped = 0 }
                        return .take(pending.items, pending.skipped)
                    }
                    return pending.finished ? .done : .wait
                }
                switch step {
                case .take(let items, let skipped): return (items, skipped)
                case .done: return nil
                case .wait:
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let resumeNow = pending.withLock { pending -> Bool in
                            if !pending.items.isEmpty || pending.finished { return true }
                            pending.waiter = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                }
            }
        }
    }

    /// The next batch of a live stream, as the API shows them.
    package func next(of subscription: Subscription) async -> (pushes: [InspectedPush], skipped: Int)? {
        guard let (items, skipped) = await subscription.next() else { return nil }
        return (withDeliveries { _ in items }.map(inspect), skipped)
    }

    func inspect(_ stored: Stored, delivery: DeliveryNote?) -> InspectedPush {
        switch stored.raw {
        case .accepted(let push):
            var inspected = Self.inspect(push)(stored.id)
            inspected.device = push.dropped ? "dropped by a fault: answered 200, never delivered"
                : delivery?.text(for: push) ?? "on its way (or no device side in this process)"
            return inspected
        case .refused(let request): return inspect(request)(stored.id)
        case .fleet(let push): return inspect(push, id: stored.id)
        }
    }

    /// A push another receiver answered, from what the fleet's logs keep of it (no payload, no
    /// headers: those stay with the receiver that had them).
    func inspect(_ push: FleetPush, id: Int) -> InspectedPush {
        switch push.answer {
        case .delivered(let entry):
            return InspectedPush(id: id, time: RFC3339.date(entry.time) ?? Date(timeIntervalSince1970: 0), environment: entry.environment,
                                 apnsID: entry.apnsID, deviceToken: entry.deviceToken, topic: entry.topic, pushType: entry.pushType,
                                 priority: entry.priority, expiration: entry.expiration, collapseID: entry.collapseID, status: 200, reason: nil,
                                 detail: nil, injected: entry.dropped, dropped: entry.dropped,
                                 payload: "(\(entry.payloadBytes) bytes, answered by \(push.node): the fleet's log keeps no payloads)", headers: [],
                                 providerToken: .init(alg: "ES256", kid: entry.keyID, iss: entry.teamID, iat: nil,
                                                      verdict: "verified by \(push.node): signed by key \(entry.keyID) of team \(entry.teamID)"),
                                 cause: nil, fix: nil, device: "with the device side of \(push.node)", node: push.node)
        case .refused(let entry):
            let diagnosis = ReceiverStateExplainer.explain(entry, registry: registry ?? DeviceRegistry())
            return InspectedPush(id: id, time: entry.time, environment: entry.environment, apnsID: entry.apnsID, deviceToken: entry.deviceToken,
                                 topic: nil, pushType: nil, priority: nil, expiration: nil, collapseID: nil, status: entry.status,
                                 reason: entry.reason.rawValue, detail: entry.detail, injected: false, dropped: false,
                                 payload: "(answered by \(push.node): the fleet's rejection log keeps no payloads)", headers: [], providerToken: nil,
                                 cause: diagnosis.cause, fix: diagnosis.fix, device: nil, node: push.node)
        }
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
                          cause: nil, fix: nil, device: nil, node: nil)
        }
    }

    func inspect(_ request: RefusedRequest) -> (Int) -> InspectedPush {
        let rejection = request.rejection
        let entry = RejectionLog.Entry(time: request.receivedAt, environment: request.environment, apnsID: request.apnsID,
                                       deviceToken: request.deviceToken.lowercased(), status: rejection.status,
                                       reason: rejection.reason, detail: rejection.detail,
                                       providerTokenProblem: rejection.providerTokenProblem)
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
                          fix: request.injected ? "clear the fault (DELETE /api/v1/faults, or the Faults page)" : diagnosis.fix, device: nil, node: nil)
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

/// An `apns-id` as a dictionary key. A push's ID is a lowercase canonical UUID as a rule (the
/// receiver makes one when the provider gave none), and such an ID is kept as its 128 bits:
/// hashing and comparing 36-character strings, in a table that drops its oldest key for each new
/// one, took a sixth of `authsim serve`'s time per push. Any other text (an uppercase UUID, a
/// test's `p1`) is kept as it came, so two IDs are one key only when they are the same text.
struct PushIDKey: Hashable, Sendable {
    private enum Value: Hashable, Sendable {
        case uuid(UInt64, UInt64)
        case text(String)
    }
    private let value: Value

    init(_ id: String) {
        value = Self.words(id).map { .uuid($0.0, $0.1) } ?? .text(id)
    }

    /// The 128 bits of `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase hex; nil for any other text.
    private static func words(_ id: String) -> (UInt64, UInt64)? {
        guard id.utf8.count == 36 else { return nil }
        return id.utf8.withContiguousStorageIfAvailable { bytes -> (UInt64, UInt64)? in
            var words: (UInt64, UInt64) = (0, 0)
            var digits = 0
            for offset in 0..<36 {
                let byte = bytes[offset]
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard byte == UInt8(ascii: "-") else { return nil }
                    continue
                }
                let nibble: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
                default: return nil
                }
                if digits < 16 { words.0 = words.0 << 4 | UInt64(nibble) } else { words.1 = words.1 << 4 | UInt64(nibble) }
                digits += 1
            }
            return words
        } ?? nil
    }
}
