import Foundation

// Identity Platform's tenants, as its v2 API describes them (`/v2/projects/{project}/tenants…`,
// `GoogleCloudIdentitytoolkitAdminV2Tenant`) and the Auth Emulator serves them
// (firebase-tools `src/emulator/auth/operations.ts`: createTenant, getTenant, listTenants,
// updateTenant, deleteTenant; `state.ts`: `TenantProjectState`).

/// A tenant's configuration: what its users may sign in with.
package struct TenantConfig: Codable, Sendable, Hashable {
    /// `projects/{project}/tenants/{tenantId}` (output only).
    package var name: String?
    /// Output only: the service makes it.
    package var tenantId: String?
    package var displayName: String?
    package var allowPasswordSignup: Bool?
    package var enableEmailLinkSignin: Bool?
    /// Every sign-in refused (PROJECT_DISABLED).
    package var disableAuth: Bool?
    package var enableAnonymousUser: Bool?
    package var mfaConfig: MultiFactorAuthConfig?
    /// Fictional numbers and their fixed codes, as the project's `signIn.phoneNumber.testPhoneNumbers`.
    package var testPhoneNumbers: [String: String]?

    package init(name: String? = nil, tenantId: String? = nil, displayName: String? = nil, allowPasswordSignup: Bool? = nil,
                enableEmailLinkSignin: Bool? = nil, disableAuth: Bool? = nil, enableAnonymousUser: Bool? = nil,
                mfaConfig: MultiFactorAuthConfig? = nil, testPhoneNumbers: [String: String]? = nil) {
        self.name = name
        self.tenantId = tenantId
        self.displayName = displayName
        self.allowPasswordSignup = allowPasswordSignup
        self.enableEmailLinkSignin = enableEmailLinkSignin
        self.disableAuth = disableAuth
        self.enableAnonymousUser = enableAnonymousUser
        self.mfaConfig = mfaConfig
        self.testPhoneNumbers = testPhoneNumbers
    }
}

/// A tenant's multi-factor settings (`GoogleCloudIdentitytoolkitAdminV2MultiFactorAuthConfig`).
package struct MultiFactorAuthConfig: Codable, Sendable, Hashable {
    package enum State: String, Codable, Sendable, Hashable {
        case unspecified = "STATE_UNSPECIFIED", disabled = "DISABLED", enabled = "ENABLED", mandatory = "MANDATORY"
    }
    package enum Provider: String, Codable, Sendable, Hashable {
        case unspecified = "PROVIDER_UNSPECIFIED", phoneSMS = "PHONE_SMS"
    }
    package var state: State?
    package var enabledProviders: [Provider]?

    package init(state: State?, enabledProviders: [Provider]?) {
        self.state = state
        self.enabledProviders = enabledProviders
    }

    /// Whether a phone can be a second factor (ENABLED or MANDATORY, with PHONE_SMS).
    package var allowsPhoneSecondFactor: Bool {
        (state == .enabled || state == .mandatory) && enabledProviders?.contains(.phoneSMS) == true
    }
}

extension TenantConfig: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "allowPasswordSignup", "autodeleteAnonymousUsers", "client", "disableAuth", "displayName", "emailPrivacyConfig",
        "enableAnonymousUser", "enableEmailLinkSignin", "hashConfig", "inheritance", "mfaConfig", "mobileLinksConfig",
        "monitoring", "name", "passwordPolicyConfig", "recaptchaConfig", "smsRegionConfig", "testPhoneNumbers", "tenantId",
    ]
    package static var unsupportedFields: [String: String] {
        var refused: [String: String] = [:]
        for name in ["autodeleteAnonymousUsers", "client", "emailPrivacyConfig", "hashConfig", "inheritance", "mobileLinksConfig",
                     "monitoring", "passwordPolicyConfig", "recaptchaConfig", "smsRegionConfig"] {
            refused[name] = "a tenant's \(name) is not simulated (nor by the Auth Emulator); set it on the project"
        }
        return refused
    }
}
