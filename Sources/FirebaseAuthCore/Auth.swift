import DeviceOS
import FirebaseCore
import Foundation
import HTTPTransport
import IdentityToolkitAPI
import Synchronization
import Utilities

/// `auth.settings`: FirebaseAuth 12.19's `AuthSettings` (Auth/AuthSettings.swift), an `NSObject`
/// that copies itself (`NSCopying`). `@unchecked Sendable`: its one flag is kept under a lock.
public final class AuthSettings: NSObject, NSCopying {
    private let disabled: Mutex<Bool>

    /// Internal, as the SDK's: an app reads `auth.settings`, it does not make one.
    override init() { disabled = Mutex(false) }

    /// A copy with the same flag (the SDK's `settings` is `@NSCopying`: setting it copies).
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = AuthSettings()
        copy.appVerificationDisabledForTesting = appVerificationDisabledForTesting
        return copy
    }

    /// Skips APNs, verifyClient and reCAPTCHA (but not the notification probe): only test phone
    /// numbers work.
    public var appVerificationDisabledForTesting: Bool {
        get { disabled.withLock { $0 } }
        set { disabled.withLock { $0 = newValue } }
    }

    /// The same flag as ``appVerificationDisabledForTesting``, under its other name.
    public var isAppVerificationDisabledForTesting: Bool {
        get { appVerificationDisabledForTesting }
        set { appVerificationDisabledForTesting = newValue }
    }
}

/// An app credential: the receipt verifyClient gave, and the secret the silent push carried.
package struct AppCredential: Sendable, Hashable, Codable {
    package let receipt: String
    package let secret: String
}

/// FirebaseAuth's `Auth`, for phone sign-in's app verification.
///
/// ```swift
/// Auth.auth().setAPNSToken(deviceToken, type: .sandbox)
/// let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber("+16505551234", uiDelegate: nil)
/// let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: "123456")
/// let result = try await Auth.auth().signIn(with: credential)
/// ```
public final class Auth: NSObject {
    /// The app this `Auth` belongs to; weak, as in the SDK (the app owns its `Auth`).
    public weak let app: FirebaseApp?
    /// The app's options and host, kept here: an `Auth` outlives an app nobody holds.
    let options: FirebaseOptions
    /// The app around this `Auth`: its device, delegate and files (authsim's; the SDK has UIApplication).
    package let host: AppHost
    /// The app's name (`__FIRAPP_DEFAULT` for the default app): the keychain's user key starts with it.
    let appName: String
    /// How this `Auth` talks HTTP: its host's network.
    let transport: any HTTPTransport

    /// `auth.settings`: optional, as in the SDK (`Auth.auth().settings?.isAppVerificationDisabledForTesting = true`);
    /// never nil unless the app sets it so. Setting it stores a copy.
    public var settings: AuthSettings? {
        get { state.withLock { $0.settings.value } }
        set {
            let copy = HandedOver(newValue?.copy() as? AuthSettings)
            state.withLock { $0.settings = copy }
        }
    }

    /// `customAuthDomain`: the domain (a URL or a host) whose `/__/auth/handler` page the reCAPTCHA
    /// fallback opens instead of the project's `firebaseapp.com` one; it must be one of the
    /// project's authorized domains (else `unauthorizedDomain`, 17038). With `useEmulator` the
    /// emulator's host is used, as the SDK does.
    public var customAuthDomain: String? {
        get { state.withLock { $0.customAuthDomain } }
        set { state.withLock { $0.customAuthDomain = newValue } }
    }

    /// The tenant whose users this Auth signs in (nil: the project's own). Each request 12.19
    /// sends with `tenantId` carries it (IdentityToolkitRequest.swift 63), a user signed in is of
    /// it (`User.tenantID`), and `updateCurrentUser(_:)` refuses a user of another tenant
    /// (`tenantIDMismatch`, 17072). A restored user's tenant becomes the Auth's, as in the SDK.
    public var tenantID: String? {
        get { state.withLock { $0.tenantID } }
        set { state.withLock { $0.tenantID = newValue } }
    }

    /// Whether test mode is on (`settings?.isAppVerificationDisabledForTesting`).
    var isAppVerificationDisabledForTesting: Bool { settings?.isAppVerificationDisabledForTesting == true }

