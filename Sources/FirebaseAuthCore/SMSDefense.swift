import DeviceOS
import Foundation
import HTTPTransport
import IdentityToolkitAPI

// reCAPTCHA SMS defense on the app's side, as FirebaseAuth 12.19 does it
// (`Utilities/AuthRecaptchaVerifier.swift`): the project's config (fetched with `forceRefresh` on
// every verifyPhoneNumber), and a reCAPTCHA Enterprise token from the RecaptchaEnterprise SDK
// when the app links it.

/// The project's reCAPTCHA config, as the SDK keeps it after `getRecaptchaConfig`.
package struct RecaptchaConfig: Sendable, Hashable {
    /// The key (the last part of `projects/<p>/keys/<key>`), empty when no provider is on.
    package let siteKey: String
    package let phone: RecaptchaEnforcement
}

extension Auth {
    /// `retrieveRecaptchaConfig(forceRefresh:)`: `GET /v2/recaptchaConfig`, kept until the next
    /// refresh. A failure fails `verifyPhoneNumber` (the Firebase Auth Emulator answers 501 here).
    @inline(never)
    func retrieveRecaptchaConfig(forceRefresh: Bool) async throws(AuthError) -> RecaptchaConfig {
        if !forceRefresh, let cached = state.withLock({ $0.recaptchaConfig }) { return cached }
        let response = try await backend.call(GetRecaptchaConfigRequest())
        let config = try Self.recaptchaConfig(from: response)
        state.withLock { $0.recaptchaConfig = config }
        return config
    }

    /// The SDK's `parseRecaptchaConfigFromResponse`: unknown providers and states are skipped; a
    /// key that is not `projects/<p>/keys/<key>` while a provider is on is `recaptchaNotEnabled`
    /// (17200, "Invalid siteKey").
    static func recaptchaConfig(from response: GetRecaptchaConfigResponse) throws(AuthError) -> RecaptchaConfig {
        var phone = RecaptchaEnforcement.off
        var enabled = false
        for entry in response.recaptchaEnforcementState ?? [] {
            guard let state = RecaptchaEnforcement(rawValue: entry.enforcementState),
                  [RecaptchaProvider.emailPassword, .phone].contains(entry.provider) else { continue }
            if entry.provider == .phone { phone = state }
            if state != .off { enabled = true }
        }
        var siteKey = ""
        if enabled, let key = response.recaptchaKey {
            let parts = key.components(separatedBy: "/")
            guard parts.count == 4 else {
                throw AuthError(.recaptchaNotEnabled, "Invalid siteKey: \(key) is not projects/<project>/keys/<key>")
            }
            siteKey = parts[3]
        }
        return RecaptchaConfig(siteKey: siteKey, phone: phone)
    }

    /// `AuthRecaptchaVerifier.verify(forceRefresh:action:)` (Utilities/AuthRecaptchaVerifier.swift
    /// 105–147, 188–234): the project's config; without the RecaptchaEnterprise SDK linked,
    /// `recaptchaSDKNotLinked` (17208); a client from `fetchClient(withSiteKey:)` once (its failure
    /// is thrown as the RecaptchaEnterprise SDK's own error, even with an empty key); then
    /// `execute` for `action`, whose failure is `NO_RECAPTCHA` (the SDK swallows that error).
    /// Without `RCAAction`: `recaptchaActionCreationFailed` (17210).
    @inline(never)
    func recaptchaEnterpriseToken(action: RecaptchaAction, forceRefresh: Bool = false) async throws(AuthError) -> String {
        let config = try await retrieveRecaptchaConfig(forceRefresh: forceRefresh)
        guard let sdk = host.recaptchaEnterprise else {
            throw AuthError(.recaptchaSDKNotLinked, """
                The reCAPTCHA SDK is not linked to your app. See https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps \
                (the project's SMS defense is \(config.phone.rawValue): add the RecaptchaEnterprise package to the app)
                """)
        }
        let siteKey: String
        if let kept = state.withLock({ $0.recaptchaClientKey }) {
            siteKey = kept
        } else {
            try await fetchRecaptchaClient(sdk, siteKey: config.siteKey)
            siteKey = config.siteKey
        }
        guard sdk.hasActionClass else {
            throw AuthError(.recaptchaActionCreationFailed,
                            "The reCAPTCHA SDK action class failed to initialize. See https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps (the linked RecaptchaEnterprise has no RCAAction: update it)")
        }
        let request = RecaptchaEnterpriseExecuteRequest(siteKey: siteKey, action: action.rawValue, bundleID: host.bundleID)
        guard sdk.executeGivesToken, let answer = await askRecaptchaService(sdk, RecaptchaEnterpriseService.executePath, request),
              answer.status == 200,
              let token = try? IdentityToolkitJSON.decode(RecaptchaEnterpriseExecuteResponse.self, from: answer.body).token
        else {
            host.logger.notice("reCAPTCHA Enterprise gave no token: NO_RECAPTCHA is sent", metadata: ["action": "\(action.rawValue)"])
            return Self.noRecaptcha
        }
        return token
    }

