import Foundation
import IdentityToolkitAPI

extension IdentityToolkit {
    // MARK: Project config and reCAPTCHA Enterprise (SMSDefense.swift)

    /// The project config: its reCAPTCHA part, as the Admin API writes it (a fleet's, with a shared store).
    public func projectConfigForAdmin() async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await readShared()
        return core.currentProjectConfig()
    }

    /// The project config in the Auth Emulator's own shape (`signIn.allowDuplicateEmails`,
    /// `emailPrivacyConfig`): what an export's `config.json` holds, so that the emulator loads it.
    public func projectConfigForExport() async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await readShared()
        return EmulatorProjectConfig(signIn: .init(allowDuplicateEmails: core.emulatorSignIn.allowDuplicateEmails),
                                     emailPrivacyConfig: .init(enableImprovedEmailPrivacy: core.emulatorSignIn.enableImprovedEmailPrivacy))
    }

    /// Changes the project config (the fields given; others stay): the emulator's sign-in
    /// settings, the test phone numbers (replaced as a whole, checked as at start-up), and the
    /// reCAPTCHA config as the Admin API's `updateProjectConfig` does (the next `recaptchaConfig`
    /// and code request see it). Nothing changes unless everything given is good.
    ///
    /// With a shared store the config is the fleet's: it is a record (``SharedProjectConfig``), and
    /// every node adopts it. Without one it stays in memory, as the emulator's config does.
    public func updateProjectConfig(_ patch: EmulatorProjectConfig) async throws(IdentityToolkitError) -> EmulatorProjectConfig {
        try await change { core throws(IdentityToolkitError) in try core.updateProjectConfig(patch) }
    }

    /// `GET /v2/recaptchaConfig`: the project's reCAPTCHA Enterprise key (only when a provider is
    /// in AUDIT or ENFORCE, as the service answers) and the enforcement state of each provider.
    public func recaptchaConfig(_ request: GetRecaptchaConfigRequest) async throws(IdentityToolkitError) -> GetRecaptchaConfigResponse {
        try await read { core throws(IdentityToolkitError) in try core.recaptchaConfig(request) }
    }

    /// The simulated reCAPTCHA Enterprise service: a token for `action` with the project's site
    /// key, for the iOS app the key is restricted to. What the RecaptchaEnterprise SDK's
    /// `execute(withAction:)` gets from Google.
    public func executeRecaptchaEnterprise(_ request: RecaptchaEnterpriseExecuteRequest) async throws(IdentityToolkitError) -> RecaptchaEnterpriseExecuteResponse {
        try await change { core throws(IdentityToolkitError) in try core.executeRecaptchaEnterprise(request) }
    }
}