    struct State {
        /// Not `Sendable`, as in 12.19; it guards its own state, and is handed out whole.
        var settings = HandedOver<AuthSettings?>(AuthSettings())
        var languageCode: String?
        /// The project's reCAPTCHA config, as the last `getRecaptchaConfig` answered it.
        var recaptchaConfig: RecaptchaConfig?
        /// The site key of the RecaptchaEnterprise client `fetchClient` gave (kept after its first
        /// success, as the SDK keeps `recaptchaClient`).
        var recaptchaClientKey: String?
        /// `userAccessGroup` and `shareAuthStateAcrossDevices` (AuthPersistence.swift).
        var userAccessGroup: String?
        var shareAuthStateAcrossDevices = false
        /// `customAuthDomain`.
        var customAuthDomain: String?
        /// `tenantID`.
        var tenantID: String?
        /// The APNs token and the asks waiting for it (the rules).
        var apnsToken = APNSTokenBook<OneShot<APNSTokenWait>>()
        /// The receipts waiting for their push and the credential a push completed (the rules).
        var credentials = AppCredentialBook()
        var credentialWaiters: [String: [OneShot<AppCredential?>]] = [:]
        /// The notification-forwarding probe (the rule), holding its wait while it runs.
        var probe = ForwardingProbe<OneShot<Bool>>()
        /// The current user (a `User` is not `Sendable`, as in 12.19; it is kept here and handed
        /// out whole, and guards its own state).
        var currentUser = HandedOver<User?>(nil)
        var emulator: String?
        /// The reCAPTCHA page presented, and the events already handled (the rules).
        var presentations = PresentationBook()
        /// The presented page's wait for its redirect.
        var presentationOutcome: OneShot<ReCAPTCHAFlow.Redirect?>?
        var lastVerification: AppVerification?
        var lastFallback: ReCAPTCHAFallbackReason?
        /// The auth-state and ID-token listeners (AuthListeners.swift).
        var listeners = AuthListenerBook()
        /// Listener calls waiting for the main actor, in order; made with the first listener, so
        /// that an app without listeners (every sign-in of `authsim bench`) pays for no task.
        var listenerDeliveries: AsyncStream<AuthListenerDelivery>.Continuation?
    }
    let state = Mutex(State())

    /// How long the SDK waits for an APNs token.
    static let apnsTokenTimeout: Duration = .seconds(5)
    /// How long the forwarding probe waits.
    static let probeTimeout: Duration = .seconds(1)

    /// Made by ``auth(app:)`` only: one per app, kept by the app.
    init(app: FirebaseApp) {
        self.app = app
        let options = app.options
        self.options = options
        host = app.host
        transport = app.host.transport
        requestHeaders = Self.requestHeaders(bundleID: app.host.bundleID, appID: options.googleAppID,
                                             language: app.host.preferredLocalizations.first)
        appName = app.name
        super.init()
        delegateHook.auth = self
        app.host.registerAppDelegateInterceptor(delegateHook)
        restoreFromKeychain()
    }

    deinit { state.withLock { $0.listenerDeliveries?.finish() } }

    /// What the app delegate hands this `Auth` (the SDK's `AuthAppDelegateProxy`): held here, and
    /// weakly by the host, so it goes with this `Auth`.
    private let delegateHook = AuthAppDelegateHook()

    /// The header fields every request carries (`AuthBackend.request(for:…)`, AuthBackend.swift
    /// 81–106): `X-Client-Version`, `X-Ios-Bundle-Identifier` (the app's bundle, not
    /// GoogleService-Info.plist's), `X-Firebase-GMPID` and `Accept-Language`. `X-Firebase-Locale`
    /// is added per request; `X-Firebase-AppCheck` goes only with App Check (not modelled) and
    /// `X-Firebase-Client` is FirebaseCore's heartbeat telemetry (not modelled; nothing checks it).
    let requestHeaders: [(name: String, value: String)]

    static func requestHeaders(bundleID: String, appID: String, language: String?) -> [(name: String, value: String)] {
        var headers = [("X-Client-Version", "iOS/FirebaseSDK/\(sdkVersion)/FirebaseCore-iOS"), ("X-Ios-Bundle-Identifier", bundleID),
                       ("X-Firebase-GMPID", appID)]
        if let language { headers.append(("Accept-Language", language)) }
        return headers
    }

    /// The `Auth` of the default app: configure it first (`FirebaseApp.configure()`), or this stops
    /// the program with the SDK's message (Auth.swift, `auth()`), adding why on Linux.
    public static func auth() -> Auth {
        guard let app = FirebaseApp.app() else {
            fatalError("""
                The default FirebaseApp instance must be configured before the default Auth instance can be initialized. \
                One way to ensure this is to call `FirebaseApp.configure()` in the App Delegate's \
                `application(_:didFinishLaunchingWithOptions:)`. (authsim: the default app is per simulated app; a test \
                configures it inside the simulated app AuthsimTesting gives it, and work that hops to a DispatchQueue by \
                itself leaves that app behind.)
                """)
        }
        return auth(app: app)
    }

