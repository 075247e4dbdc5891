import DeviceOS
import FirebaseCore
import Foundation
import IdentityToolkitAPI

/// `AuthUIDelegate`: presents the reCAPTCHA page for the fallback. `present(_:host:)` shows `url`
/// and returns when the web view closes; a page that redirects hands its URL to the OS with
/// `host.open(_:)`, as a real browser does. ``HeadlessPresenter`` is the default.
public protocol AuthUIDelegate {
    func present(_ url: URL, host: AppHost) async
}

/// Why the SDK went to the reCAPTCHA page instead of proving the app by silent push: the branches
/// of FirebaseAuth 12.19's `verifyClient(withUIDelegate:)` (PhoneAuthProvider.swift) that end in
/// reCAPTCHA. A type, so that `explain` and the timeline decide by the case, never by the sentence.
package enum ReCAPTCHAFallbackReason: Sendable, Hashable, CustomStringConvertible {
    /// `isSimulator`: a simulator gets no silent pushes.
    case simulator
    /// No APNs token reached Auth within 5 s of the SDK asking the app to register.
    case noAPNsToken
    /// `didFailToRegisterForRemoteNotificationsWithError`, with the OS's reason.
    case apnsRegistrationFailed(String)
    /// verifyClient refused the APNs token (`INVALID_APP_CREDENTIAL`, `MISSING_IOS_APP_TOKEN`), with the server's message.
    case verifyClientRefused(String)
    /// No silent push carried the secret for `receipt` within `suggestedTimeout` (as the server wrote it).
    case noSilentPush(receipt: String, suggestedTimeout: String)

    /// The case's name: what the timeline's JSON keeps (`app.fallback`'s `code`).
    package enum Code: String, Sendable, CaseIterable, Codable {
        case simulator, noAPNsToken, apnsRegistrationFailed, verifyClientRefused, noSilentPush
    }

    package var code: Code {
        switch self {
        case .simulator: .simulator
        case .noAPNsToken: .noAPNsToken
        case .apnsRegistrationFailed: .apnsRegistrationFailed
        case .verifyClientRefused: .verifyClientRefused
        case .noSilentPush: .noSilentPush
        }
    }

    package var description: String {
        switch self {
        case .simulator: "the app runs in a simulator, which gets no silent pushes"
        case .noAPNsToken: "no APNs token within 5 s (the SDK asked the app to register for remote notifications; no token reached Auth)"
        case .apnsRegistrationFailed(let reason): "registering for remote notifications failed: \(reason)"
        case .verifyClientRefused(let message): "verifyClient refused the APNs token: \(message)"
        case .noSilentPush(let receipt, let timeout): "no silent push with the secret for receipt \(receipt.prefix(8))… within suggestedTimeout \(timeout) s"
        }
    }
}

/// `PhoneAuthProvider`: sends the code (after proving the app is real) and makes credentials.
public final class PhoneAuthProvider: NSObject, @unchecked Sendable {
    /// `PhoneAuthProvider.id`: the phone provider's ID, as `providerData` names it.
    public static let id = "phone"

    package let auth: Auth

    private init(auth: Auth) { self.auth = auth }

    /// The provider of the default app's `Auth`.
    public static func provider() -> PhoneAuthProvider { PhoneAuthProvider(auth: Auth.auth()) }
    public static func provider(auth: Auth) -> PhoneAuthProvider { PhoneAuthProvider(auth: auth) }

    /// Sends a verification code to `phoneNumber`, proving first that the request comes from the
    /// real app, step for step as the SDK does (`PhoneAuthProvider.swift` `verifyPhoneNumber`,
    /// `internalVerify`, `verifyClAndSendVerificationCode`):
    ///
    /// 1. the reCAPTCHA callback URL scheme must be registered in `Info.plist` (the SDK crashes;
    ///    this throws `appConfigurationError` naming the scheme to add);
    /// 2. an empty number is `missingPhoneNumber`;
    /// 3. the notification-forwarding probe (1 s, once per process) must succeed, else
    ///    `notificationNotForwarded`; it runs in test mode too;
    /// 4. in test mode (`settings.isAppVerificationDisabledForTesting`) the code is requested with
    ///    the number alone;
    /// 5. otherwise with an app credential (the cached one, or a new one: APNs token within 5 s →
    ///    verifyClient → the silent push within `suggestedTimeout`) or, failing that, a reCAPTCHA
    ///    token. On `INVALID_APP_CREDENTIAL` the credential is dropped and the whole path runs once
    ///    more (it may end in reCAPTCHA); a second refusal is `internalError` (17999).
    ///
    /// With a `multiFactorSession` the code is for a second factor, behind the same app
    /// verification: `accounts/mfaEnrollment:start` for a session from `user.multiFactor`, or
    /// `accounts/mfaSignIn:start` for a resolver's session (use
    /// ``verifyPhoneNumber(with:uiDelegate:multiFactorSession:)`` with the chosen hint, which names
    /// the factor).
    ///
    /// - Returns: the verification ID, to keep (in `UserDefaults`) until the user types the code.
    public func verifyPhoneNumber(_ phoneNumber: String, uiDelegate: (any AuthUIDelegate)? = nil,
                                  multiFactorSession: MultiFactorSession? = nil) async throws -> String {
        do { return try await verify(phoneNumber, uiDelegate: uiDelegate, multiFactorSession: multiFactorSession) } catch {
            // Another library's error the SDK passes on as it came (RecaptchaEnterprise's fetchClient).
            throw AuthError.toApp(error)
        }
    }

