import DeviceOS
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import Synchronization
import Utilities

/// A provider linked to a user, as `user.providerData` lists them (the SDK's `UserInfo` protocol).
public protocol UserInfo {
    /// `phone`, `apple.com`; `Firebase` for the ``User`` itself.
    var providerID: String { get }
    /// The provider's ID for the user: the number for `phone`, Apple's `sub` for `apple.com`.
    var uid: String { get }
    var displayName: String? { get }
    var photoURL: URL? { get }
    var email: String? { get }
    var phoneNumber: String? { get }
}

/// One linked provider, as `getAccountInfo` describes it.
struct ProviderInfo: UserInfo, Hashable {
    let providerID: String
    let uid: String
    let displayName: String?
    let photoURL: URL?
    let email: String?
    let phoneNumber: String?

    init(_ provider: ProviderUserInfo) {
        providerID = provider.providerId.rawValue
        // As the SDK (User/UserInfoImpl.swift 25–38): federatedId, never rawId.
        uid = provider.federatedId ?? ""
        displayName = provider.displayName
        photoURL = provider.photoUrl.flatMap(URL.init(string:))
        email = provider.email
        phoneNumber = provider.phoneNumber
    }
}

/// `user.metadata`: when the account was made and last signed in. An NSObject, as 12.19's
/// (User/UserMetadata.swift); Sendable here (its two dates never change), which 12.19's is not.
public final class UserMetadata: NSObject, NSSecureCoding {
    public let creationDate: Date?
    public let lastSignInDate: Date?

    package init(creationDate: Date?, lastSignInDate: Date?) {
        self.creationDate = creationDate
        self.lastSignInDate = lastSignInDate
    }

    // MARK: NSSecureCoding, with the SDK's keys (UserMetadata.swift 34–50)

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(creationDate, forKey: "creationDate")
        coder.encode(lastSignInDate, forKey: "lastSignInDate")
    }

    public required convenience init?(coder: NSCoder) {
        self.init(creationDate: coder.decodeIfPresent(of: NSDate.self, forKey: "creationDate").map { $0 as Date },
                  lastSignInDate: coder.decodeIfPresent(of: NSDate.self, forKey: "lastSignInDate").map { $0 as Date })
    }
}

/// A signed-in user, as the SDK keeps one: the profile of the last `getAccountInfo` (phone,
/// email, name, linked providers, second factors) and the tokens, the ID token renewed through
/// the Secure Token service when it is within five minutes of expiring.
public final class User: NSObject, UserInfo, NSSecureCoding {
    public let uid: String
    /// The `Auth` the user belongs to, held weakly as the SDK holds it (`User._auth`): the Auth
    /// holds its current user, and a user must not keep its Auth (and the app) alive.
    weak let auth: Auth?
    /// The app's device side (its clocks and logger), which outlives neither: its Auth's, or, for a
    /// user unarchived with no Auth yet, the app's process's (nil outside one: the system's clock).
    let host: AppHost?
    /// `user.multiFactor`: the second factors, and enrolling or removing one.
    public let multiFactor: MultiFactor

    struct Profile {
        var phoneNumber: String?
        var email: String?
        var isEmailVerified = false
        var displayName: String?
        var photoURL: URL?
        var providers: [ProviderInfo] = []
        var metadata = UserMetadata(creationDate: nil, lastSignInDate: nil)
        /// Signed in with `signInAnonymously()` and nothing linked since.
        var isAnonymous = false
        /// The description it came from, kept for the keychain.
        var record: UserRecord?
        /// The Auth's `tenantID` when the user signed in (User.swift 1104).
        var tenantID: String?
    }
    private let profile = Mutex(Profile())
    /// The ID token's rules, holding the refresh that runs, which concurrent callers share (the
    /// SDK's `TokenRefreshCoalescer`).
    private let tokens: Mutex<IDTokenBook<Task<String, any Error>>>

    init(auth: Auth?, host: AppHost?, uid: String, idToken: String, refreshToken: String, expiration: Date?, anonymous: Bool = false,
         tenantID: String? = nil) {
        self.auth = auth
        self.host = host
        self.uid = uid
        tokens = Mutex(IDTokenBook(idToken: idToken, refreshToken: refreshToken, expiration: expiration))
        multiFactor = MultiFactor()
        super.init()
        profile.withLock {
            $0.isAnonymous = anonymous
            $0.tenantID = tenantID
        }
        multiFactor.user = self
    }

