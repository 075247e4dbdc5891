import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import Scenarios
import Testing
import TestSupport

@Suite("What the SDK stops on: a malformed backend answer")
// The guides' own code, on the default app, runs in GuideCodeTests (one test at a time there).
struct GuideSnippetTests {
    @Test("a malformed verifyClient answer is a clear error (the SDK stops with fatalError)")
    func malformedVerifyClient() async throws {
        guard await toolAvailable(["python3", "--version"]) else { return }
        // A deliberately broken backend, not ours: SMS defense off, then verifyClient answered
        // without suggestedTimeout.
        let script = """
            import http.server, json, sys
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    body = json.dumps({"recaptchaEnforcementState": [{"provider": "PHONE_PROVIDER", "enforcementState": "OFF"}]}).encode()
                    self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers()
                    self.wfile.write(body)
                def do_POST(self):
                    self.rfile.read(int(self.headers.get('content-length', 0)))
                    body = json.dumps({"receipt": "R"}).encode()
                    self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *a): pass
            s = http.server.HTTPServer(('127.0.0.1', 0), H)
            print('port', s.server_port, flush=True)
            s.serve_forever()
            """
        let server = try ServerProcess(["/usr/bin/env", "python3", "-c", script])
        defer { server.stop() }
        let auth = emulatorApp(port: try await printedPort(server), testMode: false)
        auth.setAPNSToken(Data([1, 2, 3, 4]), type: .sandbox)
        do throws(AuthError) {
            _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil) }
            Issue.record("no error")
        } catch {
            #expect(error.code == .appConfigurationError)
            #expect(error.message.contains("suggestedTimeout"))
        }
    }

    @Test("a backend that cannot be reached is networkError (17020) with the transport's error underneath, as the SDK's AuthBackend.swift maps a call without data")
    func unreachable() async throws {
        // A port nothing listens on, held for the whole test: bound and never listened on, it
        // refuses every connection, and no other test's server can take it meanwhile (a port
        // bound, closed and reused once answered here as another test's server).
        let socket = try ServerProcess(["/usr/bin/env", "python3", "-c",
                                              "import socket, time; s=socket.socket(); s.bind(('127.0.0.1',0)); print('port', s.getsockname()[1], flush=True); time.sleep(600)"])
        defer { socket.stop() }
        let port = try await printedPort(socket)
        let auth = emulatorApp(port: port, testMode: true)
        do throws(AuthError) {
            _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil) }
            Issue.record("no error")
        } catch {
            #expect(error.code == .networkError)
            let bridged = error as NSError
            #expect(bridged.userInfo[AuthErrorUserInfoNameKey] as? String == "ERROR_NETWORK_REQUEST_FAILED")
            #expect(bridged.userInfo[NSUnderlyingErrorKey] != nil)
            #expect(bridged.localizedDescription == "Network error (such as timeout, interrupted connection or unreachable host) has occurred.")
        }
    }

    @Test("a backend without getRecaptchaConfig (the Firebase Auth Emulator answers 501, firebase-ios-sdk#14242) fails verifyPhoneNumber: the SDK asks for it first (PhoneAuthProvider.swift 247)")
    func noRecaptchaConfig() async throws {
        guard await toolAvailable(["python3", "--version"]) else { return }
        let script = """
            import http.server, json
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    body = json.dumps({"error": {"code": 501, "message": "NOT_IMPLEMENTED : recaptchaConfig is not implemented in the Auth Emulator."}}).encode()
                    self.send_response(501); self.send_header('content-length', str(len(body))); self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *a): pass
            s = http.server.HTTPServer(('127.0.0.1', 0), H)
            print('port', s.server_port, flush=True)
            s.serve_forever()
            """
        let server = try ServerProcess(["/usr/bin/env", "python3", "-c", script])
        defer { server.stop() }
        let auth = emulatorApp(port: try await printedPort(server), testMode: false)
        auth.setAPNSToken(Data([1, 2, 3, 4]), type: .sandbox)
        do throws(AuthError) {
            _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil) }
            Issue.record("no error")
        } catch {
            #expect(error.code == .internalError)
            #expect(error.message.contains("NOT_IMPLEMENTED"))
        }
    }
}

/// The port a helper process printed on its first `port N` line.
func printedPort(_ process: ServerProcess) async throws -> Int {
    let line = try #require(try await process.waitFor("port").first { $0.hasPrefix("port") })
    return try #require(Int(line.split(separator: " ")[1]))
}

/// A bare app (API key `k`, no device) whose Auth talks to a backend at 127.0.0.1:`port` as
/// `useEmulator` makes it, with test mode as given (useEmulator turns it on).
func emulatorApp(port: Int, testMode: Bool) -> Auth {
    let options = FirebaseOptions(googleAppID: "1:1:ios:1", gcmSenderID: "1")
    options.apiKey = "k"
    let host = AppHost(AppHost.Configuration(bundleID: "com.a", urlSchemes: [options.encodedAppIDScheme]))
    let auth = Auth.auth(app: FirebaseApp(name: UUID().uuidString, options: options, host: host))
    auth.useEmulator(withHost: "127.0.0.1", port: port)
    auth.settings?.isAppVerificationDisabledForTesting = testMode
    return auth
}
