import Foundation
import IdentityToolkitAPI
import Utilities

/// Who the user signs in as on an identity provider's page (`OAuthProvider`'s web flow), set per
/// run (`--provider-page`) or per page by a test (``IdentityToolkit/answerNextProviderPage(_:)``).
package enum ProviderPageOutcome: Sendable, Hashable {
    /// The account the app's `login_hint` custom parameter names (made if the provider has none
    /// with that email), else the provider's first account here, else a new one.
    case firstAccount
    /// The provider's account with this email, or a new one with it.
    case account(email: String)
    /// A new account (a random ID and email), as the emulator's "Add new account" with its
    /// auto-generated values.
    case newAccount
    /// The user closes the page: no redirect ever comes.
    case userCancels
    /// The page reports this error (`firebaseError` JSON in the callback).
    case firebaseError(code: String, message: String)

    /// The command-line and scenario-file form: `first`, `new`, `account:<email>`, `cancel`,
    /// `error:<code>[:<message>]`.
    package init(argument: String) throws(IdentityToolkitError) {
        let parts = argument.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        switch parts[0] {
        case "first" where parts.count == 1: self = .firstAccount
        case "new" where parts.count == 1: self = .newAccount
        case "cancel" where parts.count == 1: self = .userCancels
        case "account":
            let email = parts.dropFirst().joined(separator: ":")
            guard email.contains("@"), !email.hasPrefix("@"), !email.hasSuffix("@") else {
                throw IdentityToolkitError(.invalidConfig, "account takes an email: account:ada@example.com")
            }
            self = .account(email: email)
        case "error":
            let (code, message) = try ReCAPTCHAOutcome.pageError(parts)
            self = .firebaseError(code: code, message: message)
        default:
            throw IdentityToolkitError(.invalidConfig, "the provider page's outcome is first, new, account:<email>, cancel or error:<code>[:<message>], not \(argument)")
        }
    }
}

/// The identity provider's sign-in page, as the Auth Emulator serves it at
/// `/emulator/auth/handler` (firebase-tools src/emulator/auth/handlers.ts and widget_ui.ts) and
/// as the SDK opens it without the emulator (`/__/auth/handler`, `authType=signInWithRedirect`):
/// the provider's accounts here to pick, a form for a new one, and for the headless presenter the
/// run's answer as `<a id="authsim-redirect">`. Each answer is the emulator's redirect to the app:
/// `<scheme>://firebaseauth/link?deep_link_id=<https://<host>/__/auth/callback?authType=signInWithRedirect&link=<handler?providerId=…&id_token=<claims>>&eventId=…>`,
/// the link being what the SDK sends to signInWithIdp as `requestUri`.
enum ProviderPage {
    struct Query {
        let providerID: String
        let eventID: String
        let scheme: String
        let tenantID: String?
        /// The `login_hint` custom parameter, if the app set one.
        let loginHint: String?
    }

