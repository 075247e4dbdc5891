import DeviceOS
import Foundation
import IdentityToolkitAPI
import Utilities

// What `Auth` keeps in the app's keychain, under the SDK's names (``Keychain``): the app
// credential and pending receipts (`AuthAppCredentialManager.swift` 33–48, saved on every change,
// 96–102), and the signed-in user (`Auth.swift` 1772–1793, 1986–2010).


/// `app_credentials`: the archive's two keys.
struct StoredAppCredentials: Codable {
    var fullCredential: AppCredential?
    var pendingReceipts: [String]
    enum CodingKeys: String, CodingKey {
        case fullCredential = "full_credential"
        case pendingReceipts = "pending_receipts"
    }
}

/// `<app name>_firebase_user`: the user's ID and tokens, and the profile as `getAccountInfo` last
/// described it.
struct StoredUser: Codable {
    var uid: String
    var idToken: String
    var refreshToken: String
    var expiration: Date?
    var record: UserRecord?
    /// Set only for an anonymous user (entries written before it have none: not anonymous).
    var isAnonymous: Bool?
    /// The user's tenant (`User.tenantID`); absent for the project's own users.
    var tenantID: String?
}

extension Auth {
    /// `firebase_auth_<GOOGLE_APP_ID>` (`Auth.keychainServiceName(for:)`).
    package var keychainService: String { "firebase_auth_\(options.googleAppID)" }
    /// `AuthKeychainServices`' account prefix (a version, "1", for later schemes).
    package static let keychainAccountPrefix = "firebase_auth_1_"
    package static let appCredentialsKey = "app_credentials"
    /// How the keychain items are written: JSON, keys sorted (every sign-in saves both items).
    static let itemEncoder = SortedJSONEncoder()
    /// `<app name>_firebase_user`.
    var userKey: String { "\(appName)_firebase_user" }

    private func account(_ key: String) -> String { Self.keychainAccountPrefix + key }

