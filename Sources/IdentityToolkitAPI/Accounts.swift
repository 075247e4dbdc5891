import Foundation
import Utilities

// Accounts after sign-in, identity providers and tokens. Fields and wire names as the SDK's RPC
// types (FirebaseAuth 12.19 `Backend/RPC/VerifyAssertionRequest.swift`, `RevokeTokenRequest.swift`,
// `GetAccountInfoRequest.swift`, `SetAccountInfoRequest.swift`, `DeleteAccountRequest.swift`,
// `SecureTokenRequest.swift`, `VerifyCustomTokenRequest.swift`) and the Identity Toolkit REST API.

/// `verifyAssertion` (v1 `accounts:signInWithIdp`): an identity provider's credential, in
/// `postBody` as a form (`providerId=apple.com&id_token=…&nonce=…`), or a `pendingToken`.
package struct VerifyAssertionRequest: AuthRPCRequest, Hashable {
    package typealias Response = VerifyAssertionResponse
    package static let endpoint = IdentityToolkitEndpoint.verifyAssertion
    package static let sdkSendsTenantID = true
    /// Unused by the server but required ("http://localhost" from the SDK).
    package var requestUri: String?
    package var postBody: String?
    package var pendingToken: String?
    /// The signed-in user's ID token, when linking.
    package var idToken: String?
    package var returnSecureToken: Bool?
    package var returnIdpCredential: Bool?
    package var sessionId: String?
    package var tenantId: String?
    /// `false` when reauthenticating: an unknown user is not created.
    package var autoCreate: Bool?

    package init(requestUri: String? = "http://localhost", postBody: String? = nil, pendingToken: String? = nil, idToken: String? = nil,
                returnSecureToken: Bool? = true, returnIdpCredential: Bool? = true, sessionId: String? = nil, tenantId: String? = nil,
                autoCreate: Bool? = nil) {
        self.requestUri = requestUri
        self.postBody = postBody
        self.pendingToken = pendingToken
        self.idToken = idToken
        self.returnSecureToken = returnSecureToken
        self.returnIdpCredential = returnIdpCredential
        self.sessionId = sessionId
        self.tenantId = tenantId
        self.autoCreate = autoCreate
    }
}

extension VerifyAssertionRequest {
    /// The credential's fields as the Auth Emulator reads them (`getNormalizedUri`,
    /// operations.ts): the `requestUri`'s query (`OAuthProvider`'s web flow sends the provider
    /// page's answer there), then the `postBody`'s fields over it, then the URI's fragment's over
    /// both (`+` a space, first occurrence winning within each). A missing or relative
    /// `requestUri` is refused, as there.
    package func credentialFields() throws(IdentityToolkitError) -> [String: String] {
        guard let requestUri, !requestUri.isEmpty else {
            throw IdentityToolkitError(.missingRequestURI, "signInWithIdp needs requestUri (the SDK sends http://localhost, or the web flow's answer)")
        }
        guard let components = URLComponents(string: requestUri), components.scheme != nil, components.host != nil else {
            throw IdentityToolkitError(.invalidRequestURI, "requestUri is not an absolute URL: \(requestUri.prefix(80))")
        }
        var fields = WebText.formFields(components.percentEncodedQuery ?? "")
        fields.merge(WebText.formFields(postBody ?? "")) { _, new in new }
        fields.merge(WebText.formFields(components.percentEncodedFragment ?? "")) { _, new in new }
        return fields
    }
}

