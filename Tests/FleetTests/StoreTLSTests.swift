import Foundation
import Testing
import TestSupport

/// The fleet's store as a shared deployment reaches it: PostgreSQL on TCP with TLS from a private
/// CA and a password. `sslmode=verify-full` with `sslrootcert` works, a certificate for another
/// name or from another CA is refused, and the password shows in no message, whichever way the
/// start fails (libpq's parameters: https://www.postgresql.org/docs/current/libpq-connect.html).
@Suite("The store over TLS: verify-full with a CA file, passwords kept out of messages")
struct StoreTLSTests {
    static let password = "Pa55-w0rd-never-shown-4e1f"

    /// `authsim backend --store url`, the password from PGPASSWORD unless the URL has one: its output and log once it listens or exits.
    func backend(_ url: String, in folder: URL, debug: Bool = false) async throws -> (started: Bool, text: String, process: ServerProcess) {
        let process = try ServerProcess(["env", "PGPASSWORD=\(Self.password)", try executable("authsim"), "backend", "--port", "0", "--receiver-port", "1",
                                         "--certs", folder.appendingPathComponent("Certs").path, "--node-name", "tls",
                                         "--store", url] + (debug ? ["--log-level", "debug"] : []))
        let started = (try? await process.waitFor("SMS outbox", limit: .seconds(60))) != nil
        if !started { _ = try await process.exit() }
        return (started, (process.output + [process.errorText]).joined(separator: "\n"), process)
    }

    @Test("verify-full and verify-ca with sslrootcert start; another name, the system's roots, a wrong password are refused, no password shown")
    func tls() async throws {
        guard try await TemporaryPostgres.sharedIfInstalled() != nil, await toolAvailable(["openssl", "version"]) else { return }
        let postgres = try await TLSPostgres.start(password: Self.password)
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }

        // The certificate names localhost: verify-full by that name, trusting the CA file.
        let good = try await backend(postgres.url(query: "sslmode=verify-full&sslrootcert=\(postgres.caFile)"), in: folder, debug: true)
        defer { good.process.stop() }
        #expect(good.started, "\(good.text)")
        let port = try good.process.port(after: "listening")
        let created = try await runProgram(["curl", "-s", "-H", "Authorization: Bearer owner", "-H", "Content-Type: application/json",
                                            "-d", #"{"phoneNumber":"+16505550177"}"#,
                                            "http://127.0.0.1:\(port)/identitytoolkit.googleapis.com/v1/projects/authsim-demo/accounts"])
        #expect(created.output.contains("localId"), "\(created.output)")
        let records = try await runProgram(["sh", "-c", "PGPASSWORD='\(Self.password)' PGSSLMODE=verify-full PGSSLROOTCERT='\(postgres.caFile)' "
                                            + "psql -X -A -t -h localhost -p \(postgres.port) -U authsim -d authsim -c 'SELECT count(*) FROM backend_rows'"])
        #expect((Int(records.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0, "libpq reads what the node wrote: \(records.output)")
        #expect(!good.text.contains(Self.password) && !(good.process.output + [good.process.errorText]).joined().contains(Self.password))

        // verify-ca checks the chain, not the name: 127.0.0.1 is not in the certificate.
        let byAddress = try await backend(postgres.url(host: "127.0.0.1", query: "sslmode=verify-ca&sslrootcert=\(postgres.caFile)"), in: folder)
        defer { byAddress.process.stop() }
        #expect(byAddress.started, "\(byAddress.text)")

        let refusals: [(String, String, String)] = [
            (postgres.url(host: "127.0.0.1", query: "sslmode=verify-full&sslrootcert=\(postgres.caFile)"), "another name", "does not name the host"),
            (postgres.url(query: "sslmode=verify-full"), "the system's roots", "sslrootcert=FILE"),
            ("postgres://authsim:wrong-\(Self.password)@localhost:\(postgres.port)/authsim?sslmode=verify-full&sslrootcert=\(postgres.caFile)",
             "a wrong password in the URL", "password"),
            (postgres.url(user: "nobody-here", query: "sslmode=require&sslrootcert=\(postgres.caFile)"), "an unknown user", "nobody-here"),
            (postgres.url(query: "sslmode=verify-full&sslrootcert=\(folder.path)/no-such-ca.pem"), "a CA file that is not there", "sslrootcert"),
            ("postgres://authsim:\(Self.password)@localhost:\(postgres.port)/authsim?sslmode=verify-full&sslrootcert=\(postgres.caFile)&password=x",
             "a parameter authsim does not read", "not a parameter"),
            ("postgres://authsim:\(Self.password) x@localhost/authsim", "a URL that does not parse", "postgres://"),
        ]
        for (url, what, cause) in refusals {
            let run = try await backend(url, in: folder, debug: true)
            defer { run.process.stop() }
            #expect(!run.started, "\(what): \(run.text)")
            #expect(run.text.lowercased().contains(cause.lowercased()), "\(what): \(run.text)")
            #expect(!run.text.contains(Self.password), "\(what): the password shows: \(run.text)")
        }
    }
}
