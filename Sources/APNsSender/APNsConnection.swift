import APNsWire
import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/2 connection to APNs (or to the receiver), carrying many pushes as concurrent streams.
final class APNsConnection: Sendable {
    let channel: Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let authority: String
    private let scheme: String
    private let observer: GoAwayObserver

    private init(channel: Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, authority: String, scheme: String,
                 observer: GoAwayObserver) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.authority = authority
        self.scheme = scheme
        self.observer = observer
    }

    /// Whether new pushes may go on this connection.
    var isUsable: Bool { channel.isActive && goAwayReason == nil }
    /// The reason of a GOAWAY the server sent, if any.
    var goAwayReason: APNsReason? { observer.reason.withLock { $0 } }

    static func connect(group: EventLoopGroup, host: String, port: Int, authority: String, sslContext: NIOSSLContext?,
                        serverName: String?, timeout: TimeAmount) async throws(SenderError) -> APNsConnection {
        let observer = GoAwayObserver()
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    _ = try sync.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { stream in stream.eventLoop.makeSucceededVoidFuture() }
                    try sync.addHandler(observer)
                }
            }
        let channel: Channel
        do { channel = try await bootstrap.connect(host: host, port: port).get() } catch {
            throw SenderError(.connect, "cannot connect to \(host):\(port): \(error)")
        }
        let multiplexer: NIOHTTP2Handler.StreamMultiplexer
        do {
            multiplexer = try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.handler(type: NIOHTTP2Handler.self).syncMultiplexer()
            }.get()
        } catch {
            channel.close(promise: nil)
            // A server that closed at once (an idle timeout, a GOAWAY) leaves no pipeline to find:
            // nothing was sent, so the push may go again.
            // The handler is gone only when the pipeline was torn down by a close that `isActive` may
            // not show yet: that is a closed connection too.
            let closed = !channel.isActive || (error as? ChannelPipelineError) == .notFound
            throw SenderError(closed ? .connectionClosed : .protocolError, "HTTP/2 set-up failed: \(error)")
        }
        return APNsConnection(channel: channel, multiplexer: multiplexer, authority: authority,
                              scheme: sslContext == nil ? "http" : "https", observer: observer)
    }

    /// Sends one push and waits for its answer.
    func send(method: String = "POST", path: String, fields: [(name: String, value: String)], payload: [UInt8],
              timeout: TimeAmount) async throws(SenderError) -> APNsResponse {
        let promise = channel.eventLoop.makePromise(of: APNsResponse.self)
        let streamID = StreamIDBox()
        var headers = HPACKHeaders([(":method", method), (":scheme", scheme), (":path", path), (":authority", authority)])
        for field in fields { headers.add(name: field.name, value: field.value) }
        headers.add(name: "content-length", value: String(payload.count))
        let requestHeaders = headers
        multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(ResponseHandler(promise: promise, streamID: streamID))
            }
        }.whenComplete { result in
            switch result {
            case .failure(let error):
                promise.fail(SenderError(.connectionClosed, "cannot open a stream: \(error)"))
            case .success(let stream):
                var body = stream.allocator.buffer(capacity: payload.count)
                body.writeBytes(payload)
                stream.write(HTTP2Frame.FramePayload.headers(.init(headers: requestHeaders, endStream: payload.isEmpty)), promise: nil)
                if !payload.isEmpty {
                    stream.write(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: true)), promise: nil)
                }
                stream.flush()
            }
        }
        // However the connection ends, this push gets an answer at once (not only at the timeout).
        channel.closeFuture.whenComplete { _ in
            promise.fail(SenderError(.interrupted, "the connection closed before an answer: APNs may have accepted the push (not retried, so it is not delivered twice)"))
        }
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(SenderError(.timeout, "no answer within \(timeout.nanoseconds / 1_000_000_000) s"))
        }
        do {
            let response = try await promise.futureResult.get()
            timer.cancel()
            return response
        } catch let error as SenderError {
            timer.cancel()
            if error.code == .interrupted, let reason = goAwayReason {
                // HTTP/2's promise: streams above GOAWAY's last stream ID were not processed.
                if let last = observer.lastStreamID.withLock({ $0 }), let id = streamID.value, id > last {
                    throw SenderError(.streamRefused, "the server's GOAWAY (\(reason)) excluded this push (stream \(id) > last stream \(last)): not processed, safe to retry")
                }
                throw SenderError(.interrupted, "the server sent GOAWAY (\(reason)) and closed before answering: it may have accepted the push")
            }
            throw error
        } catch {
            timer.cancel()
            throw SenderError(.protocolError, "\(error)")
        }
    }

    func close() async {
        try? await channel.close()
    }
}

