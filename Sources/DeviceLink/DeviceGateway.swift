import APNsReceiver
import APNsWire
import DeviceOS
import Foundation
import HTTPServerSupport
import Hummingbird
import HummingbirdCore
import Lifecycle
import Logging
import NIOCore
import Synchronization
import Utilities

/// Where devices in other processes meet APNs, as real devices keep a connection to APNs: they
/// register for a token, then hold a stream open on which each push to that token arrives as one
/// JSON line. (HTTP/1.1 on loopback, on Hummingbird; the provider side stays HTTP/2 + TLS.)
///
/// | request | answer |
/// |---|---|
/// | `POST /devices` `{"environment","bundleID","token"?,"label"?}` | `{"token","environment"}`: registered (a new random token unless given) |
/// | `GET /devices/{environment}/{token}/notifications` | chunked NDJSON: first `{"connected":true}`, then one ``GatewayPush`` per line |
///
/// Errors are `{"error":"…"}` with 400 (a bad registration), 404, 405 or 413 (a body over 64 KB).
package final class DeviceGateway: Sendable {
    private let server: RunningServer
    private let streams: GatewayStreams

    private init(server: RunningServer, streams: GatewayStreams) {
        self.server = server
        self.streams = streams
    }

    package var host: String { server.host }
    package var port: Int { server.port }

    /// - Parameter access: who may register devices and read their pushes (``AdminAccess``: the
    ///   deployment's token as `Authorization: Bearer`); anyone by default, on loopback only.
    package static func start(host: String = "127.0.0.1", port: Int = 0, registry: DeviceRegistry, hub: DeviceHub,
                             access: AdminAccess = .loopbackOnly, hosting: ServerHosting = .ownGroup,
                             logger: Logger = Logger(label: "authsim.device-gateway", factory: { _ in SwiftLogNoOpLogHandler() }))
    async throws(ReceiverError) -> DeviceGateway {
        let streams = GatewayStreams()
        do {
            try access.check(listening: host, what: "the device gateway")
            let server = try await RunningServer.start(
                router: router(registry: registry, hub: hub, streams: streams, access: access), host: host, port: port, name: "the device gateway",
                server: .http1(configuration: .init(additionalChannelHandlers: [HangUpDetector(streams: streams)])), hosting: hosting, logger: logger)
            return DeviceGateway(server: server, streams: streams)
        } catch {
            throw error.listenError.map { ReceiverError(listen: $0) } ?? ReceiverError(.bind, error.message)
        }
    }

    /// Ends every device's stream, then stops listening.
    package func shutdown() async {
        streams.finishAll()
        await server.shutdown()
    }

    /// Registration bodies over this are refused with 413.
    static let maximumBodyBytes = 65_536

    static func router(registry: DeviceRegistry, hub: DeviceHub, streams: GatewayStreams, access: AdminAccess) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: GatewayErrorMiddleware())
        router.add(middleware: AdminAccessMiddleware<GatewayRequestContext>(access: access) { decision, _ in
            let why = if case .refused(let reason) = decision { reason } else { "no Authorization header" }
            return GatewayError(.unauthorized, "this device gateway needs the deployment's admin token (Authorization: Bearer <token>; authsim phone reads AUTHSIM_ADMIN_TOKEN): \(why)")
        })
        router.post("/devices") { request, context in
            let body = try await request.body.collect(upTo: maximumBodyBytes)
            guard let asked = try? JSONDecoder().decode(DeviceRegistration.self, from: Data(body.readableBytesView)),
                  let environment = APNsEnvironment(rawValue: asked.environment), !asked.bundleID.isEmpty
            else { throw GatewayError(.badRequest, #"send {"environment":"sandbox|production","bundleID":"…"}"#) }
            var token = DeviceToken.random()
            if let given = asked.token {
                guard let parsed = DeviceToken(hex: given) else { throw GatewayError(.badRequest, "token must be even-length hex") }
                token = parsed
            }
            do throws(ReceiverError) {
                // A fleet's registry has it in the store, and this receiver's copy, when this returns.
                try await registry.apply(.register(RegisteredDevice(token: token, environment: environment, bundleID: asked.bundleID, label: asked.label)))
            } catch {
                throw GatewayError(error.isUnavailable ? .serviceUnavailable : .internalServerError, error.message)
            }
            return try GatewayJSON(RegisteredToken(token: token.hex, environment: environment.rawValue))
        }
        router.get("/devices/:environment/:token/notifications") { _, context in
            guard let environment = context.parameters.get("environment").flatMap(APNsEnvironment.init(rawValue:)),
                  let token = context.parameters.get("token").flatMap(DeviceToken.init(hex:))
            else { throw GatewayError(.notFound, GatewayErrorMiddleware.endpoints) }
            // A fleet's receivers hand this one the pushes they accept for the device: the store
            // knows it is here before the device hears it is connected.
            let links = await hub.fleetLinks
            if let links {
                do throws(ReceiverError) { try await links.shared.link(token, environment: environment) } catch {
                    throw GatewayError(error.isUnavailable ? .serviceUnavailable : .internalServerError, error.message)
                }
            }
            let (lines, sink) = AsyncStream.makeStream(of: ByteBuffer.self)
            // The device hanging up ends the stream (``HangUpDetector``): one that only waits for
            // pushes would not notice.
            let stream = streams.add(sink, channel: context.channel)
            let subscription = await hub.connect(token: token, environment: environment) { push in
                sink.yield(ByteBuffer(string: line(push)))
            }
            return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: ResponseBody { writer in
                defer {
                    streams.remove(stream)
                    Task {
                        await hub.disconnect(subscription)
                        // A link the store keeps after a failure here goes when this node starts again.
                        try? await links?.shared.unlink(token, environment: environment)
                    }
                }
                try await writer.write(ByteBuffer(string: "{\"connected\":true}\n"))
                for await line in lines { try await writer.write(line) }
                try await writer.finish(nil)
            })
        }
        return router
    }

    /// One push as a gateway line (``GatewayPush``), built as text: the payload goes in as the
    /// JSON it is (line breaks in it turned to spaces), not re-encoded.
    static func line(_ push: AcceptedPush) -> String {
        let payload = String(decoding: push.payload.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }, as: UTF8.self)
        return "{\"apns-id\":\"\(push.apnsID)\",\"environment\":\"\(push.environment.rawValue)\",\"device-token\":\"\(push.deviceToken.hex)\""
            + ",\"bundle-id\":\(CompactJSON.string(push.bundleID)),\"push-type\":\(CompactJSON.string(push.pushType.rawValue))"
            + ",\"payload\":\(payload)}\n"
    }
}