    /// The `Auth` of `app`: one per app, made on first use and kept by the app (so it goes with the
    /// app, as in the SDK, rather than in a registry that never forgets). An app whose process names
    /// authsim's backend (AuthsimTesting's, a test host's) talks to it as `useEmulator(withHost:port:)`
    /// does, with app verification left on (the app proves itself as on a phone) unless the
    /// process's delegate calls `useEmulator` itself.
    public static func auth(app: FirebaseApp) -> Auth {
        app.component(Auth.self) { app in
            let auth = Auth(app: app)
            if let backend = app.backend {
                auth.useEmulator(withHost: backend.host, port: backend.port)
                if !backend.delegateUsesEmulator { auth.settings?.isAppVerificationDisabledForTesting = false }
            }
            return auth
        }
    }

    /// The language of the SMS and emails the backend sends (`X-Firebase-Locale` on each request).
    public var languageCode: String? {
        get { state.withLock { $0.languageCode } }
        set { state.withLock { $0.languageCode = newValue } }
    }

    /// `useAppLanguage()` (Auth.swift 1420–1424): `languageCode` becomes the device's first
    /// preferred language (`Locale.preferredLanguages.first`, the simulated device's setting:
    /// ``AppHost/preferredLanguages``), not the app bundle's localization.
    public func useAppLanguage() {
        languageCode = host.preferredLanguages.first
    }

    /// Talks to a local backend instead of Google's (`http://host:port/www.googleapis.com/…`), as
    /// the SDK does (Auth.swift `useEmulator`): an IPv6 host goes in brackets, and **app
    /// verification is turned off for testing** (`settings?.isAppVerificationDisabledForTesting =
    /// true`), so only test numbers get codes until the app turns it back off. The emulator's
    /// host:port is then the auth domain of the reCAPTCHA page, at `https://host:port/__/auth/handler`
    /// (AuthWebUtils.swift `fetchAuthDomain`; no `getProjectConfig`). An empty host, where the SDK
    /// stops with `fatalError`, makes every later call fail with `appConfigurationError`.
    public func useEmulator(withHost host: String, port: Int) {
        let formatted = host.contains(":") ? "[\(host)]" : host
        state.withLock {
            $0.emulator = host.isEmpty ? "" : "\(formatted):\(port)"
            $0.settings.value?.isAppVerificationDisabledForTesting = true
        }
    }

    public var currentUser: User? { state.withLock { $0.currentUser }.value }

    // MARK: APNs token

    /// The APNs token, once set.
    public var apnsToken: Data? { state.withLock { $0.apnsToken.token?.data } }
    /// The type set with the token (not an SDK property: FirebaseAuth 12.19 has `apnsToken` only).
    package var apnsTokenType: AuthAPNSTokenType? { state.withLock { $0.apnsToken.token?.type } }

    /// Sets the device's APNs token. `.unknown` is resolved at once: simulator → prod; else the
    /// provisioning profile's `aps-environment` (development → sandbox; otherwise prod).
    public func setAPNSToken(_ token: Data, type: AuthAPNSTokenType) {
        let resolved = type == .unknown
            ? ProvisioningProfile.resolve(isSimulator: host.isSimulator, profile: host.provisioningProfile)
            : type
        let value = AuthAPNSToken(data: token, type: resolved)
        let waiters = state.withLock { $0.apnsToken.set(value) }
        for waiter in waiters { waiter.fulfill(.token(value)) }
    }

    /// How a wait for the APNs token ended.
    enum APNSTokenWait: Sendable {
        case token(AuthAPNSToken)
        /// Nothing within 5 s.
        case timedOut
        /// The OS said registration failed (`didFailToRegisterForRemoteNotificationsWithError`).
        case failed(String)
    }

