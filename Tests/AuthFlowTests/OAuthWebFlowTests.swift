import AuthBackend
import DeviceOS
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import HTTPTransport
import Synchronization
import TestSupport
import Testing
import Utilities

/// `OAuthProvider`'s web flow through `import FirebaseAuth`'s calls, as FirebaseAuth 12.19 runs it
/// (AuthProvider/OAuthProvider.swift `getCredentialWith`, `getHeadfulLiteUrl`,
/// `oAuthResponseForURL`; Utilities/AuthURLPresenter.swift; Utilities/AuthWebUtils.swift
/// `isExpectedCallbackURL`; Auth/Auth.swift and User/User.swift `…(with:uiDelegate:)`), against
/// the provider page as the Auth Emulator serves it (firebase-tools src/emulator/auth/handlers.ts
/// `/emulator/auth/handler`, widget_ui.ts `redirectToIos`; operations.ts `getNormalizedUri`).
@Suite("OAuthProvider's web flow: the provider's page, the redirect to the app's scheme, canHandle(url), signInWithIdp")
struct OAuthWebFlowTests {
    @Test("a new Microsoft account signs in through the page; the next sign-in picks it again; login_hint picks by email; a test's answer makes another")
    func signInThroughThePage() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let provider = OAuthProvider(providerID: "microsoft.com", auth: auth)
            let first = try await auth.signIn(with: provider, uiDelegate: nil)
            #expect(first.additionalUserInfo?.isNewUser == true && first.additionalUserInfo?.providerID == "microsoft.com")
            #expect(first.user.providerData.map(\.providerID) == ["microsoft.com"])
            let email = try #require(first.user.email)
            #expect(first.user.isEmailVerified)
            #expect(try await first.user.getIDTokenResult().signInProvider == "microsoft.com")
            // The result's credential is the provider's (the answer's fake access token).
            #expect(first.credential?.provider == "microsoft.com")

            try auth.signOut()
            let again = try await auth.signIn(with: provider, uiDelegate: nil)
            #expect(again.user.uid == first.user.uid && again.additionalUserInfo?.isNewUser == false)

            // login_hint: the page signs in as the account with that email, made if new.
            try auth.signOut()
            provider.customParameters = ["login_hint": "grace@example.com"]
            let hinted = try await auth.signIn(with: provider, uiDelegate: nil)
            #expect(hinted.user.email == "grace@example.com" && hinted.user.uid != first.user.uid)
            provider.customParameters = ["login_hint": email]
            try auth.signOut()
            #expect(try await auth.signIn(with: provider, uiDelegate: nil).user.uid == first.user.uid)

