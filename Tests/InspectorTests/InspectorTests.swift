import Foundation
import Testing
import TestSupport

/// `authsim serve` as a user starts it: one process, every URL printed; its inspector's API from
/// clients we did not write (curl, Python's requests, openapi-spec-validator), its page in a real
/// browser (headless Chromium over the DevTools protocol), and a clean stop on SIGTERM with a
/// live stream open. `.ci/run` installs Chromium, websocket-client and openapi-spec-validator.
/// Serialized: its browsers starting at once with the rest of the suite took minutes on a busy machine.
@Suite("authsim serve and the inspector", .serialized)
struct InspectorTests {
    static var root: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized }

    struct Served {
        let process: ServerProcess
        let inspector: String
        let gateway: String
        let backend: String
        let sandboxPort: String
        let apiKey: String
        let certs: String
    }

    func serve(_ folder: URL) async throws -> Served {
        let certs = folder.appendingPathComponent("Certs").path
        let process = try ServerProcess([try executable("authsim"), "serve", "--state", folder.appendingPathComponent("State").path, "--certs", certs,
                                         "--sandbox-port", "0", "--production-port", "0", "--device-port", "0", "--backend-port", "0", "--ui-port", "0",
                                         "--ready-file", folder.appendingPathComponent("ready.json").path])
        let lines = try await process.waitFor("Ctrl-C stops everything")
        func url(_ label: String) throws -> String {
            let line = try #require(lines.first { $0.contains(label) })
            return String(try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }))
        }
        let receiver = try #require(lines.first { $0.contains("push-receiver:") })
        let sandbox = try #require(receiver.split(separator: " ").first { $0.hasPrefix("https://") }?.split(separator: ":").last.map { String($0.prefix { $0.isNumber }) })
        // --ready-file, written before the last line: the same real ports, for harnesses (the pytest plugin).
        let readyFile = folder.appendingPathComponent("ready.json").path
        let ready = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: readyFile))) as? [String: String])
        let (inspector, backend, gateway) = (try url("inspector:"), try url("backend:"), try url("device gateway:"))
        #expect(ready["inspector"] == inspector && ready["backend"] == backend && ready["deviceGateway"] == gateway)
        #expect(ready["sandbox"]?.hasSuffix(":\(sandbox)") == true && ready["caFile"] == certs + "/ca.pem")
        #expect(ready["emulatorHost"].map { "http://" + $0 } == backend)
        #expect((try FileManager.default.attributesOfItem(atPath: readyFile)[.posixPermissions] as? Int) == 0o600)
        let apiKey = try #require(ready["apiKey"], "--ready-file names the API key")
        return Served(process: process, inspector: inspector, gateway: gateway, backend: backend,
                      sandboxPort: sandbox, apiKey: apiKey, certs: certs)
    }

    /// Two sign-ins by an app in another process (`authsim phone`, through the serve's backend and
    /// device gateway): one signs in by silent push, one types a wrong code.
    func signIns(_ served: Served, _ folder: URL) async throws {
        let backend = served.backend.replacingOccurrences(of: "http://", with: "")
        let gateway = served.gateway.replacingOccurrences(of: "http://", with: "")
        let authsim = try executable("authsim")
        let good = try await runProgram([authsim, "phone", "--backend", backend, "--gateway", gateway, "--certs", served.certs,
                                         "--state", folder.appendingPathComponent("phone1").path,
                                         "--runtime-dir", folder.appendingPathComponent("runtime1").path])
        #expect(good.status == 0, "\(good.output)")
        // The backend's silent push is told as soon as the backend has it (kept before verifyClient
        // answers, so before the app's verification ID), not after the sign-in (issue 63, N3).
        let lines = good.output.split(separator: "\n")
        let push = lines.firstIndex { $0.contains("verifyClient returns the receipt to the app") }, signedIn = lines.firstIndex { $0.contains("signed in: uid") }
        #expect(push != nil && signedIn != nil && push! < signedIn!, "\(good.output)")
        let bad = try await runProgram([authsim, "phone", "--backend", backend, "--gateway", gateway, "--certs", served.certs,
                                        "--state", folder.appendingPathComponent("phone2").path, "--number", "+16505559876", "--code", "000000",
                                        "--runtime-dir", folder.appendingPathComponent("runtime2").path])
        #expect(bad.status == 1, "\(bad.output)")
    }

    @Test("the API from curl and Python: OpenAPI, sign-ins, live events, pushes and filters, faults, devices, users, metrics, bad input; SIGTERM with a stream open")
    func api() async throws {
        guard await toolAvailable(["python3", "-c", "import requests, openapi_spec_validator, prometheus_client, firebase_admin"]) else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let served = try await serve(folder)
        defer { served.process.stop() }

        let health = try await runProgram(["curl", "-s", "-w", " %{http_code}", "\(served.inspector)/livez"])
        #expect(health.output == "ok\n 200")
        let bad = try await runProgram(["curl", "-s", "-w", " %{http_code}", "\(served.inspector)/api/v1/pushes?colour=red"])
        #expect(bad.output.hasSuffix(" 400") && bad.output.contains("unknown filter colour"), "\(bad.output)")

        // Sign-ins as the backend saw them.
        try await signIns(served, folder)
        let flows = try await runProgram(["curl", "-s", "\(served.inspector)/api/v1/flows"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(flows.output.utf8)) as? [[String: Any]])
        #expect(list.map { $0["path"] as? String } == ["silent push", "silent push"], "\(flows.output)")
        #expect(list.map { $0["outcome"] as? String } == ["signed in", "refused: INVALID_CODE"], "\(flows.output)")
        #expect((list.last?["cause"] as? String)?.contains("17044") == true)
        #expect((list.first?["steps"] as? [[String: Any]])?.contains { ($0["message"] as? String)?.hasPrefix("verifyClient") == true } == true)
        _ = try await runProgram(["curl", "-s", "-X", "DELETE", "\(served.inspector)/api/v1/pushes"])

        let run = try await runProgram(["python3", Self.root.appendingPathComponent("Tests/Clients/inspector_api.py").path, served.inspector, served.gateway,
                                        served.backend, served.sandboxPort, served.certs, try executable("apns-sender"),
                                        Self.root.appendingPathComponent("Payloads/firebase-auth-silent.apns").path, served.apiKey])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 17, "\(run.output)")

        // A stream left open does not hold up the stop.
        let stream = try ServerProcess(["curl", "-sN", "\(served.inspector)/api/v1/events"])
        defer { stream.stop() }
        _ = try await stream.waitFor("authsim inspector")
        #expect(try await served.process.terminate() == 0)
    }

    @Test("chromium --headless --screenshot --virtual-time-budget takes the inspector (the live stream would hold it forever)")
    func screenshotTool() async throws {
        guard await toolAvailable(["chromium", "--version"]) else { return }
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let served = try await serve(folder)
        defer { served.process.stop() }
        let shot = folder.appendingPathComponent("shot.png")
        // timeout(1) only so that a regression fails instead of hanging the suite: ten minutes, as a
        // busy machine with other browsers starting took chromium over two (Tests/stress.sh --busy).
        let run = try await runProgram(["timeout", "600", "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                        "--user-data-dir=\(folder.appendingPathComponent("profile").path)", "--screenshot=\(shot.path)",
                                        "--virtual-time-budget=3000", "--window-size=1200,800", served.inspector + "/"])
        #expect(run.status == 0)
        let png = FileManager.default.contents(atPath: shot.path) ?? Data()
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000, "\(png.count) bytes")
        #expect(try await served.process.terminate() == 0)
    }

    /// A page script of Tests/Clients in headless Chromium against a fresh `authsim serve` with two
    /// sign-ins behind it: every check printed "ok", and each screenshot written. Screenshots go
    /// where docs/inspector.md shows them from when AUTHSIM_SCREENSHOTS names a folder.
    func pageScript(_ script: String, _ name: String, checks: Int, screenshots: [String],
                    arguments: (Served, _ shots: String) throws -> [String]) async throws {
        guard await toolAvailable(["python3", "-c", "import websocket"]), await toolAvailable(["chromium", "--version"]) else { return }
        let folder = temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let served = try await serve(folder)
        defer { served.process.stop() }
        try await signIns(served, folder)
        let shots = ProcessInfo.processInfo.environment["AUTHSIM_SCREENSHOTS"] ?? folder.appendingPathComponent("screenshots").path
        let run = try await runProgram(["python3", Self.root.appendingPathComponent("Tests/Clients/\(script)").path] + arguments(served, shots))
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == checks, "\(run.output)")
        for shot in screenshots {
            let png = FileManager.default.contents(atPath: "\(shots)/inspector-\(shot).png") ?? Data()
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000, "inspector-\(shot).png")
        }
        #expect(try await served.process.terminate() == 0)
    }

    @Test("in headless Chromium: a push appears without a reload, a rejection shows its cause, a fault set on the page fails the next push; screenshots")
    func browser() async throws {
        try await pageScript("inspector_browser.py", #function, checks: 10, screenshots: ["pushes", "faults", "sign-ins", "devices", "sms", "pushes-dark"]) { served, shots in
            [served.inspector, served.gateway, served.sandboxPort, served.certs, try executable("apns-sender"),
             Self.root.appendingPathComponent("Payloads/firebase-auth-silent.apns").path, shots]
        }
    }

    @Test("in headless Chromium, the Users screen: add, refuse, search, edit, disable, a user's sign-ins, pushes and SMS, export, clear, import, delete")
    func usersScreen() async throws {
        try await pageScript("inspector_users_browser.py", #function, checks: 7, screenshots: ["users", "user-edit", "user-page-dark"]) { served, shots in
            [served.inspector, shots]
        }
    }

    /// Issue 19: `authsim phone --app` said "aps-environment: none" for an app whose profile said
    /// development, and took the build from `--build` (sandbox) even for a production profile.
    @Test("authsim phone --app: the profile's aps-environment is read, and decides which APNs issues the token")
    func appProfile() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let served = try await serve(folder)
        defer { served.process.stop() }
        let authsim = try executable("authsim")
        for (aps, build, environment, resolved) in [("development", "debug", "sandbox", "sandbox"), ("production", "release", "production", "prod")] {
            let app = folder.appendingPathComponent("\(aps)/App.app").path
            let made = try await runProgram([authsim, "sample-app", "--output", app, "--profile", aps, "--certs", served.certs])
            #expect(made.status == 0, "\(made.output)")
            let run = try await runProgram([authsim, "phone", "--app", app, "--declared-type", "unknown",
                                            "--backend", served.backend.replacingOccurrences(of: "http://", with: ""),
                                            "--gateway", served.gateway.replacingOccurrences(of: "http://", with: ""), "--certs", served.certs,
                                            "--state", folder.appendingPathComponent("\(aps)/state").path,
                                            "--runtime-dir", folder.appendingPathComponent("\(aps)/runtime").path, "--expect", "silent-push"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("(\(build) build) registers for remote notifications: APNs \(environment) issues token"), "\(run.output)")
            #expect(run.output.contains("type: .unknown) → .\(resolved) (embedded.mobileprovision aps-environment: \(aps))"), "\(run.output)")
        }
    }
}