package struct VerifyAssertionResponse: Codable, Sendable, Hashable {
    /// `identitytoolkit#VerifyAssertionResponse`.
    package var kind: String?
    package var federatedId: String?
    package var providerId: ProviderID?
    package var localId: String?
    package var email: String?
    package var displayName: String?
    package var idToken: String?
    package var refreshToken: String?
    package var expiresIn: String?
    package var isNewUser: Bool?
    /// With `returnIdpCredential`, an error in a 200 answer: `FEDERATED_USER_ID_ALREADY_LINKED`.
    package var errorMessage: String?
    /// A single-use token that signs in with the provider's credential again (for the SDK's
    /// `AuthErrorUserInfoUpdatedCredentialKey`).
    package var pendingToken: String?
    package var oauthIdToken: String?
    package var rawUserInfo: String?
    package var needConfirmation: Bool?
    package var emailVerified: Bool?
    /// The provider's access token (the Auth Emulator answers a fake one when none came).
    package var oauthAccessToken: String?
    package var oauthTokenSecret: String?
    package var photoUrl: String?
    package var screenName: String?
    /// With `needConfirmation`: the providers the account with the email signs in with.
    package var verifiedProvider: [String]?
    /// A second factor is required: no `idToken`, but these.
    package var mfaPendingCredential: String?
    package var mfaInfo: [MFAEnrollment]?

    package init(kind: String? = "identitytoolkit#VerifyAssertionResponse", federatedId: String? = nil, providerId: ProviderID? = nil,
                localId: String? = nil, email: String? = nil, displayName: String? = nil, idToken: String? = nil,
                refreshToken: String? = nil, expiresIn: String? = nil, isNewUser: Bool? = nil, errorMessage: String? = nil,
                pendingToken: String? = nil, mfaPendingCredential: String? = nil, mfaInfo: [MFAEnrollment]? = nil,
                rawUserInfo: String? = nil) {
        self.rawUserInfo = rawUserInfo
        self.kind = kind
        self.federatedId = federatedId
        self.providerId = providerId
        self.localId = localId
        self.email = email
        self.displayName = displayName
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.isNewUser = isNewUser
        self.errorMessage = errorMessage
        self.pendingToken = pendingToken
        self.mfaPendingCredential = mfaPendingCredential
        self.mfaInfo = mfaInfo
    }
}

/// v2 `accounts:revokeToken`: revokes the user's Apple grant with Apple.
package struct RevokeTokenRequest: AuthRPCRequest, Hashable {
    package typealias Response = EmptyResponse
    package static let endpoint = IdentityToolkitEndpoint.revokeToken
    package var providerId: ProviderID?
    /// The SDK's `TokenType` raw value as a string: `"3"` (authorization code) from FirebaseAuth.
    package var tokenType: RevokedTokenType?
    /// The authorization code.
    package var token: String?
    package var idToken: String?
    package var tenantId: String?

    package init(providerId: ProviderID?, tokenType: RevokedTokenType?, token: String?, idToken: String?, tenantId: String? = nil) {
        self.providerId = providerId
        self.tokenType = tokenType
        self.token = token
        self.idToken = idToken
        self.tenantId = tenantId
    }
}

/// `deleteAccount` (v1 `accounts:delete`): by the user's ID token, or (Admin SDK) by `localId`.
package struct DeleteAccountRequest: AuthRPCRequest, Hashable {
    package typealias Response = DeleteAccountResponse
    package static let endpoint = IdentityToolkitEndpoint.deleteAccount
    package var idToken: String?
    package var localId: String?
    package var tenantId: String?
    package init(idToken: String?, localId: String? = nil, tenantId: String? = nil) {
        self.idToken = idToken
        self.localId = localId
        self.tenantId = tenantId
    }
}

package struct DeleteAccountResponse: Codable, Sendable, Hashable {
    /// `identitytoolkit#DeleteAccountResponse` (the Admin SDK checks it is there).
    package var kind: String?
    package init(kind: String? = "identitytoolkit#DeleteAccountResponse") { self.kind = kind }
}

