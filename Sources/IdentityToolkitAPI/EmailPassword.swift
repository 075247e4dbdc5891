import Foundation

// Email and password, and the emails Firebase sends (password reset, email verification). Fields
// and wire names as the SDK's RPC types (FirebaseAuth 12.19 `Backend/RPC/VerifyPasswordRequest.swift`,
// `GetOOBConfirmationCodeRequest.swift`, `ResetPasswordRequest.swift`, `CreateAuthURIRequest.swift` and
// their responses) and the Identity Toolkit v1 discovery document (`SignInWithPasswordRequest`,
// `GetOobCodeRequest`, `ResetPasswordRequest`, `CreateAuthUriRequest`); the Auth Emulator's `oobCodes` listing (firebase-tools
// `src/emulator/auth/operations.ts`, `listOobCodesInProject`).

/// `verifyPassword` (v1 `accounts:signInWithPassword`): an email and its password.
package struct VerifyPasswordRequest: AuthRPCRequest, Hashable {
    package typealias Response = VerifyPasswordResponse
    package static let endpoint = IdentityToolkitEndpoint.verifyPassword
    package static let sdkSendsTenantID = true
    package var email: String?
    package var password: String?
    package var returnSecureToken: Bool?
    package var pendingIdToken: String?
    package var captchaChallenge: String?
    package var captchaResponse: String?
    package var clientType: String?
    package var recaptchaVersion: RecaptchaVersion?
    package var tenantId: String?

    package init(email: String?, password: String?, returnSecureToken: Bool? = true, tenantId: String? = nil) {
        self.email = email
        self.password = password
        self.returnSecureToken = returnSecureToken
        self.tenantId = tenantId
    }
}

package struct VerifyPasswordResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var localId: String?
    package var email: String?
    package var displayName: String?
    package var idToken: String?
    package var refreshToken: String?
    package var expiresIn: String?
    package var registered: Bool?
    package var profilePicture: String?
    /// A second factor is required: no `idToken`, but these.
    package var mfaPendingCredential: String?
    package var mfaInfo: [MFAEnrollment]?

    package init(kind: String? = "identitytoolkit#VerifyPasswordResponse", localId: String?, email: String?, displayName: String? = nil,
                idToken: String? = nil, refreshToken: String? = nil, expiresIn: String? = nil, registered: Bool? = true,
                mfaPendingCredential: String? = nil, mfaInfo: [MFAEnrollment]? = nil) {
        self.kind = kind
        self.localId = localId
        self.email = email
        self.displayName = displayName
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.registered = registered
        self.mfaPendingCredential = mfaPendingCredential
        self.mfaInfo = mfaInfo
    }
}

/// `emailLinkSignin` (v1 `accounts:signInWithEmailLink`): the code of an `EMAIL_SIGNIN` email
/// with the address it went to; with the signed-in user's ID token, the email linked to that user
/// (the SDK's `EmailLinkSignInRequest`, 12.19 `Backend/RPC/EmailLinkSignInRequest.swift`).
package struct EmailLinkSignInRequest: AuthRPCRequest, Hashable {
    package typealias Response = EmailLinkSignInResponse
    package static let endpoint = IdentityToolkitEndpoint.emailLinkSignin
    package static let sdkSendsTenantID = true
    package var email: String?
    package var oobCode: String?
    package var idToken: String?
    package var tenantId: String?

    package init(email: String?, oobCode: String?, idToken: String? = nil) {
        self.email = email
        self.oobCode = oobCode
        self.idToken = idToken
    }
}

package struct EmailLinkSignInResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var localId: String?
    package var email: String?
    package var idToken: String?
    package var refreshToken: String?
    package var expiresIn: String?
    package var isNewUser: Bool?
    /// A second factor is required: no `idToken`, but these.
    package var mfaPendingCredential: String?
    package var mfaInfo: [MFAEnrollment]?

    package init(kind: String? = "identitytoolkit#EmailLinkSigninResponse", localId: String?, email: String?, idToken: String? = nil,
                refreshToken: String? = nil, expiresIn: String? = nil, isNewUser: Bool?, mfaPendingCredential: String? = nil,
                mfaInfo: [MFAEnrollment]? = nil) {
        self.kind = kind
        self.localId = localId
        self.email = email
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.isNewUser = isNewUser
        self.mfaPendingCredential = mfaPendingCredential
        self.mfaInfo = mfaInfo
    }
}

