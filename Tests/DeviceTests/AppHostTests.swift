import APNsWire
import DeviceLink
import DeviceOS
import Foundation
import Synchronization
import Testing

/// A framework hooked into the app delegate, as FirebaseAuth is: it keeps what the OS handed it and
/// answers as it is told. (The app's real interceptor, `Auth`, is tested through the whole channel in
/// AuthFlowTests; here the device's own rules are held without Firebase.)
final class HookedFramework: AppDelegateInterceptor {
    struct Seen: Sendable {
        var tokens: [Data] = []
        var failures: [String] = []
        var notifications = 0
        var urls: [URL] = []
        var killed = false
    }
    let seen = Mutex(Seen())
    let takesNotifications: Bool
    let answer: URLHandling

    init(takesNotifications: Bool = true, answer: URLHandling = .handled("the redirect")) {
        self.takesNotifications = takesNotifications
        self.answer = answer
    }

    func application(_ application: AppHost, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        seen.withLock { $0.tokens.append(deviceToken) }
    }
    func application(_ application: AppHost, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        let reason = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        seen.withLock { $0.failures.append(reason) }
    }
    func canHandleNotification(_ userInfo: [AnyHashable: Any]) -> Bool {
        seen.withLock { $0.notifications += 1 }
        return takesNotifications
    }
    func handle(_ url: URL) -> URLHandling {
        seen.withLock { $0.urls.append(url) }
        return answer
    }
    func processWasKilled() { seen.withLock { $0.killed = true } }
}

@Suite("The app on the device: its delegate, its interceptors, its registration, its death")
struct AppHostTests {
    let url = URL(string: "app-1-123-ios-abc://firebaseauth/link?deep_link_id=x")!

    @Test("opened URLs and notifications reach the interceptors; a delegate that does not forward keeps them from Auth, with the reason")
    func forwarding() {
        let host = AppHost(AppHost.Configuration(bundleID: "com.example.app", urlSchemes: ["app-1-123-ios-abc"]))
        #expect(host.handleOpen(url) == .refused(URLRefusal(.noActivePresentation, "no Firebase app is configured in this app")))
        let framework = HookedFramework()
        host.registerAppDelegateInterceptor(framework)
        #expect(host.handleOpen(url) == .handled("the redirect"))
        #expect(host.didReceiveRemoteNotification(["com.google.firebase.auth": ["receipt": "r"]]))
        let handed = framework.seen.withLock { ($0.urls, $0.notifications) }
        #expect(handed.0 == [url])
        #expect(handed.1 == 1)

        let closed = AppHost(AppHost.Configuration(bundleID: "com.example.app", urlSchemes: [], forwardsNotifications: false, forwardsURLs: false))
        let unseen = HookedFramework()
        closed.registerAppDelegateInterceptor(unseen)
        guard case .refused(let refusal) = closed.handleOpen(url) else {
            Issue.record("a delegate that does not forward URLs still handed one to Auth")
            return
        }
        #expect(refusal.code == .notForwarded)
        #expect(!closed.didReceiveRemoteNotification(["com.google.firebase.auth": ["receipt": "r"]]))
        let reached = unseen.seen.withLock { ($0.urls.count, $0.notifications) }
        #expect(reached.0 == 0)
        #expect(reached.1 == 0)
    }

    @Test("the first interceptor that takes a URL answers; when none does, the first refusal is the answer")
    func severalInterceptors() {
        let host = AppHost(AppHost.Configuration(bundleID: "com.example.app", urlSchemes: []))
        let refusing = HookedFramework(takesNotifications: false, answer: .refused(URLRefusal(.wrongScheme, "not the callback scheme")))
        let taking = HookedFramework(answer: .handled("event 7"))
        host.registerAppDelegateInterceptor(refusing)
        #expect(host.handleOpen(url) == .refused(URLRefusal(.wrongScheme, "not the callback scheme")))
        #expect(!host.didReceiveRemoteNotification([:]))
        host.registerAppDelegateInterceptor(taking)
        #expect(host.handleOpen(url) == .handled("event 7"))
        #expect(host.didReceiveRemoteNotification([:]))
    }

