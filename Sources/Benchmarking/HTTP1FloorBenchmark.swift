import AuthBackend
import Foundation
import HTTPServerSupport
import HTTPTransport
import NIOHTTPTransport
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Utilities

/// The sign-ins' HTTP/1.1 exchanges layer by layer. At the bottom, SwiftNIO alone: a server that
/// answers every request with one fixed body, and a client that sends one request after another on
/// each of its kept-alive connections; no routing, no JSON, no tasks, no actors, the channel
/// handlers on the event loops as NIO's own examples write them. Above it, what the sign-ins run:
/// Hummingbird's router on the backend's loops, the backend itself, and the apps' transport
/// (``NIOHTTP1Transport``) called from tasks. `Benchmarks/run.sh flows` loads each against its C
/// counterpart (nginx, h2load --h1), so each layer's cost per exchange reads off one table.
package enum HTTP1FloorBenchmark {
    /// What answers.
    package enum ServerLayer: String, CaseIterable, Sendable {
        /// SwiftNIO's HTTP/1.1 codec and one channel handler.
        case nio
        /// Hummingbird's router, one route answering the body, served as the backend serves
        /// (``HTTPServerBuilder/http1OnEventLoops()`` on ``HandlerEventLoops``).
        case hummingbird
        /// The backend itself (an empty state in a temporary folder): its cheapest route,
        /// `GET /v2/recaptchaConfig`, at ``backendPath``.
        case backend
    }

    /// What sends.
    package enum ClientLayer: String, CaseIterable, Sendable {
        /// SwiftNIO's HTTP/1.1 codec and one channel handler per connection.
        case nio
        /// ``NIOHTTP1Transport`` (the apps' transport), one task per connection sending one request
        /// after another, as the simulated apps call it.
        case transport
    }

    /// The backend's route the `backend` layer is loaded on (its API key is the default configuration's).
    package static var backendPath: String {
        "/identitytoolkit.googleapis.com/v2/recaptchaConfig?key=\(BackendConfiguration().apiKey)&clientType=CLIENT_TYPE_IOS&version=RECAPTCHA_ENTERPRISE"
    }

    /// A running server of one layer, until the process ends.
    package struct Server: Sendable {
        package var port: Int
        /// Where a load should go.
        package var path: String
        /// Returns when the server's channel closes (the NIO layer's); the others serve until the
        /// process is stopped, and this keeps them until then.
        package var untilStopped: @Sendable () async throws -> Void
    }

    /// Holds `server` until the process is stopped.
    private static func serving(_ server: some Sendable) -> @Sendable () async throws -> Void {
        {
            defer { withExtendedLifetime(server) {} }
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
    }

    /// Starts `layer` on 127.0.0.1:`port` (0: any free one); `body` is the answer of the layers that
    /// answer a fixed one; `folder` holds the backend's state.
    package static func serve(_ layer: ServerLayer, port: Int, body: [UInt8], folder: URL) async throws -> Server {
        switch layer {
        case .nio:
            let (bound, channel) = try await serve(port: port, body: body)
            return Server(port: bound, path: "/", untilStopped: { try await channel.closeFuture.get() })
        case .hummingbird:
            let router = Router()
            let answer = ByteBuffer(bytes: body)
            @Sendable func answering(_: Hummingbird.Request, _: BasicRequestContext) -> Response {
                Response(status: .ok, headers: [.contentType: "application/json; charset=UTF-8"], body: ResponseBody(byteBuffer: answer))
            }
            for path: RouterPath in ["/", "**"] {
                router.post(path, use: answering)
                router.get(path, use: answering)
            }
            let server = try await RunningServer.start(router: router, host: "127.0.0.1", port: port, name: "the Hummingbird layer",
                                                       server: .http1OnEventLoops(), eventLoops: HandlerEventLoops.shared)
            return Server(port: server.port, path: "/", untilStopped: serving(server))
        case .backend:
            let toolkit = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil, stateDirectory: folder)
            let server = try await BackendServer.start(toolkit: toolkit, port: port)
            return Server(port: server.port, path: backendPath, untilStopped: serving(server))
        }
    }

    /// The server, until the process ends: every request gets `200` with `body` as JSON.
    /// - Returns: the port it listens on (127.0.0.1), once it does.
    static func serve(port: Int, body: [UInt8], group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> (port: Int, channel: any Channel) {
        let answer = ByteBuffer(bytes: body)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                    try channel.pipeline.syncOperations.addHandler(FixedAnswer(body: answer))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        return (channel.localAddress?.port ?? port, channel)
    }

    /// What a load run measured.
    package struct Report: Sendable {
        package var exchanges: Int
        package var failures: Int
        package var seconds: Double
        package var exchangesPerSecond: Double { seconds > 0 ? Double(exchanges) / seconds : 0 }
    }

    /// `requests` POSTs of `body` (GETs without one) to `host:port` `path`, over `connections` kept-alive connections, one
    /// request at a time on each (as the SDK's transport holds them); the seconds from the first
    /// connection made to the last answer read.
    package static func load(_ layer: ClientLayer, host: String, port: Int, path: String, body: [UInt8]?, requests: Int,
                             connections: Int) async throws -> Report {
        switch layer {
        case .nio: return try await load(host: host, port: port, path: path, body: body, requests: requests, connections: connections)
        case .transport: return try await loadTransport(host: host, port: port, path: path, body: body, requests: requests, connections: connections)
        }
    }

    /// ``load(_:host:port:path:body:requests:connections:)`` through ``NIOHTTP1Transport``: `connections`
    /// tasks, each sending one request after another (the transport holds as many connections).
    static func loadTransport(host: String, port: Int, path: String, body: [UInt8]?, requests: Int, connections: Int) async throws -> Report {
        guard let url = URL(string: "http://\(host):\(port)\(path)") else { throw TransportError(.badURL, "http://\(host):\(port)\(path)") }
        let transport = NIOHTTP1Transport(connectionsPerHost: connections)
        defer { transport.shutdown() }
        let shared = Shared(requests)
        let request = body.map { TransportRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")], body: $0) }
            ?? TransportRequest(method: "GET", url: url)
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for _ in 0..<min(connections, requests) {
                tasks.addTask {
                    while shared.takeOne() {
                        shared.count(ok: try await transport.send(request).status == 200)
                    }
                }
            }
            try await tasks.waitForAll()
        }
        return shared.report(seconds: (clock.now - start).inSeconds)
    }

    static func load(host: String, port: Int, path: String, body: [UInt8]?, requests: Int, connections: Int,
                     group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> Report {
        let shared = Shared(requests)
        var head = HTTPRequestHead(version: .http1_1, method: body == nil ? .GET : .POST, uri: path)
        head.headers.add(name: "Host", value: "\(host):\(port)")
        if let body {
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Content-Length", value: String(body.count))
        }
        let request = Exchange(head: head, body: body.map { ByteBuffer(bytes: $0) })
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for _ in 0..<min(connections, requests) {
                tasks.addTask {
                    let finished = group.next().makePromise(of: Void.self)
                    let channel = try await ClientBootstrap(group: group)
                        .channelOption(.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                                try channel.pipeline.syncOperations.addHandler(
                                    OneAtATime(request: request, shared: shared, finished: finished))
                            }
                        }
                        .connect(host: host, port: port).get()
                    try await finished.futureResult.get()
                    try await channel.close()
                }
            }
            try await tasks.waitForAll()
        }
        return shared.report(seconds: (clock.now - start).inSeconds)
    }

    /// The requests left to send, and the answers read, across the connections.
    final class Shared: Sendable {
        private let remaining: Mutex<Int>
        private let tally = Mutex((done: 0, failed: 0))
        init(_ requests: Int) { remaining = Mutex(requests) }

        /// Takes one of the requests left to send; false when none is.
        func takeOne() -> Bool {
            remaining.withLock { left in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
        }

        /// Counts an answer read: a 200, or not.
        func count(ok: Bool) { tally.withLock { ok ? ($0.done += 1) : ($0.failed += 1) } }

        func report(seconds: Double) -> Report {
            let (done, failed) = tally.withLock { $0 }
            return Report(exchanges: done, failures: failed, seconds: seconds)
        }
    }

    struct Exchange: Sendable {
        var head: HTTPRequestHead
        var body: ByteBuffer?
    }

    /// Answers each request once its end is read: status 200, the body, kept alive.
    final class FixedAnswer: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let body: ByteBuffer
        private let head: HTTPResponseHead
        private var keepAlive = true

        init(body: ByteBuffer) {
            self.body = body
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json; charset=UTF-8")
            headers.add(name: "Content-Length", value: String(body.readableBytes))
            head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let request): keepAlive = request.isKeepAlive
            case .body: break
            case .end:
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                if keepAlive {
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                } else {
                    context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
                }
            }
        }
    }

    /// Sends a request, reads its answer, sends the next while any are left; then completes `finished`.
    final class OneAtATime: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        private let request: Exchange
        private let shared: Shared
        private let finished: EventLoopPromise<Void>
        private var ok = true

        init(request: Exchange, shared: Shared, finished: EventLoopPromise<Void>) {
            self.request = request
            self.shared = shared
            self.finished = finished
        }

        func channelActive(context: ChannelHandlerContext) {
            sendNext(context: context)
        }

        private func sendNext(context: ChannelHandlerContext) {
            guard shared.takeOne() else { finished.succeed(()); return }
            context.write(wrapOutboundOut(.head(request.head)), promise: nil)
            if let body = request.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): ok = head.status == .ok
            case .body: break
            case .end:
                shared.count(ok: ok)
                sendNext(context: context)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            finished.fail(ChannelError.ioOnClosedChannel)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            finished.fail(error)
            context.close(promise: nil)
        }
    }
}