    /// The token, as `AuthAPNSTokenManager.getToken` gets it (AuthAPNSTokenManager.swift 51–76):
    /// at once if set; else the first waiter asks the app to `registerForRemoteNotifications()`
    /// and every waiter waits up to 5 s on the app's clock, ended early by a token or by a
    /// registration failure.
    func waitForAPNSToken() async -> APNSTokenWait {
        let shot = OneShot<APNSTokenWait>()
        // The host's flag is read under this lock: a waiter added before `terminate()` drains
        // the waiters is drained; one added after sees the flag.
        let ask = state.withLock { state -> APNSTokenBook<OneShot<APNSTokenWait>>.Ask? in
            host.isTerminated ? nil : state.apnsToken.ask(shot)
        }
        switch ask {
        case nil: return .failed("the app's process was killed")
        case .token(let token): return .token(token)
        case .wait(let number, let register):
            if register { host.registerForRemoteNotifications() }
            let answer = await wait(for: shot, timeout: Self.apnsTokenTimeout, clock: host.clock, fallback: .timedOut)
            // A wait that timed out leaves, so that the next ask registers again.
            if case .timedOut = answer { _ = state.withLock { $0.apnsToken.timedOut(number) } }
            return answer
        }
    }

    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`, as the SDK's app-delegate
    /// proxy calls it (Auth.swift 47–50): the token, its type from the provisioning profile.
    package func application(_ application: AppHost, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        setAPNSToken(deviceToken, type: .unknown)
    }

    /// `application(_:didFailToRegisterForRemoteNotificationsWithError:)` (Auth.swift 52–57): ends
    /// every wait for the token at once (`AuthAPNSTokenManager.cancel(withError:)`), so
    /// `verifyPhoneNumber` goes to reCAPTCHA without waiting 5 s.
    package func application(_ application: AppHost, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        let waiters = state.withLock { $0.apnsToken.cancel() }
        let reason = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        for waiter in waiters { waiter.fulfill(.failed(reason)) }
    }

    // MARK: Notifications

    /// Whether this notification is Auth's: the forwarding probe (while it runs), or a silent push
    /// carrying the secret for a pending receipt. The payload's `com.google.firebase.auth` value may
    /// be a dictionary or a JSON string of one.
    public func canHandleNotification(_ userInfo: [AnyHashable: Any]) -> Bool {
        switch AuthNotification.read(userInfo) {
        case .notAuths:
            return false
        case .probe:
            let (handled, shot) = state.withLock { $0.probe.probeArrived() }
            shot?.fulfill(true)
            return handled
        case .credential(let receipt, let secret):
            let waiters = state.withLock { state -> [OneShot<AppCredential?>]? in
                guard state.credentials.complete(receipt: receipt, secret: secret) != nil else { return nil }
                return state.credentialWaiters.removeValue(forKey: receipt) ?? []
            }
            guard let waiters else { return false }
            saveAppCredentials()
            for waiter in waiters { waiter.fulfill(AppCredential(receipt: receipt, secret: secret)) }
            return true
        }
    }

    /// Runs once per process: hands the app delegate a fake notification and waits 1 s for it to
    /// come back through `canHandleNotification`. Cached.
    func notificationForwardingWorks() async -> Bool {
        switch state.withLock({ $0.probe.next(start: { OneShot<Bool>() }) }) {
        case .result(let result): return result
        case .wait(let shot): return await shot.value
        case .run(let shot):
            host.didReceiveRemoteNotification([AuthNotification.payloadKey: ["warning": AuthNotification.probeWarning]])
            let result = await wait(for: shot, timeout: Self.probeTimeout, clock: host.clock, fallback: false)
            state.withLock { $0.probe.finish(result) }
            return result
        }
    }

    // MARK: App credential

    func addPendingReceipt(_ receipt: String) {
        state.withLock { $0.credentials.expect(receipt) }
        saveAppCredentials()
    }

    /// The receipts still waiting for their push.
    package var pendingReceipts: [String] { state.withLock { $0.credentials.pending } }
    package var cachedCredential: AppCredential? { state.withLock { $0.credentials.credential } }
    func clearCredential() {
        state.withLock { $0.credentials.clear() }
        saveAppCredentials()
    }

    /// Waits up to `timeout` for the push carrying `receipt`'s secret. When the time is up the
    /// SDK hands back whatever credential it holds, even one a late push for an older receipt
    /// brought meanwhile (AuthAppCredentialManager.swift `callbackWithReceipt`, 105–110).
    func waitForCredential(receipt: String, timeout: Duration) async -> AppCredential? {
        let shot = OneShot<AppCredential?>()
        enum Start { case ready(AppCredential), dead, wait }
        let start = state.withLock { state -> Start in
            if host.isTerminated { return .dead }
            if let credential = state.credentials.credential(for: receipt) { return .ready(credential) }
            state.credentialWaiters[receipt, default: []].append(shot)
            return .wait
        }
        switch start {
        case .ready(let credential): return credential
        case .dead: return nil
        case .wait: break
        }
        if let pushed = await wait(for: shot, timeout: timeout, clock: host.clock, fallback: nil) { return pushed }
        return state.withLock { state in
            state.credentialWaiters[receipt] = nil
            return host.isTerminated ? nil : state.credentials.credential
        }
    }

    // MARK: Backend and sign-in

    /// The Identity Toolkit, as this `Auth` calls it (its emulator, API key, language, transport).
    var backend: BackendClient {
        get throws(AuthError) {
            guard let apiKey = options.apiKey else {
                throw AuthError(.appConfigurationError, "FirebaseOptions has no API key (GoogleService-Info.plist API_KEY)")
            }
            let (emulator, languageCode, tenantID) = state.withLock { ($0.emulator, $0.languageCode, $0.tenantID) }
            if emulator == "" { throw AuthError(.appConfigurationError, "useEmulator(withHost:port:) was given an empty host (the SDK stops with fatalError: Cannot connect to empty host)") }
            return BackendClient(emulator: emulator, apiKey: apiKey, languageCode: languageCode, tenantID: tenantID, headers: requestHeaders,
                                 transport: transport, logger: host.logger, host: host)
        }
    }

    /// Signs in with `credential` (a phone credential, or an identity provider's) and makes the
    /// user the current user. For a user with a second factor, this throws
    /// `secondFactorRequired` (17078) whose `userInfo[AuthErrorUserInfoMultiFactorResolverKey]`
    /// finishes the sign-in.
    @discardableResult
    public func signIn(with credential: AuthCredential) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            let result = try await internalSignIn(with: credential, isReauthentication: false)
            try makeCurrent(result.user)
            return result
        }
    }

    /// The SDK's `internalSignInAndRetrieveData(withCredential:isReauthentication:)`: the sign-in
    /// request for the credential's kind, then the user loaded (`completeSignIn`). The current
    /// user is not changed.
    func internalSignIn(with credential: AuthCredential, isReauthentication: Bool) async throws(AuthError) -> AuthDataResult {
        switch credential {
        case let phone as PhoneAuthCredential:
            return try await phoneSignIn(phone, isReauthentication: isReauthentication)
        case let provider as any IdentityProviderCredential:
            return try await idpSignIn(provider, isReauthentication: isReauthentication)
        case let email as EmailAuthCredential:
            switch email.emailType {
            case .password(let password): return try await passwordSignIn(email: email.email, password: password)
            case .link(let link): return try await emailLinkSignIn(email: email.email, link: link)
            }
        default:
            throw AuthError(.invalidCredential, "this auth core signs in with phone, identity provider and email credentials, not \(credential)")
        }
    }

    /// `verifyPhoneNumber` (v1 `accounts:signInWithPhoneNumber`) with the code or a temporary
    /// proof, then the user loaded. (Not inlined: an async function's frame holds every callee
    /// inlined into it, and ten thousand sign-ins at once pay for each byte.)
    @inline(never)
    private func phoneSignIn(_ phone: PhoneAuthCredential, isReauthentication: Bool) async throws(AuthError) -> AuthDataResult {
        let operation: PhoneSignInOperation = isReauthentication ? .reauth : .signUpOrIn
        let response = try await backend.call(try phone.verifyRequest(operation: operation))
        if let inUse = PhoneAuthCredential.inUse(response) { throw inUse }
        let isNewUser = response.isNewUser ?? false
        let user = try await completeSignIn(idToken: response.idToken, refreshToken: response.refreshToken,
                                            expiresIn: response.expiresIn)
        return AuthDataResult(user: user, additionalUserInfo: AdditionalUserInfo(providerID: AuthProviderID.phone.rawValue, profile: nil, username: nil, isNewUser: isNewUser))
    }

    /// The SDK's `completeSignIn(withAccessToken:accessTokenExpirationDate:refreshToken:)`: a user
    /// for the tokens a sign-in answered, its ID token refreshed if its expiry is unknown (a second
    /// factor's answer has no `expiresIn`), its profile loaded with `getAccountInfo`.
    @inline(never)
    func completeSignIn(idToken: String?, refreshToken: String?, expiresIn: String?, anonymous: Bool = false) async throws(AuthError) -> User {
        guard let idToken, !idToken.isEmpty, let refreshToken, !refreshToken.isEmpty else {
            throw AuthError(.invalidUserToken, "Invalid user token: accessToken or refreshToken is nil")
        }
        guard let uid = Self.subject(of: idToken) else {
            throw AuthError(.invalidUserToken, "the ID token the backend answered is not a JWT with a sub claim")
        }
        let user = User(auth: self, uid: uid, idToken: idToken, refreshToken: refreshToken, expiration: expiration(expiresIn), anonymous: anonymous,
                        tenantID: tenantID)
        try await loadAccountInfo(into: user)
        return user
    }

    /// Renews `user` in place with the tokens a call answered (enrolling or removing a second
    /// factor, reauthentication, linking): the same refresh and `getAccountInfo` as a sign-in.
    @inline(never)
    func renew(_ user: User, idToken: String?, refreshToken: String?, expiresIn: String?) async throws(AuthError) {
        guard let idToken, !idToken.isEmpty else {
            throw AuthError(.invalidUserToken, "Invalid user token: accessToken is nil")
        }
        try user.setTokens(idToken: idToken, refreshToken: refreshToken, expiration: expiration(expiresIn))
        try await loadAccountInfo(into: user)
    }

    /// `now + expiresIn` (seconds, a string), or nil.
    func expiration(_ expiresIn: String?) -> Date? {
        expiresIn.flatMap(Double.init).map { host.wallClock.now.addingTimeInterval($0) }
    }

    /// `getAccountInfo` for the user of `idToken`.
    @inline(never)
    func accountInfo(idToken: String) async throws(AuthError) -> UserRecord {
        try Self.record(in: await backend.call(GetAccountInfoRequest(idToken: idToken)))
    }

    /// `getAccountInfo` with `user`'s ID token, and `user` updated with the answer. The record
    /// goes from the answer to the user in a synchronous frame: a sign-in's async frames do not
    /// hold a copy of it (a task keeps the stack slabs of its deepest moment until it ends).
    @inline(never)
    func loadAccountInfo(into user: User) async throws(AuthError) {
        let response = try await backend.call(GetAccountInfoRequest(idToken: try await user.idToken()))
        try Self.update(user, from: response)
    }

    @inline(never)
    private static func update(_ user: User, from response: GetAccountInfoResponse) throws(AuthError) {
        try user.update(with: try record(in: response))
    }

    /// The answer's one user: any other count is the SDK's unexpected response (17999,
    /// GetAccountInfoResponse.swift 141–149).
    private static func record(in response: GetAccountInfoResponse) throws(AuthError) -> UserRecord {
        guard let users = response.users, users.count == 1 else {
            throw AuthError(.internalError, "getAccountInfo answered \(response.users?.count ?? 0) users, not one (the SDK's unexpected response)")
        }
        return users[0]
    }

    /// The `sub` claim of a JWT, unverified (the backend vouches for its own answer).
    static func subject(of jwt: String) -> String? {
        guard let jws = CompactJWS(jwt), let payload = Base64URL.decode(jws.payload),
              let claims = try? StrictJSONDecoder().decode(Subject.self, from: payload) else { return nil }
        return claims.sub
    }
    private struct Subject: Decodable { let sub: String }

    /// `updateCurrentUser(_:)` (Auth.swift 220–269): `user`, perhaps another `Auth`'s, becomes this
    /// one's current user and is saved in its keychain. A user of another API key is first
    /// reloaded with this Auth's configuration, and its requests go with it from then on (the
    /// SDK's `user.requestConfiguration = self.requestConfiguration`): a user of another project
    /// fails that reload with the backend's error and is not made current, but its requests keep
    /// this Auth's configuration, as on a device (the SDK does not put it back). The user's `Auth`
    /// itself does not change, as in the SDK.
    public func updateCurrentUser(_ user: User) async throws {
        try await AuthError.forApp {
            // Auth.swift 1965: a user of another tenant (or of the project when the Auth has one) is refused.
            let tenantID = self.tenantID
            if user.tenantID != nil || tenantID != nil, user.tenantID != tenantID {
                throw AuthError(.tenantIDMismatch, "the user's tenant is \(user.tenantID ?? "none"), this Auth's \(tenantID ?? "none")")
            }
            if (try? user.owner().options.apiKey) != options.apiKey {
                user.sendRequests(through: self)
                try await loadAccountInfo(into: user)
            }
            try makeCurrent(user)
        }
    }

    /// `updateCurrentUser(_:completion:)`: a nil user is `nullUser` (17067), as the SDK answers it.
    public func updateCurrentUser(_ user: User?, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: (self, user)) { (auth: Auth, user: User?) async throws in
            guard let user else { throw AuthError(.nullUser, "updateCurrentUser(_:completion:) was given no user") }
            try await auth.updateCurrentUser(user)
        }
    }

    /// Makes `user` the current user, once the keychain has it: a save that fails leaves the
    /// current user as it was and fails the call with `keychainError` (17995), as the SDK's
    /// `updateCurrentUser(_:byForce: false, savingToDisk: true)` does (Auth.swift 1952–1975).
    func makeCurrent(_ user: User) throws(AuthError) {
        try replaceCurrent(with: user)
    }

    /// ``makeCurrent(_:)`` for any user, or none (a sign-out).
    private func replaceCurrent(with user: User?) throws(AuthError) {
        let current = HandedOver<User?>(user)
        let previous = state.withLock { state -> HandedOver<User?> in
            defer { state.currentUser = current }
            return state.currentUser
        }
        do throws(AuthError) { try saveUser(user) } catch {
            state.withLock { if $0.currentUser.value === user { $0.currentUser = previous } }
            throw error
        }
    }

    /// Signs the current user out (and removes it from the keychain); a keychain that cannot
    /// remove it is `keychainError`, and the user stays signed in, as in the SDK.
    public func signOut() throws {
        try AuthError.forApp { try replaceCurrent(with: nil) }
    }

    /// Signs out `uid` if it is the current user (after deleting the account): by force, as the
    /// SDK's `signOutByForce(withUserID:)`: the user goes whatever the keychain says.
    func signOut(ifCurrent uid: String) {
        let removed = state.withLock { state -> Bool in
            guard state.currentUser.value?.uid == uid else { return false }
            state.currentUser = HandedOver(nil)
            return true
        }
        if removed { try? saveUser(nil) }
    }

    /// `canHandle(_ url:)`: whether `url` is the redirect of the reCAPTCHA page being presented
    /// (`<scheme>://firebaseauth/link?deep_link_id=…` for the presented event). True ends the presentation.
    public func canHandle(_ url: URL) -> Bool { handle(url).isHandled }

