import Foundation
import IdentityToolkitAPI

/// `AuthUIDelegate`: presents the reCAPTCHA page for the fallback. `present(_:host:)` shows `url`
/// and returns when the web view closes; a page that redirects hands its URL to the OS with
/// `host.open(_:)`, as a real browser does. ``HeadlessPresenter`` is the default.
public protocol AuthUIDelegate: Sendable {
    func present(_ url: URL, host: AppHost) async
}

/// `MultiFactorSession` (accepted for signature compatibility; multi-factor is out of scope).
public struct MultiFactorSession: Sendable {}

/// The phone credential: the verification ID (the backend's session info) and the SMS code.
public struct PhoneAuthCredential: Sendable, Hashable {
    public let verificationID: String
    public let verificationCode: String
    public var provider: String { "phone" }
}

/// Why app verification fell back (for timelines and `authsim explain`).
public enum AppVerificationPath: Sendable, Hashable {
    case silentPush
    case testMode
    case reCAPTCHAFallback(reason: String)
}

/// `PhoneAuthProvider`: sends the code (after proving the app is real) and makes credentials.
public final class PhoneAuthProvider: Sendable {
    public let auth: Auth

    private init(auth: Auth) { self.auth = auth }

    /// The provider of the default app's `Auth`.
    public static func provider() -> PhoneAuthProvider { PhoneAuthProvider(auth: Auth.auth()) }
    public static func provider(auth: Auth) -> PhoneAuthProvider { PhoneAuthProvider(auth: auth) }

    /// Sends a verification code to `phoneNumber`, proving first that the request comes from the
    /// real app, step for step as the SDK does:
    ///
    /// 1. the reCAPTCHA callback URL scheme must be registered in `Info.plist` (the SDK crashes;
    ///    this throws `appConfigurationError` naming the scheme to add);
    /// 2. an empty number is `missingPhoneNumber`;
    /// 3. the notification-forwarding probe (1 s, once per process) must succeed, else
    ///    `notificationNotForwarded`; it runs in test mode too;
    /// 4. in test mode (`settings.isAppVerificationDisabledForTesting`) the code is requested with
    ///    the number alone;
    /// 5. otherwise with an app credential: the cached one, or a new one (APNs token within 5 s →
    ///    verifyClient → the silent push within `suggestedTimeout`). On `INVALID_APP_CREDENTIAL` the
    ///    credential is dropped and the request tried once more; a second failure is `internalError`.
    ///
    /// - Returns: the verification ID, to keep (in `UserDefaults`) until the user types the code.
    public func verifyPhoneNumber(_ phoneNumber: String, uiDelegate: (any AuthUIDelegate)?,
                                  multiFactorSession: MultiFactorSession? = nil) async throws(AuthError) -> String {
        try checkCallbackScheme()
        guard !phoneNumber.isEmpty else { throw AuthError(.missingPhoneNumber, "the phone number is empty") }
        guard await auth.notificationForwardingWorks() else {
            throw AuthError(.notificationNotForwarded, """
                the app delegate did not forward the probe notification to Auth.canHandleNotification within 1 s: \
                with swizzling off (FirebaseAppDelegateProxyEnabled = NO), call Auth.auth().canHandleNotification(userInfo) \
                from application(_:didReceiveRemoteNotification:fetchCompletionHandler:)
                """)
        }
        let backend = try auth.backend
        if auth.settings.isAppVerificationDisabledForTesting {
            auth.noteVerification(.testMode)
            return try await sendCode(backend, SendVerificationCodeRequest(phoneNumber: phoneNumber))
        }
        var credential: AppCredential
        switch try await appCredential(backend) {
        case .needsReCAPTCHA(let why):
            auth.noteVerification(.reCAPTCHAFallback(reason: why))
            let token = try await reCAPTCHAToken(backend, uiDelegate: uiDelegate ?? HeadlessPresenter())
            return try await sendCode(backend, SendVerificationCodeRequest(phoneNumber: phoneNumber, recaptchaToken: token))
        case .credential(let found):
            credential = found
        }
        auth.noteVerification(.silentPush)
        do {
            return try await sendCode(backend, SendVerificationCodeRequest(phoneNumber: phoneNumber, iosReceipt: credential.receipt,
                                                                           iosSecret: credential.secret))
        } catch where error.code == .invalidAppCredential {
            auth.clearCredential()
            guard case .credential(let fresh) = try await appCredential(backend) else {
                throw AuthError(.internalError, "the backend refused the app credential, and no fresh one came: \(error.message)",
                                serverMessage: error.serverMessage)
            }
            credential = fresh
            do {
                return try await sendCode(backend, SendVerificationCodeRequest(phoneNumber: phoneNumber, iosReceipt: credential.receipt,
                                                                               iosSecret: credential.secret))
            } catch where error.code == .invalidAppCredential {
                throw AuthError(.internalError, "the backend refused a fresh app credential too: \(error.message)",
                                serverMessage: error.serverMessage)
            }
        }
    }

