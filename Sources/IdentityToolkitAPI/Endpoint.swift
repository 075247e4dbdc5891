import Foundation

/// One Identity Toolkit (or Secure Token) endpoint: where it lives, its name, and its HTTP method.
///
/// The real services live on three hosts; the Firebase Auth Emulator (and `authsim backend`) puts
/// the host in the path instead (`http://127.0.0.1:9099/www.googleapis.com/identitytoolkit/v3/…`).
/// ``path`` is that emulator-style path, the one the backend routes on; ``url(emulator:apiKey:projectID:query:)``
/// builds what a client calls, as the SDK's `IdentityToolkitRequest.requestURL()` does.
///
/// ```swift
/// IdentityToolkitEndpoint.verifyClient.path
/// // "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient"
/// IdentityToolkitEndpoint.verifyClient.url(emulator: "127.0.0.1:9099", apiKey: "K")
/// // http://127.0.0.1:9099/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient?key=K
/// ```
package struct IdentityToolkitEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Which API an endpoint belongs to: its host and path prefix.
    package enum Service: Sendable, Hashable {
        /// `www.googleapis.com/identitytoolkit/v3/relyingparty/<name>`: the legacy API most of the
        /// iOS SDK's calls go to.
        case relyingParty
        /// `identitytoolkit.googleapis.com/v1/<name>`: the current API (`accounts:…`).
        case v1
        /// `identitytoolkit.googleapis.com/v2/<name>`: Identity Platform (multi-factor, reCAPTCHA
        /// config, token revocation); the SDK's `useIdentityPlatform: true`.
        case v2
        /// `identitytoolkit.googleapis.com/v1/projects/{project}/<name>`: what the Admin SDKs call.
        case v1Project
        /// `identitytoolkit.googleapis.com/v1/projects/{project}/tenants/{tenant}/<name>`: the same
        /// calls for one tenant's users (the Admin SDKs' `auth_for_tenant`).
        case v1Tenant
        /// `identitytoolkit.googleapis.com/v2/projects/{project}/<name>`: Identity Platform's
        /// project administration (tenant management).
        case v2Project
        /// `securetoken.googleapis.com/v1/<name>`: ID-token refresh.
        case secureToken
        /// `/emulator/v1/projects/{project}/<name>`: the Auth Emulator's own (no host, no API key).
        case emulator

        /// The production host.
        package var host: String? {
            switch self {
            case .relyingParty: "www.googleapis.com"
            case .v1, .v2, .v1Project, .v1Tenant, .v2Project: "identitytoolkit.googleapis.com"
            case .secureToken: "securetoken.googleapis.com"
            case .emulator: nil
            }
        }

        /// The path below the host, before the endpoint's name (`{project}` where the project goes).
        var prefix: String { prefix(projectID: "{project}") }

        /// ``prefix`` with the project filled in (built, not searched: `replacingOccurrences`
        /// went through Foundation's locale-aware search on every request, 1.9 % of the CPU of
        /// ten thousand sign-ins).
        func prefix(projectID: String?) -> String {
            switch self {
            case .relyingParty: "/identitytoolkit/v3/relyingparty/"
            case .v1: "/v1/"
            case .v2: "/v2/"
            case .v1Project: "/v1/projects/\(projectID ?? "")/"
            case .v1Tenant: "/v1/projects/\(projectID ?? "")/tenants/{tenant}/"
            case .v2Project: "/v2/projects/\(projectID ?? "")/"
            case .secureToken: "/v1/"
            case .emulator: "/emulator/v1/projects/\(projectID ?? "")/"
            }
        }

        /// Whether calls carry the API key (`?key=` or `x-goog-api-key`). Admin calls carry an
        /// OAuth bearer token instead; the emulator's own endpoints carry nothing.
        package var needsAPIKey: Bool {
            switch self {
            case .relyingParty, .v1, .v2, .secureToken: true
            case .v1Project, .v1Tenant, .v2Project, .emulator: false
            }
        }
    }

    package enum Method: String, Sendable, Hashable {
        case get = "GET", post = "POST", delete = "DELETE", patch = "PATCH"
    }

    package let service: Service
    /// `verifyClient`, `accounts:sendVerificationCode`, `accounts/mfaSignIn:start`, `token`, …
    package let name: String
    package let method: Method

    package init(_ service: Service, _ name: String, method: Method = .post) {
        self.service = service
        self.name = name
        self.method = method
    }

    /// The emulator-style path, with `{project}` where an Admin or emulator endpoint takes the
    /// project ID: `/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient`,
    /// `/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:lookup`.
    package var path: String {
        (service.host.map { "/" + $0 } ?? "") + service.prefix + name
    }

    /// ``path`` with the project filled in.
    package func path(projectID: String?) -> String {
        (service.host.map { "/" + $0 } ?? "") + service.prefix(projectID: projectID) + name
    }

    /// What a client calls: `https://<host>/<path>?key=<apiKey>` in production,
    /// `http://<emulator>/<host>/<path>?key=<apiKey>` against an emulator (`host:port`). `query`
    /// items follow the key, in order. `nil` when the parts do not make a URL.
    package func url(emulator: String?, apiKey: String?, projectID: String? = nil,
                    query: [URLQueryItem] = []) -> URL? {
        // Built as text: URLComponents cost 2.5% of the CPU of ten thousand concurrent sign-ins.
        var text: String
        if let emulator {
            text = "http://\(emulator)\(path(projectID: projectID))"
        } else if let host = service.host {
            text = "https://\(host)\(service.prefix(projectID: projectID))\(name)"
        } else {
            return nil
        }
        var separator = "?"
        if service.needsAPIKey, let apiKey {
            text += "?key=" + Self.queryEncoded(apiKey)
            separator = "&"
        }
        for item in query {
            text += separator + Self.queryEncoded(item.name) + "=" + Self.queryEncoded(item.value ?? "")
            separator = "&"
        }
        return URL(string: text)
    }

    /// A query name or value, percent-encoded but for the unreserved characters (RFC 3986).
    static func queryEncoded(_ text: String) -> String {
        if text.utf8.allSatisfy(isUnreserved) { return text }
        return text.addingPercentEncoding(withAllowedCharacters: unreservedSet) ?? text
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
    private static let unreservedSet = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    package var description: String { "\(method.rawValue) \(path)" }
}