    /// Reads what an earlier run of the app left in the keychain: the app credential and pending
    /// receipts, and the signed-in user (whose tokens refresh as usual).
    func restoreFromKeychain() {
        let keychain = host.keychain
        if let problem = keychain.loadError {
            host.logger.warning("the app's keychain cannot be read; Auth starts empty", metadata: ["why": "\(problem)"])
        }
        let decoder = JSONDecoder()
        if let data = keychain.data(service: keychainService, account: account(Self.appCredentialsKey)) {
            do {
                let stored = try decoder.decode(StoredAppCredentials.self, from: data)
                state.withLock { state in
                    state.credentials = AppCredentialBook(pending: stored.pendingReceipts, credential: stored.fullCredential)
                }
            } catch {
                host.logger.warning("the keychain's app_credentials item is damaged; ignored", metadata: ["error": "\(error)"])
            }
        }
        // The user: from the access group the app last chose (kept in UserDefaults), or its own item.
        if let group = host.userDefaults.string(forKey: storedAccessGroupKey) {
            do { try useAccessGroup(group) } catch {
                host.logger.warning("the user in the app's keychain access group cannot be read; no user is restored",
                                    metadata: ["group": "\(group)", "error": "\(error.message)"])
            }
        } else if let data = keychain.data(service: keychainService, account: account(userKey)) {
            do {
                let user = try storedUser(from: data)
                let current = HandedOver<User?>(user)
                // The restored user's tenant is the Auth's (the SDK's protectedDataInitialization,
                // Auth.swift 1684).
                state.withLock {
                    $0.currentUser = current
                    $0.tenantID = user.tenantID
                }
                // The SDK's restore posts too (updateCurrentUser(byForce:savingToDisk: false)):
                // the restored token is the one listeners are told of first.
                possiblyNotifyListeners()
            } catch {
                host.logger.warning("the keychain's user item is damaged; no user is restored", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A user as a keychain item stored it, belonging to this `Auth`.
    func storedUser(from data: Data) throws -> User {
        let stored = try JSONDecoder().decode(StoredUser.self, from: data)
        let user = User(auth: self, uid: stored.uid, idToken: stored.idToken, refreshToken: stored.refreshToken,
                        expiration: stored.expiration, anonymous: stored.isAnonymous == true, tenantID: stored.tenantID)
        if let record = stored.record { user.apply(record) }
        return user
    }

    // MARK: Keychain access groups (Auth.swift 203–218, 1476–1545; SystemService/AuthStoredUserManager.swift)

    /// `AuthStoredUserManager`'s UserDefaults key for the chosen group (in the SDK, in a suite
    /// named after the keychain service: here the service prefixes the key).
    var storedAccessGroupKey: String { "\(keychainService).firebase_auth_stored_user_access_group" }
    /// The account of the user item in an access group (its service is the API key).
    static let sharedUserAccount = "firebase_auth_firebase_user"

    /// The keychain and item names of the user in `group`, as `AuthStoredUserManager` queries it.
    private func sharedUserItem(_ group: String, function: String) throws(AuthError) -> (Keychain, service: String, synchronizable: Bool) {
        let keychain: Keychain
        do { keychain = try host.sharedKeychain(for: group, function: function) } catch {
            throw AuthError(.keychainError, error.description)
        }
        return (keychain, options.apiKey ?? "", shareAuthStateAcrossDevices)
    }

    /// `getStoredUser(forAccessGroup:)`: the user saved in `accessGroup` (by this app or another
    /// app of the team that shares the group), or for nil the app's own saved user; not made
    /// current. A group the app is not entitled to is `keychainError` (17995).
    public func getStoredUser(forAccessGroup accessGroup: String?) throws -> User? {
        return try AuthError.forApp {
            let data: Data?
            if let accessGroup {
                let (keychain, service, synchronizable) = try sharedUserItem(accessGroup, function: "SecItemCopyMatching")
                data = keychain.data(service: service, account: Self.sharedUserAccount, accessGroup: accessGroup, synchronizable: synchronizable)
            } else {
                data = host.keychain.data(service: keychainService, account: account(userKey))
            }
            guard let data else { return nil }
            do { return try storedUser(from: data) } catch {
                throw AuthError(.keychainError, "the stored user item is damaged: \(error)")
            }
        }
    }

    /// `useUserAccessGroup(_:)`: from now on the user is kept in `accessGroup` (nil: the app's own
    /// item), and the user stored there (or none) becomes current, as the SDK switches; the choice
    /// is kept for the next launch. Moving into a group removes the app's own user item.
    public func useUserAccessGroup(_ accessGroup: String?) throws {
        try AuthError.forApp {
            try useAccessGroup(accessGroup)
        }
    }

    private func useAccessGroup(_ accessGroup: String?) throws(AuthError) {
        host.userDefaults.set(accessGroup, forKey: storedAccessGroupKey)
        let user: User?
        do { user = try getStoredUser(forAccessGroup: accessGroup) } catch { throw AuthError(thrown: error) ?? AuthError(.keychainError, "\(error)") }
        let current = HandedOver(user)
        let wasOwn = state.withLock { state -> Bool in
            state.currentUser = current
            defer { state.userAccessGroup = accessGroup }
            return state.userAccessGroup == nil
        }
        possiblyNotifyListeners()
        if wasOwn, accessGroup != nil {
            do { try host.keychain.remove(service: keychainService, account: account(userKey)) } catch {
                throw AuthError(.keychainError, error.description)
            }
        }
    }

    /// `userAccessGroup`: the keychain access group the user is kept in (nil: the app's own item).
    public internal(set) var userAccessGroup: String? {
        get { state.withLock { $0.userAccessGroup } }
        set { state.withLock { $0.userAccessGroup = newValue } }
    }

    /// `shareAuthStateAcrossDevices`: the user in the access group is an iCloud Keychain item
    /// (`kSecAttrSynchronizable`), readable after first unlock. Set it before choosing the group:
    /// synchronizable and device-only items are apart, so a change finds the other bucket.
    public var shareAuthStateAcrossDevices: Bool {
        get { state.withLock { $0.shareAuthStateAcrossDevices } }
        set { state.withLock { $0.shareAuthStateAcrossDevices = newValue } }
    }

    /// Saves the app credential and pending receipts, as the SDK does after every change.
    func saveAppCredentials() {
        let stored = state.withLock { StoredAppCredentials(fullCredential: $0.credentials.credential, pendingReceipts: $0.credentials.pending) }
        do {
            try host.keychain.set(Data(try Self.itemEncoder.encode(stored)), service: keychainService, account: account(Self.appCredentialsKey))
        } catch {
            // The SDK ignores a failed save (`try?`); the credential stays in memory.
            host.logger.warning("cannot save the app credential in the keychain", metadata: ["error": "\(error)"])
        }
    }

    /// Saves `user` if it is the current user, or removes the stored user when there is none: in
    /// the access group if one is chosen (`AuthStoredUserManager.setStoredUser`), else the app's own
    /// item. A keychain that cannot take it (a full disk, a read-only folder) is `keychainError`
    /// (17995), which fails the call that changed the user, as the SDK's `updateKeychain` does
    /// (Auth.swift 1959–1984, User.swift 1291, 1451, 1711).
    func saveUser(_ user: User?) throws(AuthError) {
        /// A keychain call; its failure is the SDK's keychain error for `function`.
        func keychainCall(_ function: String, _ call: () throws(KeychainError) -> Void) throws(AuthError) {
            do { try call() } catch { throw AuthError(.keychainError, "\(function): \(error)") }
        }
        do throws(AuthError) {
            if let user {
                guard state.withLock({ $0.currentUser }).value === user else { return }
                let data: Data
                do { data = Data(try Self.itemEncoder.encode(user.stored)) } catch {
                    throw AuthError(.keychainError, "cannot encode the user for the keychain: \(error)")
                }
                if let group = userAccessGroup {
                    let (keychain, service, synchronizable) = try sharedUserItem(group, function: "SecItemAdd")
                    try keychainCall("SecItemAdd") { () throws(KeychainError) in
                        try keychain.set(data, service: service, account: Self.sharedUserAccount, accessGroup: group, synchronizable: synchronizable,
                                         accessible: synchronizable ? Keychain.accessibleAfterFirstUnlock : Keychain.accessibleAfterFirstUnlockThisDeviceOnly)
                    }
                } else {
                    try keychainCall("SecItemAdd") { () throws(KeychainError) in try host.keychain.set(data, service: keychainService, account: account(userKey)) }
                }
            } else if let group = userAccessGroup {
                let (keychain, service, synchronizable) = try sharedUserItem(group, function: "SecItemDelete")
                try keychainCall("SecItemDelete") { () throws(KeychainError) in
                    try keychain.remove(service: service, account: Self.sharedUserAccount, accessGroup: group, synchronizable: synchronizable)
                }
            } else {
                try keychainCall("SecItemDelete") { () throws(KeychainError) in try host.keychain.remove(service: keychainService, account: account(userKey)) }
            }
        } catch {
            host.logger.warning("cannot save the signed-in user in the keychain", metadata: ["error": "\(error)"])
            throw error
        }
        // The SDK posts its auth-state notification after saving (Auth.swift updateCurrentUser,
        // updateKeychain): listeners hear of a new user, a new token, or none.
        possiblyNotifyListeners()
    }
}