/// `createAuthUri` (v1 `accounts:createAuthUri`): how an email signs in. The SDK sends it for the
/// deprecated `fetchSignInMethods(forEmail:)` with the email and `http://www.google.com/` as the
/// continue URI (Auth.swift 290-310).
package struct CreateAuthURIRequest: AuthRPCRequest, Hashable {
    package typealias Response = CreateAuthURIResponse
    package static let endpoint = IdentityToolkitEndpoint.createAuthUri
    package static let sdkSendsTenantID = true
    /// The email (or a federated ID: only emails are taken, as by the Auth Emulator).
    package var identifier: String?
    package var continueUri: String?
    /// Echoed in the answer (a new one when absent).
    package var sessionId: String?
    package var tenantId: String?

    package init(identifier: String?, continueUri: String?, tenantId: String? = nil) {
        self.tenantId = tenantId
        self.identifier = identifier
        self.continueUri = continueUri
    }
}

package struct CreateAuthURIResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var authUri: String?
    /// Whether an account has the email; absent with email enumeration protection.
    package var registered: Bool?
    package var providerId: String?
    package var forExistingProvider: Bool?
    package var allProviders: [String]?
    /// How the email signs in (`password`, a provider's ID); absent with email enumeration
    /// protection, which the SDK reads as an empty list.
    package var signinMethods: [String]?
    package var sessionId: String?
    package var captchaRequired: Bool?

    package init(kind: String? = "identitytoolkit#CreateAuthUriResponse", registered: Bool? = nil, allProviders: [String]? = nil,
                signinMethods: [String]? = nil, sessionId: String?) {
        self.kind = kind
        self.registered = registered
        self.allProviders = allProviders
        self.signinMethods = signinMethods
        self.sessionId = sessionId
    }
}

/// What an out-of-band code is for (`GetOobCodeRequest.requestType`).
package enum OobRequestType: String, Codable, Sendable, Hashable, CaseIterable {
    /// The document's "none given" (`OOB_REQ_TYPE_UNSPECIFIED`), which the service refuses as missing.
    package static let unspecified = "OOB_REQ_TYPE_UNSPECIFIED"
    case passwordReset = "PASSWORD_RESET"
    case verifyEmail = "VERIFY_EMAIL"
    case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
    case emailSignIn = "EMAIL_SIGNIN"
    case recoverEmail = "RECOVER_EMAIL"
}

/// `getOobConfirmationCode` (v1 `accounts:sendOobCode`): an email with a code, for a password
/// reset (by email), an email verification (by the user's ID token), or a change of email.
package struct GetOOBConfirmationCodeRequest: AuthRPCRequest, Hashable {
    package typealias Response = GetOOBConfirmationCodeResponse
    package static let endpoint = IdentityToolkitEndpoint.getOobConfirmationCode
    package static let sdkSendsTenantID = true
    /// `PASSWORD_RESET`, `VERIFY_EMAIL`, `VERIFY_AND_CHANGE_EMAIL`, `EMAIL_SIGNIN` (text: a value
    /// this backend does not know is answered, not undecodable).
    package var requestType: String?
    package var email: String?
    package var newEmail: String?
    package var idToken: String?
    package var continueUrl: String?
    package var iOSBundleId: String?
    package var androidPackageName: String?
    package var androidMinimumVersion: String?
    package var androidInstallApp: Bool?
    package var canHandleCodeInApp: Bool?
    package var linkDomain: String?
    package var dynamicLinkDomain: String?
    package var captchaResp: String?
    package var clientType: String?
    package var recaptchaVersion: RecaptchaVersion?
    package var tenantId: String?
    /// Admin only: answer the code and its link rather than sending the email.
    package var returnOobLink: Bool?

    package init(requestType: OobRequestType, email: String? = nil, newEmail: String? = nil, idToken: String? = nil,
                continueUrl: String? = nil, iOSBundleId: String? = nil, canHandleCodeInApp: Bool? = nil, linkDomain: String? = nil) {
        self.requestType = requestType.rawValue
        self.email = email
        self.newEmail = newEmail
        self.idToken = idToken
        self.continueUrl = continueUrl
        self.iOSBundleId = iOSBundleId
        self.canHandleCodeInApp = canHandleCodeInApp
        self.linkDomain = linkDomain
    }
}

package struct GetOOBConfirmationCodeResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var email: String?
    package var oobCode: String?
    package var oobLink: String?
    package init(kind: String? = "identitytoolkit#GetOobConfirmationCodeResponse", email: String?, oobCode: String? = nil,
                oobLink: String? = nil) {
        self.kind = kind
        self.email = email
        self.oobCode = oobCode
        self.oobLink = oobLink
    }
}