    /// Checks the handler's query as Google's handler would, and says what is wrong.
    static func parse(_ items: [URLQueryItem], configuration: BackendConfiguration) -> Result<Query, IdentityToolkitError> {
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        func bad(_ message: String) -> Result<Query, IdentityToolkitError> { .failure(IdentityToolkitError(.invalidRequest, message)) }
        guard let apiKey = value("apiKey"), configuration.accepts(apiKey: apiKey) else { return bad("apiKey is missing or not this project's") }
        guard value("authType") == "signInWithRedirect" else { return bad("authType must be signInWithRedirect") }
        guard let provider = value("providerId"), !provider.isEmpty else { return bad("providerId is required") }
        let providerID = ProviderID(rawValue: provider)
        guard ![ProviderID.apple, .gameCenter, .phone, .password, .anonymous, .custom].contains(providerID), SignInMethod(rawValue: provider) != .emailLink else {
            return bad(providerID == .apple
                ? "apple.com signs in with Apple's sheet here (ASAuthorization; AuthsimTesting's appleAuthorization), not through the web flow, which only the Auth Emulator fakes for it"
                : "\(provider) has no web sign-in page")
        }
        let bundleID = configuration.bundleID
        guard value("ibi") == bundleID else { return bad("ibi must be the iOS app's bundle ID \(bundleID)") }
        guard let event = ReCAPTCHAPage.eventID(items) else { return bad("eventId must be 10 uppercase letters") }
        guard let session = value("sessionId"), session.count == 64, session.allSatisfy(\.isHexDigit) else {
            return bad("sessionId must be the SHA-256 (hex) of the app's session ID")
        }
        guard let scheme = ReCAPTCHAPage.callbackScheme(items) else { return bad("appId or clientId is required") }
        var loginHint: String?
        if let text = value("customParameters") {
            guard let parameters = try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)) else {
                return bad("customParameters must be a JSON object of strings")
            }
            loginHint = parameters["login_hint"].flatMap { $0.isEmpty ? nil : $0 }
        }
        let tenant = (value("tid") ?? value("tenantId")).flatMap { $0.isEmpty ? nil : $0 }
        return .success(Query(providerID: provider, eventID: event, scheme: scheme, tenantID: tenant, loginHint: loginHint))
    }

    /// The emulator's fake claims for an account (`createFakeClaims`), as JSON in its key order.
    static func claims(sub: String, name: String?, email: String?, picture: String?) -> String {
        var fields = ["\"sub\":\(CompactJSON.string(sub))", "\"iss\":\"\"", "\"aud\":\"\"", "\"exp\":0", "\"iat\":0"]
        if let name { fields.append("\"name\":\(CompactJSON.string(name))") }
        if let email { fields.append("\"email\":\(CompactJSON.string(email))") }
        fields.append("\"email_verified\":true")
        if let picture { fields.append("\"picture\":\(CompactJSON.string(picture))") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A new provider account's ID: 40 digits, as the emulator's widget makes them.
    static func newRawID() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<40).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }

    /// The redirect that signs in with `claims` (the provider's answer), or reports `error`.
    static func redirect(_ query: Query, page: URL, claims: String?, error: (code: String, message: String)? = nil) -> String {
        let origin = "\(page.scheme ?? "https")://\(page.host ?? "localhost")\(page.port.map { ":\($0)" } ?? "")"
        var callback = "\(origin)/__/auth/callback?authType=signInWithRedirect"
        if let claims {
            var link = "\(origin)\(page.path)?providerId=\(WebText.percentEncode(query.providerID))&id_token=\(WebText.percentEncode(claims))"
            if query.providerID.hasPrefix("saml."), let email = email(in: claims) {
                link += "&SAMLResponse=" + WebText.percentEncode("{\"assertion\":{\"subject\":{\"nameId\":\(CompactJSON.string(email))}}}")
            }
            callback += "&link=\(WebText.percentEncode(link))"
        }
        if let error {
            let json = (try? IdentityToolkitJSON.encode(FirebaseWebError(code: error.code, message: error.message)))
                .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            callback += "&firebaseError=\(WebText.percentEncode(json))"
        }
        callback += "&eventId=\(query.eventID)"
        return "\(query.scheme)://firebaseauth/link?deep_link_id=\(WebText.percentEncode(callback))"
    }

    private static func email(in claims: String) -> String? {
        (try? JSONDecoder().decode([String: JSONValue].self, from: Data(claims.utf8)))
            .flatMap { if case .string(let email)? = $0["email"] { email } else { nil } }
    }

    /// An account the page lists.
    struct Account {
        let claims: String
        let displayName: String?
        let email: String?
    }

    /// The page. Without scripts: the chosen answer as `#authsim-redirect` (none: the user
    /// closes the page), every account as a link; with scripts, the form makes a new account.
    static func html(_ query: Query, page: URL, accounts: [Account], answer: String?, answerText: String) -> String {
        let provider = WebText.escapeHTML(query.providerID)
        let list = accounts.map { account in
            let who = [account.displayName ?? "(No display name)", account.email ?? ""].filter { !$0.isEmpty }.map(WebText.escapeHTML).joined(separator: " · ")
            return "<li><a class=\"authsim-account\" href=\"\(WebText.escapeHTML(redirect(query, page: page, claims: account.claims)))\">\(who)</a></li>"
        }.joined(separator: "\n")
        // The new-account form builds the same redirect in the browser (the emulator's widget).
        let template = redirect(query, page: page, claims: "CLAIMS_PLACEHOLDER")
        let script = """
            <script>
            document.getElementById("authsim-new-account").addEventListener("submit", function (event) {
              event.preventDefault();
              var form = event.target, sub = "";
              for (var i = 0; i < 40; i++) sub += Math.floor(Math.random() * 10);
              var claims = {sub: sub, iss: "", aud: "", exp: 0, iat: 0};
              if (form.displayName.value) claims.name = form.displayName.value;
              if (form.email.value) claims.email = form.email.value;
              claims.email_verified = true;
              if (form.photoUrl.value) claims.picture = form.photoUrl.value;
              // The claims go three levels deep: id_token in the link, the link in the callback,
              // the callback in deep_link_id (the placeholder is the same at every level).
              var encoded = encodeURIComponent(encodeURIComponent(encodeURIComponent(JSON.stringify(claims))));
              var target = \(ReCAPTCHAPage.javaScriptString(template)).replace("CLAIMS_PLACEHOLDER", encoded);
              document.body.setAttribute("data-state", "redirecting");
              document.body.setAttribute("data-redirect", target);
              document.getElementById("authsim-status").textContent = "Signed in. Returning to the app: " + target;
              window.location.replace(target);
            });
            </script>
            """
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Sign in with \(provider) – authsim</title>
            <meta name="viewport" content="width=device-width, initial-scale=1"></head>
            <body data-state="\(answer == nil ? "cancelled" : "answering")" style="font-family: sans-serif; margin: 2em">
            <h1>Sign in with <span id="authsim-provider">\(provider)</span></h1>
            <p>Event <code id="authsim-event">\(query.eventID)</code>. This page is authsim's fake of \(provider), as the Firebase Auth Emulator's.</p>
            <p id="authsim-status">\(WebText.escapeHTML(answerText))</p>
            \(answer.map { "<p><a id=\"authsim-redirect\" href=\"\(WebText.escapeHTML($0))\">Continue</a></p>" } ?? "<p id=\"authsim-cancelled\">No redirect.</p>")
            <h2>Accounts</h2>
            <ul id="authsim-accounts">\(list.isEmpty ? "<li>No \(provider) accounts exist here yet.</li>" : list)</ul>
            <h2>Add new account</h2>
            <form id="authsim-new-account">
            <label>Email <input name="email" type="email"></label>
            <label>Display name <input name="displayName"></label>
            <label>Photo URL <input name="photoUrl"></label>
            <button type="submit">Sign in with \(provider)</button>
            </form>
            \(script)
            </body></html>
            """
    }
}

extension IdentityToolkit {
    /// The next provider page ends with `outcome` (then the configuration's again): what a test
    /// does where a person would pick an account.
    package func answerNextProviderPage(_ outcome: ProviderPageOutcome) { providerPageAnswers.append(outcome) }

    /// The provider's sign-in page for the SDK's query, opened at `page` (the URL without its
    /// query): status and HTML.
    package func providerPage(query items: [URLQueryItem], page: URL) async -> (status: Int, html: String) {
        let query: ProviderPage.Query
        switch ProviderPage.parse(items, configuration: configuration) {
        case .failure(let problem):
            return (400, "<!DOCTYPE html><html><body><h1>Bad sign-in request</h1><p id=\"authsim-error\">\(WebText.escapeHTML(problem.detail ?? problem.code.rawValue))</p></body></html>")
        case .success(let parsed): query = parsed
        }
        let users: [BackendUser]
        do throws(IdentityToolkitError) {
            users = try await reading { state in
                state.users(in: query.tenantID).byID.values.sorted { ($0.createdAt, $0.localId) < ($1.createdAt, $1.localId) }
            }
        } catch {
            return (error.httpStatus, "<!DOCTYPE html><html><body><h1>Backend error</h1><p id=\"authsim-error\">\(WebText.escapeHTML(error.message))</p></body></html>")
        }
        let provider = ProviderID(rawValue: query.providerID)
        let accounts = users.compactMap { user -> ProviderPage.Account? in
            guard let info = user.otherProviders?.first(where: { $0.providerId == provider }), let rawId = info.rawId else { return nil }
            return ProviderPage.Account(claims: ProviderPage.claims(sub: rawId, name: info.displayName, email: info.email, picture: info.photoUrl),
                                        displayName: info.displayName, email: info.email)
        }
        let outcome = providerPageAnswers.isEmpty ? configuration.providerPageOutcome : providerPageAnswers.removeFirst()
        func newAccount(email: String?) -> ProviderPage.Account {
            let sub = ProviderPage.newRawID()
            let email = email ?? "user\(sub.suffix(6))@\(query.providerID.replacingOccurrences(of: "oidc.", with: "").replacingOccurrences(of: "saml.", with: "")).example"
            return ProviderPage.Account(claims: ProviderPage.claims(sub: sub, name: nil, email: email, picture: nil), displayName: nil, email: email)
        }
        func existing(_ email: String) -> ProviderPage.Account? { accounts.first { $0.email?.lowercased() == email.lowercased() } }
        let chosen: ProviderPage.Account?
        var error: (code: String, message: String)?
        switch outcome {
        case .firstAccount:
            if let hint = query.loginHint { chosen = existing(hint) ?? newAccount(email: hint) } else { chosen = accounts.first ?? newAccount(email: nil) }
        case .account(let email): chosen = existing(email) ?? newAccount(email: email)
        case .newAccount: chosen = newAccount(email: nil)
        case .userCancels: chosen = nil
        case .firebaseError(let code, let message): (chosen, error) = (nil, (code, message))
        }
        let answer: String?
        let text: String
        if let chosen {
            answer = ProviderPage.redirect(query, page: page, claims: chosen.claims)
            text = "The user signs in as \(chosen.email ?? chosen.displayName ?? "a \(query.providerID) account")\(accounts.contains { $0.claims == chosen.claims } ? "" : " (a new account)")."
        } else if let error {
            answer = ProviderPage.redirect(query, page: page, claims: nil, error: error)
            text = "The page reports \(error.code): \(error.message)"
        } else {
            answer = nil
            text = "The user closes this page without signing in."
        }
        emit(.providerPage(provider: query.providerID, eventID: query.eventID, answer: text, redirects: answer != nil), signIn: nil)
        return (200, ProviderPage.html(query, page: page, accounts: accounts, answer: answer, answerText: text))
    }
}