extension IdentityToolkitEndpoint {
    // MARK: What the iOS SDK calls (FirebaseAuth 12.19, Backend/RPC)

    /// `VerifyClientRequest`: an APNs token for a receipt; the backend pushes the secret.
    package static let verifyClient = Self(.relyingParty, "verifyClient")
    /// `GetProjectConfigRequest` (a GET: the SDK sends no body).
    package static let getProjectConfig = Self(.relyingParty, "getProjectConfig", method: .get)
    /// `SendVerificationCodeRequest`.
    package static let sendVerificationCode = Self(.relyingParty, "sendVerificationCode")
    /// `VerifyPhoneNumberRequest` (= `accounts:signInWithPhoneNumber`).
    package static let verifyPhoneNumber = Self(.relyingParty, "verifyPhoneNumber")
    /// `VerifyAssertionRequest` (= `accounts:signInWithIdp`).
    package static let verifyAssertion = Self(.relyingParty, "verifyAssertion")
    /// `GetAccountInfoRequest` (= `accounts:lookup`).
    package static let getAccountInfo = Self(.relyingParty, "getAccountInfo")
    /// `SetAccountInfoRequest` (= `accounts:update`).
    package static let setAccountInfo = Self(.relyingParty, "setAccountInfo")
    /// `DeleteAccountRequest` (= `accounts:delete`).
    package static let deleteAccount = Self(.relyingParty, "deleteAccount")
    /// `VerifyCustomTokenRequest` (= `accounts:signInWithCustomToken`).
    package static let verifyCustomToken = Self(.relyingParty, "verifyCustomToken")
    /// `SignUpNewUserRequest` (= `accounts:signUp`): an anonymous user, or an email and password.
    package static let signUpNewUser = Self(.relyingParty, "signupNewUser")
    /// `VerifyPasswordRequest` (= `accounts:signInWithPassword`).
    package static let verifyPassword = Self(.relyingParty, "verifyPassword")
    /// `GetOOBConfirmationCodeRequest` (= `accounts:sendOobCode`).
    package static let getOobConfirmationCode = Self(.relyingParty, "getOobConfirmationCode")
    /// `CreateAuthURIRequest` (= `accounts:createAuthUri`).
    package static let createAuthUri = Self(.relyingParty, "createAuthUri")
    /// `EmailLinkSignInRequest` (= `accounts:signInWithEmailLink`).
    package static let emailLinkSignin = Self(.relyingParty, "emailLinkSignin")
    /// `ResetPasswordRequest` (= `accounts:resetPassword`).
    package static let resetPassword = Self(.relyingParty, "resetPassword")
    /// `GetRecaptchaConfigRequest`: `GET …/v2/recaptchaConfig?key=…&clientType=…&version=…`.
    package static let getRecaptchaConfig = Self(.v2, "recaptchaConfig", method: .get)
    /// `RevokeTokenRequest`.
    package static let revokeToken = Self(.v2, "accounts:revokeToken")
    /// `StartMFAEnrollmentRequest`.
    package static let startMFAEnrollment = Self(.v2, "accounts/mfaEnrollment:start")
    /// `FinalizeMFAEnrollmentRequest`.
    package static let finalizeMFAEnrollment = Self(.v2, "accounts/mfaEnrollment:finalize")
    /// `WithdrawMFARequest`.
    package static let withdrawMFA = Self(.v2, "accounts/mfaEnrollment:withdraw")
    /// `StartMFASignInRequest`.
    package static let startMFASignIn = Self(.v2, "accounts/mfaSignIn:start")
    /// `FinalizeMFASignInRequest`.
    package static let finalizeMFASignIn = Self(.v2, "accounts/mfaSignIn:finalize")
    /// `SecureTokenRequest`: a refresh token for a fresh ID token.
    package static let secureToken = Self(.secureToken, "token")

