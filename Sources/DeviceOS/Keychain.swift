import Foundation
import Synchronization
import Utilities

/// The device's keychain as FirebaseAuth uses it, one per app: generic-password items named by
/// service and account, kept in a file (`0600`, its folder `0700`) so that an app killed and
/// started again finds them, as iOS's keychain outlives the process.
///
/// FirebaseAuth 12.19 (`Storage/AuthKeychainServices.swift`, `Auth.swift` 1656, 1798) keeps its
/// items in the service `firebase_auth_<GOOGLE_APP_ID>` under the account
/// `firebase_auth_1_<key>`, readable after first unlock on this device only:
///
/// | key | what |
/// |---|---|
/// | `app_credentials` | the app credential (`full_credential`: receipt and secret) and the receipts still waiting for their push (`pending_receipts`) |
/// | `<app name>_firebase_user` | the signed-in user (`__FIRAPP_DEFAULT_firebase_user` for the default app) |
///
/// The names are the SDK's; an item's data is JSON here, where the SDK writes an
/// `NSKeyedArchiver` archive of its own classes (nothing but the SDK reads either).
///
/// A file that cannot be read is left as it is (nothing is written over it) and the keychain
/// works in memory: ``loadError`` says why, and the app's `Auth` logs it.
package final class Keychain: Sendable {
    /// One keychain item.
    package struct Item: Codable, Sendable, Hashable {
        package var service: String
        package var account: String
        /// `kSecAttrAccessible`.
        package var accessible: String
        package var data: Data
        /// `kSecAttrAccessGroup`: set on items shared by the apps of a team that have the group
        /// in their `keychain-access-groups` entitlement (nil: the app's own item).
        package var accessGroup: String?
        /// `kSecAttrSynchronizable`: an iCloud Keychain item. A query finds an item only with the
        /// same value, so an access group holds two buckets.
        package var synchronizable: Bool?

        func matches(service: String, account: String, accessGroup: String?, synchronizable: Bool) -> Bool {
            self.service == service && self.account == account && self.accessGroup == accessGroup && (self.synchronizable ?? false) == synchronizable
        }
    }

    /// The file: its format (`authsim-keychain/<version>`), the authsim that wrote it (absent in
    /// files written before it was kept: version 1 readers skip it), the items.
    struct FileContents: Codable {
        var format: String
        var writtenBy: String?
        var items: [Item]
        enum CodingKeys: String, CodingKey { case format, writtenBy = "written-by", items }
    }

    package static let format = "authsim-keychain/1"
    /// What the SDK sets on its items.
    package static let accessibleAfterFirstUnlockThisDeviceOnly = "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly"
    /// What the SDK sets on a user shared across devices (`shareAuthStateAcrossDevices`).
    package static let accessibleAfterFirstUnlock = "kSecAttrAccessibleAfterFirstUnlock"

    /// Where the items live; `nil`: in memory only (an app that is never restarted).
    package let file: URL?
    /// Why the file could not be read (it is then never written).
    package let loadError: String?
    /// The items, and who watches them. A lock: `Auth` reads and writes from any thread; a change
    /// is written to the file under it, so the file always ends as the last change left the items
    /// (two saves racing outside it could land in the wrong order, an older list last).
    private let state: Mutex<State>
    private struct State {
        var items: [Item]
        var observers: [@Sendable ([Item]) -> Void] = []
    }

    package init(file: URL? = nil) {
        self.file = file
        var items: [Item] = []
        var problem: String?
        if let file, let data = try? Data(contentsOf: file) {
            do {
                let contents = try JSONDecoder().decode(FileContents.self, from: data)
                if contents.format == Self.format { items = contents.items } else {
                    problem = "\(file.path) is \(contents.format)\(contents.writtenBy.map { ", written by authsim \($0)" } ?? ""); this authsim (\(AuthsimVersion.current)) reads \(Self.format): left untouched, the keychain is in memory"
                }
            } catch {
                problem = "\(file.path) is not a keychain file (\(error)); left untouched, the keychain is in memory"
            }
        }
        loadError = problem
        state = Mutex(State(items: items))
    }

    /// The data of the item `account` in `service` (in `accessGroup`, synchronizable or not).
    package func data(service: String, account: String, accessGroup: String? = nil, synchronizable: Bool = false) -> Data? {
        state.withLock { state in
            state.items.first { $0.matches(service: service, account: account, accessGroup: accessGroup, synchronizable: synchronizable) }?.data
        }
    }

    /// Adds or replaces the item. - Throws: when the file cannot be written (the item is kept in memory).
    package func set(_ data: Data, service: String, account: String, accessGroup: String? = nil, synchronizable: Bool = false,
                    accessible: String = Keychain.accessibleAfterFirstUnlockThisDeviceOnly) throws(KeychainError) {
        try change { items in
            items.removeAll { $0.matches(service: service, account: account, accessGroup: accessGroup, synchronizable: synchronizable) }
            items.append(Item(service: service, account: account, accessible: accessible, data: data, accessGroup: accessGroup,
                              synchronizable: synchronizable ? true : nil))
            return true
        }
    }

    /// Deletes the item, if there is one.
    package func remove(service: String, account: String, accessGroup: String? = nil, synchronizable: Bool = false) throws(KeychainError) {
        try change { items in
            let before = items.count
            items.removeAll { $0.matches(service: service, account: account, accessGroup: accessGroup, synchronizable: synchronizable) }
            return items.count != before
        }
    }

    /// Every item (for `authsim` to show what an app keeps).
    package var items: [Item] { state.withLock { $0.items } }

    /// Calls `observer` with every item after each change, once the change is in the file (or
    /// failed to get there): for a run that waits for what an app saves, as a test waits for an
    /// event instead of reading the file again and again. Called on the thread that made the change.
    package func onChange(_ observer: @escaping @Sendable ([Item]) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Applies `edit` (which says whether it changed anything), writes the file, tells the observers.
    private func change(_ edit: (inout [Item]) -> Bool) throws(KeychainError) {
        let (items, observers, failure) = state.withLock { state -> ([Item], [@Sendable ([Item]) -> Void], KeychainError?) in
            guard edit(&state.items) else { return (state.items, [], nil) }
            // A keychain in memory copies nothing out (the sign-in path saves on every change).
            var failure: KeychainError?
            do throws(KeychainError) { try save(state.items) } catch { failure = error }
            return (state.items, state.observers, failure)
        }
        for observer in observers { observer(items) }
        if let failure { throw failure }
    }

    /// Writes `items` to the file: a new file `0600` beside it, renamed over the old one.
    private func save(_ items: [Item]) throws(KeychainError) {
        guard let file else { return }
        guard loadError == nil else { throw KeychainError("the keychain file \(file.path) could not be read, so it is not written: \(loadError!)") }
        do {
            let folder = file.deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            let data = try encoder.encode(FileContents(format: Self.format, writtenBy: AuthsimVersion.current, items: items))
            do throws(FileStoreError) { try PrivateFile.replace(file, with: data) } catch {
                throw KeychainError("cannot write the keychain \(file.path): \(error.message)")
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError("cannot write the keychain \(file.path): \(error)")
        }
    }
}

/// Why the keychain could not be written.
package struct KeychainError: Error, Sendable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
