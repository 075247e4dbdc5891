@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// Tenants in the core alone, as the Auth Emulator keeps them (firebase-tools
/// src/emulator/auth/state.ts `TenantProjectState`, operations.ts createTenant … deleteTenant and
/// each call's `assert(!state.disableAuth, "PROJECT_DISABLED")` and sign-in-method checks;
/// server.ts: a body's tenant against its path's and its ID token's), with the SDK's side:
/// FirebaseAuth Sources/Swift/Backend/IdentityToolkitRequest.swift 63 (`tenantId` in each request
/// of an Auth with a `tenantID`) and Backend/AuthBackend.swift 438 (TENANT_ID_MISMATCH → 17072).
@Suite("Tenants in the backend core: users apart, tokens that name their tenant, each tenant's sign-in settings")
struct TenantCoreTests {
    let start = CoreFixtures.start
    let hash = CoreFixtures.hash

    func code(_ outcome: CoreOutcome<some Any>) -> IdentityToolkitError.Code? {
        if case .failure(let error) = outcome.answer { return error.code }
        return nil
    }

    /// The grant of a sign-in's decision (what the actor signs after the call).
    func grant<Answer>(_ outcome: CoreOutcome<SignInDecision<Answer>>) throws -> TokenGrant {
        guard case .tokens(let grant, _) = try outcome.answer.get() else { throw IdentityToolkitError(.internal, "no tokens") }
        return grant
    }