/// `resetPassword` (v1 `accounts:resetPassword`): with `newPassword`, a password reset code
/// spent; without, any code checked (what it is for, whose email).
package struct ResetPasswordRequest: AuthRPCRequest, Hashable {
    package typealias Response = ResetPasswordResponse
    package static let endpoint = IdentityToolkitEndpoint.resetPassword
    package static let sdkSendsTenantID = true
    package var oobCode: String?
    package var newPassword: String?
    package var email: String?
    package var oldPassword: String?
    package var tenantId: String?
    package init(oobCode: String?, newPassword: String? = nil, tenantId: String? = nil) {
        self.oobCode = oobCode
        self.newPassword = newPassword
        self.tenantId = tenantId
    }
}

package struct ResetPasswordResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var email: String?
    package var newEmail: String?
    package var requestType: String?
    package init(kind: String? = "identitytoolkit#ResetPasswordResponse", email: String?, newEmail: String? = nil, requestType: String?) {
        self.kind = kind
        self.email = email
        self.newEmail = newEmail
        self.requestType = requestType
    }
}

/// One email the backend sent, as the Auth Emulator lists them
/// (`GET /emulator/v1/projects/{project}/oobCodes`).
package struct OobCode: Codable, Sendable, Hashable {
    package var email: String
    package var oobCode: String
    package var oobLink: String
    package var requestType: String
    package init(email: String, oobCode: String, oobLink: String, requestType: String) {
        self.email = email
        self.oobCode = oobCode
        self.oobLink = oobLink
        self.requestType = requestType
    }
}

package struct OobCodesResponse: Codable, Sendable, Hashable {
    package var oobCodes: [OobCode]
    package init(oobCodes: [OobCode]) { self.oobCodes = oobCodes }
}

extension EmailLinkSignInRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["email", "idToken", "oobCode", "tenantId"]
    }

extension VerifyPasswordRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "captchaChallenge", "captchaResponse", "clientType", "delegatedProjectNumber", "email", "idToken", "instanceId", "password",
        "pendingIdToken", "recaptchaVersion", "returnSecureToken", "tenantId",
    ]
    package static var unsupportedFields: [String: String] {
        ["delegatedProjectNumber": Unsupported.delegation, "instanceId": Unsupported.delegation,
         "idToken": "no longer used by the service (nor the Auth Emulator)", "pendingIdToken": "no longer used by the service (nor the Auth Emulator)",
         "captchaChallenge": Unsupported.passwordCaptcha, "captchaResponse": Unsupported.passwordCaptcha]
    }
}

extension GetOOBConfirmationCodeRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "androidInstallApp", "androidMinimumVersion", "androidPackageName", "canHandleCodeInApp", "captchaResp", "challenge", "clientType",
        "continueUrl", "dynamicLinkDomain", "email", "iOSAppStoreId", "iOSBundleId", "idToken", "linkDomain", "newEmail", "recaptchaVersion",
        "requestType", "returnOobLink", "targetProjectId", "tenantId", "userIp",
    ]
    package static var unsupportedFields: [String: String] {
        ["targetProjectId": Unsupported.delegation, "captchaResp": Unsupported.passwordCaptcha,
         "challenge": Unsupported.passwordCaptcha]
    }
}

extension CreateAuthURIRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "appId", "authFlowType", "context", "continueUri", "customParameter", "hostedDomain", "identifier", "oauthConsumerKey",
        "oauthScope", "openidRealm", "otaApp", "providerId", "sessionId", "tenantId",
    ]
    package static var unsupportedFields: [String: String] {
        var refused: [String: String] = [:]
        for name in ["appId", "authFlowType", "context", "customParameter", "hostedDomain", "oauthConsumerKey", "oauthScope", "openidRealm",
                     "otaApp", "providerId"] {
            refused[name] = Unsupported.idpURIs
        }
        return refused
    }
}

extension ResetPasswordRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["email", "newPassword", "oldPassword", "oobCode", "tenantId"]
    package static var unsupportedFields: [String: String] {
        ["email": "the legacy change-password form (email, oldPassword) is not implemented (nor in the Auth Emulator); sign in and update the password",
         "oldPassword": "the legacy change-password form (email, oldPassword) is not implemented (nor in the Auth Emulator); sign in and update the password"]
    }
}