    /// ``verifyPhoneNumber(_:uiDelegate:multiFactorSession:)``'s work.
    private func verify(_ phoneNumber: String, uiDelegate: (any AuthUIDelegate)?, multiFactorSession: MultiFactorSession?) async throws -> String {
        try checkCallbackScheme()
        guard !phoneNumber.isEmpty else { throw AuthError(.missingPhoneNumber, "the phone number is empty") }
        guard await auth.notificationForwardingWorks() else {
            throw AuthError(.notificationNotForwarded, """
                the app delegate did not forward the probe notification to Auth.canHandleNotification within 1 s: \
                with swizzling off (FirebaseAppDelegateProxyEnabled = NO), call Auth.auth().canHandleNotification(userInfo) \
                from application(_:didReceiveRemoteNotification:fetchCompletionHandler:)
                """)
        }
        let verificationID: String
        if auth.isAppVerificationDisabledForTesting {
            // Test mode asks for no reCAPTCHA config (PhoneAuthProvider.swift internalVerify).
            verificationID = try await verifyAndSend(phoneNumber, retryOnInvalidAppCredential: true, session: multiFactorSession,
                                                     uiDelegate: uiDelegate)
        } else {
            // The SDK asks for the project's reCAPTCHA config every time, then branches on the
            // phone provider's SMS defense (PhoneAuthProvider.swift 247–272).
            let config = try await auth.retrieveRecaptchaConfig(forceRefresh: true)
            auth.noteSMSDefense(config.phone)
            switch config.phone {
            case .off:
                verificationID = try await verifyAndSend(phoneNumber, retryOnInvalidAppCredential: true, session: multiFactorSession,
                                                         uiDelegate: uiDelegate)
            case .audit:
                verificationID = try await verifyAndSendWithRecaptcha(phoneNumber, retryOnInvalidAppCredential: true,
                                                                      session: multiFactorSession, uiDelegate: uiDelegate)
            case .enforce:
                verificationID = try await verifyAndSendWithRecaptcha(phoneNumber, retryOnInvalidAppCredential: false,
                                                                      session: multiFactorSession, uiDelegate: uiDelegate)
            }
        }
        guard !verificationID.isEmpty else {
            throw AuthError(.invalidVerificationID, "Invalid verification ID: the backend answered without one")
        }
        return verificationID
    }

    /// A second factor's code, to the factor a ``MultiFactorResolver`` hinted: its enrollment ID
    /// goes out with the session (the SDK sets `session.multiFactorInfo`), and its masked number
    /// as the number, as the SDK sends them.
    public func verifyPhoneNumber(with multiFactorInfo: PhoneMultiFactorInfo, uiDelegate: (any AuthUIDelegate)? = nil,
                                  multiFactorSession: MultiFactorSession?) async throws -> String {
        multiFactorSession?.multiFactorInfo = multiFactorInfo
        return try await verifyPhoneNumber(multiFactorInfo.phoneNumber, uiDelegate: uiDelegate, multiFactorSession: multiFactorSession)
    }

