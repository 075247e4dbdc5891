import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import HTTPTransport
import Synchronization
import Utilities

/// An ``HTTPTransport`` written on SwiftNIO's HTTP/1.1 codec: kept-alive connections per
/// scheme, host and port, at most 128 requests in flight per host; `http://` (the local backend,
/// the Firebase Auth Emulator) and `https://` (Google's hosts, with the system's trust roots).
///
/// Chosen by measurement over the alternatives: URLSession on Linux (libcurl underneath) managed
/// about 500 requests a second here, so ten thousand simulated apps signing in at once queued
/// behind it for minutes; AsyncHTTPClient 1.37 took 5.0–5.7 s and 479 MB for the ten thousand
/// silent-push sign-ins of `Benchmarks/run.sh flows`, this client 3.6–4.3 s and 256 MB.
package final class NIOHTTP1Transport: HTTPTransport {
    private let group: any EventLoopGroup
    /// Idle connections per `host:port`.
    private let idle = Mutex<[String: [Connection]]>([:])
    /// At most `connectionsPerHost` requests in flight per `host:port` (so as many connections):
    /// thousands of simulated apps share them, as a browser's per-host limit makes pages share, and
    /// file descriptors last. Per host, so that one busy backend does not hold up another's apps.
    private let slots = Mutex<[String: Limiter]>([:])
    private let connectionsPerHost: Int
    /// The largest answer body taken (a larger one is ``TransportError/Code/tooLarge``).
    package let maximumResponseBytes: Int
    /// How `https://` connections are made: TLS 1.2 or later, the system's trust roots unless told.
    private let tlsConfiguration: TLSConfiguration
    /// Its context, made on first use (loading the trust roots costs milliseconds).
    private let tls = Mutex<NIOSSLContext?>(nil)

    /// - Parameter trustRoots: what `https://` servers are checked against (the system's roots by
    ///   default; a local CA's certificates in tests).
    package init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, connectionsPerHost: Int = 128,
                maximumResponseBytes: Int = 4 << 20, trustRoots: NIOSSLTrustRoots = .default) {
        self.group = group
        self.connectionsPerHost = connectionsPerHost
        self.maximumResponseBytes = maximumResponseBytes
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.trustRoots = trustRoots
        tlsConfiguration = configuration
    }

    /// A transport whose `https://` trusts the system's roots and the CA in `caPEM` (a device on
    /// which the developer installed the local CA, as for a simulator talking to a local backend).
    /// A PEM that does not parse leaves the system's roots alone.
    package convenience init(trustingCAPEM caPEM: String) {
        let extra = (try? NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8))) ?? []
        self.init(trustRoots: extra.isEmpty ? .default : .certificates(extra))
    }

    deinit { shutdown() }

    /// Closes the kept-alive connections.
    package func shutdown() {
        let connections = idle.withLock { idle in
            defer { idle = [:] }
            return idle.values.flatMap { $0 }
        }
        for connection in connections { connection.channel.close(promise: nil) }
    }

    package func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        try await send(method: request.method, url: request.url, timeout: request.timeout) { () throws(TransportError) in
            TransportContent(headers: request.headers, body: request.body)
        }
    }

    package func send(method: String, url: URL, timeout: Duration,
                     content: () throws(TransportError) -> TransportContent) async throws(TransportError) -> TransportResponse {
        let target = try TransportTarget(url)
        let limiter = limiter(for: target.key)
        // Requests past the limit wait here, in this small frame: the exchange (the request head,
        // the connection, the answer) is made only once a slot is free. With 10,000 sign-ins in
        // flight and 128 slots, the waiting frames were 40 MB of the peak.
        await limiter.acquire()
        defer { limiter.release() }
        // The exchange runs on the connection's event loop, which resumes this task once with its
        // answer or its error; this task only waits, in a small frame (a task keeps the stack slabs
        // of its deepest moment for its life).
        let exchange = try made(method: method, url: url, timeout: timeout, target: target, content: content)
        return try await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<TransportResponse, TransportError>, Never>) in
            exchange.continuation = continuation
            start(exchange, fresh: false)
        }.get()
    }

    /// The exchange, made once it holds a slot.
    @inline(never)
    private func made(method: String, url: URL, timeout: Duration, target: TransportTarget,
                      content: () throws(TransportError) -> TransportContent) throws(TransportError) -> Exchange {
        let request = TransportRequest(method: method, url: url, content: try content(), timeout: timeout)
        return Exchange(request: request, head: requestHead(request, target: target), target: target, transport: self)
    }

    /// The slots of `key`'s host.
    @inline(never)
    private func limiter(for key: String) -> Limiter {
        slots.withLock { slots in
            if let limiter = slots[key] { return limiter }
            let limiter = Limiter(connectionsPerHost)
            slots[key] = limiter
            return limiter
        }
    }

    /// Sends `exchange` on a kept-alive connection, or on a new one when there is none or when
    /// `fresh` (a kept-alive one the server closed meanwhile, before any of the answer: the
    /// request goes once more). Its collector ends it: the answer, or the error.
    fileprivate func start(_ exchange: Exchange, fresh: Bool) {
        if !fresh, let connection = idleConnection(key: exchange.target.key) {
            connection.channel.eventLoop.execute { connection.collector.begin(exchange, reused: true) }
            return
        }
        let collector = AnswerCollector(limit: maximumResponseBytes)
        connect(to: exchange.target) { collector }.whenComplete { result in
            switch result {
            case .success: collector.begin(exchange, reused: false)
            case .failure(let error): exchange.finish(.failure(error as? TransportError ?? TransportError(.unreachable, "\(error)")))
            }
        }
    }

    private func requestHead(_ request: TransportRequest, target: TransportTarget) -> HTTPRequestHead {
        // As the URL has them, percent escapes kept (`path` decodes them, and cost more).
        let encodedPath = request.url.path(percentEncoded: true)
        var path = encodedPath.isEmpty ? "/" : encodedPath
        if let query = request.url.query(percentEncoded: true) { path += "?" + query }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: path)
        head.headers.add(name: "Host", value: target.hostField(for: request.url))
        for (name, value) in request.headers { head.headers.add(name: name, value: value) }
        head.headers.add(name: "Content-Length", value: String(request.body?.count ?? 0))
        return head
    }

    /// A kept-alive connection to `key` that is still open, if there is one.
    private func idleConnection(key: String) -> Connection? {
        while let connection = idle.withLock({ $0[key]?.popLast() }) {
            if connection.channel.isActive { return connection }
        }
        return nil
    }

    /// A new connection to `target` whose pipeline ends in the handler `last` makes; a failure
    /// is ``TransportError/Code/unreachable``.
    private func connect(to target: TransportTarget, _ last: @escaping @Sendable () -> any ChannelHandler) -> EventLoopFuture<Channel> {
        let tls: NIOSSLContext?
        do { tls = target.secure ? try tlsContext() : nil } catch { return group.next().makeFailedFuture(error) }
        return ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        // An IP literal is no server name (RFC 6066 §3): no SNI, and the
                        // certificate is checked against the peer's address.
                        let name = TransportTarget.isIPAddress(target.bareHost) ? nil : target.host
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: name))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(last())
                }
            }
            .connect(host: target.host, port: target.port)
            .flatMapErrorThrowing { error in throw TransportError(.unreachable, "cannot connect to \(target.key): \(error)") }
    }

    /// Sends `request` on a connection of its own and hands each line of the answer's body to
    /// `onLine` as it comes (a stream of JSON lines, as the device gateway sends pushes). Returns
    /// once the answer's head came with status 200; another status is thrown with the answer's
    /// body. `onEnd` hears once when the stream ends: `nil` when the server ended it, the error
    /// otherwise (the connection lost, a line over `maximumResponseBytes`). ``LineStream/close()``
    /// ends it from this side (then `onEnd` is not called).
    package func lines(_ request: TransportRequest, onLine: @escaping @Sendable ([UInt8]) -> Void,
                      onEnd: @escaping @Sendable (TransportError?) -> Void) async throws(TransportError) -> any LineStreaming {
        try await stream(request, onLine: onLine, onEnd: onEnd)
    }

    /// ``lines(_:onLine:onEnd:)`` with its concrete stream.
    package func stream(_ request: TransportRequest, onLine: @escaping @Sendable ([UInt8]) -> Void,
                        onEnd: @escaping @Sendable (TransportError?) -> Void = { _ in }) async throws(TransportError) -> LineStream {
        let url = request.url
        let target = try TransportTarget(url)
        let head = requestHead(request, target: target)
        let limit = maximumResponseBytes
        let started = LineStreamStart()
        let channel: Channel
        do {
            channel = try await connect(to: target) {
                LineSplitter(limit: limit, started: started, onLine: onLine, onEnd: onEnd)
            }.get()
        } catch {
            throw error as? TransportError ?? TransportError(.unreachable, "cannot connect to \(target.key): \(error)")
        }
        let timer = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(request.timeout.inSeconds * 1e9))) {
            started.finish(.failure(TransportError(.timedOut, "no answer within \(request.timeout)")))
        }
        channel.eventLoop.execute {
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body = request.body, !body.isEmpty {
                channel.write(HTTPClientRequestPart.body(.byteBuffer(channel.allocator.buffer(bytes: body))), promise: nil)
            }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }
        defer { timer.cancel() }
        do {
            try await started.wait()
            return LineStream(channel: channel, started: started)
        } catch {
            channel.close(promise: nil)
            throw TransportError(error.code, "\(request.method) \(url.absoluteString): \(error.message)")
        }
    }

    private func tlsContext() throws(TransportError) -> NIOSSLContext {
        do {
            return try tls.withLock { context in
                if let context { return context }
                let made = try NIOSSLContext(configuration: tlsConfiguration)
                context = made
                return made
            }
        } catch {
            throw TransportError(.unreachable, "cannot set up TLS: \(error)")
        }
    }

    /// Keeps `connection` for the next request to `key`.
    fileprivate func release(_ connection: Connection, key: String) {
        idle.withLock { $0[key, default: []].append(connection) }
    }
}