    // MARK: The same calls under their v1 names (REST clients, the Auth Emulator's own paths)

    package static let accountsSendVerificationCode = Self(.v1, "accounts:sendVerificationCode")
    package static let accountsSignInWithPhoneNumber = Self(.v1, "accounts:signInWithPhoneNumber")
    package static let accountsSignInWithIdp = Self(.v1, "accounts:signInWithIdp")
    package static let accountsLookup = Self(.v1, "accounts:lookup")
    package static let accountsUpdate = Self(.v1, "accounts:update")
    package static let accountsDelete = Self(.v1, "accounts:delete")
    package static let accountsSignInWithCustomToken = Self(.v1, "accounts:signInWithCustomToken")
    package static let accountsSignUp = Self(.v1, "accounts:signUp")
    package static let accountsSignInWithPassword = Self(.v1, "accounts:signInWithPassword")
    package static let accountsSendOobCode = Self(.v1, "accounts:sendOobCode")
    package static let accountsCreateAuthUri = Self(.v1, "accounts:createAuthUri")
    package static let accountsResetPassword = Self(.v1, "accounts:resetPassword")
    package static let accountsSignInWithEmailLink = Self(.v1, "accounts:signInWithEmailLink")

    // MARK: What the Admin SDKs call (`/v1/projects/{project}/…`, bearer token)

    /// Create a user (`auth.create_user`).
    package static let adminCreateAccount = Self(.v1Project, "accounts")
    package static let adminLookup = Self(.v1Project, "accounts:lookup")
    package static let adminUpdate = Self(.v1Project, "accounts:update")
    package static let adminDelete = Self(.v1Project, "accounts:delete")
    package static let adminBatchDelete = Self(.v1Project, "accounts:batchDelete")
    /// List users a page at a time (`auth.list_users`): `GET …?maxResults=…&nextPageToken=…`.
    package static let adminBatchGet = Self(.v1Project, "accounts:batchGet", method: .get)
    /// Import users (`auth.import_users`).
    package static let adminBatchCreate = Self(.v1Project, "accounts:batchCreate")
    package static let adminQuery = Self(.v1Project, "accounts:query")
    /// An email action link made and returned, not sent (`auth.generate_password_reset_link`,
    /// `generate_email_verification_link`, `generate_sign_in_with_email_link`: `returnOobLink`).
    package static let adminSendOobCode = Self(.v1Project, "accounts:sendOobCode")

    /// The same call for one tenant's users (`…/projects/{p}/tenants/{t}/accounts…`).
    package var inTenant: Self {
        precondition(service == .v1Project, "\(name) is not an Admin SDK call")
        return Self(.v1Tenant, name, method: method)
    }

    // MARK: The Auth Emulator's own

    /// The SMS outbox: `GET /emulator/v1/projects/{project}/verificationCodes`.
    package static let emulatorVerificationCodes = Self(.emulator, "verificationCodes", method: .get)
    /// The email outbox: `GET /emulator/v1/projects/{project}/oobCodes`.
    package static let emulatorOobCodes = Self(.emulator, "oobCodes", method: .get)

    /// The same emulator endpoint for one tenant (`…/projects/{project}/tenants/{tenant}/…`).
    package var inEmulatorTenant: Self {
        precondition(service == .emulator, "\(name) is not one of the emulator's own")
        return Self(.emulator, "tenants/{tenant}/" + name, method: method)
    }
}