    func createTenant(_ core: inout BackendCore, _ config: TenantConfig) throws -> String {
        try #require(try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.createTenant(CreateTenantRequest(config))
        }.answer.get().tenantId)
    }

    @Test("the same email in the project and in a tenant is two users; a tenant's ID token names it and finds its own user; its refresh keeps it")
    func usersApart() throws {
        var core = try CoreFixtures.core()
        let tenant = try createTenant(&core, TenantConfig(displayName: "Shop", allowPasswordSignup: true))
        let inProject = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com"), hash: hash)
        }.answer.get()
        let inTenant = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com", tenantId: tenant), hash: hash)
        }.answer.get()
        #expect(inProject.localId != inTenant.localId)
        #expect(core.state.projectUsers.count == 1 && core.state.users(in: tenant).count == 1)
        let user = try #require(core.state.users(in: tenant).byID[inTenant.localId ?? ""])
        #expect(user.tenantId == tenant)

        let signedIn = core.handle(now: start.addingTimeInterval(1)) { call throws(IdentityToolkitError) in
            try call.signInWithPassword(email: "ada@example.com", verifiedHash: hash.hash, tenant: tenant)
        }
        let tokens = try grant(signedIn)
        #expect(tokens.user.localId == inTenant.localId)
        let idToken = core.tokenSigner.token(for: tokens.user, provider: .password, now: start.addingTimeInterval(1))
        #expect(core.tokenSigner.verifiedClaims(idToken, now: start.addingTimeInterval(1))?.firebase.tenant == tenant)

        // getAccountInfo carries no tenantId (the SDK sends none): the token's tenant is the call's.
        let looked = try core.handle(now: start.addingTimeInterval(2)) { call throws(IdentityToolkitError) in
            try call.getAccountInfo(GetAccountInfoRequest(idToken: idToken))
        }.answer.get()
        #expect(looked.users?.first?.localId == inTenant.localId && looked.users?.first?.tenantId == tenant)
        let mismatch = core.handle(now: start.addingTimeInterval(2)) { call throws(IdentityToolkitError) in
            try call.setAccountInfo(SetAccountInfoRequest(idToken: idToken, displayName: "Ada", tenantId: "another"), hash: nil)
        }
        #expect(code(mismatch) == .tenantIDMismatch)

        let (refreshed, _) = try core.handle(now: start.addingTimeInterval(3)) { call throws(IdentityToolkitError) in
            try call.refresh(SecureTokenRequest(grantType: "refresh_token", refreshToken: tokens.refreshToken))
        }.answer.get()
        #expect(refreshed.localId == inTenant.localId && refreshed.tenantId == tenant)
        // The project's own sign-in with the same email finds the project's user.
        let projectSignIn = try grant(core.handle(now: start.addingTimeInterval(4)) { call throws(IdentityToolkitError) in
            try call.signInWithPassword(email: "ada@example.com", verifiedHash: hash.hash, tenant: nil)
        })
        #expect(projectSignIn.user.localId == inProject.localId && projectSignIn.user.tenantId == nil)
    }

    @Test("a tenant made by an admin has every sign-in method off until enabled; disableAuth refuses every call; its MFA setting holds second factors")
    func settings() throws {
        var core = try CoreFixtures.core()
        let tenant = try createTenant(&core, TenantConfig())
        let made = try #require(core.state.tenants[tenant])
        #expect(made.allowPasswordSignup == false && made.enableAnonymousUser == false && made.enableEmailLinkSignin == false)
        #expect(made.mfaConfig == MultiFactorAuthConfig(state: .disabled, enabledProviders: []))

        func signUp(email: String?) -> CoreOutcome<String?> {
            core.handle(now: start) { call throws(IdentityToolkitError) in
                try call.signUpPassword(SignUpNewUserRequest(email: email, password: email == nil ? nil : "secret1", tenantId: tenant))
            }
        }
        #expect(code(signUp(email: "a@example.com")) == .operationNotAllowed)
        #expect(code(signUp(email: nil)) == .adminOnlyOperation, "anonymous users off")
        let password = core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.passwordCredentials(VerifyPasswordRequest(email: "a@example.com", password: "secret1", tenantId: tenant))
        }
        #expect(code(password) == .passwordLoginDisabled)
        let link = core.handle(now: start) { call throws(IdentityToolkitError) in
            var request = GetOOBConfirmationCodeRequest(requestType: .emailSignIn, email: "a@example.com")
            request.tenantId = tenant
            return try call.oobRequestType(request)
        }
        #expect(code(link) == .operationNotAllowed, "email links off")

        let enabled = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.updateTenant(UpdateTenantRequest(tenantId: tenant, tenant: TenantConfig(allowPasswordSignup: true, enableAnonymousUser: true),
                                                      updateMask: ["allowPasswordSignup", "enableAnonymousUser"]))
        }.answer.get()
        #expect(enabled.allowPasswordSignup == true && enabled.enableAnonymousUser == true && enabled.enableEmailLinkSignin == false)
        #expect(code(signUp(email: "a@example.com")) == nil && code(signUp(email: nil)) == nil)

        // A user with a verified email may not enroll a phone second factor while the tenant's MFA is off.
        let uid = try #require(try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "b@example.com", emailVerified: true, tenantId: tenant), hash: hash)
        }.answer.get().localId)
        let user = try #require(core.state.users(in: tenant).byID[uid])
        let idToken = core.tokenSigner.token(for: user, provider: .password, now: start)
        let enroll = core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.startMFAEnrollment(StartMFAEnrollmentRequest(idToken: idToken, phoneEnrollmentInfo: StartMFAPhoneRequestInfo(phoneNumber: "+16505550111"),
                                                                  tenantId: tenant))
        }
        #expect(code(enroll) == .operationNotAllowed)

        _ = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.updateTenant(UpdateTenantRequest(tenantId: tenant, tenant: TenantConfig(disableAuth: true), updateMask: ["disableAuth"]))
        }.answer.get()
        let lookup = core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.getAccountInfo(GetAccountInfoRequest(idToken: idToken))
        }
        #expect(code(lookup) == .projectDisabled)
        #expect(code(signUp(email: "c@example.com")) == .projectDisabled)
    }

    @Test("a tenant a call names before any admin made it is the emulator's (everything on), kept once the call changes anything")
    func implicit() throws {
        var core = try CoreFixtures.core()
        let signedUp = core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.signUp(SignUpNewUserRequest(tenantId: "tenant-1"), hash: nil)
        }
        let tokens = try grant(signedUp)
        #expect(tokens.user.tenantId == "tenant-1")
        #expect(signedUp.records.first.map { if case .tenant(id: "tenant-1", .implicit) = $0 { true } else { false } } == true,
                "the tenant is kept before its first user")
        let listed = try core.handle(now: start) { call throws(IdentityToolkitError) in try call.listTenants(ListTenantsRequest()) }.answer.get()
        #expect(listed.tenants?.map(\.tenantId) == ["tenant-1"])
        #expect(listed.tenants?.first?.name == "projects/\(core.configuration.projectID)/tenants/tenant-1")
    }

    @Test("tenants list in the order of their IDs a page at a time; a deleted tenant's users and tokens are gone")
    func listAndDelete() throws {
        var core = try CoreFixtures.core()
        let ids = try (0..<3).map { _ in try createTenant(&core, TenantConfig(allowPasswordSignup: true)) }.sorted()
        func page(_ size: Int, after token: String?) throws -> ListTenantsResponse {
            try core.handle(now: start) { call throws(IdentityToolkitError) in
                try call.listTenants(ListTenantsRequest(pageSize: size, pageToken: token))
            }.answer.get()
        }
        let first = try page(2, after: nil)
        #expect(first.tenants?.compactMap(\.tenantId) == Array(ids.prefix(2)) && first.nextPageToken == ids[1])
        let second = try page(2, after: first.nextPageToken)
        #expect(second.tenants?.compactMap(\.tenantId) == [ids[2]] && second.nextPageToken == nil)

        let tokens = try grant(core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.signUp(SignUpNewUserRequest(email: "a@example.com", password: "secret1", tenantId: ids[0]), hash: hash)
        })
        _ = try core.handle(now: start) { call throws(IdentityToolkitError) in try call.deleteTenant(DeleteTenantRequest(tenantId: ids[0])) }.answer.get()
        #expect(core.state.tenants[ids[0]] == nil)
        let refresh = core.handle(now: start.addingTimeInterval(1)) { call throws(IdentityToolkitError) in
            try call.refresh(SecureTokenRequest(grantType: "refresh_token", refreshToken: tokens.refreshToken))
        }
        #expect(code(refresh) == .userNotFound)
        let again = core.handle(now: start) { call throws(IdentityToolkitError) in try call.deleteTenant(DeleteTenantRequest(tenantId: ids[0])) }
        #expect(code(again) == .tenantNotFound)
    }

    @Test("a tenant's custom token (tenant_id) signs in to that tenant only; a phone code sent for a tenant signs in to it")
    func customTokenAndPhone() throws {
        var core = try CoreFixtures.core()
        let token = #"{"uid":"alice","tenant_id":"t1"}"#
        func signIn(_ tenant: String?) -> CoreOutcome<SignInDecision<VerifyCustomTokenResponse>> {
            core.handle(now: start) { call throws(IdentityToolkitError) in
                try call.signInWithCustomToken(VerifyCustomTokenRequest(token: token, tenantId: tenant))
            }
        }
        #expect(code(signIn(nil)) == .tenantIDMismatch)
        #expect(code(signIn("t2")) == .tenantIDMismatch)
        #expect(try grant(signIn("t1")).user.tenantId == "t1")

        var phone = try CoreFixtures.core()
        _ = try phone.handle(now: start) { call throws(IdentityToolkitError) in
            try call.updateTenant(UpdateTenantRequest(tenantId: "t1", tenant: TenantConfig(testPhoneNumbers: ["+16505550199": "123456"]),
                                                      updateMask: ["testPhoneNumbers"]))
        }.answer.get()
        let session = try #require(try phone.handle(now: start) { call throws(IdentityToolkitError) in
            try call.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550199", tenantId: "t1"), languageCode: nil)
        }.answer.get().sessionInfo)
        let elsewhere = phone.handle(now: start) { call throws(IdentityToolkitError) in
            try call.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session, code: "123456", tenantId: "t2"))
        }
        #expect(code(elsewhere) == .tenantIDMismatch, "the code was sent for t1")
        let signedIn = try grant(phone.handle(now: start) { call throws(IdentityToolkitError) in
            try call.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session, code: "123456", tenantId: "t1"))
        })
        #expect(signedIn.user.tenantId == "t1" && phone.state.projectUsers.count == 0)
    }

    @Test("the records of a state with tenants rebuild it: tenants, their users, their sessions")
    func records() throws {
        var core = try CoreFixtures.core()
        let tenant = try createTenant(&core, TenantConfig(displayName: "Shop", allowPasswordSignup: true))
        _ = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(localId: "same", email: "a@example.com", tenantId: tenant), hash: hash)
        }.answer.get()
        _ = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(localId: "same", email: "b@example.com"), hash: hash)
        }.answer.get()
        var rebuilt = BackendState()
        for record in core.state.records { rebuilt.apply(try BackendJournal.record(try BackendJournal.text(record))) }
        #expect(rebuilt.tenants[tenant] == core.state.tenants[tenant])
        #expect(rebuilt.users(in: tenant).byID["same"]?.email == "a@example.com")
        #expect(rebuilt.projectUsers.byID["same"]?.email == "b@example.com")
    }
}
