import APNsWire
import Utilities
import Foundation

/// What a connection remembers about provider tokens, as APNs does: the team bound on the first
/// authenticated push, and the current token and since when.
package struct ConnectionAuthState: Sendable {
    package var boundTeam: String?
    /// Makes the connection's `apns-id`s and `apns-unique-id`s.
    package var ids = RandomIDs()
    /// The provider token this connection uses now, checked.
    var current: ConnectionToken?
    /// The `authorization` header that last carried ``current``'s token, as it came.
    var currentHeader: String?
    /// How many distinct tokens this connection accepted.
    package internal(set) var tokensAccepted = 0
    /// The last token whose signature verified but which was refused (expired, issued in the
    /// future, another team's, another environment's, too soon after the last), with the header
    /// that carried it: the same header again is checked without verifying the signature again.
    /// (A provider that keeps sending an expired token would otherwise cost an ES256 verify a push.)
    var refused: (header: String, token: ConnectionToken)?
    /// How many tokens this connection's pushes had verified (parsed, their signature checked).
    package internal(set) var tokensVerified = 0
    package init() {}
}

/// A provider token a connection accepted, and when: held by reference, so a push that carries
/// it again costs one reference count, not one per field of the token and its key.
final class ConnectionToken: Sendable {
    let jwt: String
    let verified: VerifiedProviderToken
    let key: TrustedProviderKey
    /// When the connection took it (a connection may change its token once per
    /// ``ReceiverPolicy/providerTokenMinimumRefresh``).
    let since: Date

    init(jwt: String, verified: VerifiedProviderToken, key: TrustedProviderKey, since: Date) {
        self.jwt = jwt
        self.verified = verified
        self.key = key
        self.since = since
    }
}

/// A refusal: the reason APNs gives, and what exactly was wrong (for logs and explanations).
package struct PushRejection: Sendable, Hashable, Error {
    package var reason: APNsReason
    package var detail: String
    /// 410 only: when the token stopped being valid (ms since the epoch).
    package var timestamp: Int64?
    /// `InvalidProviderToken` from the token's check: what exactly was wrong with it (an unknown key,
    /// a bad signature…), for `explain` to decide by, not by the detail's words.
    package var providerTokenProblem: ProviderTokenError.Code?
    /// The request's `apns-topic`, as it came (nil when it had none): set by the receiver for the
    /// rejection log, not by the checks.
    package var topic: String?
    package init(_ reason: APNsReason, _ detail: String, timestamp: Int64? = nil, providerTokenProblem: ProviderTokenError.Code? = nil,
                topic: String? = nil) {
        self.reason = reason
        self.detail = detail
        self.timestamp = timestamp
        self.providerTokenProblem = providerTokenProblem
        self.topic = topic
    }
    package var status: Int { reason.status ?? 500 }
}

/// Timing and limit rules; Apple's values by default.
package struct ReceiverPolicy: Sendable {
    /// Tokens whose `iat` is older than this are `ExpiredProviderToken` (Apple: 1 hour).
    package var providerTokenMaximumAge: TimeInterval = 3600
    /// A connection may change its token at most this often (Apple: 20 minutes).
    package var providerTokenMinimumRefresh: TimeInterval = 1200
    /// Tokens issued further than this in the future are refused.
    package var providerTokenFutureTolerance: TimeInterval = 300
    /// A connection with no traffic for this long gets GOAWAY `IdleTimeout` and is closed; `nil`: never.
    package var idleTimeout: TimeInterval? = 3600
    /// A new connection must finish TLS and send the HTTP/2 preface within this time, or it is
    /// closed: a client that connects and says nothing (or half a ClientHello) cannot hold a socket.
    package var handshakeTimeout: TimeInterval = 10
    package init() {}
}

