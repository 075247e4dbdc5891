import Hummingbird
import HummingbirdCore
import Lifecycle
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Utilities

/// A Hummingbird router served on a port: started in the background, reporting the port it got
/// (ask for port 0 to get a free one), stopped gracefully. What the backend and the device gateway
/// share; each keeps its own routes and errors.
///
/// ```swift
/// let server = try await RunningServer.start(router: router, host: "127.0.0.1", port: 0, name: "the backend")
/// print(server.port)
/// await server.shutdown()
/// ```
package final class RunningServer: Sendable {
    package let host: String
    package let port: Int
    /// The group of its own (nil: a world's or a program's group runs it).
    private let ownGroup: PartGroup?

    private init(host: String, port: Int, ownGroup: PartGroup?) {
        self.host = host
        self.port = port
        self.ownGroup = ownGroup
    }

    /// Starts serving `router` on `host:port`; returns once the server listens.
    /// - Parameters:
    ///   - name: what the server is, for the error when it cannot listen ("the backend").
    ///   - server: how connections are set up (HTTP/1.1 by default; extra channel handlers go here).
    ///   - hosting: where the server runs: in a group of its own (a test's lone server;
    ///     ``shutdown()`` stops it), or as a service of a world's or a program's group, which
    ///     stops it with their other parts.
    ///   - eventLoops: the event loops its connections use (SwiftNIO's singleton group by default).
    ///   - logger: Hummingbird's own logging (silent by default).
    /// - Throws: ``ServerStartError`` when the address cannot be bound.
    package static func start<Context: RequestContext>(
        router: Router<Context>, host: String, port: Int, name: String, server: HTTPServerBuilder = .http1(),
        hosting: ServerHosting = .ownGroup, eventLoops: (any EventLoopGroup)? = nil,
        logger: Logger = Logger(label: "authsim.http", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws(ServerStartError) -> RunningServer where Context: InitializableFromSource<ApplicationRequestContextSource> {
        let listening = ListeningPort()
        let application = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: nil, reuseAddress: true),
            onServerRunning: { channel in listening.resolve(channel.localAddress?.port ?? port) },
            eventLoopGroupProvider: eventLoops.map { .shared($0) } ?? .singleton, logger: logger)
        let group: PartGroup
        let ownGroup: PartGroup?
        switch hosting {
        case .ownGroup:
            group = PartGroup()
            ownGroup = group
        case .group(let given):
            group = given
            ownGroup = nil
        }
        await group.add(HostedApplication(application: application, listening: listening))
        do {
            return RunningServer(host: host, port: try await listening.port, ownGroup: ownGroup)
        } catch {
            try? await ownGroup?.shutdown()
            throw ServerStartError(listen: ListenError(what: name, host: host, port: port, nioError: error))
        }
    }

    /// `http://host:port`, as a client on this machine dials it (``DialAddress/local(for:)``:
    /// `127.0.0.1` for a server on `0.0.0.0`).
    package var baseURL: String { "http://\(dialAuthority)" }

    /// `host:port` as a client on this machine dials it (`FIREBASE_AUTH_EMULATOR_HOST`).
    package var dialAuthority: String { DialAddress.localAuthority(host, port: port) }

    /// Stops listening; requests in flight are answered first. A server a world's or a program's
    /// group runs is stopped by that group, with its other parts: this does nothing then.
    package func shutdown() async {
        try? await ownGroup?.shutdown()
    }
}

/// Where a server runs (``RunningServer/start(router:host:port:name:server:hosting:eventLoops:logger:)``).
package enum ServerHosting: Sendable {
    /// In a group of its own: a test's lone server, which ``RunningServer/shutdown()`` stops.
    case ownGroup
    /// As a service of a world's or a program's group, which stops it in order with their other parts.
    case group(PartGroup)
}

/// The Hummingbird application as a service: it tells the port waiting for it why it never
/// listened, when it does not.
private struct HostedApplication: Service {
    let application: any Service
    let listening: ListeningPort

    func run() async throws {
        do { try await application.run() } catch {
            listening.fail(error)
            throw error
        }
        listening.fail(CancellationError())
    }
}

/// Why a server did not start (the address is taken, not local, not allowed; its set-up failed).
package struct ServerStartError: Error, Sendable, CustomStringConvertible, CarriesListenError {
    package let message: String
    /// Set when the address could not be bound.
    package let listenError: ListenError?
    package init(message: String) {
        self.message = message
        listenError = nil
    }
    package init(listen: ListenError) {
        message = listen.description
        listenError = listen
    }
    package var description: String { message }
}

extension ListenError {
    /// What SwiftNIO said when a bind failed: an `IOError`'s errno, or a name that does not resolve.
    /// (APNsReceiver, which does not use this module, reads its bind errors the same way.)
    init(what: String, host: String, port: Int, nioError error: any Error) {
        let unresolved = (error as? SocketAddressError).map { if case .unknown = $0 { true } else { false } } ?? false
        self.init(what: what, host: host, port: port,
                  reason: unresolved ? .notLocal : Reason(errno: (error as? IOError)?.errnoCode, otherwise: "\(error)"))
    }
}

/// The port a starting server reports, or why it never listened.
private final class ListeningPort: Sendable {
    private let state = Mutex<(result: Result<Int, any Error>?, waiters: [CheckedContinuation<Int, any Error>])>((nil, []))

    func resolve(_ port: Int) { finish(.success(port)) }
    func fail(_ error: any Error) { finish(.failure(error)) }

    private func finish(_ result: Result<Int, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Int, any Error>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// The port, once the server listens; a wait cancelled (a program stopped while this server
    /// was starting) ends with `CancellationError`.
    var port: Int {
        get async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let ready = state.withLock { state -> Result<Int, any Error>? in
                        if let result = state.result { return result }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                fail(CancellationError())
            }
        }
    }
}