/// `setAccountInfo` (v1 `accounts:update`): the user's own changes by ID token, or an Admin SDK
/// update by `localId`.
package struct SetAccountInfoRequest: AuthRPCRequest, Hashable {
    package typealias Response = SetAccountInfoResponse
    package static let endpoint = IdentityToolkitEndpoint.setAccountInfo
    package static let sdkSendsTenantID = true
    package var idToken: String?
    package var localId: String?
    package var displayName: String?
    package var email: String?
    package var photoUrl: String?
    package var phoneNumber: String?
    /// `DISPLAY_NAME`, `PHOTO_URL`, …
    package var deleteAttribute: [UserAttributeName]?
    /// Provider IDs to unlink (`phone`, `apple.com`).
    package var deleteProvider: [String]?
    package var returnSecureToken: Bool?
    /// Admin: disable or enable the user.
    package var disableUser: Bool?
    /// Admin: custom claims, as a JSON object in a string.
    package var customAttributes: String?
    /// Admin: tokens issued before this (seconds since 1970, as a string) are revoked.
    @Int64Text package var validSince: String?
    package var emailVerified: Bool?
    package var tenantId: String?
    /// Admin: the user's second factors, replaced by these (none: all withdrawn).
    package var mfa: MFAUpdate?
    /// Admin: when the user was created / last signed in (milliseconds since 1970, as strings).
    @Int64Text package var createdAt: String?
    @Int64Text package var lastLoginAt: String?
    /// The user's new password (`updatePassword(to:)`).
    package var password: String?
    /// An out-of-band code to apply (`applyActionCode`: an email verification).
    package var oobCode: String?

    /// `{"enrollments": [...]}`.
    package struct MFAUpdate: Codable, Sendable, Hashable {
        package var enrollments: [MFAEnrollment]?
        package init(enrollments: [MFAEnrollment]?) { self.enrollments = enrollments }
    }

    package init(idToken: String? = nil, localId: String? = nil, displayName: String? = nil, email: String? = nil,
                photoUrl: String? = nil, phoneNumber: String? = nil, deleteAttribute: [UserAttributeName]? = nil, deleteProvider: [String]? = nil,
                returnSecureToken: Bool? = nil, disableUser: Bool? = nil, customAttributes: String? = nil, validSince: String? = nil,
                emailVerified: Bool? = nil, tenantId: String? = nil) {
        self.idToken = idToken
        self.localId = localId
        self.displayName = displayName
        self.email = email
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
        self.deleteAttribute = deleteAttribute
        self.deleteProvider = deleteProvider
        self.returnSecureToken = returnSecureToken
        self.disableUser = disableUser
        self.customAttributes = customAttributes
        self.validSince = validSince
        self.emailVerified = emailVerified
        self.tenantId = tenantId
    }
}

package struct SetAccountInfoResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var localId: String?
    package var email: String?
    package var displayName: String?
    package var photoUrl: String?
    package var providerUserInfo: [ProviderUserInfo]?
    package var emailVerified: Bool?
    package var idToken: String?
    package var refreshToken: String?
    package var expiresIn: String?
    /// The email a change-of-email code set.
    package var newEmail: String?

    package init(kind: String? = "identitytoolkit#SetAccountInfoResponse", localId: String?, email: String? = nil,
                displayName: String? = nil, photoUrl: String? = nil, providerUserInfo: [ProviderUserInfo]? = nil, emailVerified: Bool? = nil,
                idToken: String? = nil, refreshToken: String? = nil, expiresIn: String? = nil) {
        self.kind = kind
        self.localId = localId
        self.email = email
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.emailVerified = emailVerified
        self.providerUserInfo = providerUserInfo
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
    }
}

