import DeviceOS
import FirebaseCore
import Foundation
import IdentityToolkitAPI

/// What `signIn(with:uiDelegate:)`, `link(with:uiDelegate:)` and `reauthenticate(with:uiDelegate:)`
/// ask for a credential (FirebaseAuth 12.19 AuthProvider/FederatedAuthProvider.swift).
public protocol FederatedAuthProvider: NSObjectProtocol {
    /// A credential from the provider's web flow, presented through `uiDelegate` (the default
    /// presenter when nil).
    func credential(with uiDelegate: (any AuthUIDelegate)?) async throws -> AuthCredential
}

/// An identity provider signed in to through its web page, and the factories of OAuth credentials
/// (FirebaseAuth 12.19 AuthProvider/OAuthProvider.swift). The web flow opens the auth handler page
/// (the backend's `/emulator/auth/handler` with `useEmulator`, else
/// `https://<authDomain>/__/auth/handler`), where the user picks or makes the provider's account;
/// the page redirects to the app's scheme, the app hands the URL to `Auth.canHandle(_:)`, and the
/// provider's answer becomes a credential for signInWithIdp (docs/identity-providers.md).
///
/// Its `withProviderID:` factories are Objective-C only in 12.19 (`@available(swift 1000.0)`):
/// the Apple guide's `credential(withProviderID:IDToken:rawNonce:)` is the Objective-C name and
/// does not build for iOS in Swift; here they are refused with the Swift spelling.
open class OAuthProvider: NSObject, @preconcurrency FederatedAuthProvider {
    /// `OAuthProvider.id`: "OAuth", as the SDK's (not a provider's ID: Apple's is `AuthProviderID.apple.rawValue`).
    public static let id = "OAuth"

    /// The OAuth scopes the page asks for (the handler URL's `scopes`, comma-joined; `[""]` at first, as in the SDK).
    open var scopes: [String]?
    /// The provider's custom parameters (the handler URL's `customParameters`, JSON).
    open var customParameters: [String: String]?
    /// The provider this instance signs in to (`google.com`, `microsoft.com`, `oidc.…`).
    public let providerID: String

    private let auth: Auth
    /// The scheme the page returns to: the reversed client ID when `Info.plist` registers it, else
    /// the encoded app ID (as the SDK decides it, once, here).
    private let callbackScheme: String
    private let usingClientIDScheme: Bool
    /// Where the SDK stops the app with `fatalError` in its initializer, the error every web flow
    /// of this instance gives instead.
    private let refusal: AuthError?

    /// `init(providerID:auth:)`.
    public init(providerID: String, auth: Auth = Auth.auth()) {
        self.auth = auth
        self.providerID = providerID
        scopes = [""]
        customParameters = [:]
        // Facebook and Apple are refused through generic IDP unless the app uses the emulator.
        if auth.emulatorHost == nil, providerID == FacebookAuthProvider.id || providerID == AuthProviderID.apple.rawValue {
            let name = providerID == FacebookAuthProvider.id ? "Facebook" : "Apple"
            let use = providerID == FacebookAuthProvider.id
                ? "the Facebook TOS dictate that you must use the Facebook iOS SDK for Facebook login"
                : "You must use the Apple SDK for Sign in with Apple"
            refusal = AuthError(.invalidProviderID, "Sign in with \(name) is not supported via generic IDP; \(use) (the SDK stops the app with fatalError here)")
        } else {
            refusal = nil
        }
        callbackScheme = CallbackScheme.derive(options: auth.options, registered: auth.host.urlSchemes)
        usingClientIDScheme = callbackScheme == auth.options.reversedClientIDScheme
    }

    /// `init(providerID:auth:)` with an `AuthProviderID`.
    public convenience init(providerID: AuthProviderID, auth: Auth = Auth.auth()) {
        self.init(providerID: providerID.rawValue, auth: auth)
    }

