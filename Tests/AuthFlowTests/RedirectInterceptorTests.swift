import AuthBackend
import DeviceOS
import FirebaseAuthCore
import HTTPTransport
import Foundation
import RedirectInterceptor
import Scenarios
import Synchronization
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A short runtime directory: Unix socket paths are limited to 107 bytes.
func shortRuntimeDirectory() -> URL {
    let url = URL(fileURLWithPath: "/tmp/as-\(UUID().uuidString.prefix(8))")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

extension AppProfile {
    /// An app in a simulator (straight to reCAPTCHA) that claims its URL schemes in `runtime`.
    static func intercepted(_ runtime: URL) -> AppProfile {
        var profile = AppProfile()
        profile.isSimulator = true
        profile.schemeDirectory = SchemeDirectory(url: runtime)
        return profile
    }
}

/// A scratch runtime directory and the interceptor's path.
func scratchRuntime() throws -> (runtime: URL, interceptor: String) {
    (shortRuntimeDirectory(), try executable("redirect-interceptor"))
}

/// The presenter that hands the page's redirect to `redirect-interceptor open`. Every `open` here
/// gives the app 120 s to answer instead of 10: the limit only bounds a failure, and the test
/// process (the app) once stalled past 10 s with the whole suite on two busy cores.
func interceptorPresenter(_ interceptor: String, _ runtime: URL) -> HeadlessPresenter {
    HeadlessPresenter(handOff: .command([interceptor, "open", "--answer-timeout", "120", "--runtime-dir", runtime.path]))
}

/// What reached the app through its schemes.
final class OpenedURLs: Sendable {
    private let entries = Mutex<[(URL, URLHandling)]>([])
    func record(_ url: URL, _ handling: URLHandling) { entries.withLock { $0.append((url, handling)) } }
    var all: [(URL, URLHandling)] { entries.withLock { $0 } }
}

/// The interceptor's log lines (one JSON object per URL), once there are `count` (the app may
/// act on a URL before the interceptor that brought it has written its line): woken by the
/// interceptor's writes (this read the file every 10 ms for at most 3 s until issue 26).
func interceptorLog(_ runtime: URL, count: Int) async throws -> [[String: String]] {
    if count > 0 {
        _ = await waitForFile(runtime.appendingPathComponent("interceptor.log")) { text in
            text.split(separator: "\n").count { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil } >= count
        }
    }
    return interceptorLog(runtime)
}

func interceptorLog(_ runtime: URL) -> [[String: String]] {
    let text = (try? String(contentsOf: runtime.appendingPathComponent("interceptor.log"), encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap {
        (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String]
    }
}

@Suite("redirect-interceptor: the custom-scheme path into canHandle(url), as a separate process")
struct RedirectInterceptorTests {
    @Test("the whole fallback: the backend's page, redirect-interceptor as a process, canHandle, sign-in; the same redirect later is a replay")
    func wholeFallback() async throws {
        let (runtime, interceptor) = try scratchRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        try await withWorld { world, _ in
            let profile = AppProfile.intercepted(runtime)
            let opened = OpenedURLs()
            let (auth, _) = try await world.install(profile, onURL: opened.record)
            // Before any page is presented the app expects no redirect.
            let early = try await runProgram([interceptor, "open", "--answer-timeout", "120", "--runtime-dir", runtime.path,
                                              "\(profile.urlSchemes?.first ?? "app-1-123456789012-ios-a1b2c3d4e5f60718")://firebaseauth/link?deep_link_id=x"])
            #expect(early.status == 1)
            #expect(early.output.contains("(noActivePresentation)"), "\(early.output)")
            #expect(opened.all.count == 1)
            let presenter = interceptorPresenter(interceptor, runtime)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let verificationID = try await provider.verifyPhoneNumber(phone, uiDelegate: presenter)
            guard auth.lastAppVerification == .reCAPTCHA, auth.lastFallbackReason != nil else {
                Issue.record("not the reCAPTCHA path: \(String(describing: auth.lastAppVerification))")
                return
            }
            let code = try #require(await world.lastCode(for: phone))
            let result = try await auth.signIn(with: provider.credential(withVerificationID: verificationID, verificationCode: code))
            #expect(result.user.phoneNumber == phone)

            let redirect = try #require(opened.all.last?.0)
            #expect(opened.all.count == 2)
            #expect(opened.all.last?.1.isHandled == true)
            #expect(try await interceptorLog(runtime, count: 2).map { $0["outcome"] } == ["refused", "handled"])

            // The same URL again: the app refuses it as a replay, and the interceptor says so.
            let replay = try await runProgram([interceptor, "open", "--answer-timeout", "120", "--runtime-dir", runtime.path, "--json", redirect.absoluteString])
            #expect(replay.status == 1)
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(replay.output.utf8)) as? [String: String])
            #expect(answer["outcome"] == "refused")
            #expect(answer["reason"] == "replayed")
            #expect(answer["app"] == profile.bundleID)
        }
    }

    @Test("every error the page can send back arrives through the interceptor with the SDK's code", arguments: [
        ("error:auth/invalid-oauth-client-id", AuthErrorCode.invalidClientID),
        ("error:auth/network-request-failed", .webNetworkRequestFailed),
        ("error:auth/internal-error", .webInternalError),
        ("error:auth/web-storage-unsupported", .webSignInUserInteractionFailure),
        ("cancel", .webContextCancelled),
    ])
    func errorRedirects(_ outcome: String, expected: AuthErrorCode) async throws {
        let (runtime, interceptor) = try scratchRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        var configuration = BackendConfiguration()
        configuration.recaptchaOutcome = try ReCAPTCHAOutcome(argument: outcome)
        try await withWorld(configuration: configuration) { world, _ in
            let profile = AppProfile.intercepted(runtime)
            let (auth, _) = try await world.install(profile)
            let presenter = interceptorPresenter(interceptor, runtime)
            await expectAuthError(expected) {
                _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: presenter)
            }
            // An error redirect is still Auth's URL (handled); a cancelled page sends none.
            let expectedLog = outcome == "cancel" ? [] : ["handled"]
            #expect(try await interceptorLog(runtime, count: expectedLog.count).map { $0["outcome"] } == expectedLog)
        }
    }

    @Test("while the page is presented, the running app refuses other events, other paths, other auth types; look-alike schemes reach no app")
    func refusals() async throws {
        let (runtime, interceptor) = try scratchRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        try await withWorld { world, _ in
            var profile = AppProfile.intercepted(runtime)
            // The app also registers a scheme of its own: a redirect there reaches it, but is not Auth's.
            profile.urlSchemes = ["app-1-123456789012-ios-a1b2c3d4e5f60718", "com.example.authsim.deeplinks"]
            let (auth, _) = try await world.install(profile)
            let results = Mutex<[(String, Int32, String)]>([])
            let allRan = Latch()
            let presenter = ClosurePresenter { url, host in
                guard let page = try? await host.transport.send(TransportRequest(method: "GET", url: url)),
                      let redirect = HeadlessPresenter.redirect(in: String(decoding: page.body, as: UTF8.self)) else { return }
                let real = redirect.absoluteString
                let scheme = redirect.scheme!
                let variants = [
                    ("eventMismatch", real.replacingOccurrences(of: "eventId%3D", with: "eventId%3DZZZZZZZZZZ%26x%3D")),
                    ("wrongHostOrPath", real.replacingOccurrences(of: "://firebaseauth/link", with: "://firebaseauth/other")),
                    ("wrongAuthType", real.replacingOccurrences(of: "authType%3DverifyApp", with: "authType%3DsignInViaRedirect")),
                    ("noDeepLink", "\(scheme)://firebaseauth/link?link=1"),
                    ("wrongScheme", real.replacingOccurrences(of: scheme, with: "com.example.authsim.deeplinks")),
                    ("noRunningApp", real.replacingOccurrences(of: scheme, with: String(scheme.dropLast()) + "9")),
                    ("invalidURL", "not a url"),
                    ("handled", real),
                ]
                for (name, text) in variants {
                    let run = (try? await runProgram([interceptor, "open", "--answer-timeout", "120", "--runtime-dir", runtime.path, text])) ?? (output: "", status: -1)
                    results.withLock { $0.append((name, run.status, run.output)) }
                }
                allRan.open()
            }
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: presenter)
            // The last interceptor run finishes after the app has taken its URL: the presenter says when.
            await allRan.wait()
            let seen = results.withLock { $0 }
            #expect(seen.map(\.0) == ["eventMismatch", "wrongHostOrPath", "wrongAuthType", "noDeepLink", "wrongScheme", "noRunningApp", "invalidURL", "handled"])
            for (name, status, output) in seen {
                switch name {
                case "handled":
                    #expect(status == 0, "\(output)")
                    #expect(output.hasPrefix("handled by com.example.authsim"))
                case "noRunningApp", "invalidURL":
                    #expect(status == 2, "\(name): \(output)")
                    #expect(output.contains("not delivered (\(name))"), "\(output)")
                default:
                    #expect(status == 1, "\(name): \(output)")
                    #expect(output.contains("not handled by com.example.authsim (\(name))"), "\(output)")
                }
            }
            let lookAlike = try #require(seen.first { $0.0 == "noRunningApp" }?.2)
            #expect(lookAlike.contains("looks like app-1-123456789012-ios-a1b2c3d4e5f60718"))
        }
    }

    @Test("an app that does not pass opened URLs to Auth: the interceptor says notForwarded, the SDK ends with 17058")
    func notForwarded() async throws {
        let (runtime, interceptor) = try scratchRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        try await withWorld { world, _ in
            var profile = AppProfile()
            profile.isSimulator = true
            profile.forwardsURLs = false
            profile.schemeDirectory = SchemeDirectory(url: runtime)
            let (auth, _) = try await world.install(profile)
            let presenter = interceptorPresenter(interceptor, runtime)
            await expectAuthError(.webContextCancelled) {
                _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(phone, uiDelegate: presenter)
            }
            #expect(try await interceptorLog(runtime, count: 1).map { $0["reason"] } == ["notForwarded"])
        }
    }

    @Test("with no app running: nothing owns the scheme; a stale socket does not answer; URLs come on standard input too")
    func noApp() async throws {
        let (runtime, interceptor) = try scratchRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let url = "app-1-123456789012-ios-a1b2c3d4e5f60718://firebaseauth/link?deep_link_id=x"
        let none = try await runProgram([interceptor, "open", "--answer-timeout", "120", "--runtime-dir", runtime.path, url])
        #expect(none.status == 2)
        #expect(none.output.contains("no running app owns scheme app-1-123456789012-ios-a1b2c3d4e5f60718"))

        // A claim left by an app that died: a socket file nobody listens on.
        _ = FileManager.default.createFile(atPath: runtime.appendingPathComponent("app-1-123456789012-ios-a1b2c3d4e5f60718.sock").path, contents: nil)
        let stale = try await runProgram(["sh", "-c", "printf '%s\\n\\n%s\\n' '\(url)' 'bad url' | \(interceptor) open --json --runtime-dir \(runtime.path)"])
        #expect(stale.status == 2)
        let lines = stale.output.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String] }
        #expect(lines.map { $0["reason"] } == ["appNotResponding", "invalidURL"])

        // An app claiming the scheme while another live one holds it is refused.
        let listener = try await SchemeListener.start(schemes: ["app-1-123456789012-ios-a1b2c3d4e5f60718"], bundleID: "com.example.first",
                                                      directory: SchemeDirectory(url: runtime)) { _ in
            InterceptorAnswer(handled: true, bundleID: "com.example.first", detail: "taken")
        }
        await #expect(throws: InterceptorError(.schemeTaken, "")) {
            _ = try await SchemeListener.start(schemes: ["APP-1-123456789012-ios-a1b2c3d4e5f60718"], bundleID: "com.example.second",
                                               directory: SchemeDirectory(url: runtime)) { _ in
                InterceptorAnswer(handled: false, bundleID: "com.example.second", detail: "")
            }
        }
        let status = try await runProgram([interceptor, "status", "--runtime-dir", runtime.path])
        #expect(status.output.contains("app-1-123456789012-ios-a1b2c3d4e5f60718  com.example.first"))
        #expect(status.output.contains("running"))
        await listener.stop()
        #expect(!FileManager.default.fileExists(atPath: runtime.appendingPathComponent("app-1-123456789012-ios-a1b2c3d4e5f60718.sock").path))
    }
}

/// A UI delegate made of a closure, for tests that act as the user and the browser.
struct ClosurePresenter: AuthUIDelegate {
    let body: @Sendable (URL, AppHost) async -> Void
    func present(_ url: URL, host: AppHost) async { await body(url, host) }
}