    convenience init(auth: Auth, uid: String, idToken: String, refreshToken: String, expiration: Date?, anonymous: Bool = false,
                     tenantID: String? = nil) {
        self.init(auth: auth, host: auth.host, uid: uid, idToken: idToken, refreshToken: refreshToken, expiration: expiration, anonymous: anonymous,
                  tenantID: tenantID)
    }

    /// The device's wall clock (the system's for a user with no app).
    private var now: Date { host?.wallClock.now ?? Date() }

    override public var description: String { "User(\(uid.prefix(8))…, \(providerData.map(\.providerID).joined(separator: ", ")))" }

    // MARK: NSSecureCoding (User.swift 1773–1860)

    public static var supportsSecureCoding: Bool { true }

    /// The SDK's keys for what it archives as plain values (`userID`, `email`, `phoneNumber`,
    /// `emailVerified`, `displayName`, `anonymous`, `APIKey`, `firebaseAppID`, `metadata`,
    /// `multiFactor`); its `tokenService` (a `SecureTokenService` object) is, here, the tokens and
    /// the account as the keychain keeps them, JSON under `authsimStoredUser`.
    public func encode(with coder: NSCoder) {
        coder.encode(uid, forKey: "userID")
        coder.encode(isAnonymous, forKey: "anonymous")
        coder.encode(email, forKey: "email")
        coder.encode(phoneNumber, forKey: "phoneNumber")
        coder.encode(isEmailVerified, forKey: "emailVerified")
        coder.encode(displayName, forKey: "displayName")
        coder.encode(metadata, forKey: "metadata")
        coder.encode(multiFactor, forKey: "multiFactor")
        coder.encode(tenantID, forKey: "tenantID")
        if let auth = try? owner() {
            coder.encode(auth.options.apiKey, forKey: "APIKey")
            coder.encode(auth.options.googleAppID, forKey: "firebaseAppID")
        }
        if let stored = try? JSONEncoder().encode(stored) { coder.encode(stored as NSData, forKey: "authsimStoredUser") }
    }

    /// A user with no Auth yet, as the SDK's unarchived user: `Auth.updateCurrentUser(_:)` makes it
    /// an Auth's (its account loaded again). Nil for an archive without the user's tokens.
    public convenience init?(coder: NSCoder) {
        guard let data = coder.decodeIfPresent(of: NSData.self, forKey: "authsimStoredUser") as Data?,
              let stored = try? JSONDecoder().decode(StoredUser.self, from: data) else { return nil }
        self.init(auth: nil, host: AppProcess.current?.host, uid: stored.uid, idToken: stored.idToken, refreshToken: stored.refreshToken,
                  expiration: stored.expiration, anonymous: stored.isAnonymous == true, tenantID: stored.tenantID)
        if let record = stored.record { apply(record) }
    }

    // MARK: The profile

    /// `Firebase`, as the SDK's user says.
    public var providerID: String { "Firebase" }
    public var phoneNumber: String? { profile.withLock { $0.phoneNumber } }
    public var email: String? { profile.withLock { $0.email } }
    public var isEmailVerified: Bool { profile.withLock { $0.isEmailVerified } }
    public var displayName: String? { profile.withLock { $0.displayName } }
    /// Apple gives no photo; set only if the backend has one.
    public var photoURL: URL? { profile.withLock { $0.photoURL } }
    /// Whether the user came from `signInAnonymously()` and has linked no provider since (the
    /// SDK's flag: set at sign-in, cleared when a provider is linked).
    public var isAnonymous: Bool { profile.withLock { $0.isAnonymous } }
    /// The tenant the user signed in to: the Auth's `tenantID` then; nil for the project's own users.
    public var tenantID: String? { profile.withLock { $0.tenantID } }
    public var metadata: UserMetadata { profile.withLock { $0.metadata } }
    /// The providers linked to the user (`phone`, `apple.com`).
    public var providerData: [any UserInfo] { profile.withLock { $0.providers } }
    public var refreshToken: String? { tokens.withLock { $0.refreshToken } }

    /// The ID token as held, without refreshing (what the SDK's `rawAccessToken()` returns).
    var rawIDToken: String { tokens.withLock { $0.idToken } }

    /// Takes the backend's description of the user (`getAccountInfo`) and saves the user (a
    /// keychain that cannot take it fails the call, `keychainError`, as the SDK's updateKeychain).
    func update(with record: UserRecord) throws(AuthError) {
        apply(record)
        try auth?.saveUser(self)
    }

