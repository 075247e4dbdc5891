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
        if let data = keychain.data(service: keychainService, account: account(userKey)) {
            do {
                let stored = try decoder.decode(StoredUser.self, from: data)
                let user = User(auth: self, uid: stored.uid, idToken: stored.idToken, refreshToken: stored.refreshToken,
                                expiration: stored.expiration, anonymous: stored.isAnonymous == true)
                if let record = stored.record { user.update(with: record, persist: false) }
                state.withLock { $0.currentUser = user }
                // The SDK's restore posts too (updateCurrentUser(byForce:savingToDisk: false)):
                // the restored token is the one listeners are told of first.
                possiblyNotifyListeners()
            } catch {
                host.logger.warning("the keychain's user item is damaged; no user is restored", metadata: ["error": "\(error)"])
            }
        }
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

    /// Saves `user` if it is the current user, or removes the stored user when there is none.
    func saveUser(_ user: User?) {
        do {
            if let user {
                guard state.withLock({ $0.currentUser === user }) else { return }
                try host.keychain.set(Data(try Self.itemEncoder.encode(user.stored)), service: keychainService, account: account(userKey))
            } else {
                try host.keychain.remove(service: keychainService, account: account(userKey))
            }
        } catch {
            host.logger.warning("cannot save the signed-in user in the keychain", metadata: ["error": "\(error)"])
        }
        // The SDK posts its auth-state notification after saving (Auth.swift updateCurrentUser,
        // updateKeychain): listeners hear of a new user, a new token, or none.
        possiblyNotifyListeners()
    }
}