    /// `canHandle(url)` with its reasons (not an SDK method): what the URL carried, or exactly why
    /// Auth did not take it.
    package func handle(_ url: URL) -> URLHandling {
        let (decision, outcome) = state.withLock { state -> (PresentationBook.Decision, OneShot<ReCAPTCHAFlow.Redirect?>?) in
            let decision = state.presentations.open(url)
            guard case .takes = decision else { return (decision, nil) }
            defer { state.presentationOutcome = nil }
            return (decision, state.presentationOutcome)
        }
        switch decision {
        case .refuses(let refusal): return .refused(refusal)
        case .takes(let eventID, let redirect):
            outcome?.fulfill(redirect)
            switch redirect {
            case .token: return .handled("the reCAPTCHA token for event \(eventID)")
            case .link: return .handled("the provider's answer for event \(eventID)")
            case .failure(let error): return .handled("the page's error for event \(eventID): \(error.code.rawValue) \(error.code)")
            case .notOurs: return .handled("event \(eventID)")
            }
        }
    }

    /// The SDK version the handler URL names.
    static let sdkVersion = "12.19.0"

    /// `AuthBackend.authUserAgent()`: `FirebaseAuth.iOS/12.19.0` and GTMSessionFetcher's standard
    /// user agent (the app's bundle ID and version, the system). The reCAPTCHA page's `v`.
    var userAgent: String { "FirebaseAuth.iOS/\(Self.sdkVersion) \(host.bundleID)/\(host.appVersion) \(host.systemVersion)" }

