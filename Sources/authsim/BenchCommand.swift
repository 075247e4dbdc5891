import Utilities
import ArgumentParser
import Benchmarking
import AuthBackend
import CommandSupport
import Foundation
import PostgresStores

/// `authsim bench`: the measurements behind `Benchmarks/run.sh` (build with `-c release`).
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure ES256 and RS256 rates and whole sign-in flows (the source tree's Benchmarks/run.sh runs these beside the reference tools; authsim docs benchmarks).",
        subcommands: [ES256.self, RS256.self, Flows.self, Fleet.self, HTTP1Server.self, HTTP1Client.self])

    struct RS256: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "RSA-2048 PKCS#1 v1.5 sign and verify rates (as openssl speed rsa2048 measures them) and whole ID tokens signed, one thread.")
        @Option(help: "Seconds per measurement.") var seconds = 3.0
        @Flag(help: "One JSON object.") var json = false

        func run() throws {
            let report = try RS256Benchmark.run(seconds: seconds)
            if json {
                say(CompactJSON.encode(["sign": Int(report.signsPerSecond), "signBoringSSL": Int(report.boringSSLSignsPerSecond),
                                          "verify": Int(report.verifiesPerSecond), "idToken": Int(report.idTokensPerSecond)])!)
            } else {
                say("RS256, one thread: \(Int(report.signsPerSecond)) sign/s (libcrypto, as the backend signs; swift-crypto's BoringSSL: "
                      + "\(Int(report.boringSSLSignsPerSecond))), \(Int(report.verifiesPerSecond)) verify/s (swift-crypto); "
                      + "Firebase ID tokens: \(Int(report.idTokensPerSecond)) signed/s")
            }
        }
    }

    struct ES256: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "P-256 sign and verify rates (as openssl speed ecdsap256 measures them) and provider-token rates, one thread.")
        @Option(help: "Seconds per measurement.") var seconds = 3.0
        @Flag(help: "One JSON object.") var json = false

        func run() throws {
            let report = try ES256Benchmark.run(seconds: seconds)
            if json {
                say(CompactJSON.encode(["sign": Int(report.signsPerSecond), "verify": Int(report.verifiesPerSecond),
                                          "tokenSign": Int(report.tokenSignsPerSecond), "tokenVerify": Int(report.tokenVerifiesPerSecond)])!)
            } else {
                say("ES256 (swift-crypto), one thread: \(Int(report.signsPerSecond)) sign/s, \(Int(report.verifiesPerSecond)) verify/s; "
                      + "provider tokens: \(Int(report.tokenSignsPerSecond)) signed/s, \(Int(report.tokenVerifiesPerSecond)) verified/s")
            }
        }
    }

    struct Flows: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Many phone sign-ins at once through every part in this process; wall time, p50/p99 per flow, peak memory.")
        @Option(help: "silent-push or recaptcha.") var path: String = FlowBenchmark.Path.silentPush.rawValue
        @Option(help: "Flows (simulated devices), each with its own app and number.") var count = 10_000
        @Option(help: ArgumentHelp("The flows' numbers cycle over this many, so that users sign in again (default: a new number and user each).",
                                   valueName: "count")) var numbers: Int?
        @Option(help: "Flows in progress at once (default: all).") var concurrency: Int?
        @Option(help: "Milliseconds APNs takes to reach a device.") var pushLatency = 250
        @Option(help: "verifyClient's suggestedTimeout, seconds (how long the SDK waits for the push before reCAPTCHA).") var suggestedTimeout = 5
        @Flag(help: "One JSON object.") var json = false

        func validate() throws {
            guard FlowBenchmark.Path(rawValue: path) != nil else { throw ValidationError("--path must be silent-push or recaptcha") }
            guard count > 0, (concurrency ?? 1) > 0, (numbers ?? 1) > 0, pushLatency >= 0, suggestedTimeout > 0 else {
                throw ValidationError("--count, --concurrency, --numbers and --suggested-timeout must be positive")
            }
            if let numbers, let concurrency, concurrency > numbers {
                throw ValidationError("--concurrency \(concurrency) is more than --numbers \(numbers): one number would be signing in twice at once")
            }
            if let numbers, concurrency == nil, count > numbers {
                throw ValidationError("--numbers needs --concurrency at most --numbers (without it every flow runs at once)")
            }
        }

        func run() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-bench-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: folder) }
            let report = try await FlowBenchmark.run(path: FlowBenchmark.Path(rawValue: path)!, count: count,
                                                     concurrency: concurrency ?? count, folder: folder,
                                                     pushLatency: .milliseconds(pushLatency), suggestedTimeout: suggestedTimeout, numbers: numbers)
            if json {
                say(CompactJSON.encode(["path": path, "flows": report.flows, "failures": report.failures, "recaptchas": report.reCAPTCHAs,
                                          "wallSeconds": report.wallSeconds, "p50ms": report.p50, "p99ms": report.p99,
                                          "maxms": report.max, "peakMB": report.peakMegabytes, "heapMB": report.heapMegabytes,
                                          "heapAfterExpiryMB": report.heapAfterExpiryMegabytes, "users": report.users,
                                          "requestsPerFlow": report.requestsPerFlow, "pushesPerFlow": report.pushesPerFlow,
                                          "pushesAccepted": report.pushTally.accepted, "pushesRefused": report.pushTally.refused,
                                          "pushesNotSent": report.pushTally.unsent, "firstPushProblem": report.pushTally.firstProblem ?? "",
                                          "firstFailure": report.firstFailure ?? ""])!)
            } else {
                say(String(format: "%@: %d flows in %.2f s (%.0f flows/s), %d failed; per flow p50 %.0f ms, p99 %.0f ms, max %.0f ms; peak RSS %.0f MB",
                             path, report.flows, report.wallSeconds, report.flowsPerSecond, report.failures, report.p50, report.p99,
                             report.max, report.peakMegabytes))
                say(String(format: "  heap in use %.1f MB at the end, %.1f MB once every lifetime has passed; %d users kept",
                             report.heapMegabytes, report.heapAfterExpiryMegabytes, report.users))
                say("  \(report.flows - report.reCAPTCHAs) of \(report.flows) apps were proven by the silent push, \(report.reCAPTCHAs) went through the reCAPTCHA page")
                let requests = report.requestsPerFlow.sorted { $0.key < $1.key }.map { String(format: "%@ %.2f", $0.key, $0.value) }
                say("  per flow: \(requests.joined(separator: ", ")); \(String(format: "%.2f", report.pushesPerFlow)) pushes")
                if let first = report.firstFailure { say("first failure: \(first)") }
            }
            let tally = report.pushTally
            if tally.refused + tally.unsent > 0 {
                // The flows still signed in (through reCAPTCHA), but the run did not measure the path it names.
                sayError("error: \(tally.refused) silent pushes were refused and \(tally.unsent) not sent (\(tally.accepted) accepted); first: \(tally.firstProblem ?? "?")")
            }
            if report.failures > 0 || tally.refused + tally.unsent > 0 { throw ExitCode(1) }
        }
    }

    struct Fleet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Phone sign-ins over HTTP against backends sharing one store (docs/fleet.md): each code requested from one node and checked on the next.",
            discussion: """
                Without --store: one backend on the embedded journal (a temporary folder), the default to compare with. \
                With --store: --nodes backends in this process, each with its own connection to the database; \
                the database should be empty (a new one): the rows it holds are the fleet's state.
                """)
        @Option(help: ArgumentHelp("The fleet's PostgreSQL (postgres://…, as authsim backend --store).", valueName: "url")) var store: String?
        @Option(help: "Backends sharing --store.") var nodes = 1
        @Option(help: "Sign-ins (each two requests and two changes).") var count = 2_000
        @Option(help: "Sign-ins in progress at once.") var concurrency = 64
        @Flag(help: "One JSON object.") var json = false

        func validate() throws {
            guard nodes >= 1, count >= 1, concurrency >= 1 else {
                throw ValidationError("--nodes, --count and --concurrency are at least 1")
            }
            guard nodes == 1 || store != nil else { throw ValidationError("--nodes \(nodes) needs --store: nodes without a shared store are separate backends") }
        }

        func run() async throws {
            var configuration = BackendConfiguration()
            configuration.acceptUnverifiedCodeRequests = true
            configuration.fixedSMSCode = "123456"
            var toolkits: [IdentityToolkit] = []
            var eventLogs: [PostgresEventLog] = []
            var folder: URL?
            if let store {
                let location: PostgresLocation
                do { location = try PostgresLocation(store) } catch { throw ValidationError("--store: \(error)") }
                for index in 0..<nodes {
                    let shared = PostgresBackendStore(location: location, node: "bench-\(index)")
                    do { toolkits.append(try await IdentityToolkit.open(configuration: configuration, pusher: nil, store: shared)) } catch {
                        throw CommandFailure("cannot open the store \(location.address): \(error)")
                    }
                    // Its events kept for the fleet's inspectors, as authsim backend --store keeps them.
                    let events = PostgresEventLog(location: location, node: "bench-\(index)")
                    eventLogs.append(events)
                    await toolkits[index].setEventSink(events)
                }
            } else {
                let journal = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-bench-fleet-\(UUID().uuidString.prefix(8))")
                folder = journal
                toolkits.append(try IdentityToolkit(configuration: configuration, pusher: nil, stateDirectory: journal))
            }
            defer { if let folder { try? FileManager.default.removeItem(at: folder) } }
            let report = try await FleetBenchmark.run(toolkits, count: count, concurrency: concurrency)
            for events in eventLogs { await events.close() }
            let kind = store == nil ? "journal" : "postgres"
            if json {
                say(CompactJSON.encode(["store": kind, "nodes": report.nodes, "signIns": report.signIns, "wallSeconds": report.seconds,
                                          "signInsPerSecond": report.signInsPerSecond, "changesPerSecond": report.changesPerSecond,
                                          "p50ms": report.p50Milliseconds, "p99ms": report.p99Milliseconds, "failures": report.failures])!)
            } else {
                say("\(kind), \(report.nodes) node(s): \(report.signIns) sign-ins in \(String(format: "%.2f", report.seconds)) s "
                      + "(\(Int(report.signInsPerSecond)) sign-ins/s, \(Int(report.changesPerSecond)) changes/s), p50 \(Int(report.p50Milliseconds)) ms, "
                      + "p99 \(Int(report.p99Milliseconds)) ms, \(report.failures) failed")
            }
            if let first = report.firstFailure { sayError("first failure: \(first)") }
            if report.failures > 0 { throw ExitCode(1) }
        }
    }

    /// The sign-ins' HTTP/1.1 exchanges layer by layer (Benchmarks/run.sh flows loads these against nginx and h2load).
    struct HTTP1Server: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "http1-server",
            abstract: "An HTTP/1.1 server on 127.0.0.1 of one layer of the sign-ins' stack, until stopped (prints its port and the path to load).",
            discussion: """
                nio: SwiftNIO's codec and one channel handler answering --body (no routing, JSON or tasks). \
                hummingbird: Hummingbird's router answering --body, served as the backend serves. \
                backend: the backend itself, with an empty state; load its GET recaptchaConfig at the printed path.
                """)
        @Option(help: "nio, hummingbird or backend.") var layer: String = HTTP1FloorBenchmark.ServerLayer.nio.rawValue
        @Option(help: "The port (0: any free one).") var port = 0
        @Option(help: ArgumentHelp("The answer's body (nio and hummingbird).", valueName: "file")) var body: String?

        func validate() throws {
            guard let layer = HTTP1FloorBenchmark.ServerLayer(rawValue: layer) else { throw ValidationError("--layer must be nio, hummingbird or backend") }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
            if layer != .backend, body == nil { throw ValidationError("--layer \(layer.rawValue) needs --body") }
        }

        func run() async throws {
            let bytes = try body.map { try read($0) } ?? []
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-bench-http1-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: folder) }
            let server = try await HTTP1FloorBenchmark.serve(HTTP1FloorBenchmark.ServerLayer(rawValue: layer)!, port: port, body: bytes, folder: folder)
            say("listening on 127.0.0.1:\(server.port), path \(server.path)")
            try await server.untilStopped()
        }
    }

    struct HTTP1Client: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "http1-client",
            abstract: "An HTTP/1.1 client of one layer of the sign-ins' stack: --requests requests over --connections kept-alive connections, one at a time on each (as h2load --h1 -m 1).",
            discussion: "nio: SwiftNIO's codec and one channel handler per connection. transport: the apps' transport (NIOHTTP1Transport), one task per connection.")
        @Argument(help: "http://host:port/path") var url: String
        @Option(help: "nio or transport.") var layer: String = HTTP1FloorBenchmark.ClientLayer.nio.rawValue
        @Option(help: "Requests in all.") var requests = 10_000
        @Option(help: "Connections, each one request at a time.") var connections = 128
        @Option(help: ArgumentHelp("POST this file as JSON (without it: GET, as h2load without -d).", valueName: "file")) var body: String?
        @Flag(help: "One JSON object.") var json = false

        func validate() throws {
            guard HTTP1FloorBenchmark.ClientLayer(rawValue: layer) != nil else { throw ValidationError("--layer must be nio or transport") }
            guard requests > 0, connections > 0 else { throw ValidationError("--requests and --connections must be positive") }
        }

        func run() async throws {
            guard let parsed = URL(string: url), parsed.scheme == "http", let host = parsed.host, let port = parsed.port else {
                throw ValidationError("\(url) is not http://host:port/path (cleartext, port given)")
            }
            let path = parsed.path.isEmpty ? "/" : parsed.path + (parsed.query.map { "?" + $0 } ?? "")
            let report = try await HTTP1FloorBenchmark.load(HTTP1FloorBenchmark.ClientLayer(rawValue: layer)!, host: host, port: port, path: path,
                                                            body: try body.map { try read($0) }, requests: requests, connections: connections)
            if json {
                say(CompactJSON.encode(["exchanges": report.exchanges, "failures": report.failures, "seconds": report.seconds,
                                          "exchangesPerSecond": report.exchangesPerSecond])!)
            } else {
                say(String(format: "%d exchanges in %.3f s (%.0f/s), %d not 200", report.exchanges, report.seconds, report.exchangesPerSecond, report.failures))
            }
            if report.failures > 0 || report.exchanges != requests { throw ExitCode(1) }
        }
    }
}

/// The bytes of the file at `path`, or a usage error naming it.
private func read(_ path: String) throws -> [UInt8] {
    do { return Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
        throw ValidationError("cannot read \(path): \(error.localizedDescription)")
    }
}
