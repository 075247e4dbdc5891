import APNsReceiver
import APNsSender
import APNsWire
import ArgumentParser
import AuthBackend
import CommandSupport
import DeviceLink
import Foundation
import HTTPServerSupport
import IdentityToolkitAPI
import Inspector
import Lifecycle
import LocalPKI
import Logging
import PostgresStores
import Utilities

/// `authsim serve`: the whole channel in one process (push-receiver in both environments, its
/// device gateway, the backend, and the inspector), every URL printed, state in `--state`, a clean
/// stop on Ctrl-C or SIGTERM. The parts keep their own executables for those who split them.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start push-receiver, its device gateway, the backend and the inspector in one process.",
        discussion: "Open the inspector (http://127.0.0.1:4000 by default) to watch pushes, SMS and users live; its JSON API is at /api/v1 (OpenAPI at /api/v1/openapi.json).")

    @Option(help: "Address every part listens on. Beyond loopback (0.0.0.0, a LAN address) the inspector, its API, the Admin routes and the device gateway need an admin token (--admin-token-file).") var host = "127.0.0.1"
    @OptionGroup var admin: AdminAccessOptions
    @Option(help: "push-receiver's sandbox TLS port (default 2197; exec: any free port).") var sandboxPort: Int?
    @Option(help: "push-receiver's production TLS port (default 2198; exec: any free port).") var productionPort: Int?
    @Option(help: "The device gateway's port, for devices in other processes (default 5223; exec: any free port).") var devicePort: Int?
    @Option(help: "The backend's port (default 9099, the Firebase Auth Emulator's).") var backendPort = 9099
    @Option(help: "The inspector's port, its page and /api/v1 (default 4000; exec: any free port).") var uiPort: Int?
    @Option(help: "Folder for the receiver's registry and logs (devices.json, deliveries.jsonl, rejections.jsonl) and the backend's state (backend/) (default State; exec: a new folder, removed after the run).")
    var state: String?
    @Option(help: "Folder with the CA, the server certificate and the APNs auth key, made on first use (default Certs; exec: in the state folder).") var certs: String?
    @OptionGroup var providerKey: ProviderKeyOptions
    @Option(help: "Pushes the inspector keeps in view (the oldest leave the view, never the delivery log).") var maxPushes = 10_000
    @Option(help: "Milliseconds APNs takes to reach a device.") var deliveryLatencyMs = 250
    @Option(help: "The project ID.") var projectID = BackendConfiguration().projectID
    @Option(help: "The iOS app's bundle ID (the silent push's topic).") var bundleID = BackendConfiguration().bundleID
    @Option(help: "A test phone number and its code, NUMBER=CODE (repeatable, at most 10).") var testNumber: [String] = []
    @Option(help: "Seconds the app is told to wait for the silent push (the wait ends when the push comes).") var suggestedTimeout = BackendConfiguration().suggestedTimeout
    @Option(help: "Seconds after a sign-in in which a user may delete the account, change the email or password or unlink a provider; later they get CREDENTIAL_TOO_OLD_LOGIN_AGAIN (requiresRecentLogin) until they reauthenticate. Google's is 300; 0: no limit, as the Auth Emulator.")
    var recentLoginSeconds = BackendConfiguration().recentLoginSeconds
    @Option(help: "TOTP second factors: the 30-second steps either side of now whose codes are taken (Identity Platform's adjacentIntervals, 0 to 10); -1 turns TOTP off (OPERATION_NOT_ALLOWED).")
    var totpAdjacentIntervals = BackendConfiguration().totpAdjacentIntervals ?? -1
    @Option(help: ArgumentHelp("Load users and config from an Auth Emulator export before serving.", valueName: "dir")) var `import`: String?
    @Option(help: ArgumentHelp("On Ctrl-C or SIGTERM, write users and config in the Auth Emulator's export format.", valueName: "dir"))
    var exportOnExit: String?
    @Option(name: .customLong("fault"), help: "A push-receiver fault at start (push-receiver --fault syntax; repeatable; the Faults page changes them live).")
    var faults: [String] = []
    @Option(help: ArgumentHelp("Share everything with a fleet in one PostgreSQL database (docs/fleet.md): the receiver's devices, deliveries and rejections as push-receiver --store, the backend's state as authsim backend --store; the inspector then shows the pushes every receiver of the fleet answers, with the node. postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…&sslrootcert=CA.pem], or ?host=/socket/folder. Also from AUTHSIM_STORE.",
                               valueName: "url")) var store: String?
    @Option(help: ArgumentHelp("This node's name in the fleet, kept with its pushes and records (default: the host name and --sandbox-port).", valueName: "name"))
    var nodeName: String?
    @Option(help: .hidden) var storeSnapshotEvery: String?
    @Option(help: ArgumentHelp("Once every part listens, write their addresses to this file as one JSON object (for harnesses that pass port 0; the file is replaced whole, mode 0600).",
                               valueName: "file"))
    var readyFile: String?

    func validate() throws {
        guard maxPushes > 0 else { throw ValidationError("--max-pushes must be positive") }
        guard suggestedTimeout > 0 else { throw ValidationError("--suggested-timeout is a positive number of seconds") }
        if storeSnapshotEvery != nil { throw ValidationError(StoreOptions.snapshotsGone) }
        try checkPorts([("--sandbox-port", sandboxPort ?? 0), ("--production-port", productionPort ?? 0), ("--device-port", devicePort ?? 0),
                        ("--backend-port", backendPort), ("--ui-port", uiPort ?? 0)])
    }

    func run() async throws { try await run(then: nil) }

    /// What runs once every part listens (`authsim exec`'s test command), given every address, the
    /// state folder and the program's group (which it may stop); unset, the channel serves until
    /// a signal.
    typealias Then = @Sendable (ServeAddresses, URL, PartGroup) async throws -> Void

    /// Serves the channel, then `then`. With `then` (exec), the ports nobody gave are any free ones
    /// and the state and keys go to `givenState`, a folder the caller removes.
    func run(then: Then?, stateFolder givenState: URL? = nil) async throws {
        let exec = then != nil
        let (sandboxPort, productionPort, devicePort, uiPort) = (self.sandboxPort ?? (exec ? 0 : 2197), self.productionPort ?? (exec ? 0 : 2198),
                                                                 self.devicePort ?? (exec ? 0 : 5223), self.uiPort ?? (exec ? 0 : 4000))
        let state = givenState?.path ?? self.state ?? "State"
        let certs = self.certs ?? (givenState.map { $0.appendingPathComponent("Certs").path } ?? "Certs")
        let logger = bootstrapLogging("authsim.serve", level: .info)
        let access = try admin.access(listening: host)
        // Every conflict at once (a second serve on the same ports), before anything starts.
        try checkPortsFree([("push-receiver (sandbox)", "--sandbox-port", sandboxPort), ("push-receiver (production)", "--production-port", productionPort),
                            ("the device gateway", "--device-port", devicePort), ("the backend", "--backend-port", backendPort),
                            ("the inspector", "--ui-port", uiPort)], host: host)
        let credentials = try CertsDirectory(URL(fileURLWithPath: certs)).ensure()
        // The key the backend signs with and push-receiver trusts: yours with --p8, else --certs's.
        let key = try providerKey.key(or: credentials.authKey)
        let stateFolder = URL(fileURLWithPath: state)
        try FileManager.default.createDirectory(at: stateFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = raiseOpenFileLimit()

        // The fleet's store, when given: opened first, so that a bad URL stops before anything listens.
        let fleet = try await openFleet(logger: logger)

        // push-receiver and its device gateway.
        let registry = try await fleet?.receiver.registry() ?? DeviceRegistry(file: stateFolder.appendingPathComponent("devices.json"))
        // `push-receiver devices --state` in another process changes this registry through it.
        let control = try await RegistryControl.start(registry: registry)
        let deliveries = try DeliveryLog(file: stateFolder.appendingPathComponent("deliveries.jsonl"))
        // A fleet keeps its refusals in the store, before their answers.
        let rejections = fleet == nil ? try RejectionLog(file: stateFolder.appendingPathComponent("rejections.jsonl"), logger: logger) : nil
        deliveries.reportCutLine(to: logger)
        rejections?.reportCutLine(to: logger)
        let rules = try faults.map { try FaultRule(parsing: $0) }
        let plan: FaultPlan
        do { plan = try await registry.faultPlan(starting: rules) } catch {
            throw CommandFailure("cannot set the fleet's fault plan: \(error.message)")
        }
        let history = PushHistory(capacity: maxPushes, registry: registry)
        let hub = DeviceHub(latency: .milliseconds(deliveryLatencyMs), observer: { push, what in history.noteDelivery(apnsID: push.apnsID, what) })
        if let fleet {
            // Pushes for devices connected to other receivers' gateways go there, and theirs for devices here come here.
            do { try await hub.join(FleetDeviceLinks(shared: fleet.receiver.links, logger: logger)) } catch {
                throw CommandFailure("cannot read the fleet's device links in \(fleet.receiver.address): \(error.message)")
            }
        }
        // Each part is added to the program's one group as it starts, after the parts it depends on;
        // they stop in reverse, the inspector first.
        let exportOnExit = self.exportOnExit
        try await runProgram(logger: logger) { [self] parts in
            // The fleet's stores stop last, after the parts that write to them; device changes from
            // other processes (`push-receiver devices`), after the receiver too.
            if let fleet {
                await parts.add(fleet.receiver)
                await parts.add(fleet.events)
            }
            if let control { await parts.add(control) }
            let gateway = try await starting("--device-port", port: devicePort) {
                try await DeviceGateway.start(host: host, port: devicePort, registry: registry, hub: hub, access: access, hosting: .group(parts))
            }
            // Its device streams end before its server stops (open streams would hold that up).
            await parts.add(gateway)
            let receiver = try await starting([("--sandbox-port", sandboxPort), ("--production-port", productionPort)]) { try await PushReceiver.start(PushReceiverConfiguration(
                listeners: [ReceiverListener(host: host, port: sandboxPort, environment: .sandbox),
                            ReceiverListener(host: host, port: productionPort, environment: .production)],
                certificateChainPEM: credentials.serverCertificatePEM, privateKeyPEM: credentials.serverKeyPEM,
                trustedKeys: [key.trusted(environments: nil)], registry: registry, deliveryLog: deliveries, faults: plan,
                delivery: hub, policy: ReceiverPolicy(), logger: logger,
                observer: { event in
                    if let rejections, case .rejected(let rejection, let apnsID, let environment, let token) = event {
                        rejections.append(rejection, apnsID: apnsID, environment: environment, deviceToken: token)
                    }
                    history.record(event)
                }, sharedLog: fleet?.receiver.log)) }

            await parts.add(receiver)
            let sandbox = receiver.listeners.first(where: { $0.listener.environment == .sandbox })?.port ?? sandboxPort
            let production = receiver.listeners.first(where: { $0.listener.environment == .production })?.port ?? productionPort

            // The backend, pushing through this receiver.
            var configuration = BackendConfiguration()
            configuration.projectID = projectID
            configuration.bundleID = bundleID
            configuration.testPhoneNumbers = try testPhoneNumbers(testNumber)
            configuration.suggestedTimeout = suggestedTimeout
            configuration.recentLoginSeconds = recentLoginSeconds
            configuration.totpAdjacentIntervals = totpAdjacentIntervals < 0 ? nil : totpAdjacentIntervals
            let pusher = try localPusher(credentials, key: key, sandboxPort: sandbox, productionPort: production)
            await parts.add(pusher)
            let flows = FlowHistory()
            let toolkit: IdentityToolkit
            if let fleet {
                do {
                    // The sign-ins come from the store, every node's (this one's too) in the fleet's order.
                    toolkit = try await IdentityToolkit.open(configuration: configuration, pusher: pusher, store: fleet.backend, logger: logger)
                } catch {
                    throw CommandFailure("cannot open the store \(fleet.backend.address): \(error)")
                }
                await toolkit.setEventSink(fleet.events)
                // The other receivers' pushes, and every node's sign-ins, into the same views.
                let order = FleetFlowOrder()
                fleet.feed.start { read in
                    history.record(fleet: read.pushes)
                    for event in order.release(adding: read.events, now: Date()) { flows.record(event.event, signIn: event.signIn, at: event.time, node: event.node) }
                }
            } else {
                toolkit = try IdentityToolkit(configuration: configuration, pusher: pusher,
                                              stateDirectory: stateFolder.appendingPathComponent("backend"),
                                              observer: { flows.record($0, signIn: $1) }, logger: logger)
            }
            if let folder = self.import {
                let report = try await EmulatorExport.load(URL(fileURLWithPath: folder), into: toolkit)
                say("\(report.summary(of: folder))")
            }
            // The backend's state stops after its server (added before it), and after the export.
            await parts.add(toolkit)
            if let folder = exportOnExit {
                await parts.add(ShutdownStep("the export on exit") {
                    try await EmulatorExport.write(toolkit, to: URL(fileURLWithPath: folder), version: "authsim")
                    let count = try await toolkit.users().count
                    say("exported \(count) \(count == 1 ? "user" : "users") to \(folder)")
                })
            }
            let backend = try await starting("--backend-port", port: backendPort) {
                try await BackendServer.start(toolkit: toolkit, host: host, port: backendPort, tls: (credentials.serverCertificatePEM, credentials.serverKeyPEM),
                                              access: access, hosting: .group(parts))
            }

            // The inspector.
            if let fleet { await parts.add(fleet.feed) }
            let inspector = try await starting("--ui-port", port: uiPort) {
                try await InspectorServer.start(InspectorSources(history: history, flows: flows, faults: plan, registry: registry, toolkit: toolkit),
                                                host: host, port: uiPort, access: access, hosting: .group(parts))
            }
            // Its live streams end before its server stops.
            await parts.add(inspector)

            let addresses = ServeAddresses(
                version: AuthsimVersion.current, inspector: inspector.baseURL, api: inspector.baseURL + "/api/v1",
                sandbox: "https://\(DialAddress.localAuthority(host, port: sandbox))", production: "https://\(DialAddress.localAuthority(host, port: production))",
                caFile: credentials.caCertificateFile.path, authKeyFile: key.file?.path ?? "",
                keyID: key.keyID, teamID: key.teamID,
                deviceGateway: "http://\(DialAddress.localAuthority(gateway.host, port: gateway.port))", backend: backend.baseURL,
                emulatorHost: backend.dialAuthority, projectID: projectID, apiKey: toolkit.configuration.apiKey, bundleID: bundleID,
                state: stateFolder.path)
            if let readyFile { try ServeAddresses.write(addresses, to: URL(fileURLWithPath: readyFile)) }
            say("authsim serve: the push-and-redirect channel in one process")
            say("  inspector:       \(inspector.baseURL)  (API \(inspector.baseURL)/api/v1, OpenAPI \(inspector.baseURL)/api/v1/openapi.json, \(inspector.baseURL)/metrics, /livez, /readyz)")
            say("  push-receiver:   sandbox https://\(DialAddress.localAuthority(host, port: sandbox)), production https://\(DialAddress.localAuthority(host, port: production)) (trust \(credentials.caCertificateFile.path); key \(key.keyID), team \(key.teamID)\(providerKey.p8.map { ", \($0)" } ?? ""))")
            say("  device gateway:  http://\(DialAddress.localAuthority(gateway.host, port: gateway.port))")
            say("  admin routes:    \(AdminAccessOptions.describe(access)) (inspector, its API, the Admin and emulator routes, the device gateway)")
            say("  backend:         \(backend.baseURL) (FIREBASE_AUTH_EMULATOR_HOST=\(backend.dialAuthority); useEmulator(withHost: \"\(DialAddress.local(for: backend.host))\", port: \(backend.port)))")
            if let note = DialAddress.everyAddressNote(host) { say("  \(note)") }
            if let fleet {
                say("  fleet:           \(fleet.receiver.address), node \(fleet.receiver.node): devices, faults, deliveries, rejections and the backend's state are the fleet's; the inspector shows every receiver's pushes")
            } else {
                say("  state:           \(stateFolder.path) (devices.json, deliveries.jsonl, rejections.jsonl, backend/)")
            }
            if !plan.current.isEmpty {
                say("  \(fleet == nil ? "faults:        " : "faults (fleet):")  \(plan.current.map(\.description).joined(separator: "; "))")
            }
            if let then {
                await parts.add(ShutdownStep("the announcement") { say("authsim exec: stopping the channel") })
                try await then(addresses, stateFolder, parts)
            } else {
                say("Ctrl-C stops everything.")
                await parts.add(ShutdownStep("the announcement") { say("shutting down") })
            }
        }
    }
}

