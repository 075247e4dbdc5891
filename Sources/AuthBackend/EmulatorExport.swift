import IdentityToolkitAPI
import Utilities
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The Firebase Emulator Suite's export format, auth part, as `firebase emulators:export DIR` and
/// `--export-on-exit DIR` write it (firebase-tools `src/emulator/hubExport.ts`) and
/// `--import DIR` reads it (`src/emulator/auth/index.ts`):
///
/// ```
/// DIR/firebase-export-metadata.json   {"version": "…", "auth": {"version": "…", "path": "auth_export"}}
/// DIR/auth_export/accounts.json       an accounts:batchGet?maxResults=-1 answer: {"kind": …, "users": [...]}
/// DIR/auth_export/config.json         the emulator's project config: {"signIn": {…}, "emailPrivacyConfig": {…}}
/// ```
///
/// authsim writes exactly that (so the Auth Emulator imports it), plus
/// `auth_export/authsim-config.json`: the rest of its project config (test numbers, reCAPTCHA SMS
/// defense), which the emulator does not read; and its ``FormatStamp`` as the metadata's
/// `authsim` member, which the emulator skips. An import checks it: an export of a newer format is
/// refused, naming both authsims; one without it (the emulator's, or an older authsim's) is read.
package enum EmulatorExport {
    package static let metadataFile = "firebase-export-metadata.json"

    /// authsim's part of the export (its stamp was added without changing it: version 1).
    package static let format = StateFormat(kind: "emulator export", current: 1)

    /// The folder holding `accounts.json` for an import of `directory`: the metadata's `auth.path`,
    /// else `auth_export`, else the folder itself (an `auth_export` folder given directly); `nil`
    /// when `directory` does not exist yet or is empty: the first run of `--import D
    /// --export-on-exit D` has nothing to import. A file, or a folder of other files, is refused.
    package static func authFolder(in directory: URL) throws(IdentityToolkitError) -> URL? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else { return nil }
        guard isDirectory.boolValue else {
            throw IdentityToolkitError(.invalidConfig, "--import \(directory.path) is a file: give the folder an export was written to")
        }
        let entries: [String]
        do { entries = try FileManager.default.contentsOfDirectory(atPath: directory.path) } catch {
            throw IdentityToolkitError(.invalidConfig, "--import \(directory.path) cannot be read: \(error.localizedDescription)")
        }
        if entries.isEmpty { return nil }
        let metadata = directory.appendingPathComponent(metadataFile)
        if let data = FileManager.default.contents(atPath: metadata.path) {
            struct Metadata: Decodable {
                struct Part: Decodable { let path: String }
                let auth: Part?
                let authsim: FormatStamp?
            }
            let parsed: Metadata
            do { parsed = try JSONDecoder().decode(Metadata.self, from: data) } catch {
                throw IdentityToolkitError(.invalidConfig, "\(metadata.path) is not an emulator export's metadata: \(error)")
            }
            do { _ = try format.version(of: parsed.authsim, in: directory.path) } catch {
                throw IdentityToolkitError(.stateFormat, "--import: \(error.message)", status: 500)
            }
            guard let auth = parsed.auth else {
                throw IdentityToolkitError(.invalidConfig, "\(metadata.path) has no auth part: the export was made without the Auth Emulator")
            }
            return directory.appendingPathComponent(auth.path)
        }
        let nested = directory.appendingPathComponent("auth_export")
        if FileManager.default.fileExists(atPath: nested.appendingPathComponent("accounts.json").path) { return nested }
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("accounts.json").path) { return directory }
        throw IdentityToolkitError(.invalidConfig, "--import \(directory.path): no \(metadataFile), auth_export/accounts.json or accounts.json")
    }

    /// What an import found: users imported, and the config files read (none when the folder
    /// does not exist yet or is empty).
    package struct ImportReport: Sendable {
        package var users: Int
        package var files: [String]

        /// What a program says of it: the users and files, or that there was nothing to import.
        package func summary(of folder: String) -> String {
            if files.isEmpty { return "\(folder) does not exist yet or is empty: starting with no users" }
            return "imported \(users) \(users == 1 ? "user" : "users") from \(files.joined(separator: ", "))"
        }
    }

    /// An export as read, before anything is applied: its config files (the emulator's, then
    /// authsim's), and its accounts cut into the batches an import sends (each `allowOverwrite`,
    /// with the index of its first user).
    package struct Contents {
        package var configs: [(file: String, config: EmulatorProjectConfig)] = []
        package var accountsFile: String?
        package var batches: [(start: Int, request: UploadAccountRequest)] = []
        package var users = 0
    }

    /// Reads the export in `directory` as ``load(_:into:)`` does, or nil when there is nothing
    /// to import (``authFolder(in:)``). A file that does not read is `INVALID_CONFIG` naming it.
    package static func read(_ directory: URL) throws(IdentityToolkitError) -> Contents? {
        guard let folder = try authFolder(in: directory) else { return nil }
        var contents = Contents()
        for name in ["config.json", "authsim-config.json"] {
            let file = folder.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file.path) else { continue }
            do { contents.configs.append((file.path, try IdentityToolkitJSON.decodeChecked(EmulatorProjectConfig.self, from: data, what: file.path))) } catch {
                throw IdentityToolkitError(.invalidConfig, "\(file.path): \(error.message)")
            }
        }
        let accounts = folder.appendingPathComponent("accounts.json")
        guard let data = FileManager.default.contents(atPath: accounts.path) else { return contents }
        var request: UploadAccountRequest
        do { request = try UploadAccountRequest.checked(Array(data)) } catch {
            throw IdentityToolkitError(.invalidConfig, "\(accounts.path): \(error.message)")
        }
        let all = request.users ?? []
        for start in stride(from: 0, to: all.count, by: IdentityToolkit.maximumBatchSize) {
            request.users = Array(all[start..<min(start + IdentityToolkit.maximumBatchSize, all.count)])
            request.allowOverwrite = true
            contents.batches.append((start, request))
        }
        contents.accountsFile = accounts.path
        contents.users = all.count
        return contents
    }

    /// Loads an export into `toolkit`: the config (emulator's, then authsim's), then the accounts
    /// (users with the same local ID are replaced, so the same seed can be imported on every
    /// start). Any user that cannot be imported fails the whole import, naming it.
    package static func load(_ directory: URL, into toolkit: IdentityToolkit) async throws(IdentityToolkitError) -> ImportReport {
        guard let contents = try read(directory) else { return ImportReport(users: 0, files: []) }
        for (file, config) in contents.configs {
            do { _ = try await toolkit.updateProjectConfig(config) } catch {
                throw IdentityToolkitError(.invalidConfig, "\(file): \(error.message)")
            }
        }
        for (start, request) in contents.batches {
            let answer = try await toolkit.call(ToolkitCalls.adminBatchCreate, request)
            if let failure = answer.error?.first {
                let id = request.users?[failure.index].localId ?? "?"
                throw IdentityToolkitError(.invalidConfig, "\(contents.accountsFile ?? "accounts.json"): user \(start + failure.index) (\(id)): \(failure.message)")
            }
        }
        return ImportReport(users: contents.users, files: contents.configs.map(\.file) + (contents.accountsFile.map { [$0] } ?? []))
    }

    /// Writes `toolkit`'s users and config to `directory` in the export format (every file
    /// written whole beside its target, then all renamed over the old ones: a failure leaves the
    /// old export; the folder the user's alone, 0700, as exports hold phone numbers).
    package static func write(_ toolkit: IdentityToolkit, to directory: URL, version: String) async throws(IdentityToolkitError) {
        let folder = directory.appendingPathComponent("auth_export")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw IdentityToolkitError(.stateUnavailable, "cannot create \(folder.path): \(error.localizedDescription)")
        }
        struct Metadata: Encodable {
            struct Part: Encodable { let version: String; let path: String }
            let version: String
            let auth: Part
            let authsim: FormatStamp
        }
        let accounts = try await toolkit.exportAccounts()
        let config = try await toolkit.projectConfigForExport()
        var ours = try await toolkit.projectConfigForAdmin()
        ours.authsim = nil
        ours.emailPrivacyConfig = nil
        ours.signIn?.allowDuplicateEmails = nil
        // All four files together: a full disk or a read-only folder leaves the last export whole.
        let files: [(URL, Data)] = [
            (folder.appendingPathComponent("accounts.json"), Data(try IdentityToolkitJSON.encode(accounts))),
            (folder.appendingPathComponent("config.json"), Data(try IdentityToolkitJSON.encode(config))),
            (folder.appendingPathComponent("authsim-config.json"), Data(try IdentityToolkitJSON.encode(ours))),
            (directory.appendingPathComponent(metadataFile),
             Data(try IdentityToolkitJSON.encode(Metadata(version: version, auth: .init(version: version, path: "auth_export"), authsim: format.stamp)))),
        ]
        do { try PrivateFile.replace(files) } catch {
            throw IdentityToolkitError(.stateUnavailable, "cannot write the export to \(directory.path) (the last one, if any, is left as it was): \(error.message)")
        }
    }
}
