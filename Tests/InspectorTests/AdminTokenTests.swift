import Foundation
import Testing
import TestSupport

/// A shared deployment's admin token (docs/security.md, "Shared deployments"), through the
/// programs as an operator starts them and clients we did not write: curl, the Firebase Admin SDK
/// for Python (whose emulator mode always sends `Bearer owner`), `authsim phone` across processes.
@Suite("The admin token: required beyond loopback, taken by the inspector, the backend and the gateway")
struct AdminTokenTests {
    static let secret = "5c1e0d9a7b3f42e8a6d4c2b0e8f6a4d2"

    /// A token file, mode 0600, as the refusal's advice makes one.
    func tokenFile(in folder: URL, _ secret: String = secret) throws -> String {
        let file = folder.appendingPathComponent("admin-token")
        try Data((secret + "\n").utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return file.path
    }

    /// curl's status code and body for a request (`-w` appends the status on its own line).
    func curl(_ arguments: [String]) async throws -> (status: Int, body: String) {
        let run = try await runProgram(["curl", "-s", "-w", "\n%{http_code}"] + arguments)
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
    }

    @Test("beyond loopback without a token every program refuses to start, saying how to give one; a weak token is refused")
    func refusals() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        let certs = folder.appendingPathComponent("Certs").path
        let state = folder.appendingPathComponent("State").path
        let starts: [[String]] = [
            [authsim, "backend", "--host", "0.0.0.0", "--port", "0", "--certs", certs, "--state", state],
            [authsim, "serve", "--host", "0.0.0.0", "--sandbox-port", "0", "--production-port", "0", "--device-port", "0", "--backend-port", "0",
             "--ui-port", "0", "--certs", certs, "--state", state],
            [try executable("push-receiver"), "--host", "0.0.0.0", "--sandbox-port", "0", "--no-production-listener", "--device-port", "0",
             "--certs", certs, "--state", state],
        ]
        for arguments in starts {
            let run = try await runProgram(["sh", "-c", #""$@" 2>&1"#, "sh"] + arguments)
            #expect(run.status != 0, "\(arguments[1]): \(run.output)")
            #expect(run.output.contains("0.0.0.0") && run.output.contains("--admin-token-file") && run.output.contains("--admin-owner-network"),
                    "\(arguments[1]): \(run.output)")
        }
        let weak = try await runProgram(["sh", "-c", #""$@" 2>&1"#, "sh", authsim, "backend", "--host", "0.0.0.0", "--port", "0", "--certs", certs,
                                         "--state", state, "--admin-token-file", try tokenFile(in: folder, "too-short")])
        #expect(weak.status != 0 && weak.output.contains("fewer than 16") && !weak.output.contains("too-short"), "\(weak.output)")
        let twice = try await runProgram(["sh", "-c", #"AUTHSIM_ADMIN_TOKEN=$1 shift; "$@" 2>&1"#.replacingOccurrences(of: "$1 shift; ", with: "\(Self.secret) "),
                                          "sh", authsim, "backend", "--port", "0", "--certs", certs, "--state", state, "--admin-token", Self.secret])
        #expect(twice.status != 0 && twice.output.contains("given twice"), "\(twice.output)")
        // The APNs ports alone are Apple's (a provider token): push-receiver without its gateway listens anywhere.
        let receiver = try ServerProcess([try executable("push-receiver"), "--host", "0.0.0.0", "--sandbox-port", "0", "--no-production-listener",
                                          "--no-device-gateway", "--certs", certs, "--state", state])
        defer { receiver.stop() }
        _ = try await receiver.waitFor("delivery log:")
    }

    @Test("the backend beyond loopback: the Admin SDK's owner from the owner networks only, the token everywhere, the app's API as Google's")
    func backend() async throws {
        guard await toolAvailable(["python3", "-c", "import firebase_admin, requests"]) else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = try tokenFile(in: folder)
        func start(_ name: String, _ extra: [String]) async throws -> (ServerProcess, String) {
            let backend = try ServerProcess([try executable("authsim"), "backend", "--host", "0.0.0.0", "--port", "0", "--receiver-port", "1",
                                             "--certs", folder.appendingPathComponent("Certs").path, "--state", folder.appendingPathComponent(name).path,
                                             "--test-number", "+16505553434=654321", "--admin-token-file", token, "--log-level", "debug"] + extra)
            _ = try await backend.waitFor("listening on every address")
            #expect(backend.output.contains { $0.contains("Admin and emulator routes: the admin token") }, "\(backend.output)")
            // No client can dial 0.0.0.0: the banner gives this machine's address and says what others use.
            let port = try backend.port(after: "listening")
            #expect(backend.output.contains { $0.contains("FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:\(port)") }, "\(backend.output)")
            #expect(backend.output.contains { $0.contains("listening on every address (0.0.0.0)") }, "\(backend.output)")
            #expect(!backend.output.contains { $0.contains("0.0.0.0:") }, "\(backend.output)")
            return (backend, "127.0.0.1:\(port)")
        }
        let (open, openHost) = try await start("owners", ["--admin-owner-network", "127.0.0.0/8"])
        defer { open.stop() }
        let (closed, closedHost) = try await start("token-only", [])
        defer { closed.stop() }
        let project = "authsim-demo"
        // The Admin SDK, unchanged: it sends `Bearer owner`.
        let script = """
            import os, sys, firebase_admin
            from firebase_admin import auth
            os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = sys.argv[1]
            firebase_admin.initialize_app(options={"projectId": "\(project)"})
            try:
                user = auth.create_user(phone_number="+16505550101")
                print("created", auth.get_user(user.uid).phone_number)
            except Exception as error:
                print("refused", type(error).__name__, error)
            """
        let fromOwners = try await runProgram(["python3", "-c", script, openHost])
        #expect(fromOwners.output.hasPrefix("created +16505550101"), "\(fromOwners.output)")
        let tokenOnly = try await runProgram(["python3", "-c", script, closedHost])
        #expect(tokenOnly.output.hasPrefix("refused") && tokenOnly.output.contains("owner"), "\(tokenOnly.output)")

        // The emulator's own routes (the SMS outbox) and the Admin REST routes: the token, in any case of the scheme.
        let outbox = "http://\(closedHost)/emulator/v1/projects/\(project)/verificationCodes"
        #expect(try await curl([outbox]).status == 401)
        #expect(try await curl(["-H", "Authorization: Bearer wrong-token-0123456789", outbox]).status == 401)
        #expect(try await curl(["-H", "Authorization: Bearer owner", outbox]).status == 401)
        #expect(try await curl(["-H", "Authorization: bearer \(Self.secret)", outbox]).status == 200)
        let lookup = try await curl(["-H", "Authorization: Bearer \(Self.secret)", "-H", "Content-Type: application/json", "-d", #"{"phoneNumber":["+16505550101"]}"#,
                                     "http://\(openHost)/identitytoolkit.googleapis.com/v1/projects/\(project)/accounts:lookup"])
        #expect(lookup.status == 200 && lookup.body.contains("+16505550101"), "\(lookup)")
        let reset = try await curl(["-X", "DELETE", "http://\(closedHost)/emulator/v1/projects/\(project)/accounts"])
        #expect(reset.status == 401 && reset.body.contains("UNAUTHENTICATED"), "\(reset)")
        // The app's API keeps Google's rule (the API key), not the token.
        let code = try await curl(["-H", "Content-Type: application/json", "-d", #"{"phoneNumber":"+16505553434"}"#,
                                   "http://\(closedHost)/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=AIzaSyA-authsim-local-api-key-0000000"])
        #expect(code.status == 200 && code.body.contains("sessionInfo"), "\(code)")
        // Never in what the programs print or log.
        for process in [open, closed] {
            #expect(!process.output.joined().contains(Self.secret) && !process.errorText.contains(Self.secret))
        }
    }

    @Test("authsim serve with a token: the inspector's sign-in, cookie and bearer; the device gateway; authsim phone across processes with the token file")
    func serve() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = try tokenFile(in: folder)
        let certs = folder.appendingPathComponent("Certs").path
        let ready = folder.appendingPathComponent("ready.json")
        let process = try ServerProcess([try executable("authsim"), "serve", "--state", folder.appendingPathComponent("State").path, "--certs", certs,
                                         "--sandbox-port", "0", "--production-port", "0", "--device-port", "0", "--backend-port", "0", "--ui-port", "0",
                                         "--ready-file", ready.path, "--admin-token-file", token])
        defer { process.stop() }
        _ = try await process.waitFor("Ctrl-C stops everything")
        let addresses = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: ready)) as? [String: String])
        let inspector = try #require(addresses["inspector"])
        let gateway = try #require(addresses["deviceGateway"])
        let backend = try #require(addresses["backend"])

        // A browser without a session gets the sign-in form; the API a 401 that says what to send.
        let page = try await curl([inspector + "/"])
        #expect(page.status == 401 && page.body.contains(#"<form method="post" action="/login">"#), "\(page)")
        let api = try await curl(["-D", "-", inspector + "/api/v1/pushes"])
        #expect(api.status == 401 && api.body.lowercased().contains("www-authenticate: bearer") && api.body.contains("Authorization: Bearer"), "\(api)")
        #expect(try await curl([inspector + "/livez"]).status == 200, "health stays open for probes")
        #expect(try await curl([inspector + "/metrics"]).status == 401)
        #expect(try await curl(["-H", "Authorization: Bearer \(Self.secret)", inspector + "/api/v1/pushes"]).status == 200)
        #expect(try await curl(["-H", "Authorization: Bearer owner", inspector + "/api/v1/users"]).status == 401, "the inspector takes no owner")

        // Signing in: a wrong token is refused; the right one sets an HttpOnly, SameSite=Strict session cookie.
        let wrong = try await curl(["--data-urlencode", "token=not-the-token-0123456789", inspector + "/login"])
        #expect(wrong.status == 401 && wrong.body.contains("not this deployment"), "\(wrong)")
        let jar = folder.appendingPathComponent("cookies").path
        let signIn = try await curl(["-D", "-", "-c", jar, "--data-urlencode", "token=\(Self.secret)", inspector + "/login"])
        #expect(signIn.status == 303 && signIn.body.contains("HttpOnly") && signIn.body.contains("SameSite=Strict"), "\(signIn)")
        #expect(!signIn.body.contains(Self.secret), "the cookie is not the token")
        #expect(try await curl(["-b", jar, inspector + "/"]).status == 200)
        let faults = try await curl(["-b", jar, "-X", "PUT", "-H", "Content-Type: application/json", "-d", #"{"faults":[]}"#, inspector + "/api/v1/faults"])
        #expect(faults.status == 200, "\(faults)")

        // The device gateway: the token as a bearer.
        let registration = #"{"environment":"sandbox","bundleID":"com.example.app"}"#
        #expect(try await curl(["-H", "Content-Type: application/json", "-d", registration, gateway + "/devices"]).status == 401)
        #expect(try await curl(["-H", "Authorization: Bearer \(Self.secret)", "-H", "Content-Type: application/json", "-d", registration,
                                gateway + "/devices"]).status == 200)

        // An app in another process: its device registers at the gateway and the code comes from
        // the SMS outbox, both with the token file.
        let phone = try await runProgram([try executable("authsim"), "phone", "--backend", backend.replacingOccurrences(of: "http://", with: ""),
                                          "--gateway", gateway.replacingOccurrences(of: "http://", with: ""), "--certs", certs,
                                          "--state", folder.appendingPathComponent("phone").path,
                                          "--runtime-dir", folder.appendingPathComponent("runtime").path, "--admin-token-file", token])
        #expect(phone.status == 0 && phone.output.contains("sandbox answered 200"), "\(phone.output)")
        let refused = try await runProgram([try executable("authsim"), "phone", "--backend", backend.replacingOccurrences(of: "http://", with: ""),
                                            "--gateway", gateway.replacingOccurrences(of: "http://", with: ""), "--certs", certs,
                                            "--state", folder.appendingPathComponent("phone2").path,
                                            "--runtime-dir", folder.appendingPathComponent("runtime2").path])
        #expect(refused.status != 0 && refused.output.contains("admin token"), "\(refused.output)")

        // Never in the ready file, the output or the log.
        #expect(!(try String(contentsOf: ready, encoding: .utf8)).contains(Self.secret))
        #expect(!process.output.joined().contains(Self.secret) && !process.errorText.contains(Self.secret))
    }
}
