import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP answer: status, headers (lowercased names) and body.
struct HTTPAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data
}

/// Why an HTTP request got no answer.
struct HTTPFailure: Error, Sendable, CustomStringConvertible {
    let description: String
}

/// How the auth core talks HTTP: plain `http://` (the local backend, the emulator) over SwiftNIO
/// with kept-alive connections; `https://` (Google's real hosts) through URLSession.
///
/// URLSession on Linux (libcurl underneath) managed about 500 requests a second here, so ten
/// thousand simulated apps signing in at once queued behind it for minutes; the NIO client
/// keeps up with the backend.
final class HTTPClient: Sendable {
    static let shared = HTTPClient()

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
    /// Idle connections per `host:port`.
    private let idle = Mutex<[String: [Channel]]>([:])
    /// At most 128 requests in flight per `host:port` (so as many connections): thousands of
    /// simulated apps share them, as a browser's per-host limit makes pages share, and file
    /// descriptors last. Per host, so that one busy backend does not hold up another's apps.
    private let slots = Mutex<[String: Limiter]>([:])

    func request(_ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil,
                 timeout: Duration = .seconds(60)) async throws(HTTPFailure) -> HTTPAnswer {
        guard url.scheme == "http", let host = url.host else { return try await viaURLSession(method, url, headers: headers, body: body) }
        let port = url.port ?? 80
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path)
        head.headers.add(name: "Host", value: "\(host):\(port)")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        head.headers.add(name: "Content-Length", value: String(body?.count ?? 0))
        let limiter = slots.withLock { slots in
            if let limiter = slots["\(host):\(port)"] { return limiter }
            let limiter = Limiter(128)
            slots["\(host):\(port)"] = limiter
            return limiter
        }
        await limiter.acquire()
        defer { limiter.release() }
        // A kept-alive connection the server closed meanwhile fails at once: try a fresh one then.
        for attempt in 0..<2 {
            let (channel, reused) = try await connection(host: host, port: port, fresh: attempt > 0)
            do {
                let answer = try await exchange(on: channel, head: head, body: body, timeout: timeout)
                if answer.keepAlive { release(channel, key: "\(host):\(port)") } else { channel.close(promise: nil) }
                return answer.answer
            } catch is StaleConnection where reused {
                channel.close(promise: nil)
                continue
            } catch {
                channel.close(promise: nil)
                throw HTTPFailure(description: "\(method) \(url.absoluteString): \(error)")
            }
        }
        throw HTTPFailure(description: "\(method) \(url.absoluteString): the connection closed before an answer")
    }

    /// A kept-alive connection, or a new one; and whether it was kept alive.
    private func connection(host: String, port: Int, fresh: Bool) async throws(HTTPFailure) -> (Channel, Bool) {
        let key = "\(host):\(port)"
        if !fresh {
            while let channel = idle.withLock({ $0[key]?.popLast() }) {
                if channel.isActive { return (channel, true) }
            }
        }
        do {
            return (try await ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(AnswerCollector())
                    }
                }
                .connect(host: host, port: port).get(), false)
        } catch {
            throw HTTPFailure(description: "cannot connect to \(key): \(error)")
        }
    }

    private func release(_ channel: Channel, key: String) {
        idle.withLock { $0[key, default: []].append(channel) }
    }

    private func exchange(on channel: Channel, head: HTTPRequestHead, body: Data?, timeout: Duration) async throws -> (answer: HTTPAnswer, keepAlive: Bool) {
        let promise = channel.eventLoop.makePromise(of: (HTTPAnswer, Bool).self)
        channel.eventLoop.execute {
            guard let collector = try? channel.pipeline.syncOperations.handler(type: AnswerCollector.self) else {
                promise.fail(StaleConnection())
                return
            }
            collector.expect(promise)
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body, !body.isEmpty {
                var buffer = channel.allocator.buffer(capacity: body.count)
                buffer.writeBytes(body)
                channel.write(HTTPClientRequestPart.body(.byteBuffer(buffer)), promise: nil)
            }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }
        let timer = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000)) {
            promise.fail(HTTPFailure(description: "no answer within \(timeout)"))
        }
        defer { timer.cancel() }
        let (answer, keepAlive) = try await promise.futureResult.get()
        return (answer, keepAlive)
    }

    private func viaURLSession(_ method: String, _ url: URL, headers: [String: String], body: Data?) async throws(HTTPFailure) -> HTTPAnswer {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            let http = response as? HTTPURLResponse
            var fields: [String: String] = [:]
            for (name, value) in http?.allHeaderFields ?? [:] { fields["\(name)".lowercased()] = "\(value)" }
            return HTTPAnswer(status: http?.statusCode ?? 0, headers: fields, body: data)
        } catch {
            throw HTTPFailure(description: "\(method) \(url.absoluteString): \(error.localizedDescription)")
        }
    }
}

/// Collects one answer at a time on a kept-alive connection.
private final class AnswerCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private var promise: EventLoopPromise<(HTTPAnswer, Bool)>?
    private var answer = HTTPAnswer(status: 0, headers: [:], body: Data())
    private var keepAlive = true
    private var sawHead = false

    func expect(_ promise: EventLoopPromise<(HTTPAnswer, Bool)>) {
        self.promise = promise
        answer = HTTPAnswer(status: 0, headers: [:], body: Data())
        sawHead = false
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            sawHead = true
            answer.status = Int(head.status.code)
            for (name, value) in head.headers { answer.headers[name.lowercased()] = value }
            keepAlive = head.isKeepAlive
        case .body(let buffer):
            answer.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            let finished = promise
            promise = nil
            finished?.succeed((answer, keepAlive))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Closed before any of the answer came: the server dropped an idle connection; safe to redo.
        if let promise {
            self.promise = nil
            promise.fail(sawHead ? HTTPFailure(description: "the connection closed in the middle of the answer") : StaleConnection())
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let promise {
            self.promise = nil
            promise.fail(error)
        }
        context.close(promise: nil)
    }
}

/// A connection that closed before any of the answer came (on a kept-alive one: the server had
/// dropped it while idle; the request is sent again on a new connection).
struct StaleConnection: Error, CustomStringConvertible {
    var description: String { "the connection closed before an answer" }
}

/// A counting semaphore for async callers, first come first served.
final class Limiter: Sendable {
    private struct State {
        var available: Int
        /// Waiters in arrival order from `head` on (a queue without `removeFirst`'s O(n) per release).
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0
    }
    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(available: count)) }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiters.count else {
                state.available += 1
                return nil
            }
            let next = state.waiters[state.head]
            state.head += 1
            if state.head == state.waiters.count {
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 1024, state.head * 2 >= state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return next
        }
        next?.resume()
    }
}
