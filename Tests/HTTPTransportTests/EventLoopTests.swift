import Foundation
import HTTPServerSupport
import HTTPTransport
import NIOHTTPTransport
import LocalPKI
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOPosix
import TestSupport
import Testing

/// Tasks on NIO's event loops: ``EventLoopExecutor``, and the backend's kind of server, whose
/// connections run their handlers on their loops (``HTTPServerBuilder/http1OnEventLoops()``,
/// ``HandlerEventLoops``), without a hand-off to another thread and back per exchange.
@Suite("Event loops as task executors")
struct EventLoopTests {
    @Test("a task preferring a loop's executor runs on that loop, before and after it waits")
    func executor() async throws {
        let loops = Array(HandlerEventLoops.shared.makeIterator())
        #expect(loops.count >= 2)
        #expect(EventLoopExecutor.of(loops[0]) === EventLoopExecutor.of(loops[0]))
        #expect(EventLoopExecutor.of(loops[0]) !== EventLoopExecutor.of(loops[1]))
        for loop in loops {
            let (before, after) = await withTaskExecutorPreference(EventLoopExecutor.of(loop)) { () async -> (Bool, Bool) in
                let before = loop.inEventLoop
                // A future the other loop completes: the task resumes on its own loop.
                let other = loops.first { $0 !== loop }!
                _ = try? await other.submit { 1 }.get()
                return (before, loop.inEventLoop)
            }
            #expect(before && after)
        }
        #expect(MultiThreadedEventLoopGroup.currentEventLoop == nil)
    }

    /// A server whose one route says where its handler ran: on one of `loops`, on another event
    /// loop, or elsewhere (the global executor).
    static func whereHandlersRun(_ server: HTTPServerBuilder, on loops: (any EventLoopGroup)? = nil) async throws -> String {
        let router = Router()
        router.get("/where") { _, _ -> String in
            guard let here = MultiThreadedEventLoopGroup.currentEventLoop else { return "elsewhere" }
            return loops.map { $0.makeIterator().contains { $0 === here } } ?? true ? "its loops" : "another loop"
        }
        let running = try await RunningServer.start(router: router, host: "127.0.0.1", port: 0, name: "the test server",
                                                    server: server, eventLoops: loops)
        let transport = NIOHTTP1Transport()
        defer { transport.shutdown() }
        let answer = try await transport.send(TransportRequest(method: "GET", url: URL(string: running.baseURL + "/where")!))
        await running.shutdown()
        return String(decoding: answer.body, as: UTF8.self)
    }

    @Test("the backend's kind of server runs each connection's handlers on its loop; Hummingbird's own does not")
    func serverConnections() async throws {
        #expect(try await Self.whereHandlersRun(.http1OnEventLoops(), on: HandlerEventLoops.shared) == "its loops")
        #expect(try await Self.whereHandlersRun(.http1OnEventLoops()) == "its loops")
        // HTTP and HTTPS on one port (the backend with a certificate): bound too.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventloops-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pki = try CertsDirectory(folder).ensure()
        #expect(try await Self.whereHandlersRun(.http1AndTLS(certificateChainPEM: pki.serverCertificatePEM, privateKeyPEM: pki.serverKeyPEM),
                                                on: HandlerEventLoops.shared) == "its loops")
        #expect(try await Self.whereHandlersRun(HTTPServerBuilder.http1(configuration: .init())) == "elsewhere")
    }
}
