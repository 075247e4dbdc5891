import APNsWire
import Utilities
import Foundation
import Logging

/// What one connection remembers, touched only on its event loop.
final class ConnectionContext {
    let environment: APNsEnvironment
    let serverName: String?
    var auth = ConnectionAuthState()
    /// The highest stream this connection answered (GOAWAY's last-stream-ID).
    var lastProcessedStream: UInt32 = 0
    /// GOAWAY was sent: nothing new is processed.
    var closing = false

    init(environment: APNsEnvironment, serverName: String?) {
        self.environment = environment
        self.serverName = serverName
    }
}

/// The services every connection needs, shared by all connections.
struct ReceiverServices: Sendable {
    let validator: PushValidator
    let log: DeliveryLog
    /// A fleet's log, kept there instead of in ``log``'s file.
    let sharedLog: (any SharedDeliveryLog)?
    let faults: FaultPlan
    let delivery: DeliveryQueue?
    let clock: any WallClock
    let logger: Logger
    let events: ReceiverEvents
}

/// The answer to one request, as APNs gives it: 200 with `apns-id` (and `apns-unique-id` in
/// sandbox) and no body; or the status, `content-type: application/json` and the JSON reason.
struct PushAnswer {
    var status: Int
    var apnsID: String
    var apnsUniqueID: String?
    var body: [UInt8]?
    /// What goes to the device side, if anything (an accepted push that was not dropped).
    var toDevice: ToDevice?

    enum ToDevice {
        /// The push, handed over once the answer is written.
        case push(AcceptedPush)
        /// Where its delivery-log line is in its batch's lines: it goes as that line, with the
        /// rest of its batch's, once the batch's answers are written (nothing there could take
        /// the push itself).
        case line(Range<Int>)
    }
}

/// The delivery-log lines of a batch of accepted pushes, one per push in order, in one buffer:
/// written with one `write(2)` (or one statement); where each is goes to the device side in the
/// pushes' place while nothing there can take a push (``PushDeliveryHandler/takesLogLines``).
struct BatchLines {
    private(set) var bytes: [UInt8] = []
    /// Where each push's line ends in ``bytes``.
    private var ends: [Int] = []
    var count: Int { ends.count }

    mutating func append(_ push: AcceptedPush, with encoder: inout DeliveryLog.LineEncoder) {
        encoder.encode(push, into: &bytes)
        ends.append(bytes.count)
    }

    /// Where the batch's `index`th push's line is in ``bytes``.
    func range(_ index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    /// Empties the batch for the next read (its buffers kept while nothing else holds them).
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }
}

/// What the decisions on one push carry over from one to the next (a fleet's receiver may decide
/// on a push more than once: after catching up with the store, or after claiming a fault).
struct PushProgress {
    /// The fault chosen for the push (none: `fault` nil), the plan version it was read from,
    /// whether its use was claimed in the fleet's store, and whether its event was recorded.
    struct Chosen {
        var fault: Fault?
        var planVersion: Int64
        var claimed: Bool
        var noted = false
    }
    var chosen: Chosen?
    /// The fleet's copies (registry and fault plan) caught up with the store since the push arrived.
    var confirmed = false
}

/// What the connection does with a finished request.
enum PushDecision {
    /// Reset the stream with REFUSED_STREAM: not processed, the client may send it again.
    case refuse
    /// Say GOAWAY with `{"reason":…}` and close after ``GoAwayTiming/grace``.
    case goAway(APNsReason)
    /// Answer, at once or after a delay fault; with a fleet's log, once `refusal` is kept there.
    case answer(PushAnswer, delayMilliseconds: Int?, refusal: RejectionLog.Entry? = nil)
    /// A fleet's copy (its device registry, or an uncounted rule of its fault plan) refuses it:
    /// catch up with the store's latest changes (``DeviceRegistry/catchUp()``), then decide again
    /// (``PushProgress/confirmed``), so that nothing is refused on a stale copy.
    case confirm
    /// A counted rule of a fleet's fault plan applies: claim the use in the store
    /// (``FaultPlan/claim(_:)``), then decide again with the fault, or without the rule when no
    /// use was left.
    case claim(FaultClaim, Fault)
    /// Accepted: answer 200 once ``PushExchange/commit(_:)`` has it in the delivery log.
    case accept(AcceptedPush, delayMilliseconds: Int?)
}