/// A kept-alive connection and the handler that collects its answers.
fileprivate struct Connection: Sendable {
    let channel: any Channel
    let collector: AnswerCollector
}

/// One request on its way: what goes, where, and the task waiting for its answer. Whoever ends
/// it (the collector, a failed connect) calls ``finish(_:)`` once.
fileprivate final class Exchange: @unchecked Sendable {
    let request: TransportRequest
    let head: HTTPRequestHead
    let target: TransportTarget
    /// Held for the exchange only (a kept-alive connection's collector holds no transport).
    let transport: NIOHTTP1Transport
    /// Set before the exchange starts, taken when it ends.
    var continuation: UnsafeContinuation<Result<TransportResponse, TransportError>, Never>?

    init(request: TransportRequest, head: HTTPRequestHead, target: TransportTarget, transport: NIOHTTP1Transport) {
        self.request = request
        self.head = head
        self.target = target
        self.transport = transport
    }

    /// Resumes the waiting task; an error names the request.
    func finish(_ result: Result<TransportResponse, TransportError>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(returning: result.mapError { error in
            TransportError(error.code, "\(request.method) \(request.url.absoluteString): \(error.message)")
        })
    }
}

/// Collects one answer at a time on a kept-alive connection: it writes an exchange's request,
/// reads its answer, gives the connection back to the transport's pool (or closes it) and ends
/// the exchange. Every call is on the channel's event loop (``begin(_:reused:)`` is made there).
fileprivate final class AnswerCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart
    private let limit: Int
    private var context: ChannelHandlerContext?
    private var exchange: Exchange?
    /// Whether the connection had served an exchange before this one (a stale one is redone).
    private var reused = false
    private var timer: Scheduled<Void>?
    private var answer = TransportResponse(status: 0, headers: [], body: [])
    private var keepAlive = true
    private var sawHead = false

    init(limit: Int) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Sends `exchange`'s request and waits for its answer.
    func begin(_ exchange: Exchange, reused: Bool) {
        guard let context, context.channel.isActive else {
            redoOrFail(exchange, reused: reused, sawHead: false)
            return
        }
        self.exchange = exchange
        self.reused = reused
        answer = TransportResponse(status: 0, headers: [], body: [])
        sawHead = false
        keepAlive = true
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let body = exchange.request.body, !body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        let timeout = exchange.request.timeout
        timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: .nanoseconds(Int64(timeout.inSeconds * 1e9))) { [self] in
            timer = nil
            fail(TransportError(.timedOut, "no answer within \(timeout)"))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            sawHead = true
            answer.status = Int(head.status.code)
            answer.headers = head.headers.map { ($0.name.lowercased(), $0.value) }
            keepAlive = head.isKeepAlive
        case .body(let buffer):
            guard answer.body.count + buffer.readableBytes <= limit else {
                fail(TransportError(.tooLarge, "the answer is larger than \(limit) bytes"))
                return
            }
            answer.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let exchange = take() else { return }
            if keepAlive {
                exchange.transport.release(Connection(channel: context.channel, collector: self), key: exchange.target.key)
            } else {
                context.close(promise: nil)
            }
            exchange.finish(.success(answer))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Closed before any of the answer came: the server dropped an idle connection; safe to redo.
        if let exchange = take() { redoOrFail(exchange, reused: reused, sawHead: sawHead) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error as? TransportError ?? TransportError(.closed, "\(error)"))
    }

    /// The exchange in progress, no longer this connection's; its timer stopped.
    private func take() -> Exchange? {
        timer?.cancel()
        timer = nil
        defer { exchange = nil }
        return exchange
    }

    /// A kept-alive connection closed before any of the answer: the request goes again on a new
    /// connection; otherwise the exchange fails.
    private func redoOrFail(_ exchange: Exchange, reused: Bool, sawHead: Bool) {
        if reused, !sawHead {
            exchange.transport.start(exchange, fresh: true)
        } else {
            exchange.finish(.failure(TransportError(.closed, sawHead ? "the connection closed in the middle of the answer" : "the connection closed before an answer")))
        }
    }

    private func fail(_ error: TransportError) {
        take()?.finish(.failure(error))
        context?.close(promise: nil)
    }
}

