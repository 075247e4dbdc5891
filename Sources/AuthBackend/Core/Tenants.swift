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
        case .oobCode(let digest, var email) where email.tenant == nil:
            email.tenant = tenant
            return .oobCode(digest: digest, email)
        default: return self
        }
    }
}
