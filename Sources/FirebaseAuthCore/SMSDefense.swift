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

    /// `AuthRecaptchaVerifier.verify(forceRefresh:action:)`: the token the app's
    /// RecaptchaEnterprise SDK gives for `action`, or `NO_RECAPTCHA` when its `execute` fails (the
    /// SDK swallows that error). Without the SDK linked: `recaptchaSDKNotLinked` (17208); without
    /// `RCAAction`: `recaptchaActionCreationFailed` (17210).
    @inline(never)
    func recaptchaEnterpriseToken(action: RecaptchaAction) async throws(AuthError) -> String {
        let config = try await retrieveRecaptchaConfig(forceRefresh: false)
        guard let sdk = host.recaptchaEnterprise else {
            throw AuthError(.recaptchaSDKNotLinked, """
                The reCAPTCHA SDK is not linked to your app. See https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps \
                (the project's SMS defense is \(config.phone.rawValue): add the RecaptchaEnterprise package to the app)
                """)
        }
        guard sdk.hasActionClass else {
            throw AuthError(.recaptchaActionCreationFailed,
                            "The reCAPTCHA SDK action class failed to initialize. See https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps (the linked RecaptchaEnterprise has no RCAAction: update it)")
        }
        let request = RecaptchaEnterpriseExecuteRequest(siteKey: config.siteKey, action: action.rawValue, bundleID: host.bundleID)
        guard let url = URL(string: sdk.service + RecaptchaEnterpriseService.executePath),
              let body = try? IdentityToolkitJSON.encode(request),
              let answer = try? await transport.send(TransportRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")],
                                                                     body: body)),
              answer.status == 200,
              let token = try? IdentityToolkitJSON.decode(RecaptchaEnterpriseExecuteResponse.self, from: answer.body).token
        else {
            host.logger.notice("reCAPTCHA Enterprise gave no token: NO_RECAPTCHA is sent", metadata: ["action": "\(action.rawValue)"])
            return Self.noRecaptcha
        }
        return token
    }

    /// What the SDK sends when its reCAPTCHA Enterprise client gave no token.
    static let noRecaptcha = "NO_RECAPTCHA"
    /// `recaptchaVersion` with every Enterprise field.
    static let recaptchaVersion = RecaptchaVersion.recaptchaEnterprise
    static let clientType = "CLIENT_TYPE_IOS"
}
