import Foundation
import HTTPServerSupport
import Hummingbird
import HummingbirdCore
import IdentityToolkitAPI
import NIOCore
import Utilities

/// The backend's operations, as events, timelines and explanations name them: one per row of
/// ``ToolkitCalls``.
package enum BackendOperation: String, Sendable, Hashable, Codable, CaseIterable {
    case verifyClient, sendVerificationCode, signInWithPhoneNumber, signInWithIdp, revokeToken, deleteAccount, setAccountInfo
    case getAccountInfo, secureToken, mfaEnrollmentStart, mfaEnrollmentFinalize, mfaEnrollmentWithdraw, mfaSignInStart, mfaSignInFinalize
    case recaptchaConfig, signInWithCustomToken, signUp, signInWithPassword, sendOobCode, resetPassword, createAuthUri, signInWithEmailLink
    case getProjectConfig
    case adminCreateUser, adminLookup, adminUpdate, adminDelete, adminBatchDelete, adminBatchGet, adminQuery, adminBatchCreate, adminSendOobCode
    case createTenant, getTenant, listTenants, updateTenant, deleteTenant

    /// The second factor's operations (the v2 `accounts/mfa…` paths).
    package static let secondFactorOperations: Set<BackendOperation> = Set(
        ToolkitCalls.all.filter { $0.endpoints.contains { $0.name.hasPrefix("accounts/mfa") } }.map(\.operation))
}