extension Serve {
    /// The stores of a node of a fleet: the receiver's, the backend's, and the feed of the other
    /// receivers' pushes.
    struct Fleet {
        let receiver: PostgresReceiverStores
        let backend: PostgresBackendStore
        let feed: PostgresFleetFeed
        let events: PostgresEventLog
    }

    /// The fleet's stores, opened (the schema created or migrated), or nil without --store.
    func openFleet(logger: Logger) async throws -> Fleet? {
        let given: PostgresLocation?
        do { given = try PostgresLocation.given(store) } catch { throw ValidationError("--store: \(error)") }
        guard let location = given else { return nil }
        let node = nodeName ?? PostgresLocation.defaultNodeName(port: sandboxPort ?? 2197)
        let fleet = Fleet(receiver: PostgresReceiverStores(location: location, node: node, logger: logger),
                          backend: PostgresBackendStore(location: location, node: node, logger: logger),
                          feed: PostgresFleetFeed(location: location, ownNode: node, logger: logger),
                          events: PostgresEventLog(location: location, node: node, logger: logger))
        do {
            try await fleet.receiver.open()
            try await fleet.feed.open(backlog: maxPushes)
        } catch {
            await fleet.receiver.close()
            await fleet.feed.close()
            await fleet.events.close()
            throw CommandFailure("cannot open the store \(location.address): \(error)")
        }
        return fleet
    }
}

/// What `authsim serve --ready-file` writes: every address a test harness needs, the real ports
/// included when it passed port 0.
struct ServeAddresses: Codable {
    var version: String
    var inspector: String
    var api: String
    var sandbox: String
    var production: String
    /// The CA that signed push-receiver's and the backend's certificates.
    var caFile: String
    /// The APNs auth key (`.p8`) push-receiver trusts, with its key and team IDs.
    var authKeyFile: String
    var keyID: String
    var teamID: String
    var deviceGateway: String
    var backend: String
    /// What `FIREBASE_AUTH_EMULATOR_HOST` takes.
    var emulatorHost: String
    var projectID: String
    /// The project's API key: what a REST client or an app's FirebaseOptions sends as `key`.
    var apiKey: String
    var bundleID: String
    var state: String

    /// Written whole (``PrivateFile``): a reader never sees half of it.
    static func write(_ addresses: ServeAddresses, to file: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bytes = try encoder.encode(addresses)
        do throws(FileStoreError) { try PrivateFile.replace(file, with: bytes) } catch {
            throw ValidationError("cannot write --ready-file \(file.path): \(error.message)")
        }
    }
}
