import APNsReceiver
import APNsSender
import APNsWire
import DeviceLink
import Foundation
import Lifecycle
import LocalPKI
import Logging
import Utilities

/// The whole APNs channel on loopback: credentials in a folder, a receiver with sandbox and
/// production listeners (and a cleartext one), its registry, delivery log, fault plan and device
/// hub, and senders pointed at it. Used by `authsim` and by the tests.
package final class LocalAPNsChannel: Sendable {
    package let directory: URL
    package let credentials: LocalCredentials
    package let receiver: PushReceiver
    package let registry: DeviceRegistry
    package let hub: DeviceHub
    package let faults: FaultPlan
    package let deliveryLogFile: URL

    private init(directory: URL, credentials: LocalCredentials, receiver: PushReceiver, registry: DeviceRegistry,
                 hub: DeviceHub, faults: FaultPlan, deliveryLogFile: URL) {
        self.directory = directory
        self.credentials = credentials
        self.receiver = receiver
        self.registry = registry
        self.hub = hub
        self.faults = faults
        self.deliveryLogFile = deliveryLogFile
    }

    /// Starts a receiver on free loopback ports.
    ///
    /// - Parameters:
    ///   - certs: the `Certs/` folder to use (made on first use).
    ///   - state: where the delivery and rejection logs go (`deliveries.jsonl`, `rejections.jsonl`);
    ///     the registry is in memory.
    ///   - extraKeys: more provider keys to trust beside the one in `certs`.
    ///   - keyEnvironments: limit the `certs` key to these environments.
    ///   - deliveryClock: what the delivery latency is waited on (default: the wall clock).
    ///   - sharedLog: a fleet's delivery log, kept instead of `deliveries.jsonl`.
    ///   - registry: the device registry (default: a new one in memory), such as a copy of a fleet's
    ///     (whose fault plan, ``DeviceRegistry/fleetFaults``, is then the channel's).
    package static func start(certs: URL, state: URL, clock: any WallClock = SystemWallClock(),
                             extraKeys: [TrustedProviderKey] = [], keyEnvironments: Set<APNsEnvironment>? = nil,
                             keyTopics: Set<String>? = nil, policy: ReceiverPolicy = ReceiverPolicy(),
                             observer: (@Sendable (ReceiverEvent) -> Void)? = nil, threads: Int = 2,
                             deliveryLatency: Duration = .zero, deliveryClock: (any Clock<Duration>)? = nil, sharedLog: (any SharedDeliveryLog)? = nil, registry: DeviceRegistry = DeviceRegistry(),
                             logger: Logger = Logger(label: "push-receiver", factory: { _ in SwiftLogNoOpLogHandler() }))
        async throws -> LocalAPNsChannel {
        let credentials = try CertsDirectory(certs).ensure()
        let hub = DeviceHub(latency: deliveryLatency, clock: deliveryClock)
        // A copy of a fleet's registry comes with the fleet's fault plan.
        let faults = registry.fleetFaults ?? FaultPlan()
        let logFile = state.appendingPathComponent("deliveries.jsonl")
        let log = try DeliveryLog(file: logFile)
        // Refusals beside the deliveries, as push-receiver keeps them, so that `authsim explain
        // --receiver-state` reads a scenario's folder as it reads push-receiver's.
        let rejections = sharedLog == nil ? try RejectionLog(file: state.appendingPathComponent("rejections.jsonl"), logger: logger) : nil
        log.reportCutLine(to: logger)
        rejections?.reportCutLine(to: logger)
        var configuration = PushReceiverConfiguration(
            listeners: [
                ReceiverListener(port: 0, environment: .sandbox),
                ReceiverListener(port: 0, environment: .production),
                ReceiverListener(port: 0, environment: .sandbox, transport: .cleartext),
            ],
            certificateChainPEM: credentials.serverCertificatePEM, privateKeyPEM: credentials.serverKeyPEM,
            trustedKeys: [credentials.authKey.trusted(environments: keyEnvironments, topics: keyTopics)] + extraKeys,
            registry: registry, deliveryLog: log, faults: faults, delivery: hub, policy: policy, clock: clock,
            logger: logger, observer: { event in
                if let rejections, case .rejected(let rejection, let apnsID, let environment, let token) = event {
                    rejections.append(rejection, apnsID: apnsID, environment: environment, deviceToken: token)
                }
                observer?(event)
            }, threads: threads, sharedLog: sharedLog)
        // Accepted pushes go to the observer only when the caller has one (the log needs refusals only).
        configuration.observesAcceptedPushes = observer != nil
        let receiver = try await PushReceiver.start(configuration)
        return LocalAPNsChannel(directory: state, credentials: credentials, receiver: receiver, registry: registry,
                                hub: hub, faults: faults, deliveryLogFile: logFile)
    }

    /// A sender to this receiver's TLS listener for `environment` (the environment is also named in SNI).
    ///
    /// - Parameters:
    ///   - key: the provider key to sign with (default: the `Certs/` key).
    ///   - serverName: the SNI / `:authority` name (default: Apple's host for `environment`).
    ///   - listener: which listener to connect to (default: the one for `environment`).
    ///   - timeout: seconds a push may wait for its answer (a test whose receiver waits on a lost
    ///     database, on a busy machine, gives more).
    package func client(environment: APNsEnvironment, key: APNsAuthKey? = nil, clock: any WallClock = SystemWallClock(),
                       serverName: String? = nil, listener: APNsEnvironment? = nil, connections: Int = 1,
                       retries: Int = 2, refresh: TimeInterval = ProviderTokenCache.defaultRefresh,
                       timeout: TimeInterval = 10) throws -> APNsClient {
        let port = receiver.port(for: listener ?? environment)!
        var configuration = APNsClientConfiguration.local(environment, port: port, caPEM: credentials.caCertificatePEM)
        if let serverName { configuration.serverName = serverName }
        configuration.connections = connections
        configuration.retries = retries
        configuration.timeout = timeout
        let cache = try ProviderTokenCache(signer: (key ?? credentials.authKey).signer, clock: clock, refreshInterval: refresh)
        return try APNsClient(configuration: configuration, tokens: cache)
    }

    /// Registers a device token.
    package func register(_ token: DeviceToken, environment: APNsEnvironment, bundleID: String, label: String? = nil) throws {
        try registry.register(RegisteredDevice(token: token, environment: environment, bundleID: bundleID, label: label))
    }

    package func shutdown() async { await receiver.shutdown() }
}

extension LocalAPNsChannel: RunningPart {
    package var description: String { "push-receiver" }
}
