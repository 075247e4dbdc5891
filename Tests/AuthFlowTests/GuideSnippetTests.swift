import AuthBackend
import FirebaseAuthCore
import Foundation
import Scenarios
import TestSupport
import Testing

@Suite("The guide's snippets, and what the backend does for a returning user")
struct GuideSnippetTests {
    @Test("the default app: FirebaseApp.configure, Auth.auth(), PhoneAuthProvider.provider(), signIn, signOut")
    func defaultApp() async throws {
        try await withWorld { world, folder in
            var options = FirebaseOptions(googleAppID: "1:123456789012:ios:a1b2c3d4e5f60718", gcmSenderID: "123456789012")
            options.apiKey = world.apiKey
            options.bundleID = "com.example.authsim"
            let host = AppHost(bundleID: "com.example.authsim", urlSchemes: [options.encodedAppIDScheme],
                               userDefaults: UserDefaultsStore(file: folder.appendingPathComponent("defaults.json")))
            FirebaseApp.configure(options: options, host: host)
            Auth.auth().useEmulator(withHost: world.backendHost, port: world.backendPort)
            let token = try await world.devices.installDevice(for: host, environment: .sandbox) { _, _ in }

            // As in "Authenticate with Firebase on Apple platforms using a phone number":
            Auth.auth().setAPNSToken(Data(token.bytes), type: .sandbox)
            Auth.auth().languageCode = "fr"
            let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(phone, uiDelegate: nil)
            host.userDefaults.set(verificationID, forKey: "authVerificationID")
            let message = try #require(await world.toolkit!.messages.last)
            #expect(message.languageCode == "fr")
            #expect(message.text == "\(message.code) est votre code de validation.")
            let stored = try #require(host.userDefaults.string(forKey: "authVerificationID"))
            let credential = PhoneAuthProvider.provider().credential(withVerificationID: stored, verificationCode: message.code)
            let first = try await Auth.auth().signIn(with: credential)
            #expect(first.isNewUser)
            try Auth.auth().signOut()
            #expect(Auth.auth().currentUser == nil)

            // Signing in again finds the same user.
            let again = try await PhoneAuthProvider.provider().verifyPhoneNumber(phone, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: phone))
            let second = try await Auth.auth().signIn(with: PhoneAuthProvider.provider().credential(withVerificationID: again, verificationCode: code))
            #expect(!second.isNewUser)
            #expect(second.user.uid == first.user.uid)
        }
    }

    @Test("a malformed verifyClient answer is a clear error (the SDK stops with fatalError)")
    func malformedVerifyClient() async throws {
        guard await toolAvailable(["python3", "--version"]) else { return }
        // A deliberately broken backend, not ours: answers verifyClient without suggestedTimeout.
        let script = """
            import http.server, json, sys
            class H(http.server.BaseHTTPRequestHandler):
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
        let line = try #require(try await server.waitFor("port").first { $0.hasPrefix("port") })
        let port = try #require(Int(line.split(separator: " ")[1]))
        var options = FirebaseOptions(googleAppID: "1:1:ios:1", gcmSenderID: "1")
        options.apiKey = "k"
        let host = AppHost(bundleID: "com.a", urlSchemes: [options.encodedAppIDScheme])
        let auth = Auth.auth(app: FirebaseApp(name: UUID().uuidString, options: options, host: host))
        auth.useEmulator(withHost: "127.0.0.1", port: port)
        auth.setAPNSToken(Data([1, 2, 3, 4]), type: .sandbox)
        do throws(AuthError) {
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: nil)
            Issue.record("no error")
        } catch {
            #expect(error.code == .appConfigurationError)
            #expect(error.message.contains("suggestedTimeout"))
        }
    }
}