            let toolkit = try #require(world.toolkit)
            await toolkit.answerNextProviderPage(.newAccount)
            try auth.signOut()
            let fresh = try await auth.signIn(with: provider, uiDelegate: nil)
            #expect(fresh.additionalUserInfo?.isNewUser == true && ![first.user.uid, hinted.user.uid].contains(fresh.user.uid))
        }
    }

    @Test("getCredentialWith hands its credential to the main queue; link(with:uiDelegate:) adds GitHub; reauthenticate(with:uiDelegate:) with it")
    func credentialLinkAndReauthenticate() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let user = try await auth.signInAnonymously().user
            let github = OAuthProvider(providerID: AuthProviderID.gitHub, auth: auth)
            let credential: AuthCredential = try await withCheckedThrowingContinuation { continuation in
                github.getCredentialWith(nil) { credential, error in
                    dispatchPrecondition(condition: .onQueue(.main))
                    if let credential { continuation.resume(returning: credential) } else { continuation.resume(throwing: error!) }
                }
            }
            #expect(credential.provider == "github.com" && credential is OAuthCredential)
            let linked = try await user.link(with: credential)
            #expect(linked.user.uid == user.uid && linked.user.providerData.map(\.providerID) == ["github.com"] && !linked.user.isAnonymous)

            // The page's first GitHub account is this user's: reauthentication through the page.
            let reauthenticated = try await user.reauthenticate(with: github, uiDelegate: nil)
            #expect(reauthenticated.user.uid == user.uid)
            // Linking a provider already linked is 17015 without a page (User.swift's check).
            _ = await expectAuthError(.providerAlreadyLinked) { try await user.link(with: credential) }
            let yahoo = OAuthProvider(providerID: "yahoo.com", auth: auth)
            let both = try await user.link(with: yahoo, uiDelegate: nil)
            #expect(Set(both.user.providerData.map(\.providerID)) == ["github.com", "yahoo.com"])
        }
    }

    @Test("the page's outcomes as the SDK maps them: closed 17058, auth/internal-error 17062, an unknown code 17063 with [code] - message")
    func pageOutcomes() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            let toolkit = try #require(world.toolkit)
            let provider = OAuthProvider(providerID: "google.com", auth: auth)
            await toolkit.answerNextProviderPage(.userCancels)
            _ = await expectAuthError(.webContextCancelled) { try await auth.signIn(with: provider, uiDelegate: nil) }
            await toolkit.answerNextProviderPage(.firebaseError(code: "auth/internal-error", message: "An internal error has occurred."))
            _ = await expectAuthError(.webInternalError) { try await auth.signIn(with: provider, uiDelegate: nil) }
            await toolkit.answerNextProviderPage(.firebaseError(code: "auth/user-cancelled", message: "The user denied access."))
            let unknown = await expectAuthError(.webSignInUserInteractionFailure) { try await auth.signIn(with: provider, uiDelegate: nil) }
            #expect(unknown?.message.contains("[auth/user-cancelled] - The user denied access.") == true)
            #expect(auth.currentUser == nil)
            // The flow is over each time: the next page signs in.
            #expect(try await auth.signIn(with: provider, uiDelegate: nil).user.providerData.map(\.providerID) == ["google.com"])
        }
    }

    @Test("the redirect failing as on devices: scheme not registered (before any page), URLs not forwarded, another app's scheme, a second page at once")
    func redirectFailures() async throws {
        try await withWorld { world, _ in
            var unregistered = AppProfile()
            unregistered.urlSchemes = ["com.example.other"]
            let (plain, _) = try await world.install(unregistered, appName: "unregistered")
            let missing = await expectAuthError(.appConfigurationError) {
                try await plain.signIn(with: OAuthProvider(providerID: "google.com", auth: plain), uiDelegate: nil)
            }
            #expect(missing?.message.contains("Please register custom URL scheme app-") == true)

            var deaf = AppProfile()
            deaf.forwardsURLs = false
            let (notForwarding, _) = try await world.install(deaf, appName: "deaf")
            _ = await expectAuthError(.webContextCancelled) {
                try await notForwarding.signIn(with: OAuthProvider(providerID: "google.com", auth: notForwarding), uiDelegate: nil)
            }

            let (auth, _) = try await world.install(AppProfile(), appName: "main")
            let events = EventLog()
            let elsewhere = RewritingPresenter(scheme: "app-1-999-ios-other") { events.append($0) }
            _ = await expectAuthError(.webContextCancelled) {
                try await auth.signIn(with: OAuthProvider(providerID: "google.com", auth: auth), uiDelegate: elsewhere)
            }
            #expect(events.all.contains { $0.kind == .refused && $0.refusal == .wrongScheme })

            // A page already presented: the second is 17058 at once, the first goes on.
            let gate = GatedPresenter()
            let signIn = WeakAuth(auth: auth)
            let first = Task { () async throws -> [String] in
                guard let auth = signIn.auth else { return [] }
                return try await auth.signIn(with: OAuthProvider(providerID: "google.com", auth: auth), uiDelegate: gate).user.providerData.map(\.providerID)
            }
            await gate.presented.wait()
            _ = await expectAuthError(.webContextCancelled) {
                try await auth.signIn(with: OAuthProvider(providerID: "yahoo.com", auth: auth), uiDelegate: nil)
            }
            gate.release.open()
            #expect(try await first.value == ["google.com"])
        }
    }

    @Test("in headless Chromium a person adds a new account with the page's form; the redirect its script computes signs the app in as that account")
    func browserForm() async throws {
        guard await toolAvailable(["python3", "-c", "import websocket"]), await toolAvailable(["chromium", "--version"]) else { return }
        try await withWorld { world, folder in
            let (auth, _) = try await world.install(AppProfile())
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Clients/provider_page_browser.py").standardized
            let output = Mutex<String>("")
            let person = ClosurePresenter { url, host in
                guard let run = try? await runProgram(["python3", script.path, url.absoluteString, "lin@example.com", "Lin", folder.path]) else { return }
                output.withLock { $0 = run.output }
                guard let line = run.output.split(separator: "\n").first(where: { $0.hasPrefix("redirect ") }),
                      let redirect = URL(string: String(line.dropFirst("redirect ".count)))
                else { return }
                _ = host.handleOpen(redirect)
            }
            let result = try await auth.signIn(with: OAuthProvider(providerID: "facebook.com", auth: auth), uiDelegate: person)
            #expect(output.withLock { $0 }.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 3, "\(output.withLock { $0 })")
            #expect(result.additionalUserInfo?.isNewUser == true && result.user.email == "lin@example.com" && result.user.displayName == "Lin")
            #expect(result.user.providerData.map(\.providerID) == ["facebook.com"])
        }
    }

    @Test("a tenant's web flow: tid in the handler URL, the tenant's accounts, the user in the tenant")
    func tenantFlow() async throws {
        try await withWorld { world, _ in
            let (auth, _) = try await world.install(AppProfile())
            auth.tenantID = "tenant-a"
            let provider = OAuthProvider(providerID: "google.com", auth: auth)
            let user = try await auth.signIn(with: provider, uiDelegate: nil).user
            #expect(user.tenantID == "tenant-a")
            #expect(try await user.getIDTokenResult().claims["firebase"].flatMap { ($0 as? [String: Any])?["tenant"] as? String } == "tenant-a")
            // The project's own page has no account of the tenant's: a new one.
            auth.tenantID = nil
            try auth.signOut()
            let outside = try await auth.signIn(with: provider, uiDelegate: nil)
            #expect(outside.additionalUserInfo?.isNewUser == true && outside.user.uid != user.uid)
        }
    }
}