    /// Takes the backend's description of the user without saving it (a user read from the keychain).
    func apply(_ record: UserRecord) {
        profile.withLock { profile in
            profile.record = record
            profile.phoneNumber = record.phoneNumber.flatMap { $0.isEmpty ? nil : $0 }
            profile.email = record.email
            profile.isEmailVerified = record.emailVerified ?? false
            profile.displayName = record.displayName
            profile.photoURL = record.photoUrl.flatMap(URL.init(string:))
            profile.providers = (record.providerUserInfo ?? []).map(ProviderInfo.init)
            // `isAnonymous` is not touched here: a reload or a restore keeps it (User.swift
            // 1358–1398, `update(withGetAccountInfoResponse:)`); linking, an update of the password
            // or the email, and a new number clear it (``clearAnonymous(ifAnyProvider:)``).
            profile.metadata = UserMetadata(creationDate: record.createdAt.flatMap(Self.date(milliseconds:)),
                                            lastSignInDate: record.lastLoginAt.flatMap(Self.date(milliseconds:)))
        }
        // An answer without mfaInfo keeps the factors the user had (User.swift 1387–1391, audit 3 D3.5).
        if let enrollments = record.mfaInfo { multiFactor.replace(with: enrollments) }
    }

    /// The email an update set (the SDK's `_email = email`, before any reload).
    func setEmail(_ email: String) throws(AuthError) {
        profile.withLock { $0.email = email }
        try auth?.saveUser(self)
    }

    /// A provider was linked, or a number set (the SDK's `isAnonymous = false` in
    /// `updateTokenAndRefreshUser`, UserProfileUpdate.swift 139, and User.swift 1450); with
    /// `ifAnyProvider`, only if the account now lists a provider (a password or email update,
    /// User.swift 1272–1279).
    func clearAnonymous(ifAnyProvider: Bool = false) throws(AuthError) {
        let changed = profile.withLock { profile -> Bool in
            guard profile.isAnonymous, !ifAnyProvider || !profile.providers.isEmpty else { return false }
            profile.isAnonymous = false
            return true
        }
        if changed { try auth?.saveUser(self) }
    }

    /// Another `Auth` whose configuration the user's requests go with, once it made the user its
    /// current user with a different API key (``Auth/updateCurrentUser(_:)``); held weakly.
    private let requestAuth = Mutex(WeakAuth(auth: nil))

    /// The user's requests go with `auth`'s configuration from now on (nil: its own Auth's).
    func sendRequests(through auth: Auth?) { requestAuth.withLock { $0.auth = auth } }

    /// The `Auth` the user's calls go through: its own, or the one whose configuration it was
    /// given (``sendRequests(through:)``). The SDK stops with `fatalError` (or, for
    /// `reauthenticate`, answers userMismatch) when it is gone; this says why instead.
    func owner() throws(AuthError) -> Auth {
        if let other = requestAuth.withLock({ $0.auth }) { return other }
        guard let auth else {
            throw AuthError(.internalError, "this user's Auth is gone (its FirebaseApp was deleted and nothing holds the Auth): use a user from a live Auth's currentUser")
        }
        return auth
    }

    /// What the keychain keeps of the user.
    var stored: StoredUser {
        let book = tokens.withLock { $0 }
        let (idToken, refreshToken, expiration) = (book.idToken, book.refreshToken, book.expiration)
        let (record, anonymous, tenantID) = profile.withLock { ($0.record, $0.isAnonymous, $0.tenantID) }
        return StoredUser(uid: uid, idToken: idToken, refreshToken: refreshToken, expiration: expiration, record: record,
                          isAnonymous: anonymous ? true : nil, tenantID: tenantID)
    }

    private static func date(milliseconds text: String) -> Date? {
        Double(text).map { Date(timeIntervalSince1970: $0 / 1000) }
    }

    /// Changes the account as the last `getAccountInfo` described it (a profile update, an unlink
    /// the backend took), and saves the user.
    func changeProfile(_ change: (inout UserRecord) -> Void) throws(AuthError) {
        guard var record = profile.withLock({ $0.record }) else { return }
        change(&record)
        try update(with: record)
    }

    /// Takes the tokens an `accounts:update` answer carries, when it carries them.
    func takeTokens(of response: SetAccountInfoResponse) throws(AuthError) {
        guard let idToken = response.idToken, let refreshToken = response.refreshToken else { return }
        let expiration = response.expiresIn.flatMap(Double.init).map { now.addingTimeInterval($0) }
        try setTokens(idToken: idToken, refreshToken: refreshToken, expiration: expiration)
    }

    /// Takes another session's tokens (reauthentication, linking).
    func adoptTokens(of other: User) throws(AuthError) {
        let fresh = other.tokens.withLock { $0 }
        tokens.withLock { $0.adopt(idToken: fresh.idToken, refreshToken: fresh.refreshToken, expiration: fresh.expiration) }
        try auth?.saveUser(self)
    }