    /// The SDK's `verifyClAndSendVerificationCode`: the proof (none in test mode), the request for
    /// the session's kind, and the one rerun on `INVALID_APP_CREDENTIAL`. With `auditFallback`
    /// (SMS defense in AUDIT refused the reCAPTCHA Enterprise token) the request also carries
    /// `captchaResponse: NO_RECAPTCHA`, as the SDK sends it.
    @inline(never)
    private func verifyAndSend(_ phoneNumber: String, retryOnInvalidAppCredential: Bool, session: MultiFactorSession?,
                               uiDelegate: (any AuthUIDelegate)?, auditFallback: Bool = false) async throws(AuthError) -> String {
        let backend = try auth.backend
        let proof: ProofFields
        var enterprise: String?
        if auth.isAppVerificationDisabledForTesting {
            auth.noteVerification(.testMode)
            // `verifyInTestMode` (PhoneAuthProvider.swift 339–360): the request alone, its refusal
            // thrown as it is, with no rerun on INVALID_APP_CREDENTIAL (audit 3, D1.11).
            return try await send(backend, phoneNumber, proof: .none, enterprise: nil, session: session)
        } else {
            proof = try await appProof(backend, uiDelegate: uiDelegate ?? HeadlessPresenter())
            if auditFallback { enterprise = Auth.noRecaptcha }
        }
        do {
            return try await send(backend, phoneNumber, proof: proof, enterprise: enterprise, session: session)
        } catch {
            return try await handleVerifyError(error, phoneNumber, retry: retryOnInvalidAppCredential, session: session,
                                                         uiDelegate: uiDelegate, auditFallback: auditFallback)
        }
    }

    /// The SDK's `verifyClAndSendVerificationCodeWithRecaptcha` (SMS defense in AUDIT or ENFORCE):
    /// a reCAPTCHA Enterprise token for the request's action and no app credential. In AUDIT a
    /// refusal (`INVALID_APP_CREDENTIAL`) reruns the silent-push path once, with `NO_RECAPTCHA`;
    /// in ENFORCE nothing falls back to APNs.
    @inline(never)
    private func verifyAndSendWithRecaptcha(_ phoneNumber: String, retryOnInvalidAppCredential: Bool, session: MultiFactorSession?,
                                            uiDelegate: (any AuthUIDelegate)?) async throws(AuthError) -> String {
        let action: RecaptchaAction = session == nil ? .sendVerificationCode : session?.idToken != nil ? .mfaSmsEnrollment : .mfaSmsSignIn
        do {
            let backend = try auth.backend
            let token = try await auth.recaptchaEnterpriseToken(action: action)
            auth.noteVerification(.recaptchaEnterprise)
            return try await send(backend, phoneNumber, proof: .none, enterprise: token, session: session)
        } catch {
            return try await handleVerifyError(error, phoneNumber, retry: retryOnInvalidAppCredential, session: session,
                                                         uiDelegate: uiDelegate, auditFallback: true)
        }
    }

    /// The SDK's `handleVerifyErrorWithRetry`: on `INVALID_APP_CREDENTIAL`, drop the credential and
    /// run the whole silent-push path once more (PhoneAuthProvider.swift 468–486; it may end in
    /// reCAPTCHA); a second refusal is `internalError` (17999) with the refusal underneath. Other
    /// errors pass through.
    private func handleVerifyError(_ error: AuthError, _ phoneNumber: String, retry: Bool, session: MultiFactorSession?,
                                             uiDelegate: (any AuthUIDelegate)?, auditFallback: Bool) async throws(AuthError) -> String {
        guard error.code == .invalidAppCredential else { throw error }
        guard retry else {
            // PAP 482: unexpectedResponse(deserializedResponse: nil, underlyingError: error), i.e.
            // FIRAuthInternalErrorDomain 4 over the refusal.
            throw AuthError(.internalError, "the backend refused the app credential again after a fresh verification: \(error.message)",
                            serverMessage: error.serverMessage,
                            underlyingError: NSError(domain: AuthInternalErrors.domain, code: AuthInternalErrors.Code.unexpectedResponse.rawValue,
                                                     userInfo: [NSUnderlyingErrorKey: error as NSError]))
        }
        auth.clearCredential()
        auth.host.logger.notice("the backend refused the app credential; verifying the app again", metadata: ["why": "\(error.message)"])
        return try await verifyAndSend(phoneNumber, retryOnInvalidAppCredential: false, session: session, uiDelegate: uiDelegate,
                                       auditFallback: auditFallback)
    }

    /// The fields of a code request that prove the app (``AppVerification`` says which kind;
    /// test mode and SMS defense's token send none of these).
    struct ProofFields {
        var receipt: String?
        var secret: String?
        var recaptchaToken: String?
        static let none = ProofFields()
        static func credential(_ credential: AppCredential) -> ProofFields { ProofFields(receipt: credential.receipt, secret: credential.secret) }
        static func recaptcha(_ token: String) -> ProofFields { ProofFields(recaptchaToken: token) }
    }

