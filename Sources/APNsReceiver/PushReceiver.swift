import APNsWire
import Lifecycle
import Utilities
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// Where the receiver listens.
package struct ReceiverListener: Sendable, Hashable {
    package enum Transport: String, Sendable, Hashable {
        /// TLS 1.2+; HTTP/2 whether the client offers ALPN `h2` or nothing at all.
        case tls
        /// HTTP/2 with prior knowledge, no TLS (for `h2load`, `curl --http2-prior-knowledge`).
        case cleartext
    }
    package var host: String
    /// 0 picks a free port (see ``PushReceiver/BoundListener``).
    package var port: Int
    /// The environment of connections that do not name an Apple host in TLS SNI.
    package var environment: APNsEnvironment
    package var transport: Transport

    package init(host: String = "127.0.0.1", port: Int, environment: APNsEnvironment, transport: Transport = .tls) {
        self.host = host
        self.port = port
        self.environment = environment
        self.transport = transport
    }
}

/// Everything a receiver is made of.
package struct PushReceiverConfiguration: Sendable {
    package var listeners: [ReceiverListener]
    /// The certificate chain (PEM, leaf first) and private key (PEM) presented over TLS.
    package var certificateChainPEM: String
    package var privateKeyPEM: String
    /// The provider keys APNs trusts.
    package var trustedKeys: [TrustedProviderKey]
    package var registry: DeviceRegistry
    package var deliveryLog: DeliveryLog
    /// A fleet's log (``SharedDeliveryLog``): when set, pushes are kept there instead of in ``deliveryLog``'s file.
    package var sharedLog: (any SharedDeliveryLog)?
    package var faults: FaultPlan
    package var delivery: (any PushDeliveryHandler)?
    package var policy: ReceiverPolicy
    package var clock: any WallClock
    package var logger: Logger
    package var observer: (@Sendable (ReceiverEvent) -> Void)?
    /// Whether ``observer`` hears of every accepted push (`.accepted`). An observer that reads only
    /// other events says no: an `.accepted` event is made and handed to it on the receiver's event
    /// loop, push after push.
    package var observesAcceptedPushes = true
    /// Event-loop threads; defaults to one per core.
    package var threads: Int

    package init(listeners: [ReceiverListener], certificateChainPEM: String, privateKeyPEM: String,
                trustedKeys: [TrustedProviderKey], registry: DeviceRegistry, deliveryLog: DeliveryLog,
                faults: FaultPlan = FaultPlan(), delivery: (any PushDeliveryHandler)? = nil,
                policy: ReceiverPolicy = ReceiverPolicy(), clock: any WallClock = SystemWallClock(),
                logger: Logger = Logger(label: "push-receiver", factory: { _ in SwiftLogNoOpLogHandler() }),
                observer: (@Sendable (ReceiverEvent) -> Void)? = nil,
                threads: Int = System.coreCount, sharedLog: (any SharedDeliveryLog)? = nil) {
        self.listeners = listeners
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.trustedKeys = trustedKeys
        self.registry = registry
        self.deliveryLog = deliveryLog
        self.sharedLog = sharedLog
        self.faults = faults
        self.delivery = delivery
        self.policy = policy
        self.clock = clock
        self.logger = logger
        self.observer = observer
        self.threads = threads
    }
}

