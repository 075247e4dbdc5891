import Foundation
import IdentityToolkitAPI

// Identity Platform's tenants, as the Auth Emulator keeps them (firebase-tools
// `src/emulator/auth/state.ts`, `AgentProjectState`/`TenantProjectState`; `operations.ts`,
// createTenant … deleteTenant): each tenant its own users and sign-in settings, inside the
// project. Calls name their tenant (``CoreCall/enter(tenant:endpoint:)``); these rules are the
// Admin side's (`/v2/projects/{p}/tenants…`).

extension TenantConfig {
    /// A tenant a call names before any admin made it: the emulator's convenience (every sign-in
    /// method on, a phone second factor allowed; `getTenantProject`), which Google does not have.
    static let implicit = TenantConfig(allowPasswordSignup: true, enableEmailLinkSignin: true, disableAuth: false,
                                       enableAnonymousUser: true,
                                       mfaConfig: MultiFactorAuthConfig(state: .enabled, enabledProviders: [.phoneSMS]))

    /// `config` as a tenant made by `tenants.create` or replaced without an update mask keeps it:
    /// what it leaves out is off, as in production (the emulator's createTenant and updateTenant).
    static func withProductionDefaults(_ config: TenantConfig) -> TenantConfig {
        var made = config
        made.name = nil
        made.tenantId = nil
        made.allowPasswordSignup = config.allowPasswordSignup ?? false
        made.enableEmailLinkSignin = config.enableEmailLinkSignin ?? false
        made.disableAuth = config.disableAuth ?? false
        made.enableAnonymousUser = config.enableAnonymousUser ?? false
        made.mfaConfig = MultiFactorAuthConfig(state: config.mfaConfig?.state ?? .disabled,
                                               enabledProviders: config.mfaConfig?.enabledProviders ?? [])
        return made
    }

    /// The fields an update mask may name (`mfaConfig.state` names one of `mfaConfig`'s).
    static let maskableFields: Set<String> = [
        "displayName", "allowPasswordSignup", "enableEmailLinkSignin", "disableAuth", "enableAnonymousUser", "mfaConfig",
        "mfaConfig.state", "mfaConfig.enabledProviders", "testPhoneNumbers",
    ]

    /// This configuration with the fields `mask` names taken from `update`.
    func updated(with update: TenantConfig, mask: [String]) -> TenantConfig {
        var config = self
        for field in mask {
            switch field {
            case "displayName": config.displayName = update.displayName
            case "allowPasswordSignup": config.allowPasswordSignup = update.allowPasswordSignup
            case "enableEmailLinkSignin": config.enableEmailLinkSignin = update.enableEmailLinkSignin
            case "disableAuth": config.disableAuth = update.disableAuth
            case "enableAnonymousUser": config.enableAnonymousUser = update.enableAnonymousUser
            case "mfaConfig": config.mfaConfig = update.mfaConfig
            case "mfaConfig.state":
                config.mfaConfig = MultiFactorAuthConfig(state: update.mfaConfig?.state, enabledProviders: config.mfaConfig?.enabledProviders)
            case "mfaConfig.enabledProviders":
                config.mfaConfig = MultiFactorAuthConfig(state: config.mfaConfig?.state, enabledProviders: update.mfaConfig?.enabledProviders)
            case "testPhoneNumbers": config.testPhoneNumbers = update.testPhoneNumbers
            default: break
            }
        }
        return config
    }
}

extension BackendRecord {
    /// The record as one of `tenant`'s: a user, session, credential or email that names no
    /// tenant is the tenant's; any other record stays as it is.
    func inTenant(_ tenant: String) -> BackendRecord {
        switch self {
        case .user(var user) where user.tenantId == nil:
            user.tenantId = tenant
            return .user(user)
        case .userDeleted(let localId, nil): return .userDeleted(localId: localId, tenant: tenant)
        case .signedIn(let localId, let at, nil): return .signedIn(localId: localId, at: at, tenant: tenant)
        case .session(let id, let phoneNumber, let code, let createdAt, let purpose, let signIn, nil):
            return .session(id: id, phoneNumber: phoneNumber, code: code, createdAt: createdAt, purpose: purpose, signIn: signIn, tenant: tenant)
        case .mfaPending(let digest, let localId, let provider, let at, let signIn, nil):
            return .mfaPending(digest: digest, localId: localId, provider: provider, at: at, signIn: signIn, tenant: tenant)
        case .temporaryProof(let digest, let phoneNumber, let at, nil):
            return .temporaryProof(digest: digest, phoneNumber: phoneNumber, at: at, tenant: tenant)
        case .applePending(let token, let sub, let email, let at, nil):
            return .applePending(token: token, sub: sub, email: email, at: at, tenant: tenant)
        case .accountsReset(nil): return .accountsReset(tenant: tenant)
        case .sms(var message) where message.tenant == nil:
            message.tenant = tenant
            return .sms(message)
        case .totpSession(let digest, let localId, let secret, let createdAt, nil):
            return .totpSession(digest: digest, localId: localId, secret: secret, createdAt: createdAt, tenant: tenant)
        case .oobCode(let digest, var email) where email.tenant == nil:
            email.tenant = tenant
            return .oobCode(digest: digest, email)
        default: return self
        }
    }
}

