import APNsWire
import Utilities
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Where devices in other processes meet APNs, as real devices keep a connection to APNs: they
/// register for a token, then hold a stream open on which each push to that token arrives as one
/// JSON line. (HTTP/1.1 on loopback; the provider side stays HTTP/2 + TLS.)
///
/// | request | answer |
/// |---|---|
/// | `POST /devices` `{"environment","bundleID","token"?,"label"?}` | `{"token"}`: registered (a new random token unless given) |
/// | `GET /devices/{environment}/{token}/notifications` | chunked NDJSON: first `{"connected":true}`, then one line per push |
public final class DeviceGateway: Sendable {
    public let host: String
    public let port: Int
    private let channel: Channel
    private let group: MultiThreadedEventLoopGroup

    private init(host: String, port: Int, channel: Channel, group: MultiThreadedEventLoopGroup) {
        self.host = host
        self.port = port
        self.channel = channel
        self.group = group
    }

    public static func start(host: String = "127.0.0.1", port: Int = 0, registry: DeviceRegistry, hub: DeviceHub) async throws(ReceiverError) -> DeviceGateway {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(GatewayHandler(registry: registry, hub: hub))
                }
            }
        do {
            let channel = try await bootstrap.bind(host: host, port: port).get()
            return DeviceGateway(host: host, port: channel.localAddress?.port ?? port, channel: channel, group: group)
        } catch {
            try? await group.shutdownGracefully()
            throw ReceiverError(.bind, "cannot listen for devices on \(host):\(port): \(error)")
        }
    }

    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    /// One push as a gateway line.
    static func line(_ push: AcceptedPush) -> String {
        let payload = String(decoding: push.payload.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }, as: UTF8.self)
        return "{\"apns-id\":\"\(push.apnsID)\",\"environment\":\"\(push.environment.rawValue)\",\"device-token\":\"\(push.deviceToken.hex)\""
            + ",\"bundle-id\":\(CompactJSON.string(push.bundleID)),\"push-type\":\(CompactJSON.string(push.pushType.rawValue))"
            + ",\"payload\":\(payload)}\n"
    }
}

private final class GatewayHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let registry: DeviceRegistry
    private let hub: DeviceHub
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var subscription: Int?

    init(registry: DeviceRegistry, hub: DeviceHub) {
        self.registry = registry
        self.hub = hub
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            if body.count < 65_536 { body.append(contentsOf: buffer.readableBytesView) }
        case .end:
            guard let head else { return }
            route(head, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let subscription {
            let hub = self.hub
            Task { await hub.disconnect(subscription) }
        }
        context.fireChannelInactive()
    }

    private func route(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let parts = head.uri.split(separator: "/").map(String.init)
        if head.method == .POST, parts == ["devices"] {
            register(context: context)
        } else if head.method == .GET, parts.count == 4, parts[0] == "devices", parts[3] == "notifications",
                  let environment = APNsEnvironment(rawValue: parts[1]), let token = DeviceToken(hex: parts[2]) {
            stream(token: token, environment: environment, context: context)
        } else {
            respond(status: .notFound, json: #"{"error":"no such endpoint: POST /devices or GET /devices/{environment}/{token}/notifications"}"#, context: context)
        }
    }

    private func register(context: ChannelHandlerContext) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
              let environment = (object["environment"] as? String).flatMap(APNsEnvironment.init(rawValue:)),
              let bundleID = object["bundleID"] as? String, !bundleID.isEmpty
        else {
            respond(status: .badRequest, json: #"{"error":"send {\"environment\":\"sandbox|production\",\"bundleID\":\"…\"}"}"#, context: context)
            return
        }
        var token = DeviceToken.random()
        if let given = object["token"] as? String {
            guard let parsed = DeviceToken(hex: given) else {
                respond(status: .badRequest, json: #"{"error":"token must be even-length hex"}"#, context: context)
                return
            }
            token = parsed
        }
        do {
            try registry.register(RegisteredDevice(token: token, environment: environment, bundleID: bundleID,
                                                   label: object["label"] as? String))
            respond(status: .ok, json: "{\"token\":\"\(token.hex)\",\"environment\":\"\(environment.rawValue)\"}", context: context)
        } catch {
            respond(status: .internalServerError, json: "{\"error\":\(CompactJSON.string(error.message))}", context: context)
        }
    }

    private func stream(token: DeviceToken, environment: APNsEnvironment, context: ChannelHandlerContext) {
        let headers = HTTPHeaders([("content-type", "application/x-ndjson"), ("transfer-encoding", "chunked")])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        let channel = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let hub = self.hub
        context.eventLoop.makeFutureWithTask {
            await hub.connect(token: token, environment: environment) { push in
                let line = DeviceGateway.line(push)
                channel.eventLoop.execute {
                    var buffer = channel.allocator.buffer(capacity: line.utf8.count)
                    buffer.writeString(line)
                    channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
                }
            }
        }.whenSuccess { id in
            bound.value.subscription = id
            var buffer = channel.allocator.buffer(capacity: 20)
            buffer.writeString("{\"connected\":true}\n")
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }
    }

    private func respond(status: HTTPResponseStatus, json: String, context: ChannelHandlerContext) {
        let headers = HTTPHeaders([("content-type", "application/json"), ("content-length", String(json.utf8.count))])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: json.utf8.count)
        buffer.writeString(json)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