    /// `Recaptcha.fetchClient(withSiteKey:)`, as the app's RecaptchaEnterprise SDK asks Google's
    /// service (simulated by the backend); the client is kept on success. A failure is the
    /// RecaptchaEnterprise SDK's `RecaptchaError` (an `NSError` with a `RecaptchaErrorCode`), which
    /// the public call throws as it is.
    private func fetchRecaptchaClient(_ sdk: RecaptchaEnterpriseSDK, siteKey: String) async throws(AuthError) {
        let request = RecaptchaEnterpriseFetchClientRequest(siteKey: siteKey, bundleID: host.bundleID)
        let failure: (code: RecaptchaEnterpriseErrors.Code, message: String)
        if let answer = await askRecaptchaService(sdk, RecaptchaEnterpriseService.fetchClientPath, request) {
            if answer.status == 200, (try? IdentityToolkitJSON.decode(RecaptchaEnterpriseFetchClientResponse.self, from: answer.body)) != nil {
                state.withLock { $0.recaptchaClientKey = siteKey }
                return
            }
            let refusal = (try? IdentityToolkitJSON.decode(ErrorResponse.self, from: answer.body))?.error.message ?? "HTTP \(answer.status)"
            failure = refusal.hasPrefix(IdentityToolkitError.Code.invalidSiteKey.rawValue)
                ? (.invalidSiteKey, "The site key used to call reCAPTCHA is invalid.") : (.unknown, "Unknown error occurred during the workflow.")
            host.logger.notice("reCAPTCHA Enterprise's fetchClient was refused", metadata: ["siteKey": "\(siteKey)", "answer": "\(refusal)"])
        } else {
            failure = (.networkError, "reCAPTCHA cannot connect to Google servers, please make sure the app has network access.")
        }
        let error = NSError(domain: RecaptchaEnterpriseErrors.domain, code: failure.code.rawValue,
                            userInfo: [NSLocalizedDescriptionKey: failure.message])
        throw AuthError(passingOn: error, as: .internalError, """
            the RecaptchaEnterprise SDK's fetchClient(withSiteKey: "\(siteKey)") failed (RecaptchaErrorCode \(failure.code.rawValue): \(failure.message)); \
            FirebaseAuth throws that error as it is, with no fallback to the silent push
            """)
    }

    /// `request` POSTed as JSON to the app's RecaptchaEnterprise SDK's service at `path`, as that SDK
    /// asks Google's; nil when the service cannot be reached.
    private func askRecaptchaService(_ sdk: RecaptchaEnterpriseSDK, _ path: String, _ request: some Encodable) async -> TransportResponse? {
        guard let url = URL(string: sdk.service + path), let body = try? IdentityToolkitJSON.encode(request) else { return nil }
        return try? await transport.send(TransportRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")], body: body))
    }

    /// `initializeRecaptchaConfig()`: the project's config fetched again and a reCAPTCHA
    /// Enterprise token made and dropped, so the RecaptchaEnterprise client exists before the first
    /// `verifyPhoneNumber` (the SDK's `verify(forceRefresh: true, action: .defaultAction)`). Without
    /// the RecaptchaEnterprise SDK it fails with 17208 whatever the project's SMS defense, as
    /// 12.19's does.
    public func initializeRecaptchaConfig() async throws {
        do { _ = try await recaptchaEnterpriseToken(action: .defaultAction, forceRefresh: true) } catch { throw AuthError.toApp(error) }
    }

    /// `initializeRecaptchaConfig(completion:)`.
    public func initializeRecaptchaConfig(completion: (((any Error)?) -> Void)?) {
        complete(completion, with: self) { (auth: Auth) async throws in try await auth.initializeRecaptchaConfig() }
    }

    /// What the SDK sends when its reCAPTCHA Enterprise client gave no token.
    static let noRecaptcha = "NO_RECAPTCHA"
    /// `recaptchaVersion` with every Enterprise field.
    static let recaptchaVersion = RecaptchaVersion.recaptchaEnterprise
    static let clientType = "CLIENT_TYPE_IOS"
}
