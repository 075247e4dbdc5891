import Foundation

// User management as the Admin SDKs call it (`/v1/projects/{project}/accounts…`; the Python SDK's
// `_user_mgt.py` in firebase-admin 7.x), plus the SDK's own sign-up. Names as the Identity Toolkit
// REST API's messages; lookups, updates and deletes reuse `GetAccountInfoRequest`,
// `SetAccountInfoRequest` and `DeleteAccountRequest`, whose admin fields they carry.

/// `signupNewUser` (v1 `accounts:signUp`; the Admin SDK's create is `POST …/projects/{p}/accounts`):
/// a new user, with the fields the Admin SDK may set.
public struct SignUpNewUserRequest: AuthRPCRequest, Hashable {
    public typealias Response = SignUpNewUserResponse
    public static let endpoint = IdentityToolkitEndpoint.signUpNewUser
    public var localId: String?
    public var email: String?
    public var password: String?
    public var displayName: String?
    public var photoUrl: String?
    public var phoneNumber: String?
    public var emailVerified: Bool?
    public var disabled: Bool?
    public var returnSecureToken: Bool?
    public var tenantId: String?
    /// The app's own sign-up: the signed-in (anonymous) user the email and password go to.
    public var idToken: String?
    public var captchaResponse: String?
    public var clientType: String?
    public var recaptchaVersion: RecaptchaVersion?

    public init(localId: String? = nil, email: String? = nil, password: String? = nil, displayName: String? = nil,
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

public struct SignUpNewUserResponse: Codable, Sendable, Hashable {
    public var kind: String?
    public var localId: String?
    public var email: String?
    public var displayName: String?
    public var idToken: String?
    public var refreshToken: String?
    public var expiresIn: String?
    public init(kind: String? = "identitytoolkit#SignupNewUserResponse", localId: String?, email: String? = nil,
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
public struct DownloadAccountRequest: AuthRPCQueryRequest, Hashable {
    public typealias Response = DownloadAccountResponse
    public static let endpoint = IdentityToolkitEndpoint.adminBatchGet
    public var maxResults: Int?
    public var nextPageToken: String?

    public init(maxResults: Int? = nil, nextPageToken: String? = nil) {
        self.maxResults = maxResults
        self.nextPageToken = nextPageToken
    }

    public init(queryItems: [URLQueryItem]) throws(IdentityToolkitError) {
        func value(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }
        var maxResults: Int?
        if let text = value("maxResults") {
            guard let number = Int(text) else {
                throw IdentityToolkitError(.invalidJSON, "Invalid value at 'max_results' (TYPE_INT32), \"\(text)\"")
            }
            maxResults = number
        }
        self.init(maxResults: maxResults, nextPageToken: value("nextPageToken"))
    }

    public var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let maxResults { items.append(URLQueryItem(name: "maxResults", value: String(maxResults))) }
        if let nextPageToken { items.append(URLQueryItem(name: "nextPageToken", value: nextPageToken)) }
        return items
    }
}

public struct DownloadAccountResponse: Codable, Sendable, Hashable {
    public var kind: String?
    public var users: [UserRecord]?
    /// Absent on the last page.
    public var nextPageToken: String?
    public init(kind: String? = "identitytoolkit#DownloadAccountResponse", users: [UserRecord]?, nextPageToken: String?) {
        self.kind = kind
        self.users = users
        self.nextPageToken = nextPageToken
    }
}

/// `…/projects/{p}/accounts:batchCreate` (`auth.import_users`).
public struct UploadAccountRequest: AuthRPCRequest, Hashable {
    public typealias Response = UploadAccountResponse
    public static let endpoint = IdentityToolkitEndpoint.adminBatchCreate
    public var users: [UserRecord]?
    public var hashAlgorithm: String?
    /// Replace users whose local ID exists (otherwise they are errors).
    public var allowOverwrite: Bool?
    /// Refuse the batch if two of its users share a provider's raw ID.
    public var sanityCheck: Bool?
    public init(users: [UserRecord]?, hashAlgorithm: String? = nil, allowOverwrite: Bool? = nil, sanityCheck: Bool? = nil) {
        self.users = users
        self.hashAlgorithm = hashAlgorithm
        self.allowOverwrite = allowOverwrite
        self.sanityCheck = sanityCheck
    }
}

public struct UploadAccountResponse: Codable, Sendable, Hashable {
    /// A user that could not be imported: its index in the request and why.
    public struct Failure: Codable, Sendable, Hashable {
        public var index: Int
        public var message: String
        public init(index: Int, message: String) {
            self.index = index
            self.message = message
        }
    }
    public var kind: String?
    public var error: [Failure]?
    public init(kind: String? = "identitytoolkit#UploadAccountResponse", error: [Failure]?) {
        self.kind = kind
        self.error = error
    }
}

/// `…/projects/{p}/accounts:batchDelete` (`auth.delete_users`).
public struct BatchDeleteAccountsRequest: AuthRPCRequest, Hashable {
    public typealias Response = BatchDeleteAccountsResponse
    public static let endpoint = IdentityToolkitEndpoint.adminBatchDelete
    public var localIds: [String]?
    /// Delete users that are not disabled too.
    public var force: Bool?
    public init(localIds: [String]?, force: Bool?) {
        self.localIds = localIds
        self.force = force
    }
}

public struct BatchDeleteAccountsResponse: Codable, Sendable, Hashable {
    public struct Failure: Codable, Sendable, Hashable {
        public var index: Int
        public var localId: String?
        public var message: String
        public init(index: Int, localId: String?, message: String) {
            self.index = index
            self.localId = localId
            self.message = message
        }
    }
    public var errors: [Failure]?
    public init(errors: [Failure]?) { self.errors = errors }
}

/// `…/projects/{p}/accounts:query`: users matching an expression, sorted and paged.
public struct QueryUserInfoRequest: AuthRPCRequest, Hashable {
    public typealias Response = QueryUserInfoResponse
    public static let endpoint = IdentityToolkitEndpoint.adminQuery
    public struct Expression: Codable, Sendable, Hashable {
        public var email: String?
        public var userId: String?
        public var phoneNumber: String?
        public init(email: String? = nil, userId: String? = nil, phoneNumber: String? = nil) {
            self.email = email
            self.userId = userId
            self.phoneNumber = phoneNumber
        }
    }
    public var returnUserInfo: Bool?
    /// Strings on the wire (int64).
    @Int64Text public var limit: String?
    @Int64Text public var offset: String?
    public var expression: [Expression]?
    /// `ASC` or `DESC`.
    public var order: QueryOrder?
    /// `USER_ID`, `NAME`, `CREATED_AT`, `LAST_LOGIN_AT`, `USER_EMAIL`.
    public var sortBy: QuerySortField?
    public init(returnUserInfo: Bool? = nil, limit: String? = nil, offset: String? = nil, expression: [Expression]? = nil,
                order: QueryOrder? = nil, sortBy: QuerySortField? = nil) {
        self.returnUserInfo = returnUserInfo
        self.limit = limit
        self.offset = offset
        self.expression = expression
        self.order = order
        self.sortBy = sortBy
    }
}

public struct QueryUserInfoResponse: Codable, Sendable, Hashable {
    public var recordsCount: String?
    public var userInfo: [UserRecord]?
    public init(recordsCount: String?, userInfo: [UserRecord]?) {
        self.recordsCount = recordsCount
        self.userInfo = userInfo
    }
}
