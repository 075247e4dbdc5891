import Foundation
import NIOCore
import NIOPosix

/// What the app that owns a scheme says about a URL handed to it.
package struct InterceptorAnswer: Codable, Sendable, Hashable {
    /// Whether the app handled the URL (for Auth: `canHandle(url)` answered true).
    package var handled: Bool
    /// The app that answered.
    package var bundleID: String
    /// What the URL carried, or exactly why it was not handled.
    package var detail: String
    /// When not handled, the reason's code (`eventMismatch`, `replayed`, `notForwarded`, …).
    package var reason: String?

    package init(handled: Bool, bundleID: String, detail: String, reason: String? = nil) {
        self.handled = handled
        self.bundleID = bundleID
        self.detail = detail
        self.reason = reason
    }
}

/// The app's side of the OS's URL dispatch: while it runs, the app owns its schemes, and a URL
/// sent to one of their sockets (by `redirect-interceptor`) is handed to `handler`, as iOS hands
/// it to `application(_:open:options:)`.
///
/// Protocol, one exchange per connection: the URL and a newline in, one JSON ``InterceptorAnswer``
/// and a newline out.
package final class SchemeListener: Sendable {
    package let schemes: [String]
    package let directory: SchemeDirectory
    private let servers: [NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>]
    private let tasks: [Task<Void, Never>]

    /// The longest URL carried (the interceptor refuses longer ones before sending).
    package static let maximumURLLength = 64 * 1024

    private init(schemes: [String], directory: SchemeDirectory,
                 servers: [NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>], tasks: [Task<Void, Never>]) {
        self.schemes = schemes
        self.directory = directory
        self.servers = servers
        self.tasks = tasks
    }

    /// Claims `schemes` for the app `bundleID`. A scheme owned by another running app is
    /// ``InterceptorError/Code/schemeTaken``; a stale claim (its app died) is replaced.
    package static func start(schemes: [String], bundleID: String, directory: SchemeDirectory = .standard(),
                             handler: @escaping @Sendable (URL) async -> InterceptorAnswer) async throws(InterceptorError) -> SchemeListener {
        try directory.prepare()
        var servers: [NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>] = []
        var tasks: [Task<Void, Never>] = []
        var claimed: [String] = []
        do throws(InterceptorError) {
            for scheme in schemes where !claimed.contains(where: { $0.lowercased() == scheme.lowercased() }) {
                try URLSchemeSyntax.validate(scheme)
                let socket = try directory.socket(for: scheme)
                if FileManager.default.fileExists(atPath: socket.path) {
                    if await RedirectDispatcher.isAlive(socket: socket) {
                        let owner = (try? Data(contentsOf: directory.claimFile(for: scheme)))
                            .flatMap { try? JSONDecoder().decode(SchemeClaim.self, from: $0) }
                        throw InterceptorError(.schemeTaken, "scheme \(scheme) is already owned by a running app\(owner.map { ": \($0.bundleID), pid \($0.pid)" } ?? "") (\(socket.path))")
                    }
                    try? FileManager.default.removeItem(at: socket)
                }
                let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
                do {
                    server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .bind(unixDomainSocketPath: socket.path) { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                            }
                        }
                } catch {
                    throw InterceptorError(.fileError, "cannot listen on \(socket.path): \(error)")
                }
                servers.append(server)
                claimed.append(scheme)
                let claim = SchemeClaim(scheme: scheme, bundleID: bundleID, pid: getpid())
                do { try JSONEncoder().encode(claim).write(to: directory.claimFile(for: scheme), options: .atomic) } catch {
                    throw InterceptorError(.fileError, "cannot write \(directory.claimFile(for: scheme).path): \(error.localizedDescription)")
                }
                tasks.append(Task { await serve(server, bundleID: bundleID, handler: handler) })
            }
        } catch {
            let partial = SchemeListener(schemes: claimed, directory: directory, servers: servers, tasks: tasks)
            await partial.stop()
            throw error
        }
        return SchemeListener(schemes: claimed, directory: directory, servers: servers, tasks: tasks)
    }

    /// Gives the schemes up: closes the sockets and removes them and the claim files.
    package func stop() async {
        for server in servers { try? await server.channel.close() }
        // A connected interceptor that never sends its line must not hold the stop up.
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        for scheme in schemes {
            if let socket = try? directory.socket(for: scheme) { try? FileManager.default.removeItem(at: socket) }
            try? FileManager.default.removeItem(at: directory.claimFile(for: scheme))
        }
    }

    private static func serve(_ server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, bundleID: String,
                              handler: @escaping @Sendable (URL) async -> InterceptorAnswer) async {
        try? await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask { await exchange(connection, bundleID: bundleID, handler: handler) }
                }
            }
        }
    }

    private static func exchange(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, bundleID: String,
                                 handler: @escaping @Sendable (URL) async -> InterceptorAnswer) async {
        try? await connection.executeThenClose { inbound, outbound in
            var received = ByteBuffer()
            var line: String?
            for try await var chunk in inbound {
                received.writeBuffer(&chunk)
                if let newline = received.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                    line = received.getString(at: received.readerIndex, length: newline - received.readerIndex)
                    break
                }
                if received.readableBytes > maximumURLLength + 1 { break }
            }
            let answer: InterceptorAnswer
            if let line, let url = URL(string: line), url.scheme != nil {
                answer = await handler(url)
            } else if received.readableBytes > maximumURLLength {
                answer = InterceptorAnswer(handled: false, bundleID: bundleID, detail: "the URL is longer than \(maximumURLLength) bytes", reason: "urlTooLong")
            } else {
                answer = InterceptorAnswer(handled: false, bundleID: bundleID, detail: "not a URL: \(line.map { String($0.prefix(80)) } ?? "no complete line")", reason: "invalidURL")
            }
            var data = try JSONEncoder().encode(answer)
            data.append(UInt8(ascii: "\n"))
            try await outbound.write(ByteBuffer(bytes: data))
        }
    }
}
