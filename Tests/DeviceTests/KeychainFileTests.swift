import DeviceOS
import Foundation
import Synchronization
import Testing
import TestSupport

/// The keychain file itself, without an app: what `Auth` relies on when it keeps its items there
/// (the app's side is Tests/AuthFlowTests/KeychainTests.swift, row 6).
@Suite("The device's keychain file")
struct KeychainFileTests {
    func permissions(_ url: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("items are kept by service and account, replaced, removed, and read back by a new process; another format is refused")
    func keychainFile() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a/b/keychain.json")
        let keychain = Keychain(file: file)
        try keychain.set(Data("one".utf8), service: "s1", account: "x")
        try keychain.set(Data("two".utf8), service: "s2", account: "x")
        try keychain.set(Data("three".utf8), service: "s1", account: "x")
        let reread = Keychain(file: file)
        #expect(reread.data(service: "s1", account: "x") == Data("three".utf8))
        #expect(reread.data(service: "s2", account: "x") == Data("two".utf8))
        #expect(reread.items.allSatisfy { $0.accessible == "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly" })
        try reread.remove(service: "s2", account: "x")
        #expect(Keychain(file: file).data(service: "s2", account: "x") == nil)
        #expect(try permissions(file) == 0o600)
        try Data(#"{"format":"authsim-keychain/9","items":[]}"#.utf8).write(to: file)
        #expect(Keychain(file: file).loadError?.contains("authsim-keychain/9") == true)
    }

    /// Each change is written under the keychain's lock: two saves racing outside it could rename
    /// their files in the wrong order and leave an older list in the file than in memory, and an
    /// app started again would find a receipt or a user missing.
    @Test("changes from many threads at once: the file ends as the last change left the items; each change is reported")
    func concurrentChanges() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("keychain.json")
        let keychain = Keychain(file: file)
        let calls = Mutex(0)
        keychain.onChange { _ in calls.withLock { $0 += 1 } }
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for round in 0..<25 {
                        try? keychain.set(Data("\(writer)-\(round)".utf8), service: "s", account: "a\(writer % 3)")
                        if round % 5 == 4 { try? keychain.remove(service: "s", account: "a\(writer % 3)") }
                    }
                }
            }
        }
        #expect(Keychain(file: file).items == keychain.items)
        // Every set is a change; a remove is one when there was an item.
        #expect(calls.withLock { $0 } >= 8 * 25)
    }
}
