import Foundation

// Email and password, and the emails Firebase sends (password reset, email verification). Fields
// and wire names as the SDK's RPC types (FirebaseAuth 12.19 `Backend/RPC/VerifyPasswordRequest.swift`,
// `GetOOBConfirmationCodeRequest.swift`, `ResetPasswordRequest.swift`, `CreateAuthURIRequest.swift` and
// their responses) and the Identity Toolkit v1 discovery document (`SignInWithPasswordRequest`,
// `GetOobCodeRequest`, `ResetPasswordRequest`, `CreateAuthUriRequest`); the Auth Emulator's `oobCodes` listing (firebase-tools
// `src/emulator/auth/operations.ts`, `listOobCodesInProject`).

/// `verifyPassword` (v1 `accounts:signInWithPassword`): an email and its password.
public struct VerifyPasswordRequest: AuthRPCRequest, Hashable {
    public typealias Response = VerifyPasswordResponse
    public static let endpoint = IdentityToolkitEndpoint.verifyPassword
    public var email: String?
    public var password: String?
    public var returnSecureToken: Bool?
    public var pendingIdToken: String?
    public var captchaChallenge: String?
    public var captchaResponse: String?
    public var clientType: String?
    public var recaptchaVersion: RecaptchaVersion?
    public var tenantId: String?

    public init(email: String?, password: String?, returnSecureToken: Bool? = true, tenantId: String? = nil) {
        self.email = email
        self.password = password
        self.returnSecureToken = returnSecureToken
        self.tenantId = tenantId
    }
}

public struct VerifyPasswordResponse: Codable, Sendable, Hashable {
    public var kind: String?
    public var localId: String?
    public var email: String?
    public var displayName: String?
    public var idToken: String?
    public var refreshToken: String?
    public var expiresIn: String?
    public var registered: Bool?
    public var profilePicture: String?
    /// A second factor is required: no `idToken`, but these.
    public var mfaPendingCredential: String?
    public var mfaInfo: [MFAEnrollment]?