    /// The credential for `verificationID` and the code the user typed.
    public func credential(withVerificationID verificationID: String, verificationCode: String) -> PhoneAuthCredential {
        PhoneAuthCredential(verificationID: verificationID, verificationCode: verificationCode)
    }

    /// The scheme the reCAPTCHA page returns to: the reversed client ID when it is registered, else
    /// the encoded app ID.
    public var callbackScheme: String {
        CallbackScheme.derive(options: auth.options, registered: auth.host.urlSchemes)
    }

    private func checkCallbackScheme() throws(AuthError) {
        let scheme = callbackScheme
        guard CallbackScheme.isRegistered(scheme, in: auth.host.urlSchemes) else {
            throw AuthError(.appConfigurationError, """
                Please register custom URL scheme \(scheme) in the app's Info.plist file \
                (CFBundleURLTypes → CFBundleURLSchemes); the SDK stops the app with fatalError here
                """)
        }
    }

    private func sendCode(_ backend: BackendClient, _ request: SendVerificationCodeRequest) async throws(AuthError) -> String {
        let response = try await backend.call(request)
        guard let sessionInfo = response.sessionInfo else {
            throw AuthError(.appConfigurationError, "sendVerificationCode answered without sessionInfo")
        }
        return sessionInfo
    }

    enum Proof {
        case credential(AppCredential)
        case needsReCAPTCHA(String)
    }

    /// The cached credential, or a new one by silent push; or why the SDK falls back to reCAPTCHA.
    private func appCredential(_ backend: BackendClient) async throws(AuthError) -> Proof {
        if let cached = auth.cachedCredential { return .credential(cached) }
        if auth.host.isSimulator { return .needsReCAPTCHA("the app runs in a simulator, which gets no silent pushes") }
        guard let token = await auth.waitForAPNSToken() else {
            return .needsReCAPTCHA("no APNs token within 5 s (is the app registered for remote notifications?)")
        }
        let response: VerifyClientResponse
        do { response = try await backend.call(VerifyClientRequest(appToken: token.string, isSandbox: token.type == .sandbox)) } catch {
            if error.code == .invalidAppCredential || error.code == .missingAppToken {
                return .needsReCAPTCHA("verifyClient refused the APNs token: \(error.message)")
            }
            throw error
        }
        guard let receipt = response.receipt, let timeoutText = response.suggestedTimeout,
              let seconds = Int(timeoutText), seconds >= 0
        else {
            throw AuthError(.appConfigurationError, "verifyClient answered without a receipt and a numeric suggestedTimeout string (the SDK stops with fatalError)")
        }
        auth.addPendingReceipt(receipt)
        guard let credential = await auth.waitForCredential(receipt: receipt, timeout: .seconds(seconds)) else {
            return .needsReCAPTCHA("no silent push with the secret for receipt \(receipt.prefix(8))… within suggestedTimeout \(seconds) s")
        }
        return .credential(credential)
    }

    /// The reCAPTCHA fallback: the auth domain from getProjectConfig, a new event, the handler URL
    /// presented through `uiDelegate`, and the redirect that comes back through `canHandle(url)`.
    private func reCAPTCHAToken(_ backend: BackendClient, uiDelegate: any AuthUIDelegate) async throws(AuthError) -> String {
        let options = auth.options
        guard let apiKey = options.apiKey else { throw AuthError(.appConfigurationError, "FirebaseOptions has no API key") }
        let config = try await backend.call(GetProjectConfigRequest())
        let domains = config.authorizedDomains ?? []
        guard let domain = ReCAPTCHAFlow.authDomain(from: domains) else {
            throw AuthError(.internalError, "getProjectConfig lists no firebaseapp.com or web.app domain: \(domains)")
        }
        let eventID = ReCAPTCHAFlow.newEventID()
        let scheme = callbackScheme
        let clientID = options.reversedClientIDScheme == scheme ? options.clientID : nil
        guard let url = ReCAPTCHAFlow.handlerURL(
            base: auth.emulatorBase ?? "https://\(domain)", apiKey: apiKey, bundleID: options.bundleID, sdkVersion: Auth.sdkVersion,
            eventID: eventID, clientID: clientID, appID: options.googleAppID, languageCode: auth.languageCode)
        else { throw AuthError(.internalError, "cannot build the reCAPTCHA URL") }
        let outcome = try auth.beginPresentation(eventID: eventID, scheme: scheme)
        let host = auth.host
        let presenting = Task {
            await uiDelegate.present(url, host: host)
            // The web view closed. If no redirect reached canHandle(url), the user cancelled
            // (or the app never passed the URL to Auth, and the page could not close itself).
            auth.endPresentation(eventID: eventID)
        }
        let result = await outcome.value
        presenting.cancel()
        switch result {
        case .some(.token(let token)): return token
        case .some(.failure(let error)): throw error
        case .some(.notOurs(let refusal)): throw AuthError(.internalError, refusal.message)
        case .none:
            throw AuthError(.webContextCancelled, "the reCAPTCHA page closed without a redirect reaching Auth.canHandle(url): the user cancelled, or the app does not pass opened URLs to Auth")
        }
    }
}