/// Collects one stream's answer.
private final class ResponseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    private let promise: EventLoopPromise<APNsResponse>
    private let streamID: StreamIDBox
    private var response = APNsResponse(status: 0)
    private var body: [UInt8] = []
    private var done = false

    init(promise: EventLoopPromise<APNsResponse>, streamID: StreamIDBox) {
        self.promise = promise
        self.streamID = streamID
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            for (name, value, _) in frame.headers {
                switch name {
                case ":status": response.status = Int(value) ?? 0
                case "apns-id": response.apnsID = value
                case "apns-unique-id": response.apnsUniqueID = value
                default: break
                }
            }
            if frame.endStream { complete() }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data, body.count < 65_536 {
                body.append(contentsOf: buffer.readableBytesView)
            }
            if frame.endStream { complete() }
        case .rstStream(let code):
            fail(code == .refusedStream
                 ? SenderError(.streamRefused, "the server refused the stream (REFUSED_STREAM): not processed, safe to retry")
                 : SenderError(.protocolError, "the server reset the stream: \(code)"))
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        streamID.record(context.channel)
        fail(SenderError(.interrupted, "the connection closed after the push was sent and before an answer: APNs may have accepted it (not retried, so it is not delivered twice)"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        streamID.record(context.channel)
        if let streamError = error as? NIOHTTP2Errors.StreamClosed, streamError.errorCode == .refusedStream {
            fail(SenderError(.streamRefused, "the server refused the stream (REFUSED_STREAM): not processed, safe to retry"))
        } else {
            fail(SenderError(.interrupted, "stream error after the push was sent: \(error)"))
        }
        context.close(promise: nil)
    }

    private func complete() {
        guard !done else { return }
        done = true
        if !body.isEmpty, let parsed = APNsErrorBody.decode(body) {
            response.reason = APNsReason(wire: parsed.reason)
            response.timestamp = parsed.timestamp
        }
        promise.succeed(response)
    }

    private func fail(_ error: SenderError) {
        guard !done else { return }
        done = true
        promise.fail(error)
    }
}

/// Remembers a GOAWAY: its reason (the debug data is `{"reason":…}`) and its last stream ID, above
/// which the server promises it processed nothing.
final class GoAwayObserver: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTP2Frame
    let reason = Mutex<APNsReason?>(nil)
    let lastStreamID = Mutex<HTTP2StreamID?>(nil)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if case .goAway(let last, let code, let opaque) = frame.payload {
            let parsed = opaque.flatMap { APNsErrorBody.decode($0.readableBytesView) }.map { APNsReason(wire: $0.reason) }
            reason.withLock { $0 = parsed ?? APNsReason(rawValue: "GOAWAY \(code)") }
            lastStreamID.withLock { $0 = min($0 ?? last, last) }
        }
        context.fireChannelRead(data)
    }
}

/// A stream's ID, once it has one (IDs are given when the first frame goes out).
final class StreamIDBox: Sendable {
    private let id = Mutex<HTTP2StreamID?>(nil)
    var value: HTTP2StreamID? { id.withLock { $0 } }
    func record(_ channel: Channel) {
        guard let found = try? channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) else { return }
        id.withLock { $0 = $0 ?? found }
    }
}