    /// `provider(providerID:)`: an instance for the default app's `Auth`.
    open class func provider(providerID: AuthProviderID) -> OAuthProvider {
        OAuthProvider(providerID: providerID.rawValue, auth: Auth.auth())
    }

    /// `provider(providerID:auth:)`.
    open class func provider(providerID: AuthProviderID, auth: Auth) -> OAuthProvider {
        OAuthProvider(providerID: providerID.rawValue, auth: auth)
    }

    @available(*, unavailable, message: "Objective-C only in FirebaseAuth 12.19; in Swift write OAuthProvider.provider(providerID: .custom(\"…\")) or OAuthProvider(providerID:)")
    open class func provider(providerID: String) -> OAuthProvider { OAuthProvider(providerID: providerID, auth: Auth.auth()) }

    @available(*, unavailable, message: "Objective-C only in FirebaseAuth 12.19; in Swift write OAuthProvider.provider(providerID: .custom(\"…\"), auth:) or OAuthProvider(providerID:auth:)")
    open class func provider(providerID: String, auth: Auth) -> OAuthProvider { OAuthProvider(providerID: providerID, auth: auth) }

    // MARK: The web flow

    /// `getCredentialWith(_:completion:)`: the provider's page presented through `uiDelegate`
    /// (the default presenter when nil), and the credential its answer makes, on the main queue.
    /// A callback scheme the app's `Info.plist` does not register is `appConfigurationError`
    /// (17999) before any page (the SDK stops the app with `fatalError`); a page closed without a
    /// redirect reaching `Auth.canHandle(_:)` is `webContextCancelled` (17058); a page already
    /// presented, the same; the page's errors as the SDK maps them.
    open func getCredentialWith(_ uiDelegate: (any AuthUIDelegate)?, completion: ((AuthCredential?, (any Error)?) -> Void)? = nil) {
        let flow = WebFlowCall(self), presenter = HandedOver(uiDelegate)
        complete(completion) { try await AuthError.forApp { try await flow.run(presenter.value) } }
    }

    /// `credential(with:)`: ``getCredentialWith(_:completion:)`` as an async call.
    @MainActor
    open func credential(with uiDelegate: (any AuthUIDelegate)?) async throws -> AuthCredential {
        try await withCheckedThrowingContinuation { continuation in
            getCredentialWith(uiDelegate) { credential, error in
                if let credential { continuation.resume(returning: credential) } else {
                    continuation.resume(throwing: error ?? AuthError(.internalError, "the web flow ended with neither a credential nor an error"))
                }
            }
        }
    }

    /// What one web flow needs of this instance, taken when it starts (the scopes and custom
    /// parameters as they are then).
    private struct WebFlowCall: @unchecked Sendable {
        // `@unchecked`: the Auth keeps its state under its own locks, as the SDK's queues do.
        let auth: Auth
        let providerID: String
        let callbackScheme: String
        let usingClientIDScheme: Bool
        let refusal: AuthError?
        let scopes: [String]?
        let customParameters: [String: String]?

        init(_ provider: OAuthProvider) {
            auth = provider.auth
            providerID = provider.providerID
            callbackScheme = provider.callbackScheme
            usingClientIDScheme = provider.usingClientIDScheme
            refusal = provider.refusal
            scopes = provider.scopes
            customParameters = provider.customParameters
        }