/// An answer streamed line by line (``NIOHTTP1Transport/lines(_:onLine:onEnd:)``).
package final class LineStream: LineStreaming {
    private let channel: any Channel
    private let started: LineStreamStart

    fileprivate init(channel: any Channel, started: LineStreamStart) {
        self.channel = channel
        self.started = started
    }

    /// Ends the stream from this side and closes its connection.
    package func close() async {
        started.closedHere()
        try? await channel.close()
    }
}

/// The head of a streamed answer: 200 starts the stream; anything else (with its body) is an error.
private final class LineStreamStart: Sendable {
    private struct State {
        var result: Result<Void, TransportError>?
        var waiter: CheckedContinuation<Result<Void, TransportError>, Never>?
        var closedHere = false
    }
    private let state = Mutex(State())

    /// The first call decides; later ones are ignored.
    func finish(_ result: Result<Void, TransportError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Void, TransportError>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: result)
    }

    func wait() async throws(TransportError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, TransportError>, Never>) in
            let ready = state.withLock { state -> Result<Void, TransportError>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        try result.get()
    }

    func closedHere() { state.withLock { $0.closedHere = true } }
    var wasClosedHere: Bool { state.withLock { $0.closedHere } }
}

/// Splits a streamed answer's body into lines for ``NIOHTTP1Transport/lines(_:onLine:onEnd:)``.
private final class LineSplitter: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private let limit: Int
    private let started: LineStreamStart
    private let onLine: @Sendable ([UInt8]) -> Void
    private let onEnd: @Sendable (TransportError?) -> Void
    private var status = 0
    private var pending: [UInt8] = []
    private var ended = false

    init(limit: Int, started: LineStreamStart, onLine: @escaping @Sendable ([UInt8]) -> Void,
         onEnd: @escaping @Sendable (TransportError?) -> Void) {
        self.limit = limit
        self.started = started
        self.onLine = onLine
        self.onEnd = onEnd
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            if status == 200 { started.finish(.success(())) }
        case .body(let buffer):
            pending.append(contentsOf: buffer.readableBytesView)
            guard status == 200 else {
                if pending.count > limit { end(TransportError(.tooLarge, "the answer is larger than \(limit) bytes"), context: context) }
                return
            }
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                onLine(Array(pending[start..<newline]))
                start = pending.index(after: newline)
            }
            pending.removeSubrange(..<start)
            if pending.count > limit { end(TransportError(.tooLarge, "a line is longer than \(limit) bytes"), context: context) }
        case .end:
            if status != 200 {
                started.finish(.failure(TransportError(.closed, "answered HTTP \(status): \(String(decoding: pending, as: UTF8.self))")))
            }
            end(nil, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        started.finish(.failure(TransportError(.closed, "the connection closed before an answer")))
        if !ended, !started.wasClosedHere {
            ended = true
            onEnd(TransportError(.closed, "the connection closed"))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(TransportError(.closed, "\(error)"), context: context)
    }

    private func end(_ error: TransportError?, context: ChannelHandlerContext) {
        started.finish(.failure(error ?? TransportError(.closed, "the answer ended at once")))
        if !ended, !started.wasClosedHere {
            ended = true
            onEnd(error)
        }
        context.close(promise: nil)
    }
}