/// Every Identity Toolkit (and Secure Token) call the backend answers, one row each: its
/// operation, its paths in every spelling, its request type, how its body is read, and its rule.
/// Adding a call: its row here (and its case above), its rule in `Core/`, the SDK's call in
/// FirebaseAuthCore (docs/layout.md, "Adding things"). ``all`` lists the rows; `CallTableTests`
/// holds it to ``BackendOperation`` and every path to its route.
///
/// Readings (``CallReading``): the app's calls hold field names to the schema (`knownFields`), or
/// also refuse what is not implemented (`checked`), as Google's front end and the emulator do;
/// `lenient` only where the SDK's older shapes must still be taken.
package enum ToolkitCalls {
    // MARK: Phone sign-in and its app verification (Core/PhoneSignIn.swift, Core/SMSDefense.swift)

    package static let verifyClient = ToolkitCall(.verifyClient, VerifyClientRequest.self, at: [.verifyClient], reading: .knownFields,
                                                 .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.verifyClient(call) })
    package static let sendVerificationCode = ToolkitCall(
        .sendVerificationCode, SendVerificationCodeRequest.self, at: [.sendVerificationCode, .accountsSendVerificationCode], reading: .knownFields,
        .actor { toolkit, call, headers throws(IdentityToolkitError) in try await toolkit.sendVerificationCode(call, languageCode: headers[.firebaseLocale]) })
    package static let signInWithPhoneNumber = ToolkitCall(
        .signInWithPhoneNumber, VerifyPhoneNumberRequest.self, at: [.verifyPhoneNumber, .accountsSignInWithPhoneNumber], reading: .knownFields,
        .signIn { core, call throws(IdentityToolkitError) in try core.signInWithPhoneNumber(call) })
    /// A GET with no body; older auth cores POSTed it, and the service takes both.
    package static let getProjectConfig = ToolkitCall(
        .getProjectConfig, GetProjectConfigRequest.self, at: [.getProjectConfig],
        reading: CallReading(.special, methods: [.get, .post]) { request, body, _, _ throws(IdentityToolkitError) in
            request.method == .get ? GetProjectConfigRequest(queryItems: request.uri.queryItems)
                : try IdentityToolkitJSON.decode(GetProjectConfigRequest.self, from: body.readableBytesView)
        },
        .actor { toolkit, _, _ in toolkit.projectConfig() })
    package static let recaptchaConfig = ToolkitCall(.recaptchaConfig, GetRecaptchaConfigRequest.self, at: [.getRecaptchaConfig], reading: .query,
                                                    .read { core, call throws(IdentityToolkitError) in try core.recaptchaConfig(call) })

    // MARK: Second factors (Core/MultiFactor.swift)

    package static let mfaEnrollmentStart = ToolkitCall(.mfaEnrollmentStart, StartMFAEnrollmentRequest.self, at: [.startMFAEnrollment],
                                                       reading: .knownFields,
                                                       .change { core, call throws(IdentityToolkitError) in try core.startMFAEnrollment(call) })
    package static let mfaEnrollmentFinalize = ToolkitCall(.mfaEnrollmentFinalize, FinalizeMFAEnrollmentRequest.self, at: [.finalizeMFAEnrollment],
                                                          reading: .knownFields,
                                                          .signIn { core, call throws(IdentityToolkitError) in try core.finalizeMFAEnrollment(call) })
    package static let mfaEnrollmentWithdraw = ToolkitCall(.mfaEnrollmentWithdraw, WithdrawMFARequest.self, at: [.withdrawMFA], reading: .knownFields,
                                                          .signIn { core, call throws(IdentityToolkitError) in try core.withdrawMFA(call) })
    package static let mfaSignInStart = ToolkitCall(.mfaSignInStart, StartMFASignInRequest.self, at: [.startMFASignIn], reading: .knownFields,
                                                   .change { core, call throws(IdentityToolkitError) in try core.startMFASignIn(call) })
    package static let mfaSignInFinalize = ToolkitCall(.mfaSignInFinalize, FinalizeMFASignInRequest.self, at: [.finalizeMFASignIn],
                                                      reading: .knownFields,
                                                      .signIn { core, call throws(IdentityToolkitError) in try core.finalizeMFASignIn(call) })

    // MARK: The signed-in user (Core/Accounts.swift)

    /// The Secure Token service: the SDK posts JSON, REST clients a form.
    package static let secureToken = ToolkitCall(
        .secureToken, SecureTokenRequest.self, at: [.secureToken],
        reading: CallReading(.special) { request, body, _, _ throws(IdentityToolkitError) in
            guard request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true else {
                return try IdentityToolkitJSON.decode(SecureTokenRequest.self, from: body.readableBytesView)
            }
            let form = URI.queryItems(in: String(buffer: body))
            func value(_ name: String) -> String? { form.first { $0.name == name }?.value }
            return SecureTokenRequest(grantType: value("grant_type") ?? value("grantType"),
                                      refreshToken: value("refresh_token") ?? value("refreshToken"), code: value("code"))
        },
        .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.secureToken(call) })
    package static let getAccountInfo = ToolkitCall(.getAccountInfo, GetAccountInfoRequest.self, at: [.getAccountInfo, .accountsLookup],
                                                   reading: .knownFields,
                                                   .change { core, call throws(IdentityToolkitError) in try core.getAccountInfo(call) })
    package static let setAccountInfo = ToolkitCall(.setAccountInfo, SetAccountInfoRequest.self, at: [.setAccountInfo, .accountsUpdate],
                                                   reading: .knownFields,
                                                   .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.setAccountInfo(call) })
    package static let deleteAccount = ToolkitCall(.deleteAccount, DeleteAccountRequest.self, at: [.deleteAccount, .accountsDelete],
                                                  reading: .knownFields,
                                                  .change { core, call throws(IdentityToolkitError) in try core.deleteAccount(call) })

    // MARK: Email and password, anonymous and custom-token users (Core/EmailPassword.swift, Core/UserManagement.swift)

    /// The app's sign-up: every field of the schema is known, and `returnSecureToken`, which the
    /// SDK sends (SignUpNewUserRequest.swift 42) and the document dropped; which the app may set
    /// is the rule's to say.
    package static let signUp = ToolkitCall(
        .signUp, SignUpNewUserRequest.self, at: [.signUpNewUser, .accountsSignUp],
        reading: CallReading(.special) { _, body, _, name throws(IdentityToolkitError) in
            for field in try IdentityToolkitJSON.object(from: body.readableBytesView, what: name).keys.sorted()
            where !SignUpNewUserRequest.schemaFields.contains(field) && field != "returnSecureToken" {
                throw IdentityToolkitError.unknownField(field, at: nil)
            }
            return try IdentityToolkitJSON.decode(SignUpNewUserRequest.self, from: body.readableBytesView)
        },
        .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.signUp(call) })
    package static let signInWithPassword = ToolkitCall(
        .signInWithPassword, VerifyPasswordRequest.self, at: [.verifyPassword, .accountsSignInWithPassword], reading: .checked,
        .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.signInWithPassword(call) })
    /// `signIn(withEmail:link:)`, and `link(with:)` an email link's credential.
    package static let signInWithEmailLink = ToolkitCall(
        .signInWithEmailLink, EmailLinkSignInRequest.self, at: [.emailLinkSignin, .accountsSignInWithEmailLink], reading: .checked,
        .signIn { core, call throws(IdentityToolkitError) in try core.signInWithEmailLink(call) })
    package static let sendOobCode = ToolkitCall(.sendOobCode, GetOOBConfirmationCodeRequest.self, at: [.getOobConfirmationCode, .accountsSendOobCode],
                                                reading: .checked,
                                                .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.sendOobCode(call) })
    package static let resetPassword = ToolkitCall(.resetPassword, ResetPasswordRequest.self, at: [.resetPassword, .accountsResetPassword],
                                                  reading: .checked,
                                                  .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.resetPassword(call) })
    /// `fetchSignInMethods(forEmail:)`.
    package static let createAuthUri = ToolkitCall(.createAuthUri, CreateAuthURIRequest.self, at: [.createAuthUri, .accountsCreateAuthUri],
                                                  reading: .checked,
                                                  .read { core, call throws(IdentityToolkitError) in try core.createAuthUri(call) })
    package static let signInWithCustomToken = ToolkitCall(
        .signInWithCustomToken, VerifyCustomTokenRequest.self, at: [.verifyCustomToken, .accountsSignInWithCustomToken], reading: .checked,
        .signIn { core, call throws(IdentityToolkitError) in try core.signInWithCustomToken(call) })

    // MARK: Identity providers: Sign in with Apple (Core/AppleSignIn.swift)

    package static let signInWithIdp = ToolkitCall(.signInWithIdp, VerifyAssertionRequest.self, at: [.verifyAssertion, .accountsSignInWithIdp],
                                                  reading: .knownFields,
                                                  .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.signInWithIdp(call) })
    package static let revokeToken = ToolkitCall(.revokeToken, RevokeTokenRequest.self, at: [.revokeToken], reading: .knownFields,
                                                .change { core, call throws(IdentityToolkitError) in try core.revokeToken(call) })

    // MARK: The Admin SDKs' user management (Core/UserManagement.swift; HTTP/AdminRoutes.swift: the bearer token)

    package static let adminCreateUser = ToolkitCall(.adminCreateUser, SignUpNewUserRequest.self, at: [.adminCreateAccount, .adminCreateAccount.inTenant], reading: .checked,
                                                    .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.adminCreateUser(call) })
    package static let adminLookup = ToolkitCall(.adminLookup, GetAccountInfoRequest.self, at: [.adminLookup, .adminLookup.inTenant], reading: .checked,
                                                .change { core, call throws(IdentityToolkitError) in try core.adminLookup(call) })
    package static let adminUpdate = ToolkitCall(.adminUpdate, SetAccountInfoRequest.self, at: [.adminUpdate, .adminUpdate.inTenant], reading: .checked,
                                                .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.adminUpdate(call) })
    package static let adminDelete = ToolkitCall(.adminDelete, DeleteAccountRequest.self, at: [.adminDelete, .adminDelete.inTenant], reading: .checked,
                                                .change { core, call throws(IdentityToolkitError) in try core.adminDelete(call) })
    package static let adminBatchDelete = ToolkitCall(.adminBatchDelete, BatchDeleteAccountsRequest.self, at: [.adminBatchDelete, .adminBatchDelete.inTenant], reading: .checked,
                                                     .change { core, call throws(IdentityToolkitError) in try core.adminBatchDelete(call) })
    package static let adminQuery = ToolkitCall(.adminQuery, QueryUserInfoRequest.self, at: [.adminQuery, .adminQuery.inTenant], reading: .checked,
                                               .change { core, call throws(IdentityToolkitError) in try core.adminQuery(call) })
    /// The Admin SDKs' email action links (`returnOobLink`: the code and link answered, no email sent).
    package static let adminSendOobCode = ToolkitCall(.adminSendOobCode, GetOOBConfirmationCodeRequest.self,
                                                     at: [.adminSendOobCode, .adminSendOobCode.inTenant], reading: .checked,
                                                     .actor { toolkit, call, _ throws(IdentityToolkitError) in try await toolkit.sendOobCode(call, admin: true) })
    /// Each user checked too (``UploadAccountRequest/checked(_:)``).
    package static let adminBatchCreate = ToolkitCall(
        .adminBatchCreate, UploadAccountRequest.self, at: [.adminBatchCreate, .adminBatchCreate.inTenant],
        reading: CallReading(.special) { _, body, _, _ throws(IdentityToolkitError) in try UploadAccountRequest.checked(body.readableBytesView) },
        .change { core, call throws(IdentityToolkitError) in try core.adminBatchCreate(call) })
    package static let adminBatchGet = ToolkitCall(
        .adminBatchGet, DownloadAccountRequest.self, at: [.adminBatchGet, .adminBatchGet.inTenant],
        reading: CallReading(.special) { request, _, _, name throws(IdentityToolkitError) in
            let items = request.uri.queryItems
            for item in items where !["maxResults", "nextPageToken", "key", "alt", "prettyPrint"].contains(item.name) {
                throw IdentityToolkitError(.invalidArgument, "\(name) takes maxResults and nextPageToken, not \(item.name)")
            }
            return try DownloadAccountRequest(queryItems: items)
        },
        .change { core, call throws(IdentityToolkitError) in try core.adminBatchGet(call) })

    // MARK: Identity Platform's tenants (Core/Tenants.swift; HTTP/AdminRoutes.swift: the bearer token)

    /// The body is the tenant, held to its schema.
    package static let createTenant = ToolkitCall(
        .createTenant, CreateTenantRequest.self, at: [.createTenant],
        reading: CallReading(.checked) { _, body, _, name throws(IdentityToolkitError) in
            CreateTenantRequest(try IdentityToolkitJSON.decodeChecked(TenantConfig.self, from: body.readableBytesView, what: name))
        },
        .change { core, call throws(IdentityToolkitError) in try core.createTenant(call) })
    /// The tenant from the path; any body is ignored (the Node.js Admin SDK sends `{}` with a DELETE).
    package static let getTenant = ToolkitCall(.getTenant, GetTenantRequest.self, at: [.getTenant],
                                              reading: CallReading(.special) { _, _, _, _ in GetTenantRequest(tenantId: nil) },
                                              .change { core, call throws(IdentityToolkitError) in try core.getTenant(call) })
    package static let listTenants = ToolkitCall(.listTenants, ListTenantsRequest.self, at: [.listTenants], reading: .query,
                                                .read { core, call throws(IdentityToolkitError) in try core.listTenants(call) })
    /// The body held to the tenant's schema; `updateMask` (comma-separated field names) from the query.
    package static let updateTenant = ToolkitCall(
        .updateTenant, UpdateTenantRequest.self, at: [.updateTenant],
        reading: CallReading(.checked) { request, body, _, name throws(IdentityToolkitError) in
            var mask: [String]?
            for item in request.uri.queryItems {
                switch item.name {
                case "updateMask": mask = (item.value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                case "key", "alt", "prettyPrint", "$.xgafv": break
                default: throw IdentityToolkitError(.invalidArgument, "\(name) takes updateMask, not \(item.name)")
                }
            }
            let tenant = try IdentityToolkitJSON.decodeChecked(TenantConfig.self, from: body.readableBytesView, what: name)
            return UpdateTenantRequest(tenantId: nil, tenant: tenant, updateMask: mask)
        },
        .change { core, call throws(IdentityToolkitError) in try core.updateTenant(call) })
    package static let deleteTenant = ToolkitCall(.deleteTenant, DeleteTenantRequest.self, at: [.deleteTenant],
                                                 reading: CallReading(.special) { _, _, _, _ in DeleteTenantRequest(tenantId: nil) },
                                                 .change { core, call throws(IdentityToolkitError) in try core.deleteTenant(call) })

    /// Every row, in the order above.
    package static let all: [any ServedCall] = [
        verifyClient, sendVerificationCode, signInWithPhoneNumber, getProjectConfig, recaptchaConfig,
        mfaEnrollmentStart, mfaEnrollmentFinalize, mfaEnrollmentWithdraw, mfaSignInStart, mfaSignInFinalize,
        secureToken, getAccountInfo, setAccountInfo, deleteAccount,
        signUp, signInWithPassword, signInWithEmailLink, sendOobCode, resetPassword, createAuthUri, signInWithCustomToken,
        signInWithIdp, revokeToken,
        adminCreateUser, adminLookup, adminUpdate, adminDelete, adminBatchDelete, adminQuery, adminBatchCreate, adminBatchGet, adminSendOobCode,
        createTenant, getTenant, listTenants, updateTenant, deleteTenant,
    ]
}

extension UploadAccountRequest {
    /// The body of a `batchCreate`, checked: the message's fields, then each user's (`users[i]`).
    /// `kind` and `nextPageToken` are taken and ignored: the Auth Emulator's own import posts its
    /// export's `accounts.json` (a `batchGet` answer) as it is.
    static func checked(_ bytes: some Collection<UInt8>) throws(IdentityToolkitError) -> UploadAccountRequest {
        let what = ToolkitCalls.adminBatchCreate.name
        let object = try IdentityToolkitJSON.object(from: bytes, what: what)
        try checkFields(of: object.filter { $0.key != "kind" && $0.key != "nextPageToken" }, what: what)
        if case .array(let users)? = object["users"] {
            for (index, user) in users.enumerated() {
                if case .object(let fields) = user { try UserRecord.checkFields(of: fields, at: "users[\(index)]", what: what) }
            }
        }
        return try IdentityToolkitJSON.decode(UploadAccountRequest.self, from: bytes)
    }
}