    @Test("interceptors are not retained (GULAppDelegateSwizzler): one nobody holds gets nothing more")
    func notRetained() {
        let host = AppHost(AppHost.Configuration(bundleID: "com.example.app", urlSchemes: []))
        var framework: HookedFramework? = HookedFramework()
        host.registerAppDelegateInterceptor(framework!)
        #expect(host.didReceiveRemoteNotification([:]))
        framework = nil
        #expect(!host.didReceiveRemoteNotification([:]))
        #expect(host.handleOpen(url) == .refused(URLRefusal(.noActivePresentation, "no Firebase app is configured in this app")))
    }

    @Test("registerForRemoteNotifications: the device's token reaches the interceptors, or its failure; an app delegate that implements the callbacks gets them instead; an app on no device fails")
    func registration() async {
        let token = Data([0xAB, 0x12])
        let host = AppHost(AppHost.Configuration(bundleID: "com.example.app", urlSchemes: []))
        let framework = HookedFramework()
        host.registerAppDelegateInterceptor(framework)

        await host.registerForRemoteNotifications().value
        #expect(framework.seen.withLock { $0.failures } == ["the app is on no device: nothing can issue an APNs token"])

        host.setRegistrar { .token(token) }
        await host.registerForRemoteNotifications().value
        #expect(framework.seen.withLock { $0.tokens } == [token])

        host.setRegistrar { .failed("no valid aps-environment entitlement") }
        await host.registerForRemoteNotifications().value
        #expect(framework.seen.withLock { $0.failures.last } == "no valid aps-environment entitlement")

        let delegated = Mutex<[AppHost.RemoteNotificationRegistration]>([])
        host.setRegistrar { .token(token) }
        host.setRegistrationDelegate { outcome in delegated.withLock { $0.append(outcome) } }
        await host.registerForRemoteNotifications().value
        #expect(delegated.withLock { $0.count } == 1)
        #expect(framework.seen.withLock { $0.tokens.count } == 1)
    }

    @Test("a killed process tells its interceptors, then takes no more notifications or URLs; its keychain and defaults stay")
    func killed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apphost-killed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = Keychain(file: folder.appendingPathComponent("keychain.json"))
        let defaults = UserDefaultsStore(file: folder.appendingPathComponent("defaults.json"))
        let host = AppHost(AppHost.Configuration(bundleID: "com.example.app", urlSchemes: []), userDefaults: defaults, keychain: keychain)
        let framework = HookedFramework()
        host.registerAppDelegateInterceptor(framework)
        try keychain.set(Data("receipt".utf8), service: "s", account: "a")
        defaults.set("verification-id", forKey: "authVerificationID")

        host.terminate()
        #expect(host.isTerminated)
        #expect(framework.seen.withLock { $0.killed })
        #expect(!host.didReceiveRemoteNotification([:]))
        guard case .refused(let refusal) = host.handleOpen(url) else {
            Issue.record("a killed app took a URL")
            return
        }
        #expect(refusal.code == .noActivePresentation)
        #expect(framework.seen.withLock { $0.notifications } == 0)
        #expect(Keychain(file: folder.appendingPathComponent("keychain.json")).data(service: "s", account: "a") == Data("receipt".utf8))
        #expect(UserDefaultsStore(file: folder.appendingPathComponent("defaults.json")).string(forKey: "authVerificationID") == "verification-id")
    }

    @Test("the device answers registrations as its outcome says: its token, the missing entitlement, or never")
    func deviceAnswers() async {
        let token = DeviceToken(hex: "ab12cd34")!
        for (outcome, tokens, failures) in [(APNsRegistrationOutcome.token, [Data(token.bytes)], [String]()),
                                            (.fails, [], [APNsRegistrationOutcome.noEntitlementError]), (.neverAnswers, [], [])] {
            let host = AppHost(AppHost.Configuration(bundleID: "com.example.app", urlSchemes: []))
            let framework = HookedFramework()
            host.registerAppDelegateInterceptor(framework)
            host.answerRegistrations(on: token, with: outcome)
            await host.registerForRemoteNotifications().value
            let seen = framework.seen.withLock { ($0.tokens, $0.failures) }
            #expect(seen.0 == tokens, "\(outcome)")
            #expect(seen.1 == failures, "\(outcome)")
        }
    }
}