/// `getAccountInfo` (v1 `accounts:lookup`): the user of an ID token, or (Admin SDK) users by ID,
/// email, phone number or provider UID.
package struct GetAccountInfoRequest: AuthRPCRequest, Hashable {
    package typealias Response = GetAccountInfoResponse
    package static let endpoint = IdentityToolkitEndpoint.getAccountInfo
    /// One identity at a provider, as `federatedUserId` names it.
    package struct FederatedUserID: Codable, Sendable, Hashable {
        package var providerId: ProviderID
        package var rawId: String
        package init(providerId: ProviderID, rawId: String) {
            self.providerId = providerId
            self.rawId = rawId
        }
    }
    package var idToken: String?
    package var localId: [String]?
    package var email: [String]?
    package var phoneNumber: [String]?
    package var federatedUserId: [FederatedUserID]?
    package var tenantId: String?

    package init(idToken: String? = nil, localId: [String]? = nil, email: [String]? = nil, phoneNumber: [String]? = nil,
                federatedUserId: [FederatedUserID]? = nil, tenantId: String? = nil) {
        self.idToken = idToken
        self.localId = localId
        self.email = email
        self.phoneNumber = phoneNumber
        self.federatedUserId = federatedUserId
        self.tenantId = tenantId
    }
}

package struct GetAccountInfoResponse: Codable, Sendable, Hashable {
    package var kind: String?
    /// Absent when no user matched.
    package var users: [UserRecord]?
    package init(kind: String? = "identitytoolkit#GetAccountInfoResponse", users: [UserRecord]?) {
        self.kind = kind
        self.users = users
    }
}

/// A user as the service describes it (`accounts:lookup`, `accounts:batchGet`, `accounts:batchCreate`): the
/// REST API's `UserInfo`, named apart from the SDK's `UserInfo` protocol (a linked provider).
package struct UserRecord: Codable, Sendable, Hashable {
    package var localId: String
    package var email: String?
    package var emailVerified: Bool?
    package var displayName: String?
    package var photoUrl: String?
    package var phoneNumber: String?
    package var disabled: Bool?
    package var providerUserInfo: [ProviderUserInfo]?
    /// Seconds since 1970, as a string: tokens issued before are revoked.
    @Int64Text package var validSince: String?
    /// Milliseconds since 1970, as strings.
    @Int64Text package var createdAt: String?
    @Int64Text package var lastLoginAt: String?
    /// RFC 3339.
    package var lastRefreshAt: String?
    /// Custom claims, a JSON object in a string.
    package var customAttributes: String?
    package var mfaInfo: [MFAEnrollment]?
    package var tenantId: String?
    /// Whether the user ever signed in with a custom token.
    package var customAuth: Bool?
    /// An email/password user's hash and salt, kept as given (an import, an emulator export):
    /// this backend signs nobody in with them.
    package var passwordHash: String?
    package var salt: String?
    /// Milliseconds since 1970 (a number, as the Auth Emulator writes it).
    package var passwordUpdatedAt: Double?
    /// Whether the user signs in with an email link (the service's output only; an import keeps it).
    package var emailLinkSignin: Bool?

    package init(localId: String, email: String? = nil, emailVerified: Bool? = nil, displayName: String? = nil,
                photoUrl: String? = nil, phoneNumber: String? = nil, disabled: Bool? = nil,
                providerUserInfo: [ProviderUserInfo]? = nil, validSince: String? = nil, createdAt: String? = nil,
                lastLoginAt: String? = nil, lastRefreshAt: String? = nil, customAttributes: String? = nil,
                mfaInfo: [MFAEnrollment]? = nil, tenantId: String? = nil, customAuth: Bool? = nil, passwordHash: String? = nil,
                salt: String? = nil, passwordUpdatedAt: Double? = nil, emailLinkSignin: Bool? = nil) {
        self.emailLinkSignin = emailLinkSignin
        self.customAuth = customAuth
        self.passwordHash = passwordHash
        self.salt = salt
        self.passwordUpdatedAt = passwordUpdatedAt
        self.localId = localId
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
        self.disabled = disabled
        self.providerUserInfo = providerUserInfo
        self.validSince = validSince
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
        self.lastRefreshAt = lastRefreshAt
        self.customAttributes = customAttributes
        self.mfaInfo = mfaInfo
        self.tenantId = tenantId
    }
}

