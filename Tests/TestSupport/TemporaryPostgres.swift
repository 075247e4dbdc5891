import Utilities
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server, from Debian's `postgresql` package, in a temporary folder: one per
/// test process, started on first use, each test in a database of its own (``newDatabase(_:)``).
///
/// - It listens on a Unix socket in its folder only: no port to race other tests or processes for.
/// - The user `authsim` is trusted (`initdb --auth=trust`): the socket's folder is the test's.
/// - As root (CI's machines), it runs as `nobody`: PostgreSQL refuses to run as root.
/// - `fsync=off`: a test's database need not survive a power cut, and a commit that waits for the
///   disk would make every test wait on it. (The benchmark's server keeps fsync on.)
/// - It goes when the test process does: a watcher (`tail --pid`) stops it and removes its folder.
/// - Its readiness is the server's own log line, waited for as a line (no polling).
package actor TemporaryPostgres {
    /// The folder holding the socket (`.s.PGSQL.5432`) and the data.
    package nonisolated let folder: URL
    private let server: ServerProcess
    private let binaries: URL
    private var databases = 0

    /// The server of this test process.
    package static func shared() async throws -> TemporaryPostgres {
        try await starter.server()
    }

    /// The server of this test process, or `nil` when PostgreSQL is not installed here: on CI
    /// (`CI` set) that fails the test, since `.ci/run` installs it; elsewhere the test is skipped
    /// with a note, as the other tools' tests are (``toolAvailable(_:)``).
    package static func sharedIfInstalled() async throws -> TemporaryPostgres? {
        do { _ = try binaries() } catch {
            if ProcessInfo.processInfo.environment["CI"] != nil {
                Issue.record("\(error): .ci/run must install it")
            } else {
                print("skipping: \(error)")
            }
            return nil
        }
        return try await shared()
    }

    private static let starter = Starter()
    private actor Starter {
        var started: Task<TemporaryPostgres, any Error>?
        func server() async throws -> TemporaryPostgres {
            if let started { return try await started.value }
            let task = Task { try await TemporaryPostgres.start() }
            started = task
            return try await task.value
        }
    }

    private init(folder: URL, server: ServerProcess, binaries: URL) {
        self.folder = folder
        self.server = server
        self.binaries = binaries
    }

    /// A database of this server: its name, and its `postgres://` URL (the socket's folder as
    /// `host`, libpq's way).
    package struct Database: Sendable {
        package let name: String
        package let url: String
    }

    /// A new, empty database.
    package func newDatabase(_ hint: String) async throws -> Database {
        databases += 1
        let name = "t\(databases)_" + hint.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(40)
        _ = try await psql("postgres", "CREATE DATABASE \"\(name)\"")
        return Database(name: name, url: url(database: name))
    }

    /// The URL of `database` on this server.
    package nonisolated func url(database: String) -> String {
        "postgres://authsim@/\(database)?host=\(folder.path)"
    }

    /// Runs SQL with psql in `database`; its output (unaligned, tuples only).
    package func psql(_ database: String, _ sql: String) async throws -> String {
        let (output, status) = try await runProgram([binaries.appendingPathComponent("psql").path, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                                     "-h", folder.path, "-U", "authsim", "-d", database, "-c", sql])
        guard status == 0 else { throw PostgresFixtureError("psql failed in \(database) (its error is on the test's standard error): \(output)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where Debian puts PostgreSQL's programs (`/usr/lib/postgresql/<version>/bin`, off `PATH`):
    /// the newest version there, else the folder of an `initdb` on `PATH`.
    static func binaries() throws -> URL {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        if let newest = versions.last { return URL(fileURLWithPath: "\(root)/\(newest)/bin") }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent("initdb")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.resolvingSymlinksInPath().deletingLastPathComponent() }
        }
        throw PostgresFixtureError("no PostgreSQL here: install Debian's postgresql package (.ci/run does)")
    }

    private static func start() async throws -> TemporaryPostgres {
        let binaries = try binaries()
        // Short: a Unix socket's path has at most 107 bytes.
        let folder = URL(fileURLWithPath: "/tmp/authsim-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = folder.appendingPathComponent("data")
        // PostgreSQL will not run as root: as root, initdb and the server run as nobody, who owns the folder.
        var asUser: [String] = []
        if getuid() == 0 {
            guard chown(folder.path, 65534, 65534) == 0 else { throw PostgresFixtureError("cannot give \(folder.path) to nobody: errno \(errno)") }
            asUser = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        }
        let initdb = try await runProgram(asUser + [binaries.appendingPathComponent("initdb").path, "-D", data.path, "-U", "authsim",
                                                    "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"])
        guard initdb.status == 0 else { throw PostgresFixtureError("initdb failed (exit \(initdb.status)): \(initdb.output)") }
        let postgres = (asUser + [binaries.appendingPathComponent("postgres").path, "-D", data.path, "-k", folder.path,
                                  "-c", "listen_addresses=", "-c", "fsync=off", "-c", "max_connections=200"])
            .map { "'\($0)'" }.joined(separator: " ")
        // The server's log on standard output; stopped (fast shutdown) and removed when the test process ends.
        let script = "\(postgres) 2>&1 & pg=$!; tail --pid=\(getpid()) -f /dev/null; kill -INT $pg; wait $pg; rm -rf '\(folder.path)'"
        let server = try ServerProcess(["/bin/sh", "-c", script])
        _ = try await server.waitFor("database system is ready to accept connections", limit: .seconds(120))
        return TemporaryPostgres(folder: folder, server: server, binaries: binaries)
    }
}

package struct PostgresFixtureError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