    /// The emulator's `host:port`, when talking to a local backend.
    var emulatorHost: String? { state.withLock { $0.emulator } }

    /// How the last `verifyPhoneNumber` proved the app (for timelines; not an SDK property).
    package var lastAppVerification: AppVerification? { state.withLock { $0.lastVerification } }
    /// Why the last `verifyPhoneNumber` went to the reCAPTCHA page, when it did (not an SDK property).
    package var lastFallbackReason: ReCAPTCHAFallbackReason? { state.withLock { $0.lastFallback } }
    func noteVerification(_ proof: AppVerification, fallback: ReCAPTCHAFallbackReason? = nil) {
        state.withLock {
            $0.lastVerification = proof
            $0.lastFallback = fallback
        }
        switch proof {
        case .silentPush: host.logger.debug("app verified by silent push", metadata: ["bundle-id": "\(host.bundleID)"])
        case .testMode: host.logger.info("app verification disabled for testing: only test numbers get codes", metadata: ["bundle-id": "\(host.bundleID)"])
        case .recaptchaEnterprise: host.logger.debug("app verified by a reCAPTCHA Enterprise token (SMS defense)", metadata: ["bundle-id": "\(host.bundleID)"])
        case .reCAPTCHA:
            host.logger.notice("app verification falls back to reCAPTCHA", metadata: ["bundle-id": "\(host.bundleID)", "why": "\(fallback.map { "\($0)" } ?? "")"])
        case .unverified: break  // a backend's view only: the app never sends nothing on purpose but in test mode
        }
    }

