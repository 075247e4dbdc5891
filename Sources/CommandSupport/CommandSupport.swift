import APNsWire
import HTTPServerSupport
import ArgumentParser
import Foundation
import Logging
import Utilities


extension APNsEnvironment: ExpressibleByArgument {}

/// `--log-level trace|debug|info|notice|warning|error|critical`.
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Sends every library's log to standard error (what `say` prints goes to standard output) and
/// returns the command's logger at `level`.
package func bootstrapLogging(_ label: String, level: Logger.Level) -> Logger {
    LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
    var logger = Logger(label: label)
    logger.logLevel = level
    return logger
}

/// A command that cannot go on: ArgumentParser prints `Error: <description>` and the program
/// exits with status 1.
package struct CommandFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Starts a server; when it cannot listen, the failure says why and names `option`, the
/// command's option that moves it (`--ui-port`). For a part with several ports (push-receiver's
/// sandbox and production), `options` maps each port to its option.
package func starting<T>(_ options: [(option: String, port: Int)], _ start: () async throws -> T) async throws -> T {
    do { return try await start() } catch let error as any CarriesListenError {
        guard let listen = error.listenError else { throw error }
        throw CommandFailure(listen.advice(option: options.first { $0.port == listen.port }?.option))
    }
}

/// Starts a server whose port `option` sets (see ``starting(_:_:)-([(String,Int)],_)``).
package func starting<T>(_ option: String, port: Int, _ start: () async throws -> T) async throws -> T {
    try await starting([(option, port)], start)
}

/// Checks that every port a program is about to listen on is free, and refuses with all the
/// conflicts at once, each with the option that moves it: a second `authsim serve` otherwise met
/// them one start at a time.
package func checkPortsFree(_ ports: [(what: String, option: String, port: Int)], host: String) throws {
    let conflicts = ports.compactMap { port in ListenError.probe(what: port.what, host: host, port: port.port).map { ($0, port.option) } }
    guard !conflicts.isEmpty else { return }
    if conflicts.count == 1 { throw CommandFailure(conflicts[0].0.advice(option: conflicts[0].1)) }
    throw CommandFailure("\(conflicts.count) ports cannot be listened on:\n" + conflicts.map { "  " + $0.0.advice(option: $0.1) }.joined(separator: "\n"))
}

/// Refuses ports that are not ports (0 to 65535; 0 asks for any free one), naming the option: a
/// port of 70000 would otherwise be taken modulo 65536.
package func checkPorts(_ ports: [(option: String, port: Int?)]) throws {
    for (option, port) in ports {
        guard let port, !(0...65_535).contains(port) else { continue }
        throw ValidationError("\(option) \(port) is not a port: 0 to 65535 (0: any free port)")
    }
}

/// How to run `program` (authsim, push-receiver, apns-sender, redirect-interceptor) from here, for
/// advice in messages: `swift run push-receiver` from a source checkout's build, the bare name when
/// the folder it was started from is on PATH (the wheel's environment, a tarball's `bin/` added to
/// PATH), else the program's path in that folder. The wheel's console scripts say where they are
/// (`AUTHSIM_LAUNCHER`), so advice never names the bundled binary inside site-packages.
/// Never a build folder's path.
package func invocation(of program: String, executable: String? = nil, path: String? = ProcessInfo.processInfo.environment["PATH"],
                        launcher: String? = ProcessInfo.processInfo.environment["AUTHSIM_LAUNCHER"]) -> String {
    // The wheel's console script (in the environment's bin/) execs the bundled binary and names itself.
    let exe = launcher.flatMap { $0.isEmpty ? nil : $0 } ?? executable
        ?? runningExecutable()
    let folder = URL(fileURLWithPath: exe).deletingLastPathComponent().standardizedFileURL.path
    if folder.contains("/.build/") { return "swift run \(program)" }
    let onPath = (path ?? "").split(separator: ":").contains { URL(fileURLWithPath: String($0)).standardizedFileURL.path == folder }
    return onPath ? program : folder + "/" + program
}

