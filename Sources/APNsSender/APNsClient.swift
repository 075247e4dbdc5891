import APNsWire
import Foundation
import Lifecycle
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Where and how the sender connects.
package struct APNsClientConfiguration: Sendable {
    /// The APNs environment: names the host in TLS SNI and `:authority`.
    package var environment: APNsEnvironment
    /// Where the TCP connection goes.
    package var host: String
    package var port: Int
    /// The name sent in TLS SNI and `:authority` (default: Apple's host for the environment).
    package var serverName: String
    /// `nil`: cleartext HTTP/2 with prior knowledge (the local receiver's cleartext listener only).
    package var tls: TLS?
    /// How many connections to spread pushes over.
    package var connections: Int
    /// How long to wait for one answer, counted from when the push is handed over (a new
    /// connection's setup included; connecting alone gives up after 10 s).
    package var timeout: TimeInterval
    /// How often a push refused before processing (REFUSED_STREAM, GOAWAY) is tried again.
    package var retries: Int

    package struct TLS: Sendable {
        /// PEM certificates to trust instead of the system's roots (our local CA).
        package var trustedRootsPEM: String?
        package init(trustedRootsPEM: String? = nil) { self.trustedRootsPEM = trustedRootsPEM }
    }

    package init(environment: APNsEnvironment, host: String, port: Int, serverName: String? = nil, tls: TLS? = TLS(),
                connections: Int = 1, timeout: TimeInterval = 30, retries: Int = 2) {
        self.environment = environment
        self.host = host
        self.port = port
        self.serverName = serverName ?? environment.appleHost
        self.tls = tls
        self.connections = connections
        self.timeout = timeout
        self.retries = retries
    }

    /// Apple's real host for `environment`, port 443, the system's trust store.
    package static func apple(_ environment: APNsEnvironment) -> APNsClientConfiguration {
        APNsClientConfiguration(environment: environment, host: environment.appleHost, port: 443)
    }

    /// The local receiver: `127.0.0.1:port`, Apple's host name in SNI (so the receiver knows the
    /// environment), and our CA as the only trust root.
    package static func local(_ environment: APNsEnvironment, port: Int, caPEM: String) -> APNsClientConfiguration {
        APNsClientConfiguration(environment: environment, host: "127.0.0.1", port: port,
                                tls: TLS(trustedRootsPEM: caPEM))
    }
}

/// One push to send.
package struct PushRequest: Sendable {
    /// The token as it goes into the path (a ``APNsWire/DeviceToken``'s hex, or anything, to test rejections).
    package var deviceToken: String
    package var headers: PushHeaders
    package var payload: [UInt8]

    package init(deviceToken: DeviceToken, headers: PushHeaders, payload: [UInt8]) {
        self.deviceToken = deviceToken.hex
        self.headers = headers
        self.payload = payload
    }

    package init(rawDeviceToken: String, headers: PushHeaders, payload: [UInt8]) {
        self.deviceToken = rawDeviceToken
        self.headers = headers
        self.payload = payload
    }
}

/// A request sent exactly as written (see ``APNsClient/send(raw:)``).
package struct RawRequest: Sendable {
    package var method: String
    package var path: String
    package var fields: [(name: String, value: String)]
    package var body: [UInt8]
    package init(method: String = "POST", path: String, fields: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.fields = fields
        self.body = body
    }
}