    func noteSMSDefense(_ state: RecaptchaEnforcement) {
        if state != .off { host.logger.debug("SMS defense is \(state.rawValue)", metadata: ["bundle-id": "\(host.bundleID)"]) }
    }

    /// Starts presenting the page (reCAPTCHA, a provider's sign-in) for `eventID`; a second
    /// presentation while one is active is `webContextCancelled` (17058), as the SDK's
    /// `AuthURLPresenter` answers it.
    func beginPresentation(eventID: String, scheme: String, authType: WebAuthType = .verifyApp) throws(AuthError) -> OneShot<ReCAPTCHAFlow.Redirect?> {
        let shot = OneShot<ReCAPTCHAFlow.Redirect?>()
        if host.isTerminated { throw AuthError(.internalError, "the app's process was killed") }
        let started = state.withLock { state -> Bool in
            guard state.presentations.begin(eventID: eventID, scheme: scheme, authType: authType) else { return false }
            state.presentationOutcome = shot
            return true
        }
        guard started else {
            throw AuthError(.webContextCancelled, "a page (reCAPTCHA or a provider's sign-in) is already being presented")
        }
        return shot
    }

    /// The web view closed: a presentation still active was cancelled.
    func endPresentation(eventID: String) {
        let shot = state.withLock { state -> OneShot<ReCAPTCHAFlow.Redirect?>? in
            guard state.presentations.end(eventID: eventID) else { return nil }
            defer { state.presentationOutcome = nil }
            return state.presentationOutcome
        }
        shot?.fulfill(nil)
    }

