import Foundation

// Identity Platform's tenants, as its v2 API describes them (`/v2/projects/{project}/tenants…`,
// `GoogleCloudIdentitytoolkitAdminV2Tenant`) and the Auth Emulator serves them
// (firebase-tools `src/emulator/auth/operations.ts`: createTenant, getTenant, listTenants,
// updateTenant, deleteTenant; `state.ts`: `TenantProjectState`).

extension IdentityToolkitEndpoint {
    package static let createTenant = Self(.v2Project, "tenants")
    package static let listTenants = Self(.v2Project, "tenants", method: .get)
    package static let getTenant = Self(.v2Project, "tenants/{tenant}", method: .get)
    package static let updateTenant = Self(.v2Project, "tenants/{tenant}", method: .patch)
    package static let deleteTenant = Self(.v2Project, "tenants/{tenant}", method: .delete)
}

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

/// `POST …/v2/projects/{p}/tenants`: a new tenant; its body is the tenant.
package struct CreateTenantRequest: AuthRPCRequest, Hashable {
    package typealias Response = TenantConfig
    package static let endpoint = IdentityToolkitEndpoint.createTenant
    package var tenant: TenantConfig

    package init(_ tenant: TenantConfig) { self.tenant = tenant }
    package init(from decoder: any Decoder) throws { tenant = try TenantConfig(from: decoder) }
    package func encode(to encoder: any Encoder) throws { try tenant.encode(to: encoder) }
}

/// `GET …/v2/projects/{p}/tenants/{t}`.
package struct GetTenantRequest: AuthRPCRequest, Hashable {
    package typealias Response = TenantConfig
    package static let endpoint = IdentityToolkitEndpoint.getTenant
    /// From the path.
    package var tenantId: String?
    package init(tenantId: String?) { self.tenantId = tenantId }
}

/// `DELETE …/v2/projects/{p}/tenants/{t}`: the tenant and every user of it.
package struct DeleteTenantRequest: AuthRPCRequest, Hashable {
    package typealias Response = EmptyResponse
    package static let endpoint = IdentityToolkitEndpoint.deleteTenant
    /// From the path.
    package var tenantId: String?
    package init(tenantId: String?) { self.tenantId = tenantId }
}

/// `PATCH …/v2/projects/{p}/tenants/{t}?updateMask=a,b`: the fields the mask names take the
/// body's values; without a mask, every field does (absent ones their defaults).
package struct UpdateTenantRequest: AuthRPCRequest, Hashable {
    package typealias Response = TenantConfig
    package static let endpoint = IdentityToolkitEndpoint.updateTenant
    /// From the path.
    package var tenantId: String?
    package var tenant: TenantConfig
    /// The fields to change, by their JSON names (`mfaConfig.state` names a nested one); nil: all.
    package var updateMask: [String]?

    package init(tenantId: String?, tenant: TenantConfig, updateMask: [String]?) {
        self.tenantId = tenantId
        self.tenant = tenant
        self.updateMask = updateMask
    }
}

/// `GET …/v2/projects/{p}/tenants?pageSize=…&pageToken=…`: tenants in the order of their IDs.
package struct ListTenantsRequest: AuthRPCQueryRequest, Hashable {
    package typealias Response = ListTenantsResponse
    package static let endpoint = IdentityToolkitEndpoint.listTenants
    package var pageSize: Int?
    package var pageToken: String?

    package init(pageSize: Int? = nil, pageToken: String? = nil) {
        self.pageSize = pageSize
        self.pageToken = pageToken
    }

    package init(queryItems: [URLQueryItem]) throws(IdentityToolkitError) {
        var pageSize: Int?
        var pageToken: String?
        for item in queryItems {
            switch item.name {
            case "pageSize":
                guard let text = item.value, let number = Int(text) else {
                    throw IdentityToolkitError(.invalidJSON, "Invalid value at 'page_size' (TYPE_INT32), \"\(item.value ?? "")\"")
                }
                pageSize = number
            case "pageToken": pageToken = item.value
            case "key", "alt", "prettyPrint", "$.xgafv": break
            default: throw IdentityToolkitError(.invalidArgument, "tenants.list takes pageSize and pageToken, not \(item.name)")
            }
        }
        self.init(pageSize: pageSize, pageToken: pageToken)
    }

    package var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let pageSize { items.append(URLQueryItem(name: "pageSize", value: String(pageSize))) }
        if let pageToken { items.append(URLQueryItem(name: "pageToken", value: pageToken)) }
        return items
    }
}

package struct ListTenantsResponse: Codable, Sendable, Hashable {
    package var tenants: [TenantConfig]?
    /// Absent on the last page.
    package var nextPageToken: String?
    package init(tenants: [TenantConfig]?, nextPageToken: String?) {
        self.tenants = tenants
        self.nextPageToken = nextPageToken
    }
}
