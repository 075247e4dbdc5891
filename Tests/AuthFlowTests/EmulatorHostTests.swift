import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import HTTPTransport
import Scenarios
import Synchronization
import Testing
import TestSupport

@Suite("useEmulator as the SDK's: test mode, IPv6 hosts, and the reCAPTCHA page at https://<emulator>/__/auth/handler")
struct EmulatorHostTests {
    func options(_ world: PhoneAuthWorld) -> FirebaseOptions {
        let options = FirebaseOptions(googleAppID: "1:123456789012:ios:a1b2c3d4e5f60718", gcmSenderID: "123456789012")
        options.apiKey = world.apiKey
        options.projectID = world.projectID
        options.bundleID = "com.example.authsim"
        return options
    }

    // Auth.swift 1427-1439: useEmulator turns app verification off (iOS), brackets an IPv6 host.
    @Test("useEmulator turns app verification off for testing (Auth.swift 1436): a test number signs in over an IPv6 loopback backend, no push")
    func testModeAndIPv6() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505554567": "123456"]
        try await withWorld(configuration: configuration) { world, _ in
            let toolkit = try #require(world.toolkit)
            let v6: BackendServer
            do { v6 = try await BackendServer.start(toolkit: toolkit, host: "::1") } catch {
                // A machine without IPv6 loopback: nothing to check here.
                return
            }
            let options = options(world)
            let host = AppHost(AppHost.Configuration(bundleID: options.bundleID, urlSchemes: [options.encodedAppIDScheme]), clock: world.appClock, transport: world.transport)
            let auth = Auth.auth(app: FirebaseApp(name: UUID().uuidString, options: options, host: host))
            #expect(auth.settings?.isAppVerificationDisabledForTesting == false)
            auth.useEmulator(withHost: "::1", port: v6.port)
            #expect(auth.settings?.isAppVerificationDisabledForTesting == true)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber("+16505554567", uiDelegate: nil)
            let result = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: "123456"))
            #expect(result.user.phoneNumber == "+16505554567")
            #expect(auth.lastAppVerification == .testMode)
            // A real number in test mode: the backend says why it is refused, naming useEmulator.
            do throws(AuthError) {
                _ = try await AuthError.catching { try await provider.verifyPhoneNumber("+16505551234", uiDelegate: nil) }
                Issue.record("a real number was sent a code in test mode")
            } catch {
                #expect(error.code == .missingAppCredential)
                #expect(error.message.contains("useEmulator"))
            }
            await v6.shutdown()
        }
    }

    @Test("an empty host (the SDK stops with fatalError) makes the next call appConfigurationError, saying why")
    func emptyHost() async throws {
        let options = FirebaseOptions(googleAppID: "1:1:ios:1", gcmSenderID: "1")
        options.apiKey = "k"
        let auth = Auth.auth(app: FirebaseApp(name: UUID().uuidString, options: options,
                                              host: AppHost(AppHost.Configuration(bundleID: "com.a", urlSchemes: [options.encodedAppIDScheme]))))
        auth.useEmulator(withHost: "", port: 9099)
        do throws(AuthError) {
            _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505551234", uiDelegate: nil) }
            Issue.record("no error")
        } catch {
            #expect(error.code == .appConfigurationError)
            #expect(error.message.contains("empty host"))
        }
    }

    // AuthWebUtils.swift fetchAuthDomain: with an emulator the auth domain is its host:port, no
    // getProjectConfig; PhoneAuthProvider.swift reCAPTCHAURL: https://<domain>/__/auth/handler.
    @Test("the reCAPTCHA page is https://<emulator host:port>/__/auth/handler, with no getProjectConfig; the backend answers it over TLS on its HTTP port")
    func handlerOnEmulator() async throws {
        try await withWorld { world, _ in
            let recording = RecordingTransport(world.transport)
            let options = options(world)
            let host = AppHost(AppHost.Configuration(bundleID: options.bundleID, urlSchemes: [options.encodedAppIDScheme], isSimulator: true), transport: recording)
            let auth = world.auth(options: options, host: host)
            let presented = Mutex<URL?>(nil)
            let events = Mutex<[String]>([])
            let presenter = ClosurePresenter { url, host in
                presented.withLock { $0 = url }
                await HeadlessPresenter { event in events.withLock { $0.append(event.message) } }.present(url, host: host)
            }
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id: String
            do { id = try await provider.verifyPhoneNumber("+16505551234", uiDelegate: presenter) } catch {
                Issue.record("\(error); the presenter: \(events.withLock { $0 })")
                return
            }
            let code = try #require(await world.lastCode(for: "+16505551234"))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))

            let url = try #require(presented.withLock { $0 })
            #expect(url.scheme == "https")
            #expect(url.host == world.backendHost && url.port == world.backendPort)
            #expect(url.path == "/__/auth/handler")
            let calls = recording.seen
            #expect(!calls.contains { $0.contains("getProjectConfig") }, "\(calls)")
            // API calls stay plain HTTP on the same port; the page alone is HTTPS.
            #expect(calls.filter { $0.contains("/__/auth/handler") }.allSatisfy { $0.hasPrefix("GET https://") })
            #expect(calls.filter { $0.contains("identitytoolkit") }.allSatisfy { $0.contains("http://\(world.backendHost):\(world.backendPort)/") })
        }
    }

    @Test("one port, two protocols: curl gets the page over HTTPS with the local CA and the API over HTTP; TLS below 1.2 and an unknown CA are refused")
    func curlBothWays() async throws {
        guard await toolAvailable(["curl", "--version"]) else { return }
        try await withWorld { world, folder in
            let ca = folder.appendingPathComponent("Certs/ca.pem").path
            let base = "\(world.backendHost):\(world.backendPort)"
            let page = "https://\(base)/__/auth/handler?apiKey=\(world.apiKey)&authType=verifyApp&ibi=com.example.authsim&v=1&eventId=ABCDEFGHIJ&appId=1:123456789012:ios:a1b2c3d4e5f60718"
            let https = try await runProgram(["curl", "-s", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_code} %{http_version} %{ssl_verify_result}", page])
            #expect(https.output == "200 1.1 0", "\(https.output)")
            let http = try await runProgram(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                             "http://\(base)/emulator/v1/projects/\(world.projectID)/verificationCodes"])
            #expect(http.output == "200", "\(http.output)")
            let untrusted = try await runProgram(["curl", "-s", "-o", "/dev/null", page])
            #expect(untrusted.status == 60, "curl exit \(untrusted.status): \(untrusted.output)")
            let old = try await runProgram(["curl", "-s", "--cacert", ca, "--tlsv1.0", "--tls-max", "1.1", "--ciphers", "DEFAULT@SECLEVEL=0",
                                            "-o", "/dev/null", page])
            #expect(old.status == 35, "TLS 1.1: curl exit \(old.status) \(old.output)")  // the server answers with a protocol_version alert
        }
    }
}
