import Foundation

// User management as the Admin SDKs call it (`/v1/projects/{project}/accounts…`; the Python SDK's
// `_user_mgt.py` in firebase-admin 7.x), plus the SDK's own sign-up. Names as the Identity Toolkit
// REST API's messages; lookups, updates and deletes reuse `GetAccountInfoRequest`,
// `SetAccountInfoRequest` and `DeleteAccountRequest`, whose admin fields they carry.

/// `signupNewUser` (v1 `accounts:signUp`; the Admin SDK's create is `POST …/projects/{p}/accounts`):
/// a new user, with the fields the Admin SDK may set.
package struct SignUpNewUserRequest: AuthRPCRequest, Hashable {
    package typealias Response = SignUpNewUserResponse
    package static let endpoint = IdentityToolkitEndpoint.signUpNewUser
    package static let sdkSendsTenantID = true
    package var localId: String?
    package var email: String?
    package var password: String?
    package var displayName: String?
    package var photoUrl: String?
    package var phoneNumber: String?
    package var emailVerified: Bool?
    package var disabled: Bool?
    package var returnSecureToken: Bool?
    package var tenantId: String?
    /// The app's own sign-up: the signed-in (anonymous) user the email and password go to.
    package var idToken: String?
    package var captchaResponse: String?
    package var clientType: String?
    package var recaptchaVersion: RecaptchaVersion?

    package init(localId: String? = nil, email: String? = nil, password: String? = nil, displayName: String? = nil,
                photoUrl: String? = nil, phoneNumber: String? = nil, emailVerified: Bool? = nil, disabled: Bool? = nil,
                returnSecureToken: Bool? = nil, tenantId: String? = nil, idToken: String? = nil) {
        self.idToken = idToken
        self.localId = localId
        self.email = email
        self.password = password
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
        self.emailVerified = emailVerified
        self.disabled = disabled
        self.returnSecureToken = returnSecureToken
        self.tenantId = tenantId
    }
}

package struct SignUpNewUserResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var localId: String?
    package var email: String?
    package var displayName: String?
    package var idToken: String?
    package var refreshToken: String?
    package var expiresIn: String?
    package init(kind: String? = "identitytoolkit#SignupNewUserResponse", localId: String?, email: String? = nil,
                displayName: String? = nil, idToken: String? = nil, refreshToken: String? = nil, expiresIn: String? = nil) {
        self.kind = kind
        self.localId = localId
        self.email = email
        self.displayName = displayName
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
    }
}

/// `GET …/projects/{p}/accounts:batchGet?maxResults=…&nextPageToken=…` (`auth.list_users`).
package struct DownloadAccountRequest: AuthRPCQueryRequest, Hashable {
    package typealias Response = DownloadAccountResponse
    package static let endpoint = IdentityToolkitEndpoint.adminBatchGet
    package var maxResults: Int?
    package var nextPageToken: String?
    package var tenantId: String?

    package init(maxResults: Int? = nil, nextPageToken: String? = nil, tenantId: String? = nil) {
        self.maxResults = maxResults
        self.nextPageToken = nextPageToken
        self.tenantId = tenantId
    }

    package init(queryItems: [URLQueryItem]) throws(IdentityToolkitError) {
        func value(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }
        var maxResults: Int?
        if let text = value("maxResults") {
            guard let number = Int(text) else {
                throw IdentityToolkitError(.invalidJSON, "Invalid value at 'max_results' (TYPE_INT32), \"\(text)\"")
            }
            maxResults = number
        }
        self.init(maxResults: maxResults, nextPageToken: value("nextPageToken"), tenantId: value("tenantId"))
    }

    package var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let maxResults { items.append(URLQueryItem(name: "maxResults", value: String(maxResults))) }
        if let nextPageToken { items.append(URLQueryItem(name: "nextPageToken", value: nextPageToken)) }
        if let tenantId { items.append(URLQueryItem(name: "tenantId", value: tenantId)) }
        return items
    }
}

package struct DownloadAccountResponse: Codable, Sendable, Hashable {
    package var kind: String?
    package var users: [UserRecord]?
    /// Absent on the last page.
    package var nextPageToken: String?
    package init(kind: String? = "identitytoolkit#DownloadAccountResponse", users: [UserRecord]?, nextPageToken: String?) {
        self.kind = kind
        self.users = users
        self.nextPageToken = nextPageToken
    }
}