/// Records presenter events.
final class EventLog: Sendable {
    private let events = Mutex<[PresenterEvent]>([])
    func append(_ event: PresenterEvent) { events.withLock { $0.append(event) } }
    var all: [PresenterEvent] { events.withLock { $0 } }
}

/// Loads the page as the headless presenter does, then hands its redirect, under another app's
/// scheme, to the OS: what a device does when the redirect names a scheme another app owns.
struct RewritingPresenter: AuthUIDelegate {
    let scheme: String
    let onEvent: @Sendable (PresenterEvent) -> Void
    init(scheme: String, onEvent: @escaping @Sendable (PresenterEvent) -> Void) {
        self.scheme = scheme
        self.onEvent = onEvent
    }

    func present(_ url: URL, host: AppHost) async {
        guard let redirect = await HeadlessPresenter.loadRedirect(url, host: host),
              var components = URLComponents(url: redirect, resolvingAgainstBaseURL: false)
        else { return onEvent(PresenterEvent(.failed, "no page")) }
        components.scheme = scheme
        if case .refused(let refusal) = host.handleOpen(components.url!) {
            onEvent(PresenterEvent(.refused, refusal.message, refusal: refusal.code))
        }
    }
}

/// Holds the page open until released, then presents it headless.
final class GatedPresenter: AuthUIDelegate {
    let presented = Latch()
    let release = Latch()
    func present(_ url: URL, host: AppHost) async {
        presented.open()
        await release.wait()
        await HeadlessPresenter().present(url, host: host)
    }
}

