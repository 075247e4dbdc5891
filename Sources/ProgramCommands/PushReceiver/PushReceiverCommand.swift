import APNsReceiver
import APNsWire
import ArgumentParser
import CommandSupport
import DeviceLink
import HTTPServerSupport
import Foundation
import Lifecycle
import LocalPKI
import Logging
import PostgresStores
import Utilities

struct PushReceiverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-receiver",
        abstract: "An APNs look-alike: HTTP/2 + TLS, token auth checked as Apple checks it, a device registry and a delivery log.",
        discussion: """
            Sandbox and production listen on separate ports; a client that names Apple's hosts in TLS SNI
            (api.push.apple.com, api.sandbox.push.apple.com) gets that environment on either port.
            Keys and certificates come from --certs (made there on first use).
            """,
        version: AuthsimVersion.current,
        subcommands: [Serve.self, Devices.self, Faults.self, Reset.self, Deliveries.self, Rejections.self],
        defaultSubcommand: Serve.self)
}

struct StateOptions: ParsableArguments {
    @Option(help: "Folder for the device registry (devices.json) and the delivery log (deliveries.jsonl).")
    var state: String = "State"

    var registryFile: URL { URL(fileURLWithPath: state).appendingPathComponent("devices.json") }
    var logFile: URL { URL(fileURLWithPath: state).appendingPathComponent("deliveries.jsonl") }
    var rejectionsFile: URL { URL(fileURLWithPath: state).appendingPathComponent("rejections.jsonl") }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Listen and answer pushes (the default).")

    @Option(help: "Address to listen on. Beyond loopback the device gateway needs an admin token (--admin-token-file), or --no-device-gateway; the APNs ports keep Apple's provider token.") var host = "127.0.0.1"
    @OptionGroup var admin: AdminAccessOptions
    @Option(help: "TLS port whose connections are sandbox unless SNI names the production host (0: any free port).")
    var sandboxPort = 2197
    @Option(help: "TLS port whose connections are production unless SNI names a sandbox host (0: any free port).")
    var productionPort = 2198
    @Flag(help: "No production listener (production is still reachable through SNI on the sandbox port).")
    var noProductionListener = false
    @Option(help: "Also listen for cleartext HTTP/2 with prior knowledge on this port, for h2load and curl --http2-prior-knowledge.")
    var cleartextPort: Int?
    @Option(help: "Environment of the cleartext port.") var cleartextEnvironment: APNsEnvironment = .sandbox
    @Option(help: "Device gateway port: simulated devices in other processes register and receive their pushes here (0: any free port).")
    var devicePort = 5223
    @Flag(help: "No device gateway.") var noDeviceGateway = false
    @Option(help: "Milliseconds APNs takes to reach a device (a push still never reaches an app before it has read verifyClient's answer).")
    var deliveryLatencyMs = 250
    @Option(help: "Folder with the CA, server certificate and APNs auth key (made on first use).")
    var certs = "Certs"
    @Option(help: "Your own server certificate chain (PEM), instead of the one in --certs.") var cert: String?
    @Option(help: "The private key (PEM) of --cert.") var certKey: String?
    @Option(help: "Also trust this APNs auth key (.p8); needs --team-id (and --key-id unless named AuthKey_<KEYID>.p8).")
    var p8: String?
    @Option(help: "Key ID of --p8.") var keyID: String?
    @Option(help: "Team ID of --p8.") var teamID: String?
    @Option(parsing: .upToNextOption, help: "Limit the --certs key to these environments.")
    var keyEnvironments: [APNsEnvironment] = []
    @OptionGroup var stateOptions: StateOptions
    @Option(name: .customLong("fault"),
            help: "Inject a fault: delay=MS | drop | reject=REASON | goaway=REASON | refuse-stream, then optionally ,token=HEX ,environment=ENV ,count=N ,probability=P. Repeatable.")
    var faults: [String] = []
    @Flag(help: "fsync the delivery log after each push (survives a machine crash; slower).") var fsync = false
    @OptionGroup var fleet: FleetOptions
    @Option(help: "Seconds a new connection has to finish TLS and send the HTTP/2 preface before it is closed.") var handshakeTimeout = 10.0
    @Option(help: "Seconds without traffic before a connection gets GOAWAY IdleTimeout (Apple: about an hour).") var idleTimeout = 3600.0
    @Flag(help: "Log every push.") var verbose = false
    @Option(help: "Event-loop threads answering pushes (default: one per core). One leaves a core to a load generator on the same machine.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
        try checkPorts([("--sandbox-port", sandboxPort), ("--production-port", productionPort), ("--cleartext-port", cleartextPort),
                        ("--device-port", devicePort)])
    }