/// `…/projects/{p}/accounts:batchCreate` (`auth.import_users`).
package struct UploadAccountRequest: AuthRPCRequest, Hashable {
    package typealias Response = UploadAccountResponse
    package static let endpoint = IdentityToolkitEndpoint.adminBatchCreate
    package var users: [UserRecord]?
    package var hashAlgorithm: String?
    /// Replace users whose local ID exists (otherwise they are errors).
    package var allowOverwrite: Bool?
    /// Refuse the batch if two of its users share a provider's raw ID.
    package var sanityCheck: Bool?
    package var tenantId: String?
    package init(users: [UserRecord]?, hashAlgorithm: String? = nil, allowOverwrite: Bool? = nil, sanityCheck: Bool? = nil,
                tenantId: String? = nil) {
        self.tenantId = tenantId
        self.users = users
        self.hashAlgorithm = hashAlgorithm
        self.allowOverwrite = allowOverwrite
        self.sanityCheck = sanityCheck
    }
}

package struct UploadAccountResponse: Codable, Sendable, Hashable {
    /// A user that could not be imported: its index in the request and why.
    package struct Failure: Codable, Sendable, Hashable {
        package var index: Int
        package var message: String
        package init(index: Int, message: String) {
            self.index = index
            self.message = message
        }
    }
    package var kind: String?
    package var error: [Failure]?
    package init(kind: String? = "identitytoolkit#UploadAccountResponse", error: [Failure]?) {
        self.kind = kind
        self.error = error
    }
}

/// `…/projects/{p}/accounts:batchDelete` (`auth.delete_users`).
package struct BatchDeleteAccountsRequest: AuthRPCRequest, Hashable {
    package typealias Response = BatchDeleteAccountsResponse
    package static let endpoint = IdentityToolkitEndpoint.adminBatchDelete
    package var localIds: [String]?
    /// Delete users that are not disabled too.
    package var force: Bool?
    package var tenantId: String?
    package init(localIds: [String]?, force: Bool?, tenantId: String? = nil) {
        self.tenantId = tenantId
        self.localIds = localIds
        self.force = force
    }
}

package struct BatchDeleteAccountsResponse: Codable, Sendable, Hashable {
    package struct Failure: Codable, Sendable, Hashable {
        package var index: Int
        package var localId: String?
        package var message: String
        package init(index: Int, localId: String?, message: String) {
            self.index = index
            self.localId = localId
            self.message = message
        }
    }
    package var errors: [Failure]?
    package init(errors: [Failure]?) { self.errors = errors }
}

/// `…/projects/{p}/accounts:query`: users matching an expression, sorted and paged.
package struct QueryUserInfoRequest: AuthRPCRequest, Hashable {
    package typealias Response = QueryUserInfoResponse
    package static let endpoint = IdentityToolkitEndpoint.adminQuery
    package struct Expression: Codable, Sendable, Hashable {
        package var email: String?
        package var userId: String?
        package var phoneNumber: String?
        package init(email: String? = nil, userId: String? = nil, phoneNumber: String? = nil) {
            self.email = email
            self.userId = userId
            self.phoneNumber = phoneNumber
        }
    }
    package var returnUserInfo: Bool?
    /// Strings on the wire (int64).
    @Int64Text package var limit: String?
    @Int64Text package var offset: String?
    package var expression: [Expression]?
    /// `ASC` or `DESC`.
    package var order: QueryOrder?
    /// `USER_ID`, `NAME`, `CREATED_AT`, `LAST_LOGIN_AT`, `USER_EMAIL`.
    package var sortBy: QuerySortField?
    package var tenantId: String?
    package init(returnUserInfo: Bool? = nil, limit: String? = nil, offset: String? = nil, expression: [Expression]? = nil,
                order: QueryOrder? = nil, sortBy: QuerySortField? = nil, tenantId: String? = nil) {
        self.tenantId = tenantId
        self.returnUserInfo = returnUserInfo
        self.limit = limit
        self.offset = offset
        self.expression = expression
        self.order = order
        self.sortBy = sortBy
    }
}

package struct QueryUserInfoResponse: Codable, Sendable, Hashable {
    package var recordsCount: String?
    package var userInfo: [UserRecord]?
    package init(recordsCount: String?, userInfo: [UserRecord]?) {
        self.recordsCount = recordsCount
        self.userInfo = userInfo
    }
}
