import Foundation
import IdentityToolkitAPI
import Utilities

// The project config, as the Admin API and the Auth Emulator's own config endpoint read and change it:
// the emulator's sign-in settings, the test phone numbers, the reCAPTCHA part (SMS defense). With a
// fleet's store it is a record every node adopts (SharedProjectConfig).

extension CoreCall {
    /// ``IdentityToolkit/updateProjectConfig(_:)``'s rules.
    mutating func updateProjectConfig(_ patch: EmulatorProjectConfig) throws(IdentityToolkitError) -> EmulatorProjectConfig {
        var numbers = testPhoneNumbers
        if let given = patch.signIn?.phoneNumber?.testPhoneNumbers {
            var check = configuration
            check.testPhoneNumbers = given
            numbers = try check.validated().testPhoneNumbers
        }
        if patch.signIn?.phoneNumber?.enabled == false {
            throw IdentityToolkitError(.invalidConfig, "signIn.phoneNumber.enabled: phone sign-in is what this backend is for; it stays on")
        }
        var signIn = emulatorSignIn
        if let flag = patch.signIn?.allowDuplicateEmails { signIn.allowDuplicateEmails = flag }
        if let flag = patch.emailPrivacyConfig?.enableImprovedEmailPrivacy { signIn.enableImprovedEmailPrivacy = flag }
        guard let recaptcha = patch.recaptchaConfig else {
            keepProjectConfig(SharedProjectConfig(testPhoneNumbers: numbers, smsDefense: smsDefenseSettings, signIn: signIn))
            return core.currentProjectConfig()
        }
        var settings = smsDefenseSettings
        if let state = recaptcha.phoneEnforcementState {
            guard let parsed = RecaptchaEnforcement(rawValue: state) else {
                throw IdentityToolkitError(.invalidConfig, "recaptchaConfig.phoneEnforcementState must be OFF, AUDIT or ENFORCE, not \(state)")
            }
            settings.phone = parsed
        }
        if let state = recaptcha.emailPasswordEnforcementState, state != RecaptchaEnforcement.off.rawValue {
            throw IdentityToolkitError(.invalidConfig, "recaptchaConfig.emailPasswordEnforcementState: email/password sign-in is not modelled; only OFF")
        }
        if let flag = recaptcha.useSmsTollFraudProtection { settings.useSmsTollFraudProtection = flag }
        if let flag = recaptcha.useSmsBotScore { settings.useSmsBotScore = flag }
        if let rules = recaptcha.tollFraudManagedRules {
            guard rules.count == 1, let rule = rules.first, rule.action == .block, (0...1).contains(rule.startScore) else {
                throw IdentityToolkitError(.invalidConfig, "recaptchaConfig.tollFraudManagedRules: one rule {startScore: 0…1, action: BLOCK}")
            }
            settings.tollFraudThreshold = rule.startScore
        }
        keepProjectConfig(SharedProjectConfig(testPhoneNumbers: numbers, smsDefense: settings, signIn: signIn))
        log(.info, "project reCAPTCHA config changed", ["phone": "\(settings.phone.rawValue)", "tollFraudThreshold": "\(settings.tollFraudThreshold)"])
        return core.currentProjectConfig()
    }

    /// Puts `config` in force: recorded for the fleet when it is shared (``projectConfigIsShared``), in memory otherwise.
    private mutating func keepProjectConfig(_ config: SharedProjectConfig) {
        if projectConfigIsShared {
            commit(.projectConfig(config))
        }
        adopt(config)
    }

}

extension BackendCore {
    /// The project config as it is now.
    func currentProjectConfig() -> EmulatorProjectConfig {
        let settings = smsDefenseSettings
        return EmulatorProjectConfig(
            signIn: .init(allowDuplicateEmails: emulatorSignIn.allowDuplicateEmails,
                          phoneNumber: .init(enabled: true, testPhoneNumbers: testPhoneNumbers)),
            emailPrivacyConfig: .init(enableImprovedEmailPrivacy: emulatorSignIn.enableImprovedEmailPrivacy),
            recaptchaConfig: ProjectRecaptchaConfig(
                phoneEnforcementState: settings.phone.rawValue, emailPasswordEnforcementState: RecaptchaEnforcement.off.rawValue,
                useSmsTollFraudProtection: settings.useSmsTollFraudProtection, useSmsBotScore: settings.useSmsBotScore,
                tollFraudManagedRules: [.init(startScore: settings.tollFraudThreshold, action: .block)]),
            authsim: .init(bundleID: configuration.bundleID, suggestedTimeoutSeconds: configuration.suggestedTimeout,
                           receiptLifetimeSeconds: Int(configuration.receiptLifetime), codeLifetimeSeconds: Int(configuration.codeLifetime),
                           fixedSMSCode: configuration.fixedSMSCode, idSeed: configuration.idSeed != nil))
    }

    /// The fleet's project config, as the records left it.
    mutating func adopt(_ config: SharedProjectConfig) {
        smsDefenseSettings = config.smsDefense
        testPhoneNumbers = config.testPhoneNumbers
        emulatorSignIn = config.signIn
    }
}