    public init(kind: String? = "identitytoolkit#VerifyPasswordResponse", localId: String?, email: String?, displayName: String? = nil,
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
public struct EmailLinkSignInRequest: AuthRPCRequest, Hashable {
    public typealias Response = EmailLinkSignInResponse
    public static let endpoint = IdentityToolkitEndpoint.emailLinkSignin
    public var email: String?
    public var oobCode: String?
    public var idToken: String?
    public var tenantId: String?

    public init(email: String?, oobCode: String?, idToken: String? = nil) {
        self.email = email
        self.oobCode = oobCode
        self.idToken = idToken
    }
}

public struct EmailLinkSignInResponse: Codable, Sendable, Hashable {
    public var kind: String?
    public var localId: String?
    public var email: String?
    public var idToken: String?
    public var refreshToken: String?
    public var expiresIn: String?
    public var isNewUser: Bool?
    /// A second factor is required: no `idToken`, but these.
    public var mfaPendingCredential: String?
    public var mfaInfo: [MFAEnrollment]?

    public init(kind: String? = "identitytoolkit#EmailLinkSigninResponse", localId: String?, email: String?, idToken: String? = nil,
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
public struct CreateAuthURIRequest: AuthRPCRequest, Hashable {
    public typealias Response = CreateAuthURIResponse
    public static let endpoint = IdentityToolkitEndpoint.createAuthUri
    /// The email (or a federated ID: only emails are taken, as by the Auth Emulator).
    public var identifier: String?
    public var continueUri: String?
    /// Echoed in the answer (a new one when absent).
    public var sessionId: String?

    public init(identifier: String?, continueUri: String?) {
        self.identifier = identifier
        self.continueUri = continueUri
    }
}

public struct CreateAuthURIResponse: Codable, Sendable, Hashable {
    public var kind: String?
    public var authUri: String?
    /// Whether an account has the email; absent with email enumeration protection.
    public var registered: Bool?
    public var providerId: String?
    public var forExistingProvider: Bool?
    public var allProviders: [String]?
    /// How the email signs in (`password`, a provider's ID); absent with email enumeration
    /// protection, which the SDK reads as an empty list.
    public var signinMethods: [String]?
    public var sessionId: String?
    public var captchaRequired: Bool?

    public init(kind: String? = "identitytoolkit#CreateAuthUriResponse", registered: Bool? = nil, allProviders: [String]? = nil,
                signinMethods: [String]? = nil, sessionId: String?) {
        self.kind = kind
        self.registered = registered
        self.allProviders = allProviders
        self.signinMethods = signinMethods
        self.sessionId = sessionId
    }
}

/// What an out-of-band code is for (`GetOobCodeRequest.requestType`).
public enum OobRequestType: String, Codable, Sendable, Hashable, CaseIterable {
    /// The document's "none given" (`OOB_REQ_TYPE_UNSPECIFIED`), which the service refuses as missing.
    public static let unspecified = "OOB_REQ_TYPE_UNSPECIFIED"
    case passwordReset = "PASSWORD_RESET"
    case verifyEmail = "VERIFY_EMAIL"
    case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
    case emailSignIn = "EMAIL_SIGNIN"
    case recoverEmail = "RECOVER_EMAIL"
}

/// `getOobConfirmationCode` (v1 `accounts:sendOobCode`): an email with a code, for a password
/// reset (by email), an email verification (by the user's ID token), or a change of email.
public struct GetOOBConfirmationCodeRequest: AuthRPCRequest, Hashable {
    public typealias Response = GetOOBConfirmationCodeResponse
    public static let endpoint = IdentityToolkitEndpoint.getOobConfirmationCode
    /// `PASSWORD_RESET`, `VERIFY_EMAIL`, `VERIFY_AND_CHANGE_EMAIL`, `EMAIL_SIGNIN` (text: a value
    /// this backend does not know is answered, not undecodable).
    public var requestType: String?
    public var email: String?
    public var newEmail: String?
    public var idToken: String?
    public var continueUrl: String?
    public var iOSBundleId: String?
    public var androidPackageName: String?
    public var androidMinimumVersion: String?
    public var androidInstallApp: Bool?
    public var canHandleCodeInApp: Bool?
    public var linkDomain: String?
    public var dynamicLinkDomain: String?
    public var captchaResp: String?
    public var clientType: String?
    public var recaptchaVersion: RecaptchaVersion?
    public var tenantId: String?
    /// Admin only: answer the code and its link rather than sending the email.
    public var returnOobLink: Bool?

    public init(requestType: OobRequestType, email: String? = nil, newEmail: String? = nil, idToken: String? = nil,
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

public struct GetOOBConfirmationCodeResponse: Codable, Sendable, Hashable {
    public var kind: String?
    public var email: String?
    public var oobCode: String?
    public var oobLink: String?
    public init(kind: String? = "identitytoolkit#GetOobConfirmationCodeResponse", email: String?, oobCode: String? = nil,
                oobLink: String? = nil) {
        self.kind = kind
        self.email = email
        self.oobCode = oobCode
        self.oobLink = oobLink
    }
}

/// `resetPassword` (v1 `accounts:resetPassword`): with `newPassword`, a password reset code
/// spent; without, any code checked (what it is for, whose email).
public struct ResetPasswordRequest: AuthRPCRequest, Hashable {
    public typealias Response = ResetPasswordResponse
    public static let endpoint = IdentityToolkitEndpoint.resetPassword
    public var oobCode: String?
    public var newPassword: String?
    public var email: String?
    public var oldPassword: String?
    public var tenantId: String?
    public init(oobCode: String?, newPassword: String? = nil, tenantId: String? = nil) {
        self.oobCode = oobCode
        self.newPassword = newPassword
        self.tenantId = tenantId
    }
}

public struct ResetPasswordResponse: Codable, Sendable, Hashable {
    public var kind: String?
    public var email: String?
    public var newEmail: String?
    public var requestType: String?
    public init(kind: String? = "identitytoolkit#ResetPasswordResponse", email: String?, newEmail: String? = nil, requestType: String?) {
        self.kind = kind
        self.email = email
        self.newEmail = newEmail
        self.requestType = requestType
    }
}

/// One email the backend sent, as the Auth Emulator lists them
/// (`GET /emulator/v1/projects/{project}/oobCodes`).
public struct OobCode: Codable, Sendable, Hashable {
    public var email: String
    public var oobCode: String
    public var oobLink: String
    public var requestType: String
    public init(email: String, oobCode: String, oobLink: String, requestType: String) {
        self.email = email
        self.oobCode = oobCode
        self.oobLink = oobLink
        self.requestType = requestType
    }
}

public struct OobCodesResponse: Codable, Sendable, Hashable {
    public var oobCodes: [OobCode]
    public init(oobCodes: [OobCode]) { self.oobCodes = oobCodes }
}

extension EmailLinkSignInRequest: SchemaCheckedMessage {
    public static let schemaFields: Set<String> = ["email", "idToken", "oobCode", "tenantId"]
    public static var unsupportedFields: [String: String] { ["tenantId": Unsupported.tenants] }
}

extension VerifyPasswordRequest: SchemaCheckedMessage {
    public static let schemaFields: Set<String> = [
        "captchaChallenge", "captchaResponse", "clientType", "delegatedProjectNumber", "email", "idToken", "instanceId", "password",
        "pendingIdToken", "recaptchaVersion", "returnSecureToken", "tenantId",
    ]
    public static var unsupportedFields: [String: String] {
        ["tenantId": Unsupported.tenants, "delegatedProjectNumber": Unsupported.delegation, "instanceId": Unsupported.delegation,
         "idToken": "no longer used by the service (nor the Auth Emulator)", "pendingIdToken": "no longer used by the service (nor the Auth Emulator)",
         "captchaChallenge": Unsupported.passwordCaptcha, "captchaResponse": Unsupported.passwordCaptcha]
    }
}

extension GetOOBConfirmationCodeRequest: SchemaCheckedMessage {
    public static let schemaFields: Set<String> = [
        "androidInstallApp", "androidMinimumVersion", "androidPackageName", "canHandleCodeInApp", "captchaResp", "challenge", "clientType",
        "continueUrl", "dynamicLinkDomain", "email", "iOSAppStoreId", "iOSBundleId", "idToken", "linkDomain", "newEmail", "recaptchaVersion",
        "requestType", "returnOobLink", "targetProjectId", "tenantId", "userIp",
    ]
    public static var unsupportedFields: [String: String] {
        ["tenantId": Unsupported.tenants, "targetProjectId": Unsupported.delegation, "captchaResp": Unsupported.passwordCaptcha,
         "challenge": Unsupported.passwordCaptcha]
    }
}

extension CreateAuthURIRequest: SchemaCheckedMessage {
    public static let schemaFields: Set<String> = [
        "appId", "authFlowType", "context", "continueUri", "customParameter", "hostedDomain", "identifier", "oauthConsumerKey",
        "oauthScope", "openidRealm", "otaApp", "providerId", "sessionId", "tenantId",
    ]
    public static var unsupportedFields: [String: String] {
        var refused = ["tenantId": Unsupported.tenants]
        for name in ["appId", "authFlowType", "context", "customParameter", "hostedDomain", "oauthConsumerKey", "oauthScope", "openidRealm",
                     "otaApp", "providerId"] {
            refused[name] = Unsupported.idpURIs
        }
        return refused
    }
}

extension ResetPasswordRequest: SchemaCheckedMessage {
    public static let schemaFields: Set<String> = ["email", "newPassword", "oldPassword", "oobCode", "tenantId"]
    public static var unsupportedFields: [String: String] {
        ["tenantId": Unsupported.tenants,
         "email": "the legacy change-password form (email, oldPassword) is not implemented (nor in the Auth Emulator); sign in and update the password",
         "oldPassword": "the legacy change-password form (email, oldPassword) is not implemented (nor in the Auth Emulator); sign in and update the password"]
    }
}
