import AuthBackend
import DeviceOS
import FirebaseAuthCore
import Foundation
import LocalPKI

/// A sign-in on an identity provider's web page (`OAuthProvider`'s web flow) in a scenario file:
/// the app as the file describes it (its URL schemes, whether it passes opened URLs to Auth), the
/// backend's provider page, the redirect to the app's scheme, signInWithIdp.
package enum IdentityProviderScenario {
    package static func run(_ spec: ScenarioSpec, _ identityProvider: ScenarioSpec.IdentityProviderSpec, world: PhoneAuthWorld, timeline: Timeline,
                    work: URL, credentials: LocalCredentials?, options: AppRunOptions) async -> ScenarioOutcome {
        do {
            let (auth, profile, _, _) = try await ScenarioRunner.prepareApp(spec, world: world, timeline: timeline, work: work,
                                                                            credentials: credentials, options: options)
            if let page = identityProvider.page {
                await world.toolkit?.answerNextProviderPage(page)
                timeline.record(.authsim, "on the \(identityProvider.providerID) page the user will: \(describe(page))")
            }
            let provider = OAuthProvider(providerID: identityProvider.providerID, auth: auth)
            if let hint = identityProvider.loginHint { provider.customParameters = ["login_hint": hint] }
            let headless: any AuthUIDelegate & Sendable = identityProvider.otherAppOwnsScheme
                ? OtherAppTakesRedirect(timeline: timeline) : HeadlessPresenter { ScenarioRunner.record($0, into: timeline) }
            let presenter = PagePresenter(inner: profile.uiDelegate ?? headless, providerID: identityProvider.providerID, timeline: timeline)
            timeline.record(.app, to: .browser,
                            "Auth.auth().signIn(with: OAuthProvider(providerID: \"\(identityProvider.providerID)\"), uiDelegate: nil)\(identityProvider.loginHint.map { " with login_hint \($0)" } ?? "")",
                            .providerSignIn(providerID: identityProvider.providerID))
            let result = try await auth.signIn(with: provider, uiDelegate: presenter)
            timeline.record(.app, "signed in with \(identityProvider.providerID): uid \(result.user.uid.prefix(8))…, \(result.user.email ?? "no email")\(result.additionalUserInfo?.isNewUser == true ? " (new user)" : "")",
                            .signedIn(uid: result.user.uid, path: .identityProvider))
            return .signedInWithProvider(identityProvider.providerID)
        } catch {
            return ScenarioRunner.outcome(of: error, in: timeline)
        }
    }

    static func describe(_ page: ProviderPageOutcome) -> String {
        switch page {
        case .firstAccount: "sign in as the account login_hint names, else the provider's first"
        case .account(let email): "sign in as \(email)"
        case .newAccount: "add a new account"
        case .userCancels: "close the page"
        case .firebaseError(let code, _): "see the page report \(code)"
        }
    }

    /// The page as the headless presenter loads it, whose redirect iOS opens in another app that
    /// registers the same scheme: Auth never sees it, and the user closes the page.
    struct OtherAppTakesRedirect: AuthUIDelegate {
        let timeline: Timeline

        func present(_ url: URL, host: AppHost) async {
            guard let redirect = await HeadlessPresenter.loadRedirect(url, host: host) else {
                timeline.record(.browser, "the page did not load or has no redirect", .presenter(kind: PresenterEvent.Kind.failed.rawValue))
                return
            }
            timeline.record(.browser, "the page redirects to \(redirect.scheme ?? "?")://…; iOS opens it in another app that registers the same scheme (another build of this app): Auth.canHandle(url) never sees it",
                            .redirect(handling: .otherApp, refusal: nil))
            timeline.record(.browser, "the user closes the page", .presenter(kind: PresenterEvent.Kind.closed.rawValue))
        }
    }

    /// Puts the page's opening in the timeline, then presents it.
    struct PagePresenter: AuthUIDelegate {
        let inner: any AuthUIDelegate & Sendable
        let providerID: String
        let timeline: Timeline

        func present(_ url: URL, host: AppHost) async {
            timeline.record(.app, to: .browser, "presents \(providerID)'s sign-in page \(url.path)?…authType=signInWithRedirect…")
            await inner.present(url, host: host)
        }
    }
}