/// Checks one push as APNs does, in APNs's order, and decides the answer.
///
/// The order: repeated headers, `apns-id`, method, topic (present, well formed), collapse ID,
/// priority, push type (known, matching the topic's suffix, background at priority 5 or 1),
/// expiration, path and device token (format, then registered in this environment for this topic
/// and still valid), the provider token, and last the payload.
///
/// Pure apart from the registry read: no I/O, no clock of its own (``validate(_:environment:auth:now:)`` takes `now`).
package struct PushValidator: Sendable {
    /// Bodies are kept up to this size; anything longer is `PayloadTooLarge` whatever its type.
    package static let maximumBufferedBody = 5120

    package let tokens: ProviderTokenVerifier
    package let registry: DeviceRegistry
    package let policy: ReceiverPolicy

    package init(tokens: ProviderTokenVerifier, registry: DeviceRegistry, policy: ReceiverPolicy = ReceiverPolicy()) {
        self.tokens = tokens
        self.registry = registry
        self.policy = policy
    }

    /// The answer to `request` on a connection in `environment` whose token state is `auth`.
    /// `apnsID` is the ID the answer will carry (the request's if valid, else a new one).
    package func validate(_ request: IncomingPush, environment: APNsEnvironment, auth: inout ConnectionAuthState,
                         now: Date) -> Result<AcceptedPush, PushRejection> {
        do {
            return .success(try check(request, environment: environment, auth: &auth, now: now))
        } catch {
            return .failure(error)
        }
    }

    /// What the checks of a request's head alone found: made once per head
    /// (``IncomingPush/Head``), and shared by every push that repeats it.
    struct CheckedHead: Sendable {
        /// The request's `apns-id` (nil: none was given, and each push gets a new one).
        var apnsID: String?
        var topic: String
        var bundleID: String
        var collapseID: String?
        var pushType: APNsPushType
        var priority: APNsPriority
        var expiration: Int?
        var token: DeviceToken
    }

    /// The checks that read only the request's head, in the order APNs makes them: repeated
    /// headers, `apns-id`, the method, the topic, the collapse ID, the priority, the push type,
    /// the expiration, the path and its device token. (Then ``check(_:environment:auth:now:)``
    /// asks the registry, the provider token and the payload, which change from push to push.)
    static func checkHead(method: String?, path: String?, known: KnownHeaders,
                          deviceTokenText: String?) throws(PushRejection) -> CheckedHead {
        // Repeated headers.
        if let repeated = known.repeated {
            throw PushRejection(.duplicateHeaders, "header \(repeated.name) is repeated")
        }
        // apns-id.
        if let given = known.id {
            guard parseAPNsID(given) != nil else {
                throw PushRejection(.badMessageId, "apns-id \"\(Self.quote(given))\" is not a canonical UUID")
            }
        }
        // Method.
        guard method == "POST" else {
            throw PushRejection(.methodNotAllowed, "method is \(method ?? "missing"); APNs accepts only POST")
        }
        // Topic.
        guard let topic = known.topic else {
            throw PushRejection(.missingTopic, "apns-topic is required with token-based authentication")
        }
        guard Self.isWellFormedTopic(topic) else {
            throw PushRejection(.badTopic, "apns-topic \"\(Self.quote(topic))\" is not a bundle ID")
        }
        // Collapse ID.
        let collapseID = known.collapseID
        if let collapseID, collapseID.utf8.count > APNsHeader.maximumCollapseIDBytes {
            throw PushRejection(.badCollapseId, "apns-collapse-id is \(collapseID.utf8.count) bytes; at most \(APNsHeader.maximumCollapseIDBytes)")
        }
        // Priority.
        var priority: APNsPriority?
        if let value = known.priority {
            guard let number = Int(value), let parsed = APNsPriority(rawValue: number) else {
                throw PushRejection(.badPriority, "apns-priority \"\(Self.quote(value))\" is not 10, 5 or 1")
            }
            priority = parsed
        }
        // Push type.
        let pushType: APNsPushType
        if let value = known.pushType {
            pushType = APNsPushType(rawValue: value)
            guard pushType.isKnown else {
                throw PushRejection(.invalidPushType, "apns-push-type \"\(Self.quote(value))\" is not one Apple defines")
            }
        } else {
            pushType = .alert
        }
        if let suffix = pushType.requiredTopicSuffix, !topic.hasSuffix(suffix) {
            throw PushRejection(.badTopic, "a \(pushType) push needs the topic <bundle ID>\(suffix), not \(topic)")
        }
        if pushType == .background, let priority, priority == .immediate {
            throw PushRejection(.badPriority, "background pushes must use apns-priority 5 (or 1), not 10")
        }
        // Expiration.
        var expiration: Int?
        if let value = known.expiration {
            guard !value.isEmpty, value.utf8.count <= 12, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let seconds = Int(value)
            else { throw PushRejection(.badExpirationDate, "apns-expiration \"\(Self.quote(value))\" is not epoch seconds") }
            expiration = seconds
        }
        // Path and device token.
        func badPath() -> PushRejection {
            PushRejection(.badPath, "path \"\(Self.quote(path ?? ""))\" is not /3/device/<token>")
        }
        guard let rawToken = deviceTokenText else { throw badPath() }
        guard !rawToken.isEmpty else {
            throw PushRejection(.missingDeviceToken, "the path has no device token")
        }
        guard let token = DeviceToken(hex: rawToken) else {
            // A query is not hex either: looked for only when the token is not one.
            if rawToken.utf8.contains(UInt8(ascii: "?")) { throw badPath() }
            throw PushRejection(.badDeviceToken, "device token \"\(Self.quote(rawToken))\" is not an even-length hex string")
        }
        return CheckedHead(apnsID: known.id, topic: topic, bundleID: pushType.bundleID(forTopic: topic), collapseID: collapseID,
                           pushType: pushType, priority: priority ?? .default(for: pushType), expiration: expiration, token: token)
    }

    private func check(_ request: IncomingPush, environment: APNsEnvironment, auth: inout ConnectionAuthState,
                       now: Date) throws(PushRejection) -> AcceptedPush {
        let head = try request.head.verdict.get()
        let apnsID = head.apnsID ?? auth.ids.uuid()
        let token = head.token
        let bundleID = head.bundleID
        guard let device = registry.lookup(token, in: environment) else {
            let other: APNsEnvironment = environment == .sandbox ? .production : .sandbox
            if registry.lookup(token, in: other) != nil {
                throw PushRejection(.badDeviceToken, "token \(token.short) was issued by the \(other) environment and was sent to \(environment)")
            }
            throw PushRejection(.badDeviceToken, "token \(token.short) is not registered in \(environment)")
        }
        switch device.state {
        case .active: break
        case .unregistered:
            throw PushRejection(.unregistered, "token \(token.short) is no longer active for \(device.bundleID)", timestamp: device.invalidSince ?? 0)
        case .expired:
            throw PushRejection(.expiredToken, "token \(token.short) has expired", timestamp: device.invalidSince ?? 0)
        }
        guard device.bundleID == bundleID else {
            throw PushRejection(.deviceTokenNotForTopic, "token \(token.short) belongs to \(device.bundleID), not \(bundleID)")
        }
        // Provider token.
        let providerToken = try authenticate(request, environment: environment, auth: &auth, now: now)
        if let topics = providerToken.key.topics, !topics.contains(bundleID) {
            throw PushRejection(.topicDisallowed, "key \(providerToken.key.keyID) may push only to \(topics.sorted().joined(separator: ", "))")
        }
        // Payload.
        guard request.bodyLength > 0 else { throw PushRejection(.payloadEmpty, "the request has no body") }
        guard request.bodyLength <= head.pushType.maximumPayloadSize else {
            throw PushRejection(.payloadTooLarge, "the payload is \(request.bodyLength) bytes; a \(head.pushType) push may carry \(head.pushType.maximumPayloadSize)")
        }
        let payload: NotificationPayload
        do { payload = try NotificationPayload(json: request.body) } catch {
            // APNs has no reason for malformed JSON; an unparsable body carries no notification.
            throw PushRejection(.payloadEmpty, error.message)
        }
        return AcceptedPush(
            receivedAt: now, environment: environment, apnsID: apnsID,
            apnsUniqueID: environment == .sandbox ? auth.ids.uuid() : nil,
            deviceToken: token, topic: head.topic, bundleID: bundleID, pushType: head.pushType, priority: head.priority,
            expiration: head.expiration, collapseID: head.collapseID, teamID: providerToken.verified.teamID, keyID: providerToken.verified.keyID,
            payload: request.body, isBackground: payload.isBackground, dropped: false)
    }

    private func authenticate(_ request: IncomingPush, environment: APNsEnvironment, auth: inout ConnectionAuthState,
                              now: Date) throws(PushRejection) -> ConnectionToken {
        guard let header = request.known.authorization else {
            throw PushRejection(.missingProviderToken, "no authorization header")
        }
        let token: ConnectionToken
        let isNew: Bool
        if let current = auth.current, header == auth.currentHeader {
            // The connection's token, in the header as it came last time: nothing to parse.
            (token, isNew) = (current, false)
        } else {
            guard Self.isBearer(header) else {
                throw PushRejection(.missingProviderToken, "authorization is not \"bearer <provider token>\"")
            }
            let jwt = String(header.utf8.dropFirst(7))!
            if let current = auth.current, jwt == current.jwt {
                (token, isNew) = (current, false)
                auth.currentHeader = header
            } else if let refused = auth.refused, refused.header == header {
                // Verified before and refused: checked again (time may have made it acceptable),
                // its signature not verified again.
                (token, isNew) = (refused.token, true)
            } else {
                do {
                    auth.tokensVerified += 1
                    let (verified, key) = try tokens.verify(jwt)
                    token = ConnectionToken(jwt: jwt, verified: verified, key: key, since: now)
                } catch {
                    throw PushRejection(.invalidProviderToken, error.message, providerTokenProblem: error.code)
                }
                isNew = true
            }
        }
        // Kept until the checks below pass (a refusal leaves it for the next push with this header).
        if isNew { auth.refused = (header, token) }
        if let environments = token.key.environments, !environments.contains(environment) {
            throw PushRejection(.badEnvironmentKeyInToken, "key \(token.key.keyID) is limited to \(environments.map(\.rawValue).sorted().joined(separator: ", ")), and this is \(environment)")
        }
        if let bound = auth.boundTeam, bound != token.verified.teamID {
            throw PushRejection(.unrelatedKeyIdInToken, "this connection is bound to team \(bound); key \(token.verified.keyID) belongs to team \(token.verified.teamID): open a new connection")
        }
        let age = now.timeIntervalSince1970 - TimeInterval(token.verified.issuedAt)
        if age > policy.providerTokenMaximumAge {
            throw PushRejection(.expiredProviderToken, "the token was issued \(Int(age)) s ago; APNs accepts tokens up to \(Int(policy.providerTokenMaximumAge)) s old")
        }
        if -age > policy.providerTokenFutureTolerance {
            throw PushRejection(.invalidProviderToken, "the token's iat is \(Int(-age)) s in the future")
        }
        if isNew {
            if let since = auth.current?.since, now.timeIntervalSince(since) < policy.providerTokenMinimumRefresh {
                throw PushRejection(.tooManyProviderTokenUpdates, "a new token \(Int(now.timeIntervalSince(since))) s after the last one on this connection; at most one per \(Int(policy.providerTokenMinimumRefresh)) s")
            }
            // Taken now (one verified and refused earlier was made then).
            let taken = token.since == now ? token : ConnectionToken(jwt: token.jwt, verified: token.verified, key: token.key, since: now)
            auth.current = taken
            auth.currentHeader = header
            auth.boundTeam = taken.verified.teamID
            auth.tokensAccepted += 1
            auth.refused = nil
            return taken
        }
        return token
    }

    /// `bearer ` (in any case) and at least one byte more.
    static func isBearer(_ header: String) -> Bool {
        let bytes = header.utf8
        guard bytes.count > 7 else { return false }
        for (byte, expected) in zip(bytes, "bearer ".utf8) where (expected == 0x20 ? byte : byte | 0x20) != expected { return false }
        return true
    }

    /// A bundle ID (with an optional push-type suffix): dot-separated, letters, digits, `-` and `_`.
    static func isWellFormedTopic(_ topic: String) -> Bool {
        let bytes = topic.utf8
        guard !bytes.isEmpty, bytes.count <= 255, bytes.first != 0x2E, bytes.last != 0x2E else { return false }
        var previous: UInt8 = 0
        for c in bytes {
            guard (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D || c == 0x5F,
                  !(c == 0x2E && previous == 0x2E) else { return false }
            previous = c
        }
        return true
    }

    /// A value from the request quoted in a message: at most 64 printable ASCII characters.
    static func quote(_ value: String) -> String {
        let cleaned = String(value.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(64))
        return value.unicodeScalars.count > 64 ? cleaned + "…" : cleaned
    }
}
