import Foundation
import Utilities

/// Why `--app` names no app `authsim doctor` can read.
package struct AppLocationError: CodedError {
    package enum Code: String, Sendable {
        /// Nothing at the path.
        case missing
        /// A file that is not an `.ipa` (a zip archive).
        case notAnApp
        /// A folder or an archive without an `.app` in it, or with several.
        case noSingleApp
        /// An `.ipa` that cannot be read (damaged, or an entry too large).
        case unreadableArchive
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// The built app `--app` names, found in any of the shapes a developer has at hand: the `.app`
/// folder (Xcode → Products), a folder holding one (`Payload/`, or the folder `Payload/` is in),
/// or an `.ipa` (a zip archive of `Payload/<Name>.app/`), whose files doctor reads are unpacked
/// into a temporary folder.
package struct AppLocation: Sendable {
    /// The `.app` folder to examine.
    package let directory: URL
    /// What was given, when it was not the `.app` folder itself (`MyApp.ipa`, `Payload`).
    package let givenAs: String?
    /// The temporary folder an `.ipa` was unpacked into (removed by ``discard()``).
    private let unpacked: URL?

    /// The largest entry of an `.ipa` unpacked (the app's executable is the large one).
    package static let maximumEntrySize: UInt64 = 1 << 30

    /// Finds the `.app` at `path`.
    /// - Throws: ``AppLocationError`` when there is nothing there, or no single `.app`.
    package static func find(_ path: String) throws(AppLocationError) -> AppLocation {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw AppLocationError(.missing, "--app \(path) does not exist")
        }
        guard isDirectory.boolValue else { return try unpack(url, given: path) }
        if url.pathExtension == "app" || FileManager.default.fileExists(atPath: url.appendingPathComponent("Info.plist").path) {
            return AppLocation(directory: url, givenAs: nil, unpacked: nil)
        }
        // Payload/X.app, or X.app beside other things, or a folder holding Payload/.
        let apps = appsIn(url) + appsIn(url.appendingPathComponent("Payload"))
        guard apps.count == 1 else {
            throw AppLocationError(.noSingleApp, apps.isEmpty
                ? "--app \(path) is a folder with no Info.plist and no .app in it (nor in Payload/): give the built .app folder, the Payload folder that holds it, or the .ipa"
                : "--app \(path) holds several apps (\(apps.map(\.lastPathComponent).joined(separator: ", "))): give one of them")
        }
        return AppLocation(directory: apps[0], givenAs: path, unpacked: nil)
    }

    /// Removes what ``find(_:)`` unpacked.
    package func discard() {
        if let unpacked { try? FileManager.default.removeItem(at: unpacked) }
    }

    private static func appsIn(_ folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".app") }.sorted().map { folder.appendingPathComponent($0) }
    }

    /// An `.ipa`: the files of `Payload/<Name>.app/` that doctor reads (the plists, the profile,
    /// the executable, the RecaptchaEnterprise framework's binary) into a temporary folder.
    private static func unpack(_ file: URL, given: String) throws(AppLocationError) -> AppLocation {
        let magic = (try? FileHandle(forReadingFrom: file)).flatMap { handle in
            defer { try? handle.close() }
            return try? handle.read(upToCount: 4)
        }
        guard magic == Data([0x50, 0x4B, 0x03, 0x04]) else {
            throw AppLocationError(.notAnApp, "--app \(given) is a file but not an .ipa (a zip archive): give the built .app folder, the Payload folder that holds it, or the .ipa")
        }
        let archive: ZipArchive
        do { archive = try ZipArchive(file: file) } catch {
            throw AppLocationError(.unreadableArchive, "--app \(given): cannot read the archive: \(error)")
        }
        // Payload/<Name>.app/<file>: the apps are the second components.
        var apps: Set<String> = []
        for entry in archive.entries {
            let parts = entry.path.split(separator: "/", omittingEmptySubsequences: true)
            if parts.count >= 2, parts[0] == "Payload", parts[1].hasSuffix(".app") { apps.insert(String(parts[1])) }
        }
        guard apps.count == 1, let app = apps.first else {
            throw AppLocationError(.noSingleApp, apps.isEmpty
                ? "--app \(given) is a zip archive without Payload/<Name>.app/: not an .ipa"
                : "--app \(given) holds several apps (\(apps.sorted().joined(separator: ", "))): give one of them unpacked")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-doctor-\(UUID().uuidString)")
        let directory = folder.appendingPathComponent(app)
        let prefix = "Payload/\(app)/"
        let wanted: Set<String> = ["Info.plist", "GoogleService-Info.plist", "embedded.mobileprovision",
                                   "Frameworks/RecaptchaEnterprise.framework/RecaptchaEnterprise"]
        let executable = executableName(archive, infoPlist: prefix + "Info.plist")
        do {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("Frameworks/RecaptchaEnterprise.framework"),
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var unpacked: Set<String> = []
            for entry in archive.entries where entry.kind == .file && entry.path.hasPrefix(prefix) {
                let inner = String(entry.path.dropFirst(prefix.count))
                guard wanted.contains(inner) || inner == executable, unpacked.insert(inner).inserted else { continue }
                guard entry.uncompressedSize <= maximumEntrySize else {
                    throw AppLocationError(.unreadableArchive, "--app \(given): \(entry.path) is larger than \(maximumEntrySize >> 20) MB")
                }
                try archive.extract(entry, to: directory.appendingPathComponent(inner), limit: maximumEntrySize)
            }
        } catch let error as AppLocationError {
            try? FileManager.default.removeItem(at: folder)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw AppLocationError(.unreadableArchive, "--app \(given): cannot unpack \(prefix): \(error)")
        }
        return AppLocation(directory: directory, givenAs: given, unpacked: folder)
    }

    /// The executable's name (`CFBundleExecutable`) read from the archive's Info.plist, if it can be.
    private static func executableName(_ archive: ZipArchive, infoPlist: String) -> String? {
        guard let entry = archive[infoPlist], entry.kind == .file else { return nil }
        var data = Data()
        guard (try? archive.extract(entry, limit: 16 << 20) { data.append(contentsOf: $0) }) != nil,
              let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else { return nil }
        guard let name = plist["CFBundleExecutable"] as? String, !name.contains("/"), !name.isEmpty else { return nil }
        return name
    }
}
