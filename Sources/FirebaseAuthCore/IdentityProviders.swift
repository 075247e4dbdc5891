import Foundation
import IdentityToolkitAPI

// Google, Facebook, GitHub and Twitter credentials, with the SDK's names (FirebaseAuth 12.19
// AuthProvider/GoogleAuthProvider.swift, FacebookAuthProvider.swift, GitHubAuthProvider.swift,
// TwitterAuthProvider.swift): the app gets the tokens from the provider's own SDK and hands them
// to `signIn(with:)`, `link(with:)` or `reauthenticate(with:)`, which send them to signInWithIdp
// (`verifyAssertion`). Against authsim's backend, as against the Auth Emulator, a provider's
// token is its claims as JSON (`{"sub":…,"email":…}`) or an unsigned JWT (docs/identity-providers.md).

/// What signInWithIdp sends for a credential: its `postBody` (the provider and its tokens), or a
/// pending token from an earlier answer, or the web flow's answer and session.
protocol IdentityProviderCredential: AuthCredential {
    var providerID: String { get }
    var postBody: String { get }
    var pendingToken: String? { get }
    var responseURL: String? { get }
    var sessionID: String? { get }
}

extension IdentityProviderCredential {
    /// The credential's part of signInWithIdp, as the SDK's `prepare(_:)` writes it: the
    /// `postBody` always, the pending token, the web flow's answer as `requestUri` (else
    /// `http://localhost`, "unused by server, but required") and its session.
    func prepare(_ request: inout VerifyAssertionRequest) {
        request.postBody = postBody
        request.pendingToken = pendingToken
        request.requestUri = responseURL ?? "http://localhost"
        request.sessionId = sessionID
    }
}

extension OAuthCredential: IdentityProviderCredential {}

/// A credential of Google, Facebook, GitHub or Twitter (the SDK's GoogleAuthCredential,
/// FacebookAuthCredential, GitHubAuthCredential and TwitterAuthCredential: not OAuthCredentials).
final class ProviderTokenCredential: AuthCredential, IdentityProviderCredential, @unchecked Sendable {
    let providerID: String
    let idToken: String?
    let accessToken: String?
    let secret: String?
    var pendingToken: String? { nil }
    var responseURL: String? { nil }
    var sessionID: String? { nil }

    init(providerID: String, idToken: String? = nil, accessToken: String? = nil, secret: String? = nil) {
        self.providerID = providerID
        self.idToken = idToken
        self.accessToken = accessToken
        self.secret = secret
        super.init(provider: providerID)
    }

    /// As the SDK's `VerifyAssertionRequest` writes the provider's tokens: `id_token`,
    /// `access_token`, `oauth_token_secret`, `providerId`.
    var postBody: String {
        var items = [URLQueryItem(name: "providerId", value: providerID)]
        if let idToken { items.append(URLQueryItem(name: "id_token", value: idToken)) }
        if let accessToken { items.append(URLQueryItem(name: "access_token", value: accessToken)) }
        if let secret { items.append(URLQueryItem(name: "oauth_token_secret", value: secret)) }
        var components = URLComponents()
        components.queryItems = items
        return components.query ?? ""
    }
}

/// Google sign-in's credential: the ID token and access token Google Sign-In gave the app.
open class GoogleAuthProvider: NSObject {
    public static let id = "google.com"
    open class func credential(withIDToken idToken: String, accessToken: String) -> AuthCredential {
        ProviderTokenCredential(providerID: id, idToken: idToken, accessToken: accessToken)
    }
    @available(*, unavailable)
    override public init() { fatalError("This class is not meant to be initialized.") }
}

/// Facebook Login's credential: its access token.
open class FacebookAuthProvider: NSObject {
    public static let id = "facebook.com"
    open class func credential(withAccessToken accessToken: String) -> AuthCredential {
        ProviderTokenCredential(providerID: id, accessToken: accessToken)
    }
    @available(*, unavailable)
    override public init() { fatalError("This class is not meant to be initialized.") }
}

/// GitHub's credential: an OAuth access token.
open class GitHubAuthProvider: NSObject {
    public static let id = "github.com"
    open class func credential(withToken token: String) -> AuthCredential {
        ProviderTokenCredential(providerID: id, accessToken: token)
    }
    @available(*, unavailable)
    override public init() { fatalError("This class is not meant to be initialized.") }
}

/// Twitter's credential: an OAuth 1.0a token and its secret.
open class TwitterAuthProvider: NSObject {
    public static let id = "twitter.com"
    open class func credential(withToken token: String, secret: String) -> AuthCredential {
        ProviderTokenCredential(providerID: id, accessToken: token, secret: secret)
    }
    @available(*, unavailable)
    override public init() { fatalError("This class is not meant to be initialized.") }
}