    /// iOS killed the app's process (``AppHost/terminate()``, which sets the host's flag first):
    /// every wait ends now and nothing more is sent; what the keychain holds stays for the next
    /// process.
    package func processWasKilled() {
        let (tokens, credentials, presentation) = state.withLock { state in
            let waiting = (state.apnsToken.cancel(), state.credentialWaiters.values.flatMap { $0 }, state.presentationOutcome)
            state.credentialWaiters = [:]
            state.presentations.abandon()
            state.presentationOutcome = nil
            return waiting
        }
        for waiter in tokens { waiter.fulfill(.failed("the app's process was killed")) }
        for waiter in credentials { waiter.fulfill(nil) }
        presentation?.fulfill(nil)
    }
}

/// The app delegate's calls, passed to an `Auth` (the SDK's `AuthAppDelegateProxy`, which swizzles
/// them into `Auth`). A hook of its own rather than `Auth` conforming to DeviceOS's protocol, so
/// that the protocol's members are not `Auth`'s: the SDK's `Auth` has no such public members.
///
/// `@unchecked Sendable`: `auth` is set once, in `Auth.init`, before the hook is registered with
/// the host (the registration's lock publishes it), and never again.
final class AuthAppDelegateHook: AppDelegateInterceptor, @unchecked Sendable {
    weak var auth: Auth?

    func application(_ application: AppHost, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        auth?.application(application, didRegisterForRemoteNotificationsWithDeviceToken: deviceToken)
    }

    func application(_ application: AppHost, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        auth?.application(application, didFailToRegisterForRemoteNotificationsWithError: error)
    }

    func canHandleNotification(_ userInfo: [AnyHashable: Any]) -> Bool { auth?.canHandleNotification(userInfo) ?? false }

    func handle(_ url: URL) -> URLHandling {
        auth?.handle(url) ?? .refused(URLRefusal(.noActivePresentation, "the app's Auth is gone"))
    }

    func processWasKilled() { auth?.processWasKilled() }
}

/// An `Auth`, weakly, carried where only Sendable values go (a task, a stream's termination, a
/// user's lock). `Auth` is not Sendable, as in 12.19; the auth core keeps its state under its own
/// locks, so reaching it from another task is safe here as the SDK's queues make it there.
package struct WeakAuth: @unchecked Sendable {
    package weak var auth: Auth?
    package init(auth: Auth?) { self.auth = auth }
}