    func run() async throws {
        let logger = bootstrapLogging("push-receiver", level: verbose ? .debug : .info)
        guard (1...256).contains(threads) else { throw ValidationError("--threads must be between 1 and 256, not \(threads)") }
        // The APNs ports are Apple's (a provider token); only the device gateway has admin routes.
        let access = noDeviceGateway ? AdminAccess.loopbackOnly : try admin.access(listening: host)

        let credentials = try CertsDirectory(URL(fileURLWithPath: certs)).ensure()
        var keys = [credentials.authKey.trusted(environments: keyEnvironments.isEmpty ? nil : Set(keyEnvironments))]
        if let p8 {
            guard let teamID else { throw ValidationError("--p8 needs --team-id") }
            keys.append(try APNsAuthKey.load(p8: URL(fileURLWithPath: p8), keyID: keyID, teamID: teamID).trusted())
        }
        var chainPEM = credentials.serverCertificatePEM
        var keyPEM = credentials.serverKeyPEM
        if let cert {
            guard let certKey else { throw ValidationError("--cert needs --cert-key") }
            chainPEM = try String(contentsOfFile: cert, encoding: .utf8)
            keyPEM = try String(contentsOfFile: certKey, encoding: .utf8)
        }
        var listeners = [ReceiverListener(host: host, port: sandboxPort, environment: .sandbox)]
        if !noProductionListener { listeners.append(ReceiverListener(host: host, port: productionPort, environment: .production)) }
        if let cleartextPort {
            listeners.append(ReceiverListener(host: host, port: cleartextPort, environment: cleartextEnvironment, transport: .cleartext))
        }
        guard handshakeTimeout > 0, idleTimeout > 0 else { throw ValidationError("--handshake-timeout and --idle-timeout must be positive") }
        var policy = ReceiverPolicy()
        policy.handshakeTimeout = handshakeTimeout
        policy.idleTimeout = idleTimeout
        let descriptors = raiseOpenFileLimit()
        let rules = try faults.map { try FaultRule(parsing: $0) }
        let shared = try await fleet.stores(port: sandboxPort, logger: logger)
        let registry: DeviceRegistry
        if let shared {
            do { registry = try await shared.registry() } catch {
                await shared.close()
                throw CommandFailure("cannot read the device registry of the store \(shared.address): \(error.message)")
            }
        } else {
            registry = try DeviceRegistry(file: stateOptions.registryFile)
        }
        // `push-receiver devices` in another process changes this registry through it (a file's only).
        let control = try await RegistryControl.start(registry: registry)
        let plan: FaultPlan
        do { plan = try await registry.faultPlan(starting: rules) } catch {
            await shared?.close()
            throw CommandFailure("cannot set the fleet's fault plan in \(shared?.address ?? ""): \(error.message)")
        }
        let log = try DeliveryLog(file: stateOptions.logFile, syncEachWrite: fsync)
        // A fleet keeps its refusals in the store, before their answers.
        let rejections = shared == nil ? try RejectionLog(file: stateOptions.rejectionsFile, logger: logger) : nil
        log.reportCutLine(to: logger)
        rejections?.reportCutLine(to: logger)
        let hub = DeviceHub(latency: .milliseconds(deliveryLatencyMs))
        if let shared, !noDeviceGateway {
            // Pushes for devices connected to other receivers' gateways go there, and theirs for devices here come here.
            do { try await hub.join(FleetDeviceLinks(shared: shared.links, logger: logger)) } catch {
                await shared.close()
                throw CommandFailure("cannot read the fleet's device links in \(shared.address): \(error.message)")
            }
        }
        // Each part is added to the program's one group as it starts; they stop in reverse.
        try await runProgram(logger: logger) { [self, keys, listeners, chainPEM, keyPEM, policy] parts in
            // The fleet's stores stop last, after the receiver that writes to them; device changes
            // from other processes (`push-receiver devices`), after it too.
            if let shared { await parts.add(shared) }
            if let control { await parts.add(control) }
            let gateway = noDeviceGateway ? nil : try await starting("--device-port", port: devicePort) {
                try await DeviceGateway.start(host: host, port: devicePort, registry: registry, hub: hub, access: access, hosting: .group(parts))
            }
            // Its device streams end before its server stops (open streams would hold that up).
            if let gateway { await parts.add(gateway) }
            var configuration = PushReceiverConfiguration(
                listeners: listeners, certificateChainPEM: chainPEM, privateKeyPEM: keyPEM, trustedKeys: keys,
                registry: registry, deliveryLog: log, faults: plan, delivery: gateway == nil ? nil : hub, policy: policy, logger: logger,
                observer: { event in
                    if let rejections, case .rejected(let rejection, let apnsID, let environment, let token) = event {
                        rejections.append(rejection, apnsID: apnsID, environment: environment, deviceToken: token)
                    }
                }, threads: threads, sharedLog: shared?.log)
            // The observer keeps rejections only: no accepted push is copied for it.
            configuration.observesAcceptedPushes = false
            let receiver = try await starting([("--sandbox-port", sandboxPort), ("--production-port", productionPort), ("--cleartext-port", cleartextPort ?? -1)]) {
                try await PushReceiver.start(configuration)
            }
            await parts.add(receiver)
            await parts.add(ShutdownStep("the announcement") { say("shutting down: GOAWAY Shutdown to open connections") })

            say("push-receiver listening:")
            for bound in receiver.listeners { say("  \(bound)") }
            say("  SNI api.push.apple.com → production; api.sandbox.push.apple.com / api.development.push.apple.com → sandbox")
            if let gateway { say("device gateway: http://\(gateway.host):\(gateway.port) (devices in other processes; delivery latency \(deliveryLatencyMs) ms)") }
            say("trusting provider keys:")
            for key in keys {
                let scope = key.environments.map { $0.map(\.rawValue).sorted().joined(separator: ",") } ?? "sandbox,production"
                say("  key \(key.keyID) of team \(key.teamID) (\(scope))")
            }
            say("CA for clients: \(cert == nil ? credentials.caCertificateFile.path : "(your certificate)")")
            if let shared {
                say("fleet: \(shared.address), node \(shared.node): devices (\(registry.all.count) registered), deliveries and rejections are the fleet's")
                say("  push-receiver devices list|deliveries|rejections --store … show every node's")
            } else {
                say("devices: \(stateOptions.registryFile.path) (\(registry.all.count) registered)")
                say("delivery log: \(stateOptions.logFile.path)\(fsync ? " (fsync)" : "")")
                say("rejections: \(stateOptions.rejectionsFile.path) (\(invocation(of: "authsim")) explain --receiver-state \(stateOptions.state) reads both)")
            }
            say("connections: up to about \(descriptors) open (file descriptors); \(handshakeTimeout) s to finish the handshake, GOAWAY IdleTimeout after \(idleTimeout) s idle")
            if !plan.current.isEmpty {
                say("faults\(shared == nil ? "" : " (the fleet's, on every receiver)"): \(plan.current.map(\.description).joined(separator: "; "))")
            }
        }
    }
}

/// `--store` and `--node-name`: a receiver of a fleet, keeping its devices and pushes in the
/// fleet's database.
struct FleetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Share the device registry, the pushes answered 200 and the refusals with a fleet of receivers in one PostgreSQL database (docs/fleet.md), instead of devices.json, deliveries.jsonl and rejections.jsonl in --state: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…&sslrootcert=CA.pem], or ?host=/socket/folder. Also from AUTHSIM_STORE.",
                               valueName: "url")) var store: String?
    @Option(help: ArgumentHelp("This receiver's name, kept with every push it answers and every device change it makes (default: the host name and --sandbox-port).", valueName: "name"))
    var nodeName: String?

    /// The fleet's stores, opened (schema created or migrated), or nil without --store.
    func stores(port: Int, logger: Logger) async throws -> PostgresReceiverStores? {
        guard let location = try fleetLocation(store, required: false) else { return nil }
        let stores = PostgresReceiverStores(location: location, node: nodeName ?? PostgresLocation.defaultNodeName(port: port), logger: logger)
        do { try await stores.open() } catch {
            await stores.close()
            throw CommandFailure("cannot open the store \(location.address): \(error)")
        }
        return stores
    }
}