    /// The code request for the session's kind: `sendVerificationCode` (a first factor),
    /// `accounts/mfaEnrollment:start` (a session with the user's ID token) or
    /// `accounts/mfaSignIn:start` (a session with a pending credential); the SDK's
    /// `executeMFARequest`.
    @inline(never)
    private func send(_ backend: BackendClient, _ phoneNumber: String, proof: ProofFields, enterprise: String?,
                      session: MultiFactorSession?) async throws(AuthError) -> String {
        // Each kind in a function of its own, which builds its request there: an async frame holds
        // the requests and answers of every call made in it, and each sign-in in flight holds this one.
        guard let session else { return try await sendFirstFactor(backend, phoneNumber, proof: proof, enterprise: enterprise) }
        if let idToken = session.idToken {
            return try await startEnrollment(backend, phoneNumber, proof: proof, enterprise: enterprise, idToken: idToken)
        }
        return try await startSignIn(backend, phoneNumber, proof: proof, enterprise: enterprise, session: session)
    }

    /// `sendVerificationCode`, with `clientType` always (SendVerificationTokenRequest.swift 64–85).
    @inline(never)
    private func sendFirstFactor(_ backend: BackendClient, _ phoneNumber: String, proof: ProofFields, enterprise: String?) async throws(AuthError) -> String {
        try await backend.call(SendVerificationCodeRequest(
            phoneNumber: phoneNumber, iosReceipt: proof.receipt, iosSecret: proof.secret, recaptchaToken: proof.recaptchaToken,
            captchaResponse: enterprise, recaptchaVersion: enterprise == nil ? nil : Auth.recaptchaVersion, clientType: Auth.clientType)).sessionInfo ?? ""
    }

    /// A second factor's phone info: its `clientType` comes with the reCAPTCHA fields only, as the SDK injects them.
    private static func phoneInfo(_ phoneNumber: String, proof: ProofFields, enterprise: String?) -> StartMFAPhoneRequestInfo {
        StartMFAPhoneRequestInfo(phoneNumber: phoneNumber, iosReceipt: proof.receipt, iosSecret: proof.secret, recaptchaToken: proof.recaptchaToken,
                                 captchaResponse: enterprise, recaptchaVersion: enterprise == nil ? nil : Auth.recaptchaVersion,
                                 clientType: enterprise == nil ? nil : Auth.clientType)
    }

    @inline(never)
    private func startEnrollment(_ backend: BackendClient, _ phoneNumber: String, proof: ProofFields, enterprise: String?,
                                 idToken: String) async throws(AuthError) -> String {
        let info = Self.phoneInfo(phoneNumber, proof: proof, enterprise: enterprise)
        let response = try await backend.call(StartMFAEnrollmentRequest(idToken: idToken, phoneEnrollmentInfo: info))
        return try Self.sessionInfo(response.phoneSessionInfo?.sessionInfo, of: "mfaEnrollment:start")
    }

    /// A second factor's start answer without its phone info is the SDK's unexpected response
    /// (17999: its StartMFA…Response types require it; audit 3, D1.12); an empty session passes.
    static func sessionInfo(_ value: String?, of call: String) throws(AuthError) -> String {
        guard let value else { throw AuthError(.internalError, "\(call) answered without phoneSessionInfo (the SDK's unexpected response)") }
        return value
    }

    @inline(never)
    private func startSignIn(_ backend: BackendClient, _ phoneNumber: String, proof: ProofFields, enterprise: String?,
                             session: MultiFactorSession) async throws(AuthError) -> String {
        let info = Self.phoneInfo(phoneNumber, proof: proof, enterprise: enterprise)
        let response = try await backend.call(StartMFASignInRequest(mfaPendingCredential: session.mfaPendingCredential,
                                                                    mfaEnrollmentId: session.multiFactorInfo?.uid, phoneSignInInfo: info))
        return try Self.sessionInfo(response.phoneResponseInfo?.sessionInfo, of: "mfaSignIn:start")
    }

    /// The credential for `verificationID` and the code the user typed.
    public func credential(withVerificationID verificationID: String, verificationCode: String) -> PhoneAuthCredential {
        PhoneAuthCredential(verificationID: verificationID, verificationCode: verificationCode)
    }

