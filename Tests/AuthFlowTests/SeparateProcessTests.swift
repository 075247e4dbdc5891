import APNsReceiver
import Foundation
import RedirectInterceptor
import Scenarios
import TestSupport
import Testing

@Suite("Phone sign-in across separate processes on loopback")
struct SeparateProcessTests {
    @Test("push-receiver, authsim backend and authsim phone as three processes: sign-in, then a wrong code")
    func threeProcesses() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (receiver, apnsPort, gatewayPort) = try await startReceiver(in: folder)
        defer { receiver.stop() }

        let (backend, backendPort) = try await startBackend(in: folder, receiverPort: String(apnsPort), ["--suggested-timeout", "10"])
        defer { backend.stop() }

        let authsim = try executable("authsim")
        let ok = try await runProgram([authsim, "phone", "--backend", "127.0.0.1:\(backendPort)", "--gateway", "127.0.0.1:\(gatewayPort)"])
        #expect(ok.status == 0)
        #expect(ok.output.contains("✔ signed in"))
        #expect(ok.output.contains("got verification ID"))

        // A second app, same number: its code is still valid, so no second SMS; the user types a wrong code.
        let wrong = try await runProgram([authsim, "phone", "--backend", "127.0.0.1:\(backendPort)",
                                          "--gateway", "127.0.0.1:\(gatewayPort)", "--number", "+16505550199", "--code", "000000"])
        #expect(wrong.status == 1)
        #expect(wrong.output.contains("17044 invalidVerificationCode"))

