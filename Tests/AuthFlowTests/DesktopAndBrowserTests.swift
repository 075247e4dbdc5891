import AuthBackend
import FirebaseAuthCore
import Foundation
import RedirectInterceptor
import Scenarios
import Synchronization
import TestSupport
import Utilities
import Testing

@Suite("The desktop's URL handler and a real browser")
struct DesktopAndBrowserTests {
    let scheme = "app-1-123456789012-ios-a1b2c3d4e5f60718"

    @Test("register: a desktop entry xdg-mime reports as the scheme's handler; gio open dispatches the page's redirect to the app; other mimeapps.list lines survive")
    func desktopRegistration() async throws {
        guard await toolAvailable(["xdg-mime", "--version"]), await toolAvailable(["gio", "--version"]) else { return }
        let runtime = shortRuntimeDirectory()
        let xdg = temporaryDirectory(#function)
        defer {
            try? FileManager.default.removeItem(at: runtime)
            try? FileManager.default.removeItem(at: xdg)
        }
        let environment = ["XDG_DATA_HOME=\(xdg.path)/data", "XDG_CONFIG_HOME=\(xdg.path)/config"]
        try FileManager.default.createDirectory(at: xdg.appendingPathComponent("config"), withIntermediateDirectories: true)
        let mimeapps = xdg.appendingPathComponent("config/mimeapps.list")
        try "[Default Applications]\ntext/html=firefox.desktop\n\n[Removed Associations]\nimage/png=gimp.desktop\n".write(to: mimeapps, atomically: true, encoding: .utf8)

        let interceptor = try executable("redirect-interceptor")
        let registered = try await runProgram(environment + [interceptor, "register", "--runtime-dir", runtime.path, scheme])
        #expect(registered.status == 0, "\(registered.output)")
        #expect(registered.output.contains("freedesktop bug 104973") == (DesktopRegistration.xdgOpenWarning(for: scheme) != nil))
        let entry = try String(contentsOf: xdg.appendingPathComponent("data/applications/authsim-redirect-\(scheme).desktop"), encoding: .utf8)
        #expect(entry.contains("MimeType=x-scheme-handler/\(scheme);"))
        #expect(entry.contains("/redirect-interceptor open --runtime-dir \(runtime.path) %u\n"))
        let query = try await runProgram(environment + ["xdg-mime", "query", "default", "x-scheme-handler/\(scheme)"])
        #expect(query.output.trimmingCharacters(in: .whitespacesAndNewlines) == "authsim-redirect-\(scheme).desktop")
        let list = try String(contentsOf: mimeapps, encoding: .utf8)
        #expect(list.contains("text/html=firefox.desktop"))
        #expect(list.contains("[Removed Associations]\nimage/png=gimp.desktop"))

        // The reCAPTCHA fallback with the redirect handed to the desktop, as a browser would.
        try await withWorld { world, _ in
            let profile = AppProfile.intercepted(runtime)
            let (auth, _) = try await world.install(profile)
            let presenter = HeadlessPresenter(handOff: .command(["/usr/bin/env"] + environment + ["gio", "open"]))
            let provider = PhoneAuthProvider.provider(auth: auth)
            let verificationID = try await provider.verifyPhoneNumber(phone, uiDelegate: presenter)
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: verificationID, verificationCode: code))
        }
        #expect(try await interceptorLog(runtime, count: 1).map { $0["outcome"] } == ["handled"])

        let removed = try await runProgram(environment + [interceptor, "unregister", scheme])
        #expect(removed.status == 0)
        let after = try String(contentsOf: mimeapps, encoding: .utf8)
        #expect(!after.contains(scheme))
        #expect(after.contains("text/html=firefox.desktop"))
    }

    @Test("the handler page in headless Chromium: its script solves (slowly), redirects, and the URL it computed signs the app in; a cancelled page says so", arguments: ["slow:1", "cancel"])
    func chromium(_ outcome: String) async throws {
        guard await toolAvailable(["chromium", "--version"]) else { return }
        let runtime = shortRuntimeDirectory()
        let profileDirectory = temporaryDirectory(#function)
        defer {
            try? FileManager.default.removeItem(at: runtime)
            try? FileManager.default.removeItem(at: profileDirectory)
        }
        let interceptor = try executable("redirect-interceptor")
        var configuration = BackendConfiguration()
        configuration.recaptchaOutcome = try ReCAPTCHAOutcome(argument: outcome)
        let states = Mutex<[String]>([])
        try await withWorld(configuration: configuration) { world, folder in
            let profile = AppProfile.intercepted(runtime)
            let (auth, _) = try await world.install(profile)
            // The page is https://<backend>/__/auth/handler (useEmulator makes the backend the auth
            // domain): Chromium trusts the local server's key, as a developer's browser trusts the local CA.
            let pin = try await runProgram(["sh", "-c", "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
                                            "spki", folder.appendingPathComponent("Certs/server.pem").path])
            let spki = pin.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(pin.status == 0 && spki.count == 44, "\(pin.output)")
            let presenter = ClosurePresenter { url, _ in
                // Chromium runs the page's script (virtual time lets its timer fire at once) and dumps the DOM.
                guard let dump = try? await runProgram([
                    "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profileDirectory.path)",
                    "--ignore-certificate-errors-spki-list=\(spki)", "--virtual-time-budget=5000", "--dump-dom", url.absoluteString,
                ]) else { return }
                let dom = dump.output
                let state = dom.firstMatch(of: /data-state="([a-z]+)"/).map { String($0.1) } ?? "none"
                states.withLock { $0.append(state) }
                guard state == "redirecting",
                      let target = dom.firstMatch(of: /Returning to the app: ([^<\s]+)/).map({ String($0.1).replacingOccurrences(of: "&amp;", with: "&") })
                else { return }
                _ = try? await runProgram([interceptor, "open", "--answer-timeout", "600", "--runtime-dir", runtime.path, target])
            }
            let provider = PhoneAuthProvider.provider(auth: auth)
            if outcome == "cancel" {
                await expectAuthError(.webContextCancelled) {
                    _ = try await provider.verifyPhoneNumber(phone, uiDelegate: presenter)
                }
                #expect(states.withLock { $0 } == ["cancelled"])
            } else {
                let verificationID = try await provider.verifyPhoneNumber(phone, uiDelegate: presenter)
                let code = try #require(await world.lastCode(for: phone))
                _ = try await auth.signIn(with: provider.credential(withVerificationID: verificationID, verificationCode: code))
                #expect(states.withLock { $0 } == ["redirecting"])
            }
        }
    }
}

