import APNsWire
import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2

/// What one connection remembers, touched only on its event loop (every stream of a connection
/// runs on the connection's loop, so no lock is needed).
final class ConnectionContext {
    let environment: APNsEnvironment
    let serverName: String?
    var auth = ConnectionAuthState()
    /// The highest stream this connection answered (GOAWAY's last-stream-ID).
    var lastProcessedStream: HTTP2StreamID = .rootStream
    var closing = false

    init(environment: APNsEnvironment, serverName: String?) {
        self.environment = environment
        self.serverName = serverName
    }
}

/// The services every stream needs, shared by all connections.
struct ReceiverServices: Sendable {
    let validator: PushValidator
    let log: DeliveryLog
    let faults: FaultPlan
    let delivery: (any PushDeliveryHandler)?
    let clock: any WallClock
    let logger: Logger
    let events: ReceiverEvents
}

/// Reads one request stream (HEADERS, DATA…, END_STREAM), decides, and answers as APNs does:
/// 200 with `apns-id` (and `apns-unique-id` in sandbox) and no body; or the status, then the JSON
/// reason in one DATA frame.
final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let services: ReceiverServices
    private let connection: ConnectionContext
    private var method: String?
    private var path: String?
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []
    private var bodyLength = 0
    private var sawHeaders = false
    private var answered = false
    /// Answers written during a read are flushed once, at read-complete, so that a burst of requests
    /// costs one socket write rather than one per answer. Answers written later (a delay fault) flush at once.
    private var inRead = false
    private var needsFlush = false

    init(services: ReceiverServices, connection: ConnectionContext) {
        self.services = services
        self.connection = connection
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    private func send(_ payload: HTTP2Frame.FramePayload, context: ChannelHandlerContext, last: Bool) {
        context.write(wrapOutboundOut(payload), promise: nil)
        guard last else { return }
        if inRead { needsFlush = true } else { context.flush() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inRead = true
        defer { inRead = false }
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if !sawHeaders {
                sawHeaders = true
                for (name, value, _) in frame.headers {
                    switch name {
                    case ":method": method = value
                    case ":path": path = value
                    case _ where name.hasPrefix(":"): break
                    default: headers.append((name, value))
                    }
                }
            }
            if frame.endStream { finish(context: context) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data {
                bodyLength += buffer.readableBytes
                let room = PushValidator.maximumBufferedBody + 1 - body.count
                if room > 0 { body.append(contentsOf: buffer.readableBytesView.prefix(room)) }
            }
            if frame.endStream { finish(context: context) }
        default:
            break
        }
    }

    private func finish(context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
        let request = IncomingPush(method: method, path: path, headers: headers, body: body, bodyLength: bodyLength)
        // After GOAWAY nothing new is processed: the stream is refused, so the client may send it again.
        if connection.closing {
            send(.rstStream(.refusedStream), context: context, last: true)
            return
        }
        let rawToken = path.map { $0.hasPrefix("/3/device/") ? String($0.dropFirst(10)) : "" } ?? ""
        var delay: Int?
        var drop = false
        if let fault = services.faults.take(token: rawToken, environment: connection.environment) {
            services.events.record(.fault(fault, environment: connection.environment))
            switch fault {
            case .reject(let reason):
                let id = answerID(for: request)
                let timestamp: Int64? = reason.status == 410 ? Int64(services.clock.now.timeIntervalSince1970 * 1000) : nil
                answer(context: context, streamID: streamID,
                       rejection: PushRejection(reason, "injected fault", timestamp: timestamp), apnsID: id)
                return
            case .refuseStream:
                send(.rstStream(.refusedStream), context: context, last: true)
                return
            case .goaway(let reason):
                sendGoAway(context: context, reason: reason)
                return
            case .delay(let milliseconds): delay = milliseconds
            case .drop: drop = true
            }
        }
        let now = services.clock.now
        switch services.validator.validate(request, environment: connection.environment, auth: &connection.auth, now: now) {
        case .failure(let rejection):
            let id = answerID(for: request)
            services.logger.debug("rejected", metadata: [
                "apns-id": "\(id)", "device-token": "\(rawToken.prefix(16))", "reason": "\(rejection.reason)",
                "detail": "\(rejection.detail)",
            ])
            services.events.record(.rejected(rejection, apnsID: id, environment: connection.environment, deviceToken: rawToken))
            respond(context: context, after: delay) { [self] context in
                self.answer(context: context, streamID: streamID, rejection: rejection, apnsID: id)
            }
        case .success(var push):
            push.dropped = drop
            do {
                try services.log.append(push)
            } catch {
                services.logger.error("delivery log write failed", metadata: ["error": "\(error)"])
                answer(context: context, streamID: streamID,
                       rejection: PushRejection(.internalServerError, "the delivery log could not be written"),
                       apnsID: push.apnsID)
                return
            }
            services.logger.debug("accepted", metadata: [
                "apns-id": "\(push.apnsID)", "device-token": "\(push.deviceToken.hex)", "environment": "\(push.environment)",
            ])
            services.events.record(.accepted(push))
            let delivery = services.delivery
            respond(context: context, after: delay) { [self] context in
                self.answerSuccess(context: context, streamID: streamID, push: push)
                if !push.dropped, let delivery { Self.handOff(push, to: delivery) }
            }
        }
    }

    /// The `apns-id` an error answer carries: the request's when it is a UUID, else a new one.
    private func answerID(for request: IncomingPush) -> String {
        request.header(APNsHeader.id).flatMap { parseAPNsID($0) != nil ? $0 : nil } ?? connection.auth.ids.uuid()
    }

    /// Gives an accepted push to the device side without holding up the answer.
    private static func handOff(_ push: AcceptedPush, to delivery: any PushDeliveryHandler) {
        Task { await delivery.deliver(push) }
    }

    private func respond(context: ChannelHandlerContext, after delay: Int?, _ body: @escaping (ChannelHandlerContext) -> Void) {
        guard let delay, delay > 0 else { return body(context) }
        let bound = NIOLoopBound((body, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay))) {
            let (body, context) = bound.value
            body(context)
        }
    }

    private func answerSuccess(context: ChannelHandlerContext, streamID: HTTP2StreamID, push: AcceptedPush) {
        var fields: HPACKHeaders = [":status": "200", "apns-id": push.apnsID]
        if let unique = push.apnsUniqueID { fields.add(name: "apns-unique-id", value: unique) }
        noteProcessed(streamID)
        send(.headers(.init(headers: fields, endStream: true)), context: context, last: true)
    }

    private func answer(context: ChannelHandlerContext, streamID: HTTP2StreamID, rejection: PushRejection, apnsID: String) {
        let fields: HPACKHeaders = [
            ":status": String(rejection.status), "content-type": "application/json", "apns-id": apnsID,
        ]
        noteProcessed(streamID)
        send(.headers(.init(headers: fields, endStream: false)), context: context, last: false)
        let bytes = APNsErrorBody(reason: rejection.reason, timestamp: rejection.status == 410 ? rejection.timestamp : nil).encoded()
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        send(.data(.init(data: .byteBuffer(buffer), endStream: true)), context: context, last: true)
    }

    private func noteProcessed(_ streamID: HTTP2StreamID) {
        if streamID > connection.lastProcessedStream { connection.lastProcessedStream = streamID }
    }

    private func sendGoAway(context: ChannelHandlerContext, reason: APNsReason) {
        guard let parent = context.channel.parent else { return }
        connection.closing = true
        GoAway.send(on: parent, lastStreamID: connection.lastProcessedStream, reason: reason, closeAfter: GoAway.grace)
    }
}

/// GOAWAY as APNs sends it: the debug data is `{"reason":…}`.
enum GoAway {
    /// How long a connection told GOAWAY stays open before the server closes it: time for answers
    /// still queued to go out and for the client to read them and hang up first. Closing at once
    /// would make the kernel answer the client's unread requests with a TCP reset, which throws
    /// away answers and the GOAWAY itself before the client reads them.
    static let grace: TimeAmount = .seconds(1)

    /// Sends GOAWAY; then, if `closeAfter` is given, closes the connection that much later (unless
    /// the client closed it first).
    static func send(on channel: Channel, lastStreamID: HTTP2StreamID, reason: APNsReason, closeAfter: TimeAmount?) {
        let bytes = APNsErrorBody(reason: reason).encoded()
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let frame = HTTP2Frame(streamID: .rootStream,
                               payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: buffer))
        let written = channel.writeAndFlush(frame)
        guard let closeAfter else { return }
        written.whenComplete { _ in
            let close = channel.eventLoop.scheduleTask(in: closeAfter) { channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in close.cancel() }
        }
    }
}