/// The web flow's pure parts: the handler URL (`getHeadfulLiteUrl`), the session's hash
/// (`hash(forString:)`), the provider's answer read from the redirect (`oAuthResponseForURL`),
/// all of FirebaseAuth 12.19 AuthProvider/OAuthProvider.swift; and the backend's reading of
/// signInWithIdp's `requestUri` (the Auth Emulator's `getNormalizedUri`, operations.ts).
@Suite("OAuthProvider's web flow: the handler URL, the session hash, the redirect's answer, requestUri")
struct OAuthWebFlowRuleTests {
    let scheme = "app-1-123456789012-ios-a1b2c3d4e5f60718"

    func request(providerID: String = "microsoft.com", clientID: String? = nil, tenantID: String? = nil, scopes: [String]? = [""],
                 customParameters: [String: String]? = [:], languageCode: String? = nil) -> OAuthWebFlow.Request {
        OAuthWebFlow.Request(apiKey: "KEY", bundleID: "com.example.authsim", sessionID: "ABCDEFGHIJ", userAgent: "FirebaseAuth.iOS/12.19.0 com.example.authsim/1.0",
                             eventID: "KLMNOPQRST", providerID: providerID, clientID: clientID, appID: "1:123456789012:ios:a1b2c3d4e5f60718",
                             tenantID: tenantID, scopes: scopes, customParameters: customParameters, languageCode: languageCode)
    }