/// APNs's side of one request: faults, validation, the delivery log and events. No I/O apart
/// from the log; the connection writes whatever this decides.
struct PushExchange {
    let services: ReceiverServices
    let connection: ConnectionContext

    /// Decides on a push, first or again (`progress` says what earlier decisions found).
    func decide(_ request: IncomingPush, progress: inout PushProgress) -> PushDecision {
        // After GOAWAY nothing new is processed: the stream is refused, so the client may send it again.
        if connection.closing { return .refuse }
        let rawToken = request.deviceTokenText ?? ""
        let plan = services.faults
        // A fault chosen earlier stands if it was claimed, or if the plan has not changed since.
        if progress.chosen.map({ !$0.claimed && $0.planVersion != plan.version }) ?? true {
            let take = plan.take(token: rawToken, environment: connection.environment)
            if let claim = take.claim, let fault = take.fault { return .claim(claim, fault) }
            progress.chosen = PushProgress.Chosen(fault: take.fault, planVersion: take.planVersion, claimed: false)
        }
        var delay: Int?
        var drop = false
        if let chosen = progress.chosen, let fault = chosen.fault {
            // A fleet's rule read from the copy: refused only once the copy is known current.
            if plan.shared != nil, !progress.confirmed, !chosen.claimed, fault.refuses { return .confirm }
            if !chosen.noted {
                services.events.record(.fault(fault, environment: connection.environment))
                progress.chosen?.noted = true
            }
            switch fault {
            case .reject(let reason):
                let timestamp: Int64? = reason.status == 410 ? Int64(services.clock.now.timeIntervalSince1970 * 1000) : nil
                let refusal = PushRejection(reason, "injected fault", timestamp: timestamp)
                let id = answerID(for: request)
                services.events.record(.refused(RefusedRequest(receivedAt: services.clock.now, environment: connection.environment, apnsID: id,
                                                               deviceToken: rawToken, headers: request.headers, payload: request.body,
                                                               rejection: refusal, injected: true)))
                return .answer(rejection(refusal, apnsID: id), delayMilliseconds: nil)
            case .refuseStream: return .refuse
            case .goaway(let reason): return .goAway(reason)
            case .delay(let milliseconds): delay = milliseconds
            case .drop: drop = true
            }
        }
        return validated(request, delay: delay, drop: drop, confirmed: progress.confirmed)
    }

    /// The answer when a fleet's fault plan cannot be reached to claim a fault: 503
    /// `ServiceUnavailable`, as when its delivery log cannot (the provider retries later).
    func unavailable(_ request: IncomingPush, _ error: ReceiverError) -> PushDecision {
        services.logger.error("a fault's use could not be claimed in the fleet's store", metadata: ["error": "\(error)"])
        let refusal = PushRejection(.serviceUnavailable, "the fleet's fault plan cannot be reached")
        return .answer(rejection(refusal, apnsID: answerID(for: request)), delayMilliseconds: nil)
    }

    /// Reasons a fleet's registry gives: confirmed against the store before they are answered.
    private static let registryReasons: Set<APNsReason> = [.badDeviceToken, .unregistered, .expiredToken, .deviceTokenNotForTopic]

    /// Validation's part of ``decide(_:progress:)``, after the faults.
    /// - Parameter confirmed: the fleet's registry was caught up since the request arrived.
    private func validated(_ request: IncomingPush, delay: Int?, drop: Bool, confirmed: Bool) -> PushDecision {
        let rawToken = request.deviceTokenText ?? ""
        let now = services.clock.now
        switch services.validator.validate(request, environment: connection.environment, auth: &connection.auth, now: now) {
        case .failure(var rejection):
            rejection.topic = request.known.topic
            if !confirmed, services.validator.registry.isFleets, Self.registryReasons.contains(rejection.reason) {
                return .confirm
            }
            let id = answerID(for: request)
            services.logger.notice("push rejected", metadata: [
                "apns-id": "\(id)", "device-token": "\(rawToken.prefix(16))", "environment": "\(connection.environment)",
                "status": "\(rejection.reason.status ?? 0)", "reason": "\(rejection.reason)", "detail": "\(rejection.detail)",
            ])
            services.events.record(.rejected(rejection, apnsID: id, environment: connection.environment, deviceToken: rawToken))
            services.events.record(.refused(RefusedRequest(receivedAt: now, environment: connection.environment, apnsID: id, deviceToken: rawToken,
                                                           headers: request.headers, payload: request.body, rejection: rejection, injected: false)))
            let refusal = services.sharedLog == nil ? nil
                : RejectionLog.Entry(rejection, apnsID: id, environment: connection.environment, deviceToken: rawToken, at: now)
            return .answer(self.rejection(rejection, apnsID: id), delayMilliseconds: delay, refusal: refusal)
        case .success(var push):
            if drop { push.dropped = true }
            return .accept(push, delayMilliseconds: delay)
        }
    }