    /// The scheme the reCAPTCHA page returns to: the reversed client ID when it is registered, else
    /// the encoded app ID.
    package var callbackScheme: String {
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

    /// The SDK's `verifyClient(withUIDelegate:)`: the cached credential, or a new one by silent
    /// push; or, where the SDK falls back (a simulator, no APNs token within 5 s, verifyClient
    /// refusing the token, no push within `suggestedTimeout`), a reCAPTCHA token.
    @inline(never)
    private func appProof(_ backend: BackendClient, uiDelegate: any AuthUIDelegate) async throws(AuthError) -> ProofFields {
        func fallback(_ why: ReCAPTCHAFallbackReason) async throws(AuthError) -> ProofFields {
            auth.noteVerification(.reCAPTCHA, fallback: why)
            return .recaptcha(try await reCAPTCHAToken(backend, uiDelegate: uiDelegate))
        }
        // A simulator goes to reCAPTCHA, unless it runs an XCTest suite (PhoneAuthProvider.swift
        // 492–498: `XCTestConfigurationFilePath` unset; audit 3, D1.4).
        if auth.host.isSimulator, !auth.host.runsUnderXCTest { return try await fallback(.simulator) }
        if let cached = auth.cachedCredential {
            auth.noteVerification(.silentPush)
            return .credential(cached)
        }
        let token: AuthAPNSToken
        switch await auth.waitForAPNSToken() {
        case .token(let value): token = value
        case .timedOut:
            return try await fallback(.noAPNsToken)
        case .failed(let reason):
            return try await fallback(.apnsRegistrationFailed(reason))
        }
        let receipt: String, timeoutText: String, seconds: Double
        do { (receipt, timeoutText, seconds) = try await requestPush(backend, token: token) } catch {
            if error.code == .invalidAppCredential || error.code == .missingAppToken {
                return try await fallback(.verifyClientRefused(error.message))
            }
            throw error
        }
        guard let credential = await auth.waitForCredential(receipt: receipt, timeout: .milliseconds(Int64(max(0, seconds) * 1000))) else {
            return try await fallback(.noSilentPush(receipt: receipt, suggestedTimeout: timeoutText))
        }
        auth.noteVerification(.silentPush)
        return .credential(credential)
    }

    /// verifyClient, and its receipt kept pending: the push the backend sends reaches the app
    /// after this returns (`AppHost.readingAnswerBeforePush`, as APNs' latency orders it on a device).
    private func requestPush(_ backend: BackendClient, token: AuthAPNSToken) async throws(AuthError) -> (receipt: String, timeout: String, seconds: Double) {
        try await auth.host.readingAnswerBeforePush { () async throws(AuthError) in
            let response = try await backend.call(VerifyClientRequest(appToken: token.string, isSandbox: token.type == .sandbox))
            // The SDK reads suggestedTimeout with Double(_:) (VerifyClientResponse.swift): "2.5" waits 2.5 s.
            guard let receipt = response.receipt, let timeoutText = response.suggestedTimeout,
                  let seconds = Double(timeoutText), seconds.isFinite
            else {
                throw AuthError(.appConfigurationError, "verifyClient answered without a receipt and a numeric suggestedTimeout string (the SDK stops with fatalError)")
            }
            auth.addPendingReceipt(receipt)
            return (receipt, timeoutText, seconds)
        }
    }

    /// The reCAPTCHA fallback: the auth domain from getProjectConfig, a new event, the handler URL
    /// presented through `uiDelegate`, and the redirect that comes back through `canHandle(url)`.
    @inline(never)
    private func reCAPTCHAToken(_ backend: BackendClient, uiDelegate: any AuthUIDelegate) async throws(AuthError) -> String {
        let options = auth.options
        guard let apiKey = options.apiKey else { throw AuthError(.appConfigurationError, "FirebaseOptions has no API key") }
        let domain = try await auth.webAuthDomain(backend)
        let eventID = ReCAPTCHAFlow.newEventID()
        let scheme = callbackScheme
        let clientID = options.reversedClientIDScheme == scheme ? options.clientID : nil
        guard let url = ReCAPTCHAFlow.handlerURL(
            base: "https://\(domain)", apiKey: apiKey, bundleID: auth.host.bundleID, userAgent: auth.userAgent,  // ibi: Bundle.main's (PAP 622)
            eventID: eventID, clientID: clientID, appID: options.googleAppID, languageCode: auth.languageCode)
        else { throw AuthError(.internalError, "cannot build the reCAPTCHA URL") }
        switch try await auth.presentPage(url, eventID: eventID, scheme: scheme, authType: .verifyApp, uiDelegate: uiDelegate) {
        case .token(let token): return token
        case .failure(let error): throw error
        case .notOurs(let refusal): throw AuthError(.internalError, refusal.message)
        case .link: throw AuthError(.internalError, "the reCAPTCHA page answered with a provider's sign-in")
        }
    }
}