/// `--admin-token`, `--admin-token-file`, `--admin-owner-network`: who may use a server's admin
/// routes (the inspector, the backend's Admin and emulator routes, the device gateway) when it
/// listens beyond loopback (``AdminAccess``; docs/security.md).
package struct AdminAccessOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The deployment's admin token (16 characters or more, e.g. `openssl rand -hex 32`): required beyond loopback by the inspector, the Admin and emulator routes and the device gateway, as Authorization: Bearer <token>. Visible in `ps`: prefer --admin-token-file or AUTHSIM_ADMIN_TOKEN.",
                               valueName: "token")) package var adminToken: String?
    @Option(help: ArgumentHelp("A file holding the admin token (its first line), e.g. a Kubernetes secret.", valueName: "file"))
    package var adminTokenFile: String?
    @Option(help: ArgumentHelp("A client network (CIDR, e.g. 10.0.0.0/8; repeatable; also AUTHSIM_ADMIN_OWNER_NETWORKS, comma-separated) whose Admin SDKs may send `Bearer owner`, which they send every emulator and cannot be told otherwise. Without it only the token is taken.",
                               valueName: "cidr")) package var adminOwnerNetwork: [String] = []

    package init() {}

    /// The token from `--admin-token`, `--admin-token-file` or `AUTHSIM_ADMIN_TOKEN` (at most one), or nil.
    package func token(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AdminToken? {
        guard let (source, secret) = try secret(environment: environment) else { return nil }
        do { return try AdminToken(secret) } catch { throw ValidationError("\(source): \(error.message)") }
    }

    /// The token as given, and where it came from (for a client that sends it), or nil.
    package func secret(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (source: String, secret: String)? {
        try Self.secret(token: adminToken, file: adminTokenFile, environment: environment)
    }

    /// The token given as `--admin-token` (`token`), `--admin-token-file` (`file`) or `AUTHSIM_ADMIN_TOKEN`.
    package static func secret(token adminToken: String?, file adminTokenFile: String?,
                              environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (source: String, secret: String)? {
        let given = [adminToken.map { ("--admin-token", $0) }, adminTokenFile.map { ("--admin-token-file", $0) },
                     environment["AUTHSIM_ADMIN_TOKEN"].map { ("AUTHSIM_ADMIN_TOKEN", $0) }].compactMap { $0 }
        guard given.count <= 1 else {
            throw ValidationError("the admin token is given twice (\(given.map(\.0).joined(separator: " and "))): give one")
        }
        guard let (source, value) = given.first else { return nil }
        guard source == "--admin-token-file" else { return (source, value) }
        guard let data = FileManager.default.contents(atPath: value) else {
            throw ValidationError("--admin-token-file \(value): cannot read it (is it there, and readable by this user?)")
        }
        let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return (source, line.trimmingCharacters(in: .whitespaces))
    }

    /// The access for servers with admin routes listening on `host` (given by `option`).
    /// - Throws: a ``ValidationError`` saying how to give a token, for an address beyond loopback without one.
    package func access(listening host: String, option: String = "--host", environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AdminAccess {
        let networks: [IPNetwork]
        let named = adminOwnerNetwork + (environment["AUTHSIM_ADMIN_OWNER_NETWORKS"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        do { networks = try named.map { (text: String) throws(AdminAccessError) in try IPNetwork(text) } } catch {
            throw ValidationError("--admin-owner-network \(error.message)")
        }
        do {
            return try AdminAccess.forListening(on: [host], token: try token(environment: environment), ownerNetworks: networks)
        } catch let error as AdminAccessError where error.code == .tokenRequired {
            throw ValidationError("""
                \(option) \(host): \(error.message). Give the deployment an admin token: \
                `openssl rand -hex 32 > admin-token && chmod 600 admin-token`, then --admin-token-file admin-token \
                (or AUTHSIM_ADMIN_TOKEN); the Admin SDKs, which always send `Bearer owner`, need their networks named \
                with --admin-owner-network CIDR. Or listen on 127.0.0.1. (docs/security.md)
                """)
        } catch let error as AdminAccessError {
            throw ValidationError("--admin-owner-network: \(error.message)")
        }
    }

    /// A line for the banner: what the admin routes take.
    package static func describe(_ access: AdminAccess) -> String {
        guard access.token != nil else { return "no token (loopback only)" }
        return "the admin token" + (access.ownerNetworks.isEmpty ? "" : "; Admin SDKs' `owner` from \(access.ownerNetworks.map(\.description).joined(separator: ", "))")
    }
}