    func setTokens(idToken: String, refreshToken: String?, expiration: Date?) throws(AuthError) {
        tokens.withLock { $0.adopt(idToken: idToken, refreshToken: refreshToken, expiration: expiration) }
        try auth?.saveUser(self)
    }

    // MARK: The ID token

    /// The ID token, refreshed first (the Secure Token service, `grant_type=refresh_token`) when it
    /// expires within five minutes, its expiry is unknown, or `forceRefresh` is set.
    ///
    /// - Throws: the backend's refusal of the refresh: `userTokenExpired` (17021) for a revoked
    ///   refresh token, `userDisabled` (17005), `userNotFound` (17011); `networkError` (17020)
    ///   when the service cannot be reached.
    public func getIDToken(forcingRefresh forceRefresh: Bool = false) async throws -> String {
        return try await AuthError.forApp {
            try await idToken(forcingRefresh: forceRefresh)
        }
    }

    /// ``getIDToken(forcingRefresh:)``, its error typed, for the auth core's own calls.
    func idToken(forcingRefresh forceRefresh: Bool = false) async throws(AuthError) -> String {
        let now = self.now
        enum Next { case token(String), wait(Task<String, any Error>) }
        let held = WeakUser(user: self)
        let next = tokens.withLock { tokens -> Next in
            switch tokens.next(now: now, forceRefresh: forceRefresh, start: {
                Task<String, any Error> {
                    guard let user = held.user else { throw AuthError(.nullUser, "the user was released while its token was refreshed") }
                    return try await user.refresh()
                }
            }) {
            case .use(let token): return .token(token)
            case .join(let task), .refresh(let task): return .wait(task)
            }
        }
        switch next {
        case .token(let token): return token
        case .wait(let task):
            do { return try await task.value } catch let error as AuthError {
                signOutIfTokenIsInvalid(error)
                throw error
            } catch {
                throw AuthError(.internalError, "the token refresh failed: \(error)")
            }
        }
    }

    /// The SDK's `signOutIfTokenIsInvalid` (`User/User.swift` 1664–1674): when a token fetch, a
    /// reload, a link or a profile update finds the user gone (17011), disabled (17005), or its
    /// token invalid (17017) or revoked (17021), the user is signed out (if still current), and the
    /// listeners hear of it.
    func signOutIfTokenIsInvalid(_ error: AuthError) {
        guard [.userNotFound, .userDisabled, .invalidUserToken, .userTokenExpired].contains(error.code) else { return }
        host?.logger.notice("invalid user token detected, the user is signed out", metadata: ["code": "\(error.code.rawValue)"])
        auth?.signOut(ifCurrent: uid)
    }

    /// Runs `body`, signing the user out as the SDK does when it fails for a bad user or token.
    func signingOutIfTokenIsInvalid<T>(_ body: () async throws(AuthError) -> T) async throws(AuthError) -> T {
        do { return try await body() } catch {
            signOutIfTokenIsInvalid(error)
            throw error
        }
    }

    @inline(never)
    private func refresh() async throws(AuthError) -> String {
        defer { tokens.withLock { $0.refreshEnded() } }
        let refreshToken = tokens.withLock { $0.refreshToken }
        let auth = try owner()
        var response = try await auth.backend.call(SecureTokenRequest(grantType: "refresh_token", refreshToken: refreshToken))
        // `retryIfExpired` (SecureTokenService.swift 74–95): a new token whose `exp` is within five
        // minutes of this device's clock (an answer that came back much later, or a clock far
        // ahead) is asked for once more, with the same refresh token (audit 3, D4.7).
        if let token = response.accessToken, !token.isEmpty, let result = try? AuthTokenResult.parse(token),
           result.expirationDate.timeIntervalSince(self.now) <= 5 * 60 {
            response = try await auth.backend.call(SecureTokenRequest(grantType: "refresh_token", refreshToken: refreshToken))
        }
        // access_token is the new ID token; without it the answer is the SDK's unexpected
        // response (17999, SecureTokenResponse.swift), whatever id_token says.
        guard let idToken = response.accessToken, !idToken.isEmpty else {
            throw AuthError(.internalError, "the Secure Token service answered without access_token (the SDK's unexpected response)")
        }
        let now = self.now
        tokens.withLock { $0.refreshed(idToken: idToken, refreshToken: response.refreshToken, expiresIn: response.expiresIn.flatMap(Double.init), now: now) }
        try auth.saveUser(self)
        return idToken
    }