    @Test("the handler URL: the emulator's path over http, else https://<authDomain>/__/auth/handler; the SDK's parameters in its order; scopes [\"\"] (the default) sent empty; + as %2B")
    func handlerURL() throws {
        let hash = "261305762671a58cae5b74990bcfc236c2336fb04a0fbac626166d9491d2884c"  // SHA-256 of ABCDEFGHIJ
        #expect(OAuthWebFlow.sessionHash("ABCDEFGHIJ") == hash)
        let emulator = try #require(OAuthWebFlow.handlerURL(domain: "127.0.0.1:9099", emulator: true, request()))
        #expect(emulator.absoluteString == "http://127.0.0.1:9099/emulator/auth/handler?apiKey=KEY&authType=signInWithRedirect&ibi=com.example.authsim&sessionId=\(hash)&v=FirebaseAuth.iOS/12.19.0%20com.example.authsim/1.0&eventId=KLMNOPQRST&providerId=microsoft.com&appId=1:123456789012:ios:a1b2c3d4e5f60718&scopes=")
        let production = try #require(OAuthWebFlow.handlerURL(
            domain: "authsim-demo.firebaseapp.com", emulator: false,
            request(providerID: "oidc.corp", clientID: "123.apps.googleusercontent.com", tenantID: "t-1", scopes: ["openid", "mail+read"],
                    customParameters: ["prompt": "consent"], languageCode: "fr")))
        #expect(production.absoluteString == "https://authsim-demo.firebaseapp.com/__/auth/handler?apiKey=KEY&authType=signInWithRedirect&ibi=com.example.authsim&sessionId=\(hash)&v=FirebaseAuth.iOS/12.19.0%20com.example.authsim/1.0&eventId=KLMNOPQRST&providerId=oidc.corp&clientId=123.apps.googleusercontent.com&tid=t-1&scopes=openid,mail%2Bread&customParameters=%7B%22prompt%22:%22consent%22%7D&hl=fr")
        // No scopes and no custom parameters: neither is sent.
        let bare = try #require(OAuthWebFlow.handlerURL(domain: "d", emulator: true, request(scopes: [], customParameters: nil)))
        #expect(!bare.query!.contains("scopes") && !bare.query!.contains("customParameters"))
    }

    func redirect(_ callbackQuery: String) -> URL {
        let callback = "http://127.0.0.1:9099/__/auth/callback?\(callbackQuery)"
        return URL(string: "\(scheme)://firebaseauth/link?deep_link_id=\(callback.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")!
    }

    @Test("the redirect: the callback's link is the answer; firebaseError mapped as the SDK maps it; without either 17063; only the presented event and authType")
    func readingTheRedirect() {
        let link = "http://127.0.0.1:9099/emulator/auth/handler?providerId=google.com&id_token=%7B%22sub%22%3A%221%22%7D"
        let answer = redirect("authType=signInWithRedirect&link=\(link.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&eventId=KLMNOPQRST")
        #expect(ReCAPTCHAFlow.read(answer, scheme: scheme, eventID: "KLMNOPQRST", authType: .signInWithRedirect) == .link(link))
        // The same redirect is not a reCAPTCHA page's, nor another event's.
        guard case .notOurs(let refusal) = ReCAPTCHAFlow.read(answer, scheme: scheme, eventID: "KLMNOPQRST", authType: .verifyApp) else {
            Issue.record("a signInWithRedirect callback was taken for reCAPTCHA")
            return
        }
        #expect(refusal.code == .wrongAuthType)
        if case .notOurs(let other) = ReCAPTCHAFlow.read(answer, scheme: scheme, eventID: "ZZZZZZZZZZ", authType: .signInWithRedirect) {
            #expect(other.code == .eventMismatch)
        } else {
            Issue.record("another event's redirect was taken")
        }
        func failure(_ query: String) -> AuthError? {
            if case .failure(let error) = ReCAPTCHAFlow.read(redirect(query), scheme: scheme, eventID: "KLMNOPQRST", authType: .signInWithRedirect) { return error }
            return nil
        }
        let json = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        #expect(failure("authType=signInWithRedirect&firebaseError=\(json(#"{"code":"auth/network-request-failed","message":"m"}"#))&eventId=KLMNOPQRST")?.code == .webNetworkRequestFailed)
        let unknown = failure("authType=signInWithRedirect&firebaseError=\(json(#"{"code":"auth/popup-closed"}"#))&eventId=KLMNOPQRST")
        #expect(unknown?.code == .webSignInUserInteractionFailure && unknown?.message == "[auth/popup-closed] - missing message")
        #expect(failure("authType=signInWithRedirect&firebaseError=\(json("{not json"))&eventId=KLMNOPQRST")?.code == .internalError)
        #expect(failure("authType=signInWithRedirect&eventId=KLMNOPQRST")?.code == .webSignInUserInteractionFailure)
    }

    @Test("signInWithIdp's fields: requestUri's query, postBody's over it, the fragment's over both; requestUri missing or relative is refused, as by the emulator")
    func requestURIFields() throws {
        var request = VerifyAssertionRequest(requestUri: "http://localhost/h?providerId=google.com&id_token=A&x=1#id_token=C", postBody: "id_token=B&access_token=T")
        #expect(try request.credentialFields() == ["providerId": "google.com", "id_token": "C", "x": "1", "access_token": "T"])
        request.requestUri = "http://localhost"
        #expect(try request.credentialFields() == ["id_token": "B", "access_token": "T"])
        request.requestUri = nil
        #expect { try request.credentialFields() } throws: { ($0 as? IdentityToolkitError)?.code == .missingRequestURI }
        request.requestUri = "/relative?providerId=google.com"
        #expect { try request.credentialFields() } throws: { ($0 as? IdentityToolkitError)?.code == .invalidRequestURI }
    }

    @Test("the provider page's outcomes from the command line and scenario files, and what is refused")
    func outcomes() throws {
        #expect(try ProviderPageOutcome(argument: "first") == .firstAccount)
        #expect(try ProviderPageOutcome(argument: "new") == .newAccount)
        #expect(try ProviderPageOutcome(argument: "cancel") == .userCancels)
        #expect(try ProviderPageOutcome(argument: "account:ada@example.com") == .account(email: "ada@example.com"))
        #expect(try ProviderPageOutcome(argument: "error:auth/internal-error") == .firebaseError(code: "auth/internal-error", message: "An internal error has occurred."))
        #expect(try ProviderPageOutcome(argument: "error:auth/x:it broke") == .firebaseError(code: "auth/x", message: "it broke"))
        for bad in ["", "pass", "account:", "account:nobody", "error:", "first:1"] {
            #expect(throws: IdentityToolkitError.self) { try ProviderPageOutcome(argument: bad) }
        }
    }
}