/// `--store` (else AUTHSIM_STORE) as a PostgreSQL location; `required` for the commands that only
/// read a fleet's store.
func fleetLocation(_ store: String?, required: Bool) throws -> PostgresLocation? {
    let given: PostgresLocation?
    do { given = try PostgresLocation.given(store) } catch { throw ValidationError("--store: \(error)") }
    if given == nil, required {
        throw ValidationError("this reads a fleet's store: --store postgres://… (or AUTHSIM_STORE); a receiver without one keeps its files in --state")
    }
    return given
}

/// `push-receiver deliveries --store URL`: every push the fleet's receivers answered 200.
struct Deliveries: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the pushes every receiver of a fleet answered 200 (--store), oldest first, as JSON lines with the node that answered.")
    @OptionGroup var query: FleetQuery

    func run() async throws {
        try await query.lines { log, token, limit throws(SharedStoreError) in try await log.deliveries(deviceToken: token, limit: limit) }
    }
}

/// `push-receiver rejections --store URL`: every push the fleet's receivers refused.
struct Rejections: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the pushes every receiver of a fleet refused (--store), oldest first, as JSON lines (rejections.jsonl's) with the node that answered.")
    @OptionGroup var query: FleetQuery

    func run() async throws {
        try await query.lines { log, token, limit throws(SharedStoreError) in try await log.rejections(deviceToken: token, limit: limit) }
    }
}

/// What `deliveries` and `rejections` take, and how they print.
struct FleetQuery: ParsableArguments {
    @Option(help: ArgumentHelp("The fleet's PostgreSQL (as push-receiver --store; also AUTHSIM_STORE).", valueName: "url")) var store: String?
    @Option(help: ArgumentHelp("Only the pushes to this device token (hex).", valueName: "hex")) var deviceToken: String?
    @Option(help: "At most this many.") var limit: Int?

    func lines(_ read: (PostgresDeliveryLog, String?, Int?) async throws(SharedStoreError) -> [String]) async throws {
        guard let location = try fleetLocation(store, required: true) else { return }
        let log = PostgresDeliveryLog(location: location, node: "query")
        do {
            try await log.open()
            for line in try await read(log, deviceToken, limit) { say(line) }
        } catch {
            await log.close()
            throw CommandFailure("cannot read the store \(location.address): \(error)")
        }
        await log.close()
    }
}