@Suite("BrowserPresenter: the page in a browser, the redirect back through the interceptor")
struct BrowserPresenterTests {
    @Test("a browser (here curl and sh, no scripts) opens the page and its link; the redirect reaches the app through redirect-interceptor")
    func browserRoundTrip() async throws {
        guard await toolAvailable(["curl", "--version"]) else { return }
        let (runtime, interceptor) = try scratchRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        // What a browser does with the page: follow the link to the app's scheme and hand it to the OS.
        // The page is HTTPS on the backend's port; curl trusts the local CA (--cacert), as a developer's machine would.
        let browser = """
            link=$(curl -sf --cacert "$CA" "$1" | sed -n 's/.*id="authsim-redirect"[^>]*href="\\([^"]*\\)".*/\\1/p' | sed 's/&amp;/\\&/g')
            exec \(interceptor) open --answer-timeout 600 --runtime-dir \(runtime.path) "$link"
            """
        try await withWorld { world, folder in
            let profile = AppProfile.intercepted(runtime)
            let (auth, _) = try await world.install(profile)
            let ca = folder.appendingPathComponent("Certs/ca.pem").path
            let presenter = BrowserPresenter(command: ["env", "CA=\(ca)", "sh", "-c", browser, "browser"], timeout: .seconds(600))
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: presenter)
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
        }
    }

    @Test("a browser from which no redirect comes: the presentation ends after the timeout as a cancellation")
    func browserTimeout() async throws {
        try await withWorld { world, _ in
            var profile = AppProfile()
            profile.isSimulator = true
            let clock = ManualClock()
            let (auth, _) = try await world.install(profile, clock: clock)
            let events = Mutex<[String]>([])
            let presenter = BrowserPresenter(command: ["true"], timeout: .milliseconds(200)) { event in events.withLock { $0.append(event.message) } }
            async let verified: AuthError? = {
                do throws(AuthError) {
                    _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: presenter) }
                    return nil
                } catch { return error }
            }()
            // The presenter waits 200 ms on the app's clock for a redirect that never comes.
            try await waitForSleepers(clock)
            clock.advance(by: .milliseconds(200))
            #expect(await verified?.code == .webContextCancelled)
            #expect(events.withLock { $0 }.last?.contains("no redirect within") == true)
        }
    }
}

@Suite("The runtime directory where apps claim their schemes")
struct RuntimeDirectoryTests {
    @Test("a runtime directory writable by others is refused, with the fix")
    func unsafeDirectory() async throws {
        let runtime = shortRuntimeDirectory()
        defer { try? FileManager.default.removeItem(at: runtime) }
        chmod(runtime.path, 0o777)
        await #expect(throws: InterceptorError(.fileError, "")) {
            _ = try await SchemeListener.start(schemes: ["app-1-1-ios-1"], bundleID: "com.example", directory: SchemeDirectory(url: runtime)) { _ in
                InterceptorAnswer(handled: false, bundleID: "com.example", detail: "")
            }
        }
        chmod(runtime.path, 0o700)
        let listener = try await SchemeListener.start(schemes: ["app-1-1-ios-1"], bundleID: "com.example", directory: SchemeDirectory(url: runtime)) { _ in
            InterceptorAnswer(handled: false, bundleID: "com.example", detail: "")
        }
        await listener.stop()
    }

    @Test("socket paths longer than Unix allows, and invalid schemes, are clear errors")
    func limits() async throws {
        let deep = SchemeDirectory(url: URL(fileURLWithPath: "/tmp/" + String(repeating: "d", count: 90)))
        #expect(throws: InterceptorError(.pathTooLong, "")) { _ = try deep.socket(for: "app-1-123456789012-ios-a1b2c3d4e5f60718") }
        #expect(throws: InterceptorError(.invalidScheme, "")) { try URLSchemeSyntax.validate("1app") }
        #expect(throws: InterceptorError(.invalidScheme, "")) { try URLSchemeSyntax.validate("app_1") }
        #expect(throws: InterceptorError(.invalidURL, "")) { _ = try URLSchemeSyntax.scheme(of: "://x") }
        #expect(try URLSchemeSyntax.scheme(of: "com.googleusercontent.apps.123-abc://firebaseauth/link") == "com.googleusercontent.apps.123-abc")
    }
}