    /// Puts accepted pushes in the delivery log file with one write, and returns their answers:
    /// 200, or 503 `ServiceUnavailable` for all of them when the log cannot be written.
    /// - Parameter asLines: the answers go out now: see ``answers(for:kept:lines:)``.
    /// - Returns: the answers, and where in the log file the lines begin (nil when not written).
    func commit(_ pushes: [AcceptedPush], lines: BatchLines, asLines: Bool) -> (answers: [PushAnswer], at: AppendOnlyFile.Location?) {
        let at: AppendOnlyFile.Location
        do {
            at = try services.log.append(lines: lines.bytes)
        } catch {
            return (answers(for: pushes, kept: error, lines: nil), nil)
        }
        return (answers(for: pushes, kept: nil, lines: asLines ? lines : nil), at)
    }

    /// The answers to pushes the log kept (`kept` nil: 200 each, the push recorded as accepted)
    /// or could not keep: 503 `ServiceUnavailable` for all of them, what APNs answers while it
    /// cannot take pushes (the provider retries later): a fleet's database out of reach, or a
    /// delivery log file that cannot be written (a full disk, a read-only folder).
    /// - Parameter lines: the pushes' lines, when the answers go out now (no fault's delay): a
    ///   background push may then be handed to the device side as its line (``PushAnswer/line``)
    ///   while nothing there takes pushes.
    func answers(for pushes: [AcceptedPush], kept error: ReceiverError?, lines: BatchLines?) -> [PushAnswer] {
        if let error {
            services.logger.error("delivery log write failed; answering 503 ServiceUnavailable", metadata: ["error": "\(error)"])
            let refusal = error.code == .unavailable
                ? PushRejection(.serviceUnavailable, "the fleet's delivery log cannot be reached")
                : PushRejection(.serviceUnavailable, "the delivery log could not be written")
            return pushes.map { rejection(refusal, apnsID: $0.apnsID) }
        }
        // (By index: the pushes are read in place, and one is copied only for the device side;
        // each answer is made whole where it is appended, which copies none.)
        let handsOff = services.delivery != nil
        let lines = services.delivery?.takesLogLines == true ? lines : nil
        var answers: [PushAnswer] = []
        answers.reserveCapacity(pushes.count)
        let debug = services.logger.logLevel <= .debug
        for index in pushes.indices {
            if debug {
                services.logger.debug("accepted", metadata: [
                    "apns-id": "\(pushes[index].apnsID)", "device-token": "\(pushes[index].deviceToken.hex)",
                    "environment": "\(pushes[index].environment)",
                ])
            }
            services.events.recordAccepted(pushes[index])
            var toDevice: PushAnswer.ToDevice?
            if handsOff, !pushes[index].dropped {
                // An alert goes as itself: the user sees it, and an observer hears of it.
                if let lines, pushes[index].isBackground { toDevice = .line(lines.range(index)) } else { toDevice = .push(pushes[index]) }
            }
            answers.append(PushAnswer(status: 200, apnsID: pushes[index].apnsID, apnsUniqueID: pushes[index].apnsUniqueID,
                                      toDevice: toDevice))
        }
        return answers
    }

    /// Gives an accepted push to the device side without holding up the answer.
    func handOff(_ push: AcceptedPush) {
        services.delivery?.enqueue(.push(push))
    }

    /// Gives background pushes to the device side as their delivery-log lines, as one.
    func handOff(lines: HandedLines) {
        services.delivery?.enqueue(.lines(lines))
    }

    private func rejection(_ rejection: PushRejection, apnsID: String) -> PushAnswer {
        let body = APNsErrorBody(reason: rejection.reason, timestamp: rejection.status == 410 ? rejection.timestamp : nil).encoded()
        return PushAnswer(status: rejection.status, apnsID: apnsID, body: body)
    }

    /// The `apns-id` an error answer carries: the request's when it is a UUID, else a new one.
    private func answerID(for request: IncomingPush) -> String {
        request.known.id.flatMap { parseAPNsID($0) != nil ? $0 : nil } ?? connection.auth.ids.uuid()
    }
}