/// One provider linked to a user (`phone`, `apple.com`).
package struct ProviderUserInfo: Codable, Sendable, Hashable {
    package var providerId: ProviderID
    package var rawId: String?
    package var federatedId: String?
    package var email: String?
    package var displayName: String?
    package var photoUrl: String?
    package var phoneNumber: String?
    package init(providerId: ProviderID, rawId: String? = nil, federatedId: String? = nil, email: String? = nil,
                displayName: String? = nil, photoUrl: String? = nil, phoneNumber: String? = nil) {
        self.providerId = providerId
        self.rawId = rawId
        self.federatedId = federatedId
        self.email = email
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
    }
}

/// `verifyCustomToken` (v1 `accounts:signInWithCustomToken`): a token the Admin SDK minted.
package struct VerifyCustomTokenRequest: AuthRPCRequest, Hashable {
    package typealias Response = VerifyCustomTokenResponse
    package static let endpoint = IdentityToolkitEndpoint.verifyCustomToken
    package static let sdkSendsTenantID = true
    package var token: String?
    package var returnSecureToken: Bool?
    package var tenantId: String?
    package init(token: String?, returnSecureToken: Bool? = true, tenantId: String? = nil) {
        self.token = token
        self.returnSecureToken = returnSecureToken
        self.tenantId = tenantId
    }
}

package struct VerifyCustomTokenResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var idToken: String?
    package var refreshToken: String?
    package var expiresIn: String?
    package var isNewUser: Bool?
    package init(kind: String? = "identitytoolkit#VerifyCustomTokenResponse", idToken: String?, refreshToken: String?,
                expiresIn: String?, isNewUser: Bool?) {
        self.kind = kind
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.isNewUser = isNewUser
    }
}

/// `securetoken.googleapis.com/v1/token`: a refresh token for a fresh ID token. The SDK sends JSON
/// with `grantType` and `refreshToken`; REST clients send `grant_type` and `refresh_token` (JSON
/// or a form): both spellings are read, the SDK's is written.
package struct SecureTokenRequest: AuthRPCRequest, Hashable {
    package typealias Response = SecureTokenResponse
    package static let endpoint = IdentityToolkitEndpoint.secureToken
    /// `refresh_token` or `authorization_code`.
    package var grantType: String?
    package var refreshToken: String?
    package var code: String?
    package var scope: String?

    package init(grantType: String?, refreshToken: String? = nil, code: String? = nil, scope: String? = nil) {
        self.grantType = grantType
        self.refreshToken = refreshToken
        self.code = code
        self.scope = scope
    }

    enum CodingKeys: String, CodingKey {
        case grantType, refreshToken, code, scope
        case grantTypeSnake = "grant_type", refreshTokenSnake = "refresh_token"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        grantType = try container.decodeIfPresent(String.self, forKey: .grantType)
            ?? container.decodeIfPresent(String.self, forKey: .grantTypeSnake)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
            ?? container.decodeIfPresent(String.self, forKey: .refreshTokenSnake)
        code = try container.decodeIfPresent(String.self, forKey: .code)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(grantType, forKey: .grantType)
        try container.encodeIfPresent(refreshToken, forKey: .refreshToken)
        try container.encodeIfPresent(code, forKey: .code)
        try container.encodeIfPresent(scope, forKey: .scope)
    }
}

/// The Secure Token service's answer, in its own snake_case.
package struct SecureTokenResponse: Codable, Sendable, Hashable {
    package var accessToken: String?
    package var expiresIn: String?
    package var tokenType: String?
    package var refreshToken: String?
    package var idToken: String?
    package var userId: String?
    package var projectId: String?

    package init(accessToken: String?, expiresIn: String?, tokenType: String? = "Bearer", refreshToken: String?, idToken: String?,
                userId: String?, projectId: String?) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.userId = userId
        self.projectId = projectId
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", expiresIn = "expires_in", tokenType = "token_type", refreshToken = "refresh_token"
        case idToken = "id_token", userId = "user_id", projectId = "project_id"
    }
}