/// An APNs provider client: HTTP/2 over TLS (ALPN `h2`), ES256 provider tokens from a cache, many
/// pushes in flight on each connection.
///
/// ```swift
/// let client = try APNsClient(configuration: .local(.sandbox, port: 2197, caPEM: ca), tokens: cache)
/// let response = try await client.send(PushRequest(deviceToken: token, headers: headers, payload: bytes))
/// try await client.shutdown()
/// ```
package final class APNsClient: Sendable {
    package let configuration: APNsClientConfiguration
    package let tokens: ProviderTokenCache
    private let group: MultiThreadedEventLoopGroup
    private let sslContext: NIOSSLContext?
    private let pool: ConnectionPool
    private let logger: Logger

    /// - Throws: ``SenderError`` when the trust roots can't be read.
    package init(configuration: APNsClientConfiguration, tokens: ProviderTokenCache, threads: Int = 1,
                logger: Logger = Logger(label: "apns-sender", factory: { _ in SwiftLogNoOpLogHandler() })) throws(SenderError) {
        if let tls = configuration.tls {
            var config = TLSConfiguration.makeClientConfiguration()
            config.minimumTLSVersion = .tlsv12
            config.applicationProtocols = ["h2"]
            if let pem = tls.trustedRootsPEM {
                do {
                    config.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
                } catch {
                    throw SenderError(.tls, "the trust roots are not PEM certificates: \(error)")
                }
            }
            do { sslContext = try NIOSSLContext(configuration: config) } catch {
                throw SenderError(.tls, "cannot set up TLS: \(error)")
            }
        } else {
            sslContext = nil
        }
        self.configuration = configuration
        self.tokens = tokens
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        pool = ConnectionPool(size: max(1, configuration.connections))
    }

    /// Sends a push and returns APNs's answer. A push refused before processing (REFUSED_STREAM, or
    /// cut off by GOAWAY) is sent again on a fresh connection, up to ``APNsClientConfiguration/retries`` times.
    ///
    /// - Throws: ``SenderError`` when no answer could be had.
    package func send(_ request: PushRequest) async throws(SenderError) -> APNsResponse {
        var attempt = 0
        while true {
            do {
                // A connection the server closed before the push went out (one it idled out a moment
                // before) fails it as not processed, and it is retried like a push cut off by GOAWAY.
                let connection = pool.connection(connect)
                let token = tokens.token()
                let response = try await connection.send(
                    path: PushHeaders.path(forRaw: request.deviceToken),
                    fields: request.headers.headerFields(authorization: token), payload: request.payload,
                    timeout: .milliseconds(Int64(configuration.timeout * 1000)))
                tokens.heard(response)
                logger.debug("answer", metadata: [
                    "apns-id": "\(response.apnsID ?? "-")", "device-token": "\(request.deviceToken)", "status": "\(response.status)",
                ])
                return response
            } catch {
                guard error.isRetryable, attempt < configuration.retries else { throw error }
                attempt += 1
                logger.info("retrying", metadata: ["device-token": "\(request.deviceToken)", "why": "\(error)"])
                // A refused stream goes again at once; a connection that closed under us is given a
                // moment (50 ms, doubling, at most 1 s) rather than reconnected in a tight loop.
                if error.code == .connectionClosed {
                    try? await Task.sleep(for: .milliseconds(min(1_000, 50 << min(attempt - 1, 5))))
                }
            }
        }
    }

    /// Sends a request exactly as given (method, path, headers, body; `authorization` only if in
    /// `fields`) on the pool's next connection, without retrying: for probing how a server answers
    /// malformed requests. Pushes belong in ``send(_:)``.
    package func send(raw request: RawRequest) async throws(SenderError) -> APNsResponse {
        return try await pool.connection(connect).send(method: request.method, path: request.path, fields: request.fields,
                                         payload: request.body, timeout: .milliseconds(Int64(configuration.timeout * 1000)))
    }

    /// A bulk run's first phase: every connection of the pool kept full of `requests` (by index,
    /// claimed from `claims`) from its own event loop, `concurrency` in flight across them.
    /// Returns the tally and the pushes to send again (refused before processing); claims left
    /// over (no connection could be had, or every one closed) stay for the caller.
    func feed(_ requests: [PushRequest], claims: BulkClaims, concurrency: Int, assignAPNsIDs: Bool,
              onResult: (@Sendable (BulkSender.Result) -> Void)?) async -> BulkOutcome {
        var connections: [APNsConnection] = []
        for _ in 0..<max(1, configuration.connections) {
            let connection = pool.connection(connect)
            if !connections.contains(where: { $0 === connection }) { connections.append(connection) }
        }
        var made: [APNsConnection] = []
        for connection in connections where await connection.established() { made.append(connection) }
        connections = made
        guard !connections.isEmpty, !requests.isEmpty else { return BulkOutcome() }
        let timeout = TimeAmount.milliseconds(Int64(configuration.timeout * 1000))
        return await withTaskGroup(of: BulkOutcome.self) { group in
            for (index, connection) in connections.enumerated() {
                // The streams shared out: the first connections take one more when it does not divide.
                let window = concurrency / connections.count + (index < concurrency % connections.count ? 1 : 0)
                guard window > 0 else { continue }
                group.addTask { [tokens] in
                    await BulkFeeder.run(on: connection, claims: claims, requests: requests, assignAPNsIDs: assignAPNsIDs,
                                         tokens: tokens, timeout: timeout, window: window, onResult: onResult)
                }
            }
            var total = BulkOutcome()
            for await outcome in group {
                total.report.add(outcome.report)
                total.again += outcome.again
            }
            return total
        }
    }

    /// Closes every connection.
    package func shutdown() async {
        pool.closeAll()
        try? await group.shutdownGracefully()
    }

    @Sendable private func connect() -> APNsConnection {
        let serverName = configuration.tls == nil || Self.isIPAddress(configuration.serverName) ? nil : configuration.serverName
        return APNsConnection.connect(
            group: group, host: configuration.host, port: configuration.port, authority: configuration.serverName,
            sslContext: sslContext, serverName: serverName, timeout: .seconds(10))
    }

    static func isIPAddress(_ name: String) -> Bool {
        (try? SocketAddress(ipAddress: name, port: 0)) != nil
    }
}

/// Connections, created on demand, replaced when closed or told GOAWAY, handed out round-robin.
/// A slot's new connection is handed out while it is being made: its pushes wait on its event
/// loop. A lock, not an actor: handing out a live connection is the hot path of every push.
final class ConnectionPool: Sendable {
    private struct Slots {
        var connections: [APNsConnection?]
        var next = 0
    }
    private let slots: Mutex<Slots>

    init(size: Int) {
        slots = Mutex(Slots(connections: Array(repeating: nil, count: size)))
    }

    /// The next slot's connection, made with `make` (which only starts connecting) when it has
    /// none or its connection takes no more pushes.
    func connection(_ make: () -> APNsConnection) -> APNsConnection {
        let (connection, stale) = slots.withLock { slots -> (APNsConnection, APNsConnection?) in
            let index = slots.next
            slots.next = (slots.next + 1) % slots.connections.count
            if let existing = slots.connections[index], existing.isUsable { return (existing, nil) }
            let stale = slots.connections[index]
            let made = make()
            slots.connections[index] = made
            return (made, stale)
        }
        stale?.close()
        return connection
    }

    func closeAll() {
        let open = slots.withLock { slots -> [APNsConnection] in
            let open = slots.connections.compactMap { $0 }
            slots.connections = Array(repeating: nil, count: slots.connections.count)
            return open
        }
        for connection in open { connection.close() }
    }
}

extension APNsClient: RunningPart {
    package var description: String { "the APNs client of \(configuration.host):\(configuration.port)" }
}