        /// The SDK's `getCredentialWith` and `getHeadfulLiteUrl`: the scheme checked, a new event
        /// and session, the auth domain, the handler URL, the page presented until its redirect.
        func run(_ uiDelegate: (any AuthUIDelegate)?) async throws(AuthError) -> AuthCredential {
            if let refusal { throw refusal }
            guard CallbackScheme.isRegistered(callbackScheme, in: auth.host.urlSchemes) else {
                throw AuthError(.appConfigurationError, """
                    Please register custom URL scheme \(callbackScheme) in the app's Info.plist file \
                    (CFBundleURLTypes → CFBundleURLSchemes); the SDK stops the app with fatalError here
                    """)
            }
            let eventID = OAuthWebFlow.newSessionID(), sessionID = OAuthWebFlow.newSessionID()
            let options = auth.options
            let domain = try await auth.webAuthDomain(try auth.backend)
            let request = OAuthWebFlow.Request(
                apiKey: options.apiKey ?? "", bundleID: auth.host.bundleID, sessionID: sessionID, userAgent: auth.userAgent,
                eventID: eventID, providerID: providerID, clientID: usingClientIDScheme ? options.clientID : nil, appID: options.googleAppID,
                tenantID: auth.tenantID, scopes: scopes, customParameters: customParameters, languageCode: auth.languageCode)
            guard let url = OAuthWebFlow.handlerURL(domain: domain, emulator: auth.emulatorHost != nil, request) else {
                throw AuthError(.internalError, "cannot build the handler URL for \(providerID)")
            }
            switch try await auth.presentPage(url, eventID: eventID, scheme: callbackScheme, authType: .signInWithRedirect,
                                              uiDelegate: uiDelegate ?? HeadlessPresenter()) {
            case .link(let link): return OAuthCredential(providerID: providerID, sessionID: sessionID, responseURL: link)
            case .failure(let error): throw error
            case .notOurs(let refusal): throw AuthError(.internalError, refusal.message)
            case .token: throw AuthError(.internalError, "the provider's page answered with a reCAPTCHA token")
            }
        }
    }

    // MARK: Credentials

    /// `OAuthProvider.appleCredential(withIDToken:rawNonce:fullName:)`: the Apple guide's sign-in.
    public static func appleCredential(withIDToken idToken: String, rawNonce: String?, fullName: PersonNameComponents?) -> OAuthCredential {
        OAuthCredential(providerID: AuthProviderID.apple.rawValue, idToken: idToken, rawNonce: rawNonce, fullName: fullName)
    }

    @available(*, unavailable, renamed: "credential(providerID:idToken:rawNonce:)",
               message: "Objective-C only in FirebaseAuth 12.19 (IDToken: is the Objective-C name); in Swift write credential(providerID: .apple, idToken:rawNonce:)")
    public static func credential(withProviderID providerID: String, IDToken idToken: String, rawNonce: String) -> OAuthCredential {
        OAuthCredential(providerID: providerID, idToken: idToken, rawNonce: rawNonce, fullName: nil)
    }

    @available(*, unavailable, renamed: "credential(providerID:idToken:rawNonce:)",
               message: "Objective-C only in FirebaseAuth 12.19; in Swift write credential(providerID: .apple, idToken:rawNonce:)")
    public static func credential(withProviderID providerID: String, idToken: String, rawNonce: String) -> OAuthCredential {
        OAuthCredential(providerID: providerID, idToken: idToken, rawNonce: rawNonce, fullName: nil)
    }

    /// `OAuthProvider.credential(providerID:idToken:rawNonce:accessToken:)`: Apple's identity token and
    /// the raw nonce (reauthentication, linking).
    public static func credential(providerID: AuthProviderID, idToken: String, rawNonce: String,
                                  accessToken: String? = nil) -> OAuthCredential {
        OAuthCredential(providerID: providerID.rawValue, idToken: idToken, rawNonce: rawNonce, accessToken: accessToken, fullName: nil)
    }

    /// `OAuthProvider.credential(providerID:idToken:accessToken:)`: an identity token without a nonce.
    public static func credential(providerID: AuthProviderID, idToken: String, accessToken: String? = nil) -> OAuthCredential {
        OAuthCredential(providerID: providerID.rawValue, idToken: idToken, rawNonce: nil, accessToken: accessToken, fullName: nil)
    }