/// What a gateway request carries: the connection, whose hang-up ends a stream.
struct GatewayRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The open notification streams, by connection: a device hanging up ends its stream, and shutting
/// the gateway down ends them all (an open stream would hold a graceful shutdown for ever).
final class GatewayStreams: Sendable {
    private struct Open {
        let sink: AsyncStream<ByteBuffer>.Continuation
        let channel: ObjectIdentifier
    }
    private let open = Mutex<(next: Int, streams: [Int: Open])>((0, [:]))

    func add(_ sink: AsyncStream<ByteBuffer>.Continuation, channel: any Channel) -> Int {
        open.withLock { state in
            state.next += 1
            state.streams[state.next] = Open(sink: sink, channel: ObjectIdentifier(channel))
            return state.next
        }
    }

    func remove(_ id: Int) { _ = open.withLock { $0.streams.removeValue(forKey: id) } }

    /// The device on `channel` hung up.
    func hungUp(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        for stream in open.withLock({ $0.streams.values.filter { $0.channel == id } }) { stream.sink.finish() }
    }

    func finishAll() {
        for stream in open.withLock({ $0.streams.values }) { stream.sink.finish() }
    }
}

/// Tells the streams when a device hangs up. Hummingbird allows half-closed connections, so a
/// device's close shows as its input ending, and nothing is written to a stream waiting for pushes:
/// without this the subscription would outlive the device.
final class HangUpDetector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let streams: GatewayStreams
    init(streams: GatewayStreams) { self.streams = streams }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { streams.hungUp(context.channel) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        streams.hungUp(context.channel)
        context.fireChannelInactive()
    }
}

/// A gateway error: `{"error":"…"}` with its status.
struct GatewayError: HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String
    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }
    func response(from request: Request, context: some RequestContext) throws -> Response {
        try GatewayJSON(["error": message]).response(from: request, context: context, status: status)
    }
}

/// A Codable answer as JSON.
struct GatewayJSON: ResponseGenerator {
    let bytes: Data
    init(_ value: some Encodable) throws { bytes = try JSONEncoder().encode(value) }
    func response(from request: Request, context: some RequestContext) throws -> Response {
        response(from: request, context: context, status: .ok)
    }
    func response(from request: Request, context: some RequestContext, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Unknown paths, other methods and bodies over the limit answer in the gateway's own JSON.
struct GatewayErrorMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    static let endpoints = "no such endpoint: POST /devices or GET /devices/{environment}/{token}/notifications"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as GatewayError {
            throw error
        } catch is NIOTooManyBytesError {
            throw GatewayError(.contentTooLarge, "the registration is larger than \(DeviceGateway.maximumBodyBytes) bytes")
        } catch let error as HTTPError where error.status == .notFound {
            let known = request.uri.path == "/devices" || request.uri.path.hasSuffix("/notifications")
            throw GatewayError(known ? .methodNotAllowed : .notFound, Self.endpoints)
        } catch {
            throw GatewayError(.internalServerError, "\(error)")
        }
    }
}

/// Its device streams end before its server stops (open streams would hold the server's stop up):
/// a group stops this part, added after the server, first.
extension DeviceGateway: RunningPart {
    package var description: String { "the device gateway's streams" }
}