    // MARK: Reauthentication, linking, deletion

    /// A fresh sign-in with `credential`, which must be this user's (`userMismatch` 17024
    /// otherwise, also for a credential of no account: the SDK turns `userNotFound` into it); the
    /// user's tokens are renewed. An Apple credential is sent with `autoCreate: false`.
    @discardableResult
    public func reauthenticate(with credential: AuthCredential) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            let result: AuthDataResult
            let auth = try owner()
            do throws(AuthError) { result = try await auth.internalSignIn(with: credential, isReauthentication: true) } catch {
                // (A `catch where` here, in a function whose errors are untyped, hangs Swift 6.3's compiler.)
                guard error.code == .userNotFound else { throw error }
                throw AuthError(.userMismatch, "the credential belongs to no account, so not to the signed-in user \(uid.prefix(8))… (\(error.message))",
                                serverMessage: error.serverMessage)
            }
            // As User.swift 386–405: the credential's user must be the Auth's current user (a
            // user object kept after a sign-out, or another user's, is a mismatch); this user takes
            // the new tokens, and the result is the sign-in's own (its user a new object, freshly
            // read), with no further request (audit 3, D3.3).
            guard result.user.uid == auth.currentUser?.uid else {
                throw AuthError(.userMismatch, "the credential is for user \(result.user.uid.prefix(8))…, not the current user \(auth.currentUser.map { "\($0.uid.prefix(8))…" } ?? "(none)")")
            }
            try adoptTokens(of: result.user)
            return result
        }
    }

    /// Adds `credential`'s provider to this user. A provider already linked is
    /// `providerAlreadyLinked` (17015) without a request, as in the SDK; an Apple ID another
    /// account holds is `credentialAlreadyInUse` (17025) with `updatedCredential` to sign in to it.
    @discardableResult
    public func link(with credential: AuthCredential) async throws -> AuthDataResult {
        return try await AuthError.forApp {
            if providerData.contains(where: { $0.providerID == credential.provider }) {
                throw AuthError(.providerAlreadyLinked, "\(credential.provider) is already linked to user \(uid.prefix(8))…")
            }
            let auth = try owner()
            return try await signingOutIfTokenIsInvalid { () async throws(AuthError) in try await auth.link(self, with: credential) }
        }
    }

    /// Deletes the account; the user is signed out.
    public func delete() async throws {
        try await AuthError.forApp {
            let auth = try owner()
            _ = try await auth.backend.call(DeleteAccountRequest(idToken: try await idToken(), localId: uid))
            auth.signOut(ifCurrent: uid)
        }
    }

    /// Loads the profile again (`getAccountInfo`): the second factors, linked providers, name.
    public func reload() async throws {
        try await AuthError.forApp {
            let auth = try owner()
            try await signingOutIfTokenIsInvalid { () async throws(AuthError) in try await auth.loadAccountInfo(into: self) }
        }
    }
}

/// What a sign-in returns: the user, what the provider said, and for an identity provider its
/// credential. FirebaseAuth 12.19's `AuthDataResult` (Auth/AuthDataResult.swift): an `NSObject`,
/// not `Sendable` (a completion handler gets it on the main queue; Swift 6 code keeps it there).
open class AuthDataResult: NSObject, NSSecureCoding {
    public let user: User
    public let additionalUserInfo: AdditionalUserInfo?
    /// For sign-in with an identity provider: the credential (Apple's ID token is single-use, so
    /// this is not reusable as it is).
    public let credential: OAuthCredential?

    init(user: User, additionalUserInfo: AdditionalUserInfo?, credential: OAuthCredential? = nil) {
        self.user = user
        self.additionalUserInfo = additionalUserInfo
        self.credential = credential
    }

    // MARK: NSSecureCoding, with the SDK's keys (AuthDataResult.swift 51–72)

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(user, forKey: "user")
        coder.encode(additionalUserInfo, forKey: "additionalUserInfo")
        coder.encode(credential, forKey: "credential")
    }

    /// Nil without a user, as the SDK's.
    public required init?(coder: NSCoder) {
        guard let user = coder.decodeIfPresent(of: User.self, forKey: "user") else { return nil }
        self.user = user
        additionalUserInfo = coder.decodeIfPresent(of: AdditionalUserInfo.self, forKey: "additionalUserInfo")
        credential = coder.decodeIfPresent(of: OAuthCredential.self, forKey: "credential")
    }

    /// `additionalUserInfo?.isNewUser` (not an SDK property: a shortcut the tests use).
    package var isNewUser: Bool { additionalUserInfo?.isNewUser ?? false }
}