    /// `OAuthProvider.credential(providerID:accessToken:)`: an access token alone.
    public static func credential(providerID: AuthProviderID, accessToken: String) -> OAuthCredential {
        OAuthCredential(providerID: providerID.rawValue, idToken: nil, rawNonce: nil, accessToken: accessToken, fullName: nil)
    }
}

extension Auth {
    /// `AuthWebUtils.fetchAuthDomain`: with the emulator, its host:port (no request); else
    /// `customAuthDomain` if getProjectConfig's authorized domains list it (17038 if not), or the
    /// first authorized domain ending in `firebaseapp.com`, then `web.app`.
    @inline(never)
    func webAuthDomain(_ backend: BackendClient) async throws(AuthError) -> String {
        if let emulator = emulatorHost { return emulator }
        let config = try await backend.call(GetProjectConfigRequest())
        let domains = config.authorizedDomains ?? []
        if let custom = customAuthDomain { return try ReCAPTCHAFlow.authDomain(custom: custom, from: domains) }
        guard let domain = ReCAPTCHAFlow.authDomain(from: domains) else {
            throw AuthError(.internalError, "getProjectConfig lists no firebaseapp.com or web.app domain: \(domains)")
        }
        return domain
    }

    /// The SDK's `AuthURLPresenter.present`: `url` shown through `uiDelegate` until the redirect
    /// for `eventID` reaches `canHandle(_:)` (its reading), or the page closes without one
    /// (`webContextCancelled`, 17058). One page at a time: a second is 17058 too.
    @inline(never)
    func presentPage(_ url: URL, eventID: String, scheme: String, authType: WebAuthType,
                     uiDelegate: any AuthUIDelegate) async throws(AuthError) -> ReCAPTCHAFlow.Redirect {
        let outcome = try beginPresentation(eventID: eventID, scheme: scheme, authType: authType)
        let host = self.host
        let auth = WeakAuth(auth: self)
        // The delegate is the presenting task's from here on (this call only waits for the outcome).
        let presenter = HandedOver(uiDelegate)
        let presenting = Task {
            await presenter.value.present(url, host: host)
            // The web view closed. If no redirect reached canHandle(url), the user cancelled
            // (or the app never passed the URL to Auth, and the page could not close itself).
            auth.auth?.endPresentation(eventID: eventID)
        }
        let result = await outcome.value
        presenting.cancel()
        guard let result else {
            let page = authType == .verifyApp ? "the reCAPTCHA page" : "the sign-in page"
            throw AuthError(.webContextCancelled, "\(page) closed without a redirect reaching Auth.canHandle(url): the user cancelled, or the app does not pass opened URLs to Auth")
        }
        return result
    }
}

// MARK: Signing in, linking and reauthenticating through a provider's web flow (Auth.swift and
// User.swift of 12.19: the provider's credential, then the call with that credential)

extension Auth {
    /// `signIn(with:uiDelegate:)`: the provider's credential (its web flow), then ``signIn(with:)``.
    @discardableResult
    public func signIn(with provider: any FederatedAuthProvider, uiDelegate: (any AuthUIDelegate)?) async throws -> AuthDataResult {
        let credential = try await provider.credential(with: uiDelegate)
        return try await signIn(with: credential)
    }
}

extension User {
    /// `link(with:uiDelegate:)`: the provider's credential (its web flow), then ``link(with:)``.
    @discardableResult
    public func link(with provider: any FederatedAuthProvider, uiDelegate: (any AuthUIDelegate)?) async throws -> AuthDataResult {
        let credential = try await provider.credential(with: uiDelegate)
        return try await link(with: credential)
    }

    /// `reauthenticate(with:uiDelegate:)`: the provider's credential (its web flow), then
    /// ``reauthenticate(with:)``.
    @discardableResult
    public func reauthenticate(with provider: any FederatedAuthProvider, uiDelegate: (any AuthUIDelegate)?) async throws -> AuthDataResult {
        let credential = try await provider.credential(with: uiDelegate)
        return try await reauthenticate(with: credential)
    }
}
