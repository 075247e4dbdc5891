import Foundation
import HTTPServerSupport
import HTTPTransport
import NIOHTTPTransport
import Hummingbird
import LocalPKI
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing

/// The HTTP clients, against real servers: Hummingbird on loopback, and `openssl s_server` (an
/// HTTP server we did not write) for `https://`. Each test runs on both: the simulation's
/// (`NIOHTTP1Transport`) and the app side's own (`SocketTransport`, sockets and libssl).
@Suite("The HTTP transport")
struct TransportTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case nio, sockets
        var testDescription: String { rawValue }

        func make(maximumResponseBytes: Int = 4 << 20, caPEM: String? = nil) throws -> any HTTPTransport {
            switch self {
            case .nio:
                let roots = try caPEM.map { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
                return NIOHTTP1Transport(maximumResponseBytes: maximumResponseBytes, trustRoots: roots.map { .certificates($0) } ?? .default)
            case .sockets:
                return SocketTransport(maximumResponseBytes: maximumResponseBytes, trustingCAPEM: caPEM)
            }
        }
    }

    /// A Hummingbird server with a few routes for the client to meet.
    static func withServer(_ body: (String) async throws -> Void) async throws {
        let router = Router()
        // /slow answers only when the test is done: a client's timeout can never lose the race to
        // it, however loaded the machine (it slept 1.5 s until issue 26).
        let release = Latch()
        router.get("/small") { _, _ in "hello" }
        router.get("/big") { _, _ in String(repeating: "x", count: 100_000) }
        router.get("/slow") { _, _ -> String in
            await release.wait()
            return "late"
        }
        router.post("/echo") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            return Response(status: .created, headers: [.contentType: "text/plain"], body: .init(byteBuffer: body))
        }
        router.get("/lines") { _, _ in
            Response(status: .ok, body: ResponseBody { writer in
                for index in 0..<3 { try await writer.write(ByteBuffer(string: "{\"n\":\(index)}\n")) }
                try await writer.write(ByteBuffer(string: "{\"n\":"))
                try await writer.write(ByteBuffer(string: "3}\n"))
                try await writer.finish(nil)
            })
        }
        // One line, then the next only once the client has read it (named by `id`, so that tests
        // running at once each have theirs): each comes in a read of its own.
        router.get("/lines-in-turn/:id") { _, context in
            let heard = Self.turn(context.parameters.get("id") ?? "")
            return Response(status: .ok, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "first\n"))
                await heard.wait()
                try await writer.write(ByteBuffer(string: "second\n"))
                try await writer.finish(nil)
            })
        }
        // Answers only once `n` requests named `id` are all waiting here.
        router.get("/together/:id/:n") { _, context -> String in
            let n = Int(context.parameters.get("n") ?? "") ?? 1
            let gate = Self.turn("together-" + (context.parameters.get("id") ?? ""))
            if Self.arrivals.withLock({ arrived in
                arrived[context.parameters.get("id") ?? "", default: 0] += 1
                return arrived[context.parameters.get("id") ?? ""] == n
            }) { gate.open() }
            await gate.wait()
            return "together"
        }
        router.get("/missing-lines") { _, _ in Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "nothing here"))) }
        let server = try await RunningServer.start(router: router, host: "127.0.0.1", port: 0, name: "the test server")
        do {
            try await body(server.baseURL)
            release.open()
            await server.shutdown()
        } catch {
            release.open()
            await server.shutdown()
            throw error
        }
    }

    static let turns = Mutex<[String: Latch]>([:])
    static let arrivals = Mutex<[String: Int]>([:])
    static func turn(_ id: String) -> Latch {
        turns.withLock { turns in
            if let latch = turns[id] { return latch }
            let latch = Latch()
            turns[id] = latch
            return latch
        }
    }

    @Test("whole answers over kept-alive connections; any status is an answer, not an error", arguments: Kind.allCases)
    func answers(_ kind: Kind) async throws {
        try await Self.withServer { base in
            let transport = try kind.make()
            for _ in 0..<3 {
                let answer = try await transport.send(TransportRequest(method: "GET", url: URL(string: base + "/small")!))
                #expect(answer.status == 200)
                #expect(String(decoding: answer.body, as: UTF8.self) == "hello")
            }
            let echoed = try await transport.send(TransportRequest(method: "POST", url: URL(string: base + "/echo")!,
                                                                   headers: [("Content-Type", "text/plain")], body: Array("ping".utf8)))
            #expect(echoed.status == 201)
            #expect(echoed.header("Content-Type") == "text/plain")
            #expect(echoed.body == Array("ping".utf8))
            let missing = try await transport.send(TransportRequest(method: "GET", url: URL(string: base + "/nothing")!))
            #expect(missing.status == 404)
            // A chunked answer, whole.
            let chunked = try await transport.send(TransportRequest(method: "GET", url: URL(string: base + "/lines")!))
            #expect(String(decoding: chunked.body, as: UTF8.self) == "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        }
    }

    @Test("the Host field names an IPv6 literal in brackets, and the port only when the URL does")
    func hostField() throws {
        let cases: [(String, String)] = [
            ("http://[::1]:8080/x", "[::1]:8080"), ("https://[2001:db8::1]/x", "[2001:db8::1]"),
            ("http://127.0.0.1:9099/x", "127.0.0.1:9099"), ("https://www.googleapis.com/x", "www.googleapis.com"),
            ("https://www.googleapis.com:443/x", "www.googleapis.com:443"),
        ]
        for (url, field) in cases {
            let url = try #require(URL(string: url))
            #expect(try TransportTarget(url).hostField(for: url) == field)
        }
    }

    /// Whether this machine has IPv6 loopback (`::1` on `lo`).
    static let hasIPv6Loopback = (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?
        .contains("00000000000000000000000000000001") ?? false

    @Test("a server on ::1 gets Host [::1]:port from both transports", .enabled(if: hasIPv6Loopback), arguments: Kind.allCases)
    func ipv6Host(_ kind: Kind) async throws {
        let router = Router()
        router.get("/host") { request, _ in request.head.authority ?? "none" }
        let server = try await RunningServer.start(router: router, host: "::1", port: 0, name: "the IPv6 test server")
        do {
            let answer = try await kind.make().send(TransportRequest(method: "GET", url: URL(string: "http://[::1]:\(server.port)/host")!))
            #expect(answer.status == 200)
            #expect(String(decoding: answer.body, as: UTF8.self) == "[::1]:\(server.port)")
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// Every request in flight at once, each waiting on the server: a transport that serialised
    /// them would never answer. (The first SocketTransport ran its blocking exchanges on Dispatch's
    /// global queues, which on Linux also run Swift's tasks: this passed slowly with it, and
    /// ServerErrorTableTests, whose backends answer from tasks, timed out.)
    @Test("eight requests waiting on the server at once all get their answers", arguments: Kind.allCases)
    func waitingTogether(_ kind: Kind) async throws {
        try await Self.withServer { base in
            let transport = try kind.make()
            let id = UUID().uuidString
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await transport.send(TransportRequest(method: "GET", url: URL(string: base + "/together/\(id)/8")!, timeout: .seconds(60))).status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
        }
    }

    @Test("an answer over the size limit, a server that does not answer in time, and no server at all are errors that say so",
          arguments: Kind.allCases)
    func failures(_ kind: Kind) async throws {
        try await Self.withServer { base in
            let small = try kind.make(maximumResponseBytes: 10_000)
            let tooLarge = await #expect(throws: TransportError.self) {
                try await small.send(TransportRequest(method: "GET", url: URL(string: base + "/big")!))
            }
            #expect(tooLarge?.code == .tooLarge)
            let slow = await #expect(throws: TransportError.self) {
                try await small.send(TransportRequest(method: "GET", url: URL(string: base + "/slow")!, timeout: .milliseconds(300)))
            }
            #expect(slow?.code == .timedOut)
            // The transport still works after both.
            let after = try await small.send(TransportRequest(method: "GET", url: URL(string: base + "/small")!))
            #expect(after.status == 200)
        }
        let (closedPort, holder) = try unlistenedPort()
        defer { close(holder) }
        let refused = await #expect(throws: TransportError.self) {
            try await kind.make().send(TransportRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(closedPort)/")!))
        }
        #expect(refused?.code == .unreachable)
        let badURL = await #expect(throws: TransportError.self) {
            try await kind.make().send(TransportRequest(method: "GET", url: URL(string: "ftp://127.0.0.1/")!))
        }
        #expect(badURL?.code == .badURL)
    }

    @Test("a kept-alive connection the server dropped is sent on again once, on a new connection; a new one closed before an answer is an error",
          arguments: Kind.allCases)
    func droppedConnections(_ kind: Kind) async throws {
        // The server answers a connection's first request and closes it on the second, as a server
        // that dropped an idle kept-alive connection meets the client's next request.
        try await DroppingServer.with(answersFirst: true) { base, connections in
            let transport = try kind.make()
            let first = try await transport.send(TransportRequest(method: "GET", url: URL(string: base + "/one")!))
            #expect(first.status == 200)
            let second = try await transport.send(TransportRequest(method: "GET", url: URL(string: base + "/two")!))
            #expect(second.status == 200)
            #expect(String(decoding: second.body, as: UTF8.self) == "/two")
            #expect(connections.value == 2)
        }
        // A new connection is not sent on again: the error says the connection closed.
        try await DroppingServer.with(answersFirst: false) { base, connections in
            let transport = try kind.make()
            let closed = await #expect(throws: TransportError.self) {
                try await transport.send(TransportRequest(method: "GET", url: URL(string: base + "/one")!))
            }
            #expect(closed?.code == .closed)
            #expect(closed?.message.contains("GET \(base)/one") == true)
            #expect(connections.value == 1)
        }
    }

    @Test("a streamed answer comes line by line, lines split across writes joined; a refused stream is an error with its body",
          arguments: Kind.allCases)
    func lineStreams(_ kind: Kind) async throws {
        try await Self.withServer { base in
            let transport = try kind.make()
            let lines = Collected()
            let ended = Collected()
            let end = Latch()
            let stream = try await transport.lines(TransportRequest(method: "GET", url: URL(string: base + "/lines")!)) { line in
                lines.add(String(decoding: line, as: UTF8.self))
            } onEnd: { error in
                ended.add(error.map { "\($0)" } ?? "ended")
                end.open()
            }
            await end.wait()
            #expect(ended.values == ["ended"])
            #expect(lines.values == [#"{"n":0}"#, #"{"n":1}"#, #"{"n":2}"#, #"{"n":3}"#])
            await stream.close()
            // Lines that come one read at a time, the second only once the first was read.
            let id = UUID().uuidString
            let inTurn = Collected()
            let done = Latch()
            let turned = try await transport.lines(TransportRequest(method: "GET", url: URL(string: base + "/lines-in-turn/" + id)!)) { line in
                inTurn.add(String(decoding: line, as: UTF8.self))
                Self.turn(id).open()
            } onEnd: { _ in done.open() }
            await done.wait()
            #expect(inTurn.values == ["first", "second"])
            // Closed from this side after the server ended it: the stream's descriptor was closed,
            // and its number may be the socket opened next (here one listening): that one must
            // still listen afterwards (a late shutdown of the old number once broke a server).
            let (port, listener) = try unlistenedPort()
            defer { close(listener) }
            #expect(listen(listener, 4) == 0)
            await turned.close()
            let dialer = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(dialer) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(dialer, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0, "the socket opened after the stream ended no longer listens")
            let refused = await #expect(throws: TransportError.self) {
                try await transport.lines(TransportRequest(method: "GET", url: URL(string: base + "/missing-lines")!)) { _ in }
            }
            #expect(refused?.message.contains("HTTP 404: nothing here") == true)
        }
    }

    @Test("https:// with TLS 1.2+ against openssl s_server: trusted through the given CA, refused with the system's roots",
          arguments: Kind.allCases)
    func https(_ kind: Kind) async throws {
        guard await toolAvailable(["openssl", "version"]) else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let credentials = try CertsDirectory(folder.appendingPathComponent("Certs")).ensure()
        // An ephemeral port, which s_server names in its ACCEPT line once it listens (this took a
        // port bound and released, and retried connecting every 50 ms, until issue 26).
        let server = try ServerProcess(["/usr/bin/env", "openssl", "s_server", "-accept", "127.0.0.1:0", "-www",
                                        "-cert", credentials.serverCertificateFile.path, "-key", credentials.serverKeyFile.path])
        defer { server.stop() }
        _ = try await server.waitFor("ACCEPT")
        let url = URL(string: "https://localhost:\(try server.port(after: "ACCEPT"))/")!
        let trusting = try kind.make(caPEM: credentials.caCertificatePEM)
        let answer = try await trusting.send(TransportRequest(method: "GET", url: url, timeout: .seconds(30)))
        #expect(answer.status == 200)
        let page = String(decoding: answer.body, as: UTF8.self)
        #expect(page.contains("s_server"))
        await #expect(throws: TransportError.self) {
            try await kind.make().send(TransportRequest(method: "GET", url: url, timeout: .seconds(5)))
        }
    }
}

