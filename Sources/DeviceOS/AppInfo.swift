import Foundation

/// What auth needs from the app's `Info.plist`.
package struct AppInfo: Sendable, Hashable {
    /// `CFBundleIdentifier`.
    package var bundleID: String
    /// Every scheme of every `CFBundleURLTypes` entry's `CFBundleURLSchemes`, in file order.
    package var urlSchemes: [String]
    /// `UIBackgroundModes` (silent pushes need `remote-notification`).
    package var backgroundModes: [String]
    /// `FirebaseAppDelegateProxyEnabled` (default true). False means swizzling is off: the app's
    /// delegate must forward notifications and URLs to Auth itself.
    package var appDelegateProxyEnabled: Bool
    /// `CFBundleExecutable`: the app's binary in its folder.
    package var executable: String?

    package init(bundleID: String, urlSchemes: [String], backgroundModes: [String] = ["remote-notification"],
                appDelegateProxyEnabled: Bool = true, executable: String? = nil) {
        self.bundleID = bundleID
        self.urlSchemes = urlSchemes
        self.backgroundModes = backgroundModes
        self.appDelegateProxyEnabled = appDelegateProxyEnabled
        self.executable = executable
    }

    /// Reads `Info.plist`, XML or binary.
    package init(contentsOf url: URL) throws(AppFileError) {
        try self.init(plist: try PropertyListFile(contentsOf: url))
    }

    /// From a property list already read.
    package init(plist: PropertyListFile) throws(AppFileError) {
        let name = plist.url.lastPathComponent
        bundleID = try plist.string("CFBundleIdentifier", required: true)!
        var schemes: [String] = []
        if let types = plist.dictionary["CFBundleURLTypes"] {
            guard let entries = types as? [Any] else {
                throw AppFileError(.invalidValue, "\(name): CFBundleURLTypes is not an array")
            }
            for (index, entry) in entries.enumerated() {
                guard let type = entry as? [String: Any] else {
                    throw AppFileError(.invalidValue, "\(name): CFBundleURLTypes[\(index)] is not a dictionary")
                }
                // The SDK skips an entry without CFBundleURLSchemes or with a non-string array.
                if let list = type["CFBundleURLSchemes"] as? [String] { schemes += list }
            }
        }
        urlSchemes = schemes
        backgroundModes = plist.dictionary["UIBackgroundModes"] as? [String] ?? []
        executable = plist.dictionary["CFBundleExecutable"] as? String
        switch plist.dictionary["FirebaseAppDelegateProxyEnabled"] {
        case nil: appDelegateProxyEnabled = true
        case let flag as Bool: appDelegateProxyEnabled = flag
        case let text as String: appDelegateProxyEnabled = !["NO", "FALSE", "0"].contains(text.uppercased())
        case let other?:
            throw AppFileError(.invalidValue, "\(name): FirebaseAppDelegateProxyEnabled is \(type(of: other)), not a Boolean")
        }
    }
}
