import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server as a shared deployment runs one: on TCP (127.0.0.1, a free port), TLS with a
/// certificate from a private CA made by `openssl` (it names `localhost` only), and passwords
/// (scram-sha-256) for TCP clients. For the tests of `sslmode`, `sslrootcert` and passwords kept
/// out of messages; ``TemporaryPostgres`` serves the rest over its socket.
package final class TLSPostgres: Sendable {
    package let port: Int
    /// The CA's certificate (PEM): what `sslrootcert` names.
    package let caFile: String
    /// The password of the user `authsim`.
    package let password: String
    package let folder: URL
    private let server: ServerProcess

    private init(port: Int, caFile: String, password: String, folder: URL, server: ServerProcess) {
        self.port = port
        self.caFile = caFile
        self.password = password
        self.folder = folder
        self.server = server
    }

    /// Makes the CA and the server's certificate, then starts the server; a port another process
    /// took between the choice and the bind is chosen again (the server's own log line says so).
    package static func start(password: String) async throws -> TLSPostgres {
        let binaries = try TemporaryPostgres.binaries()
        let folder = URL(fileURLWithPath: "/tmp/authsim-pgtls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.path
        let openssl = """
            set -e; cd '\(path)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -subj /CN=authsim-test-ca -days 2 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
            printf 'subjectAltName=DNS:localhost\\nbasicConstraints=CA:FALSE\\n' > ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext 2>/dev/null
            printf '%s\\n' '\(password)' > pwfile
            chmod 600 server.key pwfile
            """
        let made = try await runProgram(["sh", "-c", openssl])
        guard made.status == 0 else { throw PostgresFixtureError("openssl could not make the test CA: \(made.output)") }
        var asUser: [String] = []
        if getuid() == 0 {
            for file in ["", "/server.key", "/server.pem", "/pwfile"] where chown(path + file, 65534, 65534) != 0 {
                throw PostgresFixtureError("cannot give \(path)\(file) to nobody: errno \(errno)")
            }
            asUser = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        }
        let data = folder.appendingPathComponent("data").path
        let initdb = try await runProgram(asUser + [binaries.appendingPathComponent("initdb").path, "-D", data, "-U", "authsim",
                                                    "--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile=\(path)/pwfile",
                                                    "-E", "UTF8", "--no-sync", "--locale=C"])
        guard initdb.status == 0 else { throw PostgresFixtureError("initdb failed (exit \(initdb.status)): \(initdb.output)") }
        for _ in 0..<5 {
            let port = try freePort()
            let postgres = (asUser + [binaries.appendingPathComponent("postgres").path, "-D", data, "-k", path, "-p", String(port),
                                      "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "ssl=on",
                                      "-c", "ssl_cert_file=\(path)/server.pem", "-c", "ssl_key_file=\(path)/server.key"])
                .map { "'\($0)'" }.joined(separator: " ")
            let script = "\(postgres) 2>&1 & pg=$!; tail --pid=\(getpid()) -f /dev/null; kill -INT $pg; wait $pg; rm -rf '\(path)'"
            let server = try ServerProcess(["/bin/sh", "-c", script])
            let lines = (try? await server.waitFor("ready to accept connections", limit: .seconds(120))) ?? server.output
            guard lines.contains(where: { $0.contains("ready to accept connections") }) else {
                server.stop()
                if lines.contains(where: { $0.contains("could not bind") || $0.contains("Address already in use") }) { continue }
                throw PostgresFixtureError("the TLS PostgreSQL did not start: \(lines.suffix(10))")
            }
            let created = try await runProgram([binaries.appendingPathComponent("psql").path, "-X", "-q", "-h", path, "-p", String(port), "-U", "authsim",
                                                "-d", "postgres", "-c", "CREATE DATABASE authsim"])
            guard created.status == 0 else { throw PostgresFixtureError("cannot create the database authsim: \(created.output)") }
            return TLSPostgres(port: port, caFile: "\(path)/ca.pem", password: password, folder: folder, server: server)
        }
        throw PostgresFixtureError("no free port for the TLS PostgreSQL after 5 tries")
    }

    /// A URL of database `authsim` on this server (`host` a name or an address; the password left to the caller).
    package func url(host: String = "localhost", user: String = "authsim", query: String) -> String {
        "postgres://\(user)@\(host):\(port)/authsim?\(query)"
    }

    /// A TCP port nothing listens on now (the kernel's choice for a socket bound to port 0).
    static func freePort() throws -> Int {
        let held = try HeldPort(listening: false)
        defer { held.release() }
        return held.port
    }
}