/// An HTTP/1.1 server on SwiftNIO that answers a connection's first request (200, kept alive, the
/// path as the body) and closes the connection when the next request comes, without an answer;
/// with `answersFirst` false it closes on the first.
enum DroppingServer {
    final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let answersFirst: Bool
        private var requests = 0
        private var path = ""
        init(answersFirst: Bool) { self.answersFirst = answersFirst }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): path = head.uri
            case .body: break
            case .end:
                requests += 1
                guard requests == 1, answersFirst else {
                    context.close(promise: nil)
                    return
                }
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: String(path.utf8.count))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: path)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    /// Connections accepted so far.
    final class Count: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    static func with(answersFirst: Bool, _ body: (String, Count) async throws -> Void) async throws {
        let connections = Count()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                connections.add()
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(answersFirst: answersFirst))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        do {
            try await body("http://127.0.0.1:\(server.localAddress?.port ?? 0)", connections)
            try? await server.close()
        } catch {
            try? await server.close()
            throw error
        }
    }
}

/// Strings collected from callbacks on other threads.
final class Collected: Sendable {
    private let state = Mutex<[String]>([])
    func add(_ value: String) { state.withLock { $0.append(value) } }
    var values: [String] { state.withLock { $0 } }
}

/// A loopback port bound by a socket that never listens: a connection to it is refused, and no
/// other test can take the port while `socket` is open (it was bound and released until issue 26,
/// free for any test's ephemeral port in between). Close `socket` when done.
func unlistenedPort() throws -> (port: Int, socket: Int32) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return (Int(UInt16(bigEndian: address.sin_port)), fd)
}