        // The receiver logged exactly the two pushes it accepted; users persist in the backend's folder.
        #expect(try DeliveryLog.read(folder.appendingPathComponent("receiver/deliveries.jsonl")).records.count == 2)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("backend/journal.jsonl").path))
    }

    /// Issue 19's bug: the backend pointed at a port where no receiver listens; the app fell back to
    /// reCAPTCHA, printed "✔ signed in via reCAPTCHA" and exited 0, and nothing said the silent push
    /// was never sent. Now the backend's push result is in the app's timeline, a note says what
    /// happened, and `--expect silent-push` fails the run; `--json` and `--diagram` as `authsim run`.
    @Test("authsim phone: a silent push that could not be sent is reported, --expect silent-push fails, --expect takes SDK errors, --json and --diagram")
    func expectations() async throws {
        let folder = temporaryDirectory(#function)
        let runtime = shortRuntimeDirectory()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: runtime)
        }
        let certs = folder.appendingPathComponent("Certs").path
        let (receiver, _, gatewayPort) = try await startReceiver(in: folder)
        defer { receiver.stop() }
        // Port 9 (discard): nothing listens there for the backend's APNs client.
        let (backend, backendPort) = try await startBackend(in: folder, receiverPort: "9", ["--suggested-timeout", "1"])
        defer { backend.stop() }
        let authsim = try executable("authsim")
        func phone(_ extra: [String]) async throws -> (output: String, status: Int32) {
            try await runProgram([authsim, "phone", "--backend", "127.0.0.1:\(backendPort)", "--gateway", "127.0.0.1:\(gatewayPort)",
                                  "--certs", certs, "--state", folder.appendingPathComponent("phone-\(UUID().uuidString.prefix(6))").path,
                                  "--runtime-dir", runtime.path] + extra)
        }

        let fellBack = try await phone([])
        #expect(fellBack.status == 0, "\(fellBack.output)")
        #expect(fellBack.output.contains("✔ signed in via reCAPTCHA"))
        // The backend's own verifyClient event, read from its silent-push list.
        #expect(fellBack.output.contains("was not sent: "), "\(fellBack.output)")
        #expect(fellBack.output.contains("note: no silent push reached the app"), "\(fellBack.output)")

        let strict = try await phone(["--expect", "silent-push", "--number", "+16505550142"])
        #expect(strict.status == 1, "\(strict.output)")
        #expect(strict.output.contains("✘ signed in via reCAPTCHA (expected signed in by silent-push)"), "\(strict.output)")
        let recaptcha = try await phone(["--expect", "recaptcha", "--number", "+16505550143"])
        #expect(recaptcha.status == 0, "\(recaptcha.output)")

        let wrongCode = try await phone(["--expect", "17044", "--number", "+16505550144", "--code", "000000"])
        #expect(wrongCode.status == 0, "\(wrongCode.output)")
        let byName = try await phone(["--expect", "invalidVerificationCode", "--number", "+16505550145", "--code", "000000"])
        #expect(byName.status == 0, "\(byName.output)")

        let diagram = folder.appendingPathComponent("phone.html")
        let json = try await phone(["--json", "--diagram", diagram.path, "--number", "+16505550146"])
        #expect(json.status == 0)
        let lines = json.output.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) is [String: Any] }, "\(json.output)")
        let html = try String(contentsOf: diagram, encoding: .utf8)
        #expect(html.contains("was not sent") && html.contains("<!DOCTYPE html>"))
    }

    @Test("the reCAPTCHA fallback across four processes: an app built from binary plists, the backend's page, redirect-interceptor, the app's scheme")
    func fallbackAcrossProcesses() async throws {
        let folder = temporaryDirectory(#function)
        let runtime = shortRuntimeDirectory()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: runtime)
        }
        let certs = folder.appendingPathComponent("Certs").path
        let (receiver, apnsPort, gatewayPort) = try await startReceiver(in: folder)
        defer { receiver.stop() }
        var sample = SampleApp()
        sample.bundleID = "com.example.fallback"
        sample.format = .binary
        let app = folder.appendingPathComponent("Payload/Fallback.app")
        try sample.write(to: app)

        let (backend, backendPort) = try await startBackend(in: folder, receiverPort: String(apnsPort), ["--bundle-id", "com.example.fallback", "--recaptcha-outcome", "slow:0.2"])
        defer { backend.stop() }

        let authsim = try executable("authsim")
        let interceptor = try executable("redirect-interceptor")
        let common = [authsim, "phone", "--backend", "127.0.0.1:\(backendPort)", "--gateway", "127.0.0.1:\(gatewayPort)",
                      "--certs", certs, "--app", app.path, "--simulator", "--runtime-dir", runtime.path,
                      "--open-redirects-with", "\(interceptor) open --runtime-dir \(runtime.path)"]
        let ok = try await runProgram(common)
        #expect(ok.status == 0, "\(ok.output)")
        #expect(ok.output.contains("✔ signed in via reCAPTCHA"))
        #expect(ok.output.contains("com.example.fallback"))
        #expect(ok.output.contains("the challenge takes 0.2 seconds"))
        #expect(ok.output.contains("Auth.canHandle(url) took the reCAPTCHA token"))

        // The same app whose delegate does not pass URLs on: the interceptor is told why, the SDK cancels.
        let dropped = try await runProgram(common + ["--no-url-forwarding", "--number", "+16505550111"])
        #expect(dropped.status == 1)
        #expect(dropped.output.contains("17058 webContextCancelled"))
        #expect(dropped.output.contains("not handled (notForwarded)"))
        // The app gave its schemes up when it ended.
        #expect(SchemeDirectory(url: runtime).claims().isEmpty)
    }

    @Test("an identity provider's page across processes: the backend's answer (--provider-page), then a person in Chromium adds an account and the redirect comes back through redirect-interceptor")
    func providerPageAcrossProcesses() async throws {
        let folder = temporaryDirectory(#function)
        let runtime = shortRuntimeDirectory()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: runtime)
        }
        let certs = folder.appendingPathComponent("Certs").path
        let (receiver, apnsPort, gatewayPort) = try await startReceiver(in: folder)
        defer { receiver.stop() }
        let (backend, backendPort) = try await startBackend(in: folder, receiverPort: String(apnsPort), ["--provider-page", "account:ada@contoso.example"])
        defer { backend.stop() }
        let authsim = try executable("authsim")
        let common = [authsim, "phone", "--backend", "127.0.0.1:\(backendPort)", "--gateway", "127.0.0.1:\(gatewayPort)",
                      "--certs", certs, "--runtime-dir", runtime.path]
        let headless = try await runProgram(common + ["--sign-in-with", "microsoft.com", "--state", folder.appendingPathComponent("one").path])
        #expect(headless.status == 0, "\(headless.output)")
        #expect(headless.output.contains("✔ signed in with microsoft.com"), "\(headless.output)")
        #expect(headless.output.contains("signed in with microsoft.com: uid") && headless.output.contains("ada@contoso.example (new user)"), "\(headless.output)")

        // A person in a browser: Chromium (driven over CDP) fills the page's form; the redirect its
        // script computes goes to the OS, here redirect-interceptor, which hands it to the app.
        guard await toolAvailable(["python3", "-c", "import websocket"]), await toolAvailable(["chromium", "--version"]) else { return }
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Clients/provider_page_browser.py").standardized
        let browser = folder.appendingPathComponent("browser.sh")
        try """
            #!/bin/sh
            set -e
            redirect=$(python3 \(driver.path) "$1" lin@example.com Lin \(folder.path) | sed -n 's/^redirect //p')
            exec \(try executable("redirect-interceptor")) open --runtime-dir \(runtime.path) "$redirect"
            """.write(to: browser, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: browser.path)
        let person = try await runProgram(common + ["--sign-in-with", "github.com", "--browser", browser.path, "--browser-timeout", "600",
                                                    "--state", folder.appendingPathComponent("two").path])
        #expect(person.status == 0, "\(person.output)")
        #expect(person.output.contains("✔ signed in with github.com") && person.output.contains("lin@example.com"), "\(person.output)")
    }
}