extension CoreCall {
    /// A tenant as the v2 API answers it: its name and ID filled in.
    func described(_ id: String, _ config: TenantConfig) -> TenantConfig {
        var answer = config
        answer.name = "projects/\(configuration.projectID)/tenants/\(id)"
        answer.tenantId = id
        return answer
    }

    /// The tenant a path names (a missing one is the front end's 404).
    private func pathTenant(_ id: String?, endpoint: BackendOperation) throws(IdentityToolkitError) -> String {
        guard let id, !id.isEmpty else { throw IdentityToolkitError(.invalidArgument, "\(endpoint): the path names no tenant") }
        return id
    }

    /// `tenants.create`: a new tenant with a random ID (28 letters and digits, as the emulator's),
    /// the sign-in methods the body does not name off.
    mutating func createTenant(_ request: CreateTenantRequest) throws(IdentityToolkitError) -> TenantConfig {
        var id = randomID(length: 28)
        while state.tenants[id] != nil { id = randomID(length: 28) }
        let config = TenantConfig.withProductionDefaults(request.tenant)
        commit(.tenant(id: id, config))
        return described(id, config)
    }

    /// `tenants.get`: the tenant; one not made yet is made with the emulator's defaults (its
    /// `getTenantProject`), so that a suite that names a tenant without making it finds it.
    mutating func getTenant(_ request: GetTenantRequest) throws(IdentityToolkitError) -> TenantConfig {
        let id = try pathTenant(request.tenantId, endpoint: .getTenant)
        if let existing = state.tenants[id] { return described(id, existing) }
        commit(.tenant(id: id, .implicit))
        return described(id, .implicit)
    }

    /// `tenants.patch`: the fields the mask names take the body's values; without a mask the body
    /// replaces the tenant, what it leaves out off (the emulator's updateTenant).
    mutating func updateTenant(_ request: UpdateTenantRequest) throws(IdentityToolkitError) -> TenantConfig {
        let id = try pathTenant(request.tenantId, endpoint: .updateTenant)
        let current = state.tenants[id] ?? .implicit
        let config: TenantConfig
        if let mask = request.updateMask, !mask.isEmpty {
            if let unknown = mask.first(where: { !TenantConfig.maskableFields.contains($0) }) {
                throw reject(.updateTenant, IdentityToolkitError(.invalidArgument, "updateMask names \(unknown), which a tenant does not have or authsim does not simulate"))
            }
            config = current.updated(with: request.tenant, mask: mask)
        } else {
            var replaced = TenantConfig.withProductionDefaults(request.tenant)
            replaced.testPhoneNumbers = request.tenant.testPhoneNumbers
            config = replaced
        }
        commit(.tenant(id: id, config))
        return described(id, config)
    }

    /// `tenants.delete`: the tenant and every user of it (their tokens stop working: no user).
    mutating func deleteTenant(_ request: DeleteTenantRequest) throws(IdentityToolkitError) -> EmptyResponse {
        let id = try pathTenant(request.tenantId, endpoint: .deleteTenant)
        guard state.tenants[id] != nil else { throw reject(.deleteTenant, IdentityToolkitError(.tenantNotFound)) }
        commit(.tenantDeleted(id: id))
        return EmptyResponse()
    }

    /// `tenants.list`: in the order of their IDs, `pageSize` at a time (1,000 at most, the
    /// default 20 as Google's), `pageToken` the last ID of the page before; a full page always
    /// carries a token (the emulator's listTenants).
    func listTenants(_ request: ListTenantsRequest) throws(IdentityToolkitError) -> ListTenantsResponse {
        let size = request.pageSize ?? 20
        guard (0...1000).contains(size) else {
            throw IdentityToolkitError(.invalidArgument, "pageSize must be between 0 and 1000, not \(size)")
        }
        let ids = state.tenants.keys.sorted().filter { id in request.pageToken.map { id > $0 } ?? true }
        let page = size == 0 ? ids : Array(ids.prefix(size))
        let token = size > 0 && ids.count >= size ? page.last : nil
        return ListTenantsResponse(tenants: page.map { described($0, state.tenants[$0]!) }, nextPageToken: token)
    }
}