/// An APNs look-alike over HTTP/2: sandbox and production, token authentication checked as Apple
/// checks it, a device registry, a durable delivery log, and fault injection.
///
/// ```swift
/// let receiver = try await PushReceiver.start(configuration)
/// print(receiver.listeners)   // where it listens
/// try await receiver.shutdown()
/// ```
package final class PushReceiver: Sendable {
    /// A listener and the port it got.
    package struct BoundListener: Sendable, Hashable, CustomStringConvertible {
        package let listener: ReceiverListener
        package let port: Int
        package var description: String {
            let scheme = listener.transport == .tls ? "https" : "http (h2 prior knowledge)"
            return "\(scheme)://\(listener.host):\(port) → \(listener.environment)"
        }
    }

    package let listeners: [BoundListener]
    package let configuration: PushReceiverConfiguration
    private let group: MultiThreadedEventLoopGroup
    private let serverChannels: [Channel]
    private let connections: ConnectionSet

    private init(listeners: [BoundListener], configuration: PushReceiverConfiguration, group: MultiThreadedEventLoopGroup,
                 serverChannels: [Channel], connections: ConnectionSet) {
        self.listeners = listeners
        self.configuration = configuration
        self.group = group
        self.serverChannels = serverChannels
        self.connections = connections
    }

    /// Binds every listener and starts answering.
    ///
    /// - Throws: ``ReceiverError`` when the certificate or key can't be used or a port can't be bound.
    package static func start(_ configuration: PushReceiverConfiguration) async throws(ReceiverError) -> PushReceiver {
        guard !configuration.listeners.isEmpty else { throw ReceiverError(.configuration, "no listener configured") }
        let sslContext: NIOSSLContext?
        if configuration.listeners.contains(where: { $0.transport == .tls }) {
            do {
                let chain = try NIOSSLCertificate.fromPEMBytes(Array(configuration.certificateChainPEM.utf8))
                let key = try NIOSSLPrivateKey(bytes: Array(configuration.privateKeyPEM.utf8), format: .pem)
                var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                   privateKey: .privateKey(key))
                tls.minimumTLSVersion = .tlsv12
                tls.applicationProtocols = ["h2"]
                tls.shutdownTimeout = closeNotifyWait
                sslContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw ReceiverError(.tls, "cannot use the server certificate or key: \(error)")
            }
        } else {
            sslContext = nil
        }
        let services = ReceiverServices(
            validator: PushValidator(tokens: ProviderTokenVerifier(keys: configuration.trustedKeys),
                                     registry: configuration.registry, policy: configuration.policy),
            log: configuration.deliveryLog, sharedLog: configuration.sharedLog, faults: configuration.faults, delivery: configuration.delivery.map(DeliveryQueue.init(handler:)),
            clock: configuration.clock, logger: configuration.logger,
            events: ReceiverEvents(observer: configuration.observer, observesAccepted: configuration.observesAcceptedPushes))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        let connections = ConnectionSet()
        var channels: [Channel] = []
        var bound: [BoundListener] = []
        for listener in configuration.listeners {
            let bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    connections.insert(channel)
                    channel.closeFuture.whenComplete { _ in connections.remove(channel) }
                    return Self.initialize(channel: channel, listener: listener, sslContext: sslContext, services: services)
                }
            do {
                let channel = try await bootstrap.bind(host: listener.host, port: listener.port).get()
                channels.append(channel)
                bound.append(BoundListener(listener: listener, port: channel.localAddress?.port ?? listener.port))
            } catch {
                for channel in channels { try? await channel.close() }
                try? await group.shutdownGracefully()
                // As HTTPServerSupport reads a bind failure: an IOError's errno, or a name that does not resolve.
                let unresolved = (error as? SocketAddressError).map { if case .unknown = $0 { true } else { false } } ?? false
                let reason = unresolved ? .notLocal : ListenError.Reason(errno: (error as? IOError)?.errnoCode, otherwise: "\(error)")
                let what = "push-receiver (\(listener.environment)\(listener.transport == .cleartext ? ", cleartext" : ""))"
                throw ReceiverError(listen: ListenError(what: what, host: listener.host, port: listener.port, reason: reason))
            }
        }
        return PushReceiver(listeners: bound, configuration: configuration, group: group, serverChannels: channels,
                            connections: connections)
    }

    /// The first bound port for an environment and transport.
    package func port(for environment: APNsEnvironment, transport: ReceiverListener.Transport = .tls) -> Int? {
        listeners.first { $0.listener.environment == environment && $0.listener.transport == transport }?.port
    }

    /// Stops listening, sends every open connection GOAWAY `{"reason":"Shutdown"}`, and stops.
    ///
    /// A connection with no request in flight is closed as soon as its GOAWAY is written, whether
    /// or not the client reads it (a provider's pooled connection, or a client whose event loop is
    /// busy, would otherwise hold the stop up); one with requests in flight gets their answers
    /// first, for ``GoAwayTiming/grace`` at most. TLS does not wait long for the client's
    /// close_notify (``PushReceiver/closeNotifyWait``).
    package func shutdown() async {
        for channel in serverChannels { try? await channel.close() }
        let open = connections.all
        for channel in open {
            channel.eventLoop.execute {
                // A connection still in its TLS handshake has no HTTP/2 yet: it is just closed.
                guard let handler = try? channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self) else {
                    return channel.close(promise: nil)
                }
                handler.goAway(reason: .shutdown, lastStreamID: UInt32(Int32.max), closeIfIdle: true)
            }
        }
        for channel in open { try? await channel.closeFuture.get() }
        // A fleet's log keeps connections on the receiver's event loops.
        await configuration.sharedLog?.release(group)
        try? await group.shutdownGracefully()
    }

    /// How long a connection the receiver closes waits for the client's TLS close_notify before it
    /// closes the socket (swift-nio-ssl waits 5 s by default; a server need not wait at all, RFC
    /// 8446 §6.1).
    static let closeNotifyWait: TimeAmount = .milliseconds(100)

    private static func initialize(channel: Channel, listener: ReceiverListener, sslContext: NIOSSLContext?,
                                   services: ReceiverServices) -> EventLoopFuture<Void> {
        // Closed unless the client's HTTP/2 preface and SETTINGS arrive in time, counting the
        // client's turns only (APNsConnectionHandler finishes it).
        let timeout = services.validator.policy.handshakeTimeout
        let deadline = HandshakeDeadline(timeout: .milliseconds(Int64(timeout * 1000))) {
            services.events.record(.handshakeTimedOut(seconds: timeout))
        }
        do { try channel.pipeline.syncOperations.addHandler(deadline) } catch { return channel.eventLoop.makeFailedFuture(error) }
        let handshake = NIOLoopBound(deadline, eventLoop: channel.eventLoop)
        guard listener.transport == .tls, let sslContext else {
            services.events.record(.connection(environment: listener.environment, serverName: nil, tls: false))
            return channel.eventLoop.makeCompletedFuture {
                try configureHTTP2(channel: channel, connection: ConnectionContext(environment: listener.environment, serverName: nil),
                                   services: services, handshake: handshake.value)
            }
        }
        // Read the ClientHello's SNI first: a client naming Apple's production or sandbox host gets that
        // environment whatever the port. Then TLS, then HTTP/2, whether or not ALPN said h2.
        let sni = SNIHandler { result in
            var serverName: String?
            if case .hostname(let name) = result { serverName = name }
            let environment = serverName.flatMap(APNsEnvironment.named(byHost:)) ?? listener.environment
            services.events.record(.connection(environment: environment, serverName: serverName, tls: true))
            return channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                try configureHTTP2(channel: channel, connection: ConnectionContext(environment: environment, serverName: serverName),
                                   services: services, handshake: handshake.value)
            }
        }
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(sni))
        }
    }

    private static func configureHTTP2(channel: Channel, connection: ConnectionContext, services: ReceiverServices,
                                       handshake: HandshakeDeadline) throws {
        let sync = channel.pipeline.syncOperations
        if let idle = services.validator.policy.idleTimeout {
            try sync.addHandler(IdleStateHandler(allTimeout: .milliseconds(Int64(idle * 1000))))
        }
        try sync.addHandler(APNsConnectionHandler(exchange: PushExchange(services: services, connection: connection),
                                                  handshake: handshake, allocator: channel.allocator))
    }
}

/// Open connections, so shutdown can say GOAWAY to each.
final class ConnectionSet: Sendable {
    private let channels = Mutex<[ObjectIdentifier: Channel]>([:])
    func insert(_ channel: Channel) { channels.withLock { $0[ObjectIdentifier(channel)] = channel } }
    func remove(_ channel: Channel) { _ = channels.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) } }
    var all: [Channel] { channels.withLock { Array($0.values) } }
}

extension PushReceiver: RunningPart {
    package var description: String { "push-receiver" }
}
