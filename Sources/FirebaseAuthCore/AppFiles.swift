import DeviceOS
import Foundation
import HTTPTransport
import Logging
import Utilities

/// Why an app file could not be used.
public struct AppFileError: CodedError {
    public enum Code: String, Sendable {
        /// The file is missing or unreadable.
        case unreadable
        /// Not an XML or binary property list.
        case notAPropertyList
        /// A required key is absent.
        case missingKey
        /// A key holds the wrong kind of value, or a value the SDK cannot use.
        case invalidValue
    }
    public let code: Code
    public let message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A property list read from disk, in either of the formats Xcode writes (XML, or binary
/// `bplist00` as found inside a built `.app`).
///
/// `@unchecked Sendable` because `dictionary` holds Foundation objects the compiler cannot check:
/// they are the immutable ones `PropertyListSerialization` makes (no mutable-containers option),
/// the property is a `let`, and nothing here hands out a way to change them, so sharing across
/// threads only ever reads them.
public struct PropertyListFile: @unchecked Sendable {
    public enum Format: String, Sendable { case xml, binary, openStep }
    public let url: URL
    public let format: Format
    /// The top-level dictionary. Values are Foundation property-list objects.
    public let dictionary: [String: Any]

    public init(contentsOf url: URL) throws(AppFileError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw AppFileError(.unreadable, "cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(data: data, url: url)
    }

    /// A property list already in memory; `url` names it in errors.
    public init(data: Data, url: URL) throws(AppFileError) {
        try Self.refuseSets(in: data, url: url)
        var format = PropertyListSerialization.PropertyListFormat.xml
        let object: Any
        do { object = try PropertyListSerialization.propertyList(from: data, options: [], format: &format) } catch {
            throw AppFileError(.notAPropertyList, "\(url.path) is not an XML or binary property list (\(data.count) bytes)")
        }
        guard let dictionary = object as? [String: Any] else {
            throw AppFileError(.notAPropertyList, "\(url.path): the top-level object is not a dictionary")
        }
        self.url = url
        self.dictionary = dictionary
        switch format {
        case .binary: self.format = .binary
        case .openStep: self.format = .openStep
        default: self.format = .xml
        }
    }

    /// A binary plist may hold sets (marker 0xCn), which Xcode never writes and which crash
    /// Foundation's reader on Linux (found by fuzzing: Fuzz/regressions/plist/bplist-with-set).
    /// Walks the offset table (bounded by the file) and refuses any set before Foundation sees it.
    static func refuseSets(in data: Data, url: URL) throws(AppFileError) {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else { return }
        let trailer = bytes.count - 32
        func integer(_ start: Int, _ size: Int) -> Int? {
            guard size >= 1, size <= 8, start >= 0, start + size <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + size] {
                guard value <= (Int.max >> 8) else { return nil }
                value = value << 8 | Int(byte)
            }
            return value
        }
        let offsetSize = Int(bytes[trailer + 6])
        guard let objects = integer(trailer + 8, 8), let table = integer(trailer + 24, 8),
              offsetSize >= 1, offsetSize <= 8, objects <= bytes.count, table <= trailer,
              table + objects * offsetSize <= trailer
        else { throw AppFileError(.notAPropertyList, "\(url.path): a damaged binary plist (its trailer or offset table is out of bounds)") }
        for index in 0..<objects {
            guard let offset = integer(table + index * offsetSize, offsetSize), offset < trailer else {
                throw AppFileError(.notAPropertyList, "\(url.path): a damaged binary plist (object \(index) lies outside the file)")
            }
            if bytes[offset] >> 4 == 0xC {
                throw AppFileError(.notAPropertyList, "\(url.path): the binary plist holds a set, which app plists never contain")
            }
        }
    }

    /// A string value; `required` makes its absence an error naming the key and the file.
    func string(_ key: String, required: Bool) throws(AppFileError) -> String? {
        guard let value = dictionary[key] else {
            if required { throw AppFileError(.missingKey, "\(url.lastPathComponent) has no \(key)") }
            return nil
        }
        guard let text = value as? String else {
            throw AppFileError(.invalidValue, "\(url.lastPathComponent): \(key) is \(type(of: value)), not a string")
        }
        return text
    }
}

extension FirebaseOptions {
    /// Reads `GoogleService-Info.plist` (XML or binary) as `FirebaseOptions(contentsOfFile:)` does:
    /// `GOOGLE_APP_ID` and `GCM_SENDER_ID` are required; `API_KEY`, `PROJECT_ID`, `BUNDLE_ID` and
    /// `CLIENT_ID` are read when present (newer files have no `CLIENT_ID`/`REVERSED_CLIENT_ID`).
    public init(contentsOf url: URL) throws(AppFileError) {
        try self.init(plist: try PropertyListFile(contentsOf: url))
    }

    /// From a property list already read.
    public init(plist: PropertyListFile) throws(AppFileError) {
        let url = plist.url
        let appID = try plist.string("GOOGLE_APP_ID", required: true)!
        let parts = appID.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "1", parts[1].allSatisfy(\.isNumber), !parts[1].isEmpty, parts[2] == "ios", !parts[3].isEmpty else {
            throw AppFileError(.invalidValue, """
                \(url.lastPathComponent): GOOGLE_APP_ID \(appID) is not an iOS app ID (1:<project number>:ios:<hex>); \
                download the plist of the iOS app from the Firebase console
                """)
        }
        self.init(googleAppID: appID, gcmSenderID: try plist.string("GCM_SENDER_ID", required: true)!)
        apiKey = try plist.string("API_KEY", required: false)
        projectID = try plist.string("PROJECT_ID", required: false)
        bundleID = try plist.string("BUNDLE_ID", required: false) ?? ""
        clientID = try plist.string("CLIENT_ID", required: false)
    }

    /// `FirebaseOptions(contentsOfFile:)`: nil when the file is missing or not a valid plist.
    public init?(contentsOfFile path: String) {
        guard let options = try? FirebaseOptions(contentsOf: URL(fileURLWithPath: path)) else { return nil }
        self = options
    }
}

/// What auth needs from the app's `Info.plist`.
public struct AppInfo: Sendable, Hashable {
    /// `CFBundleIdentifier`.
    public var bundleID: String
    /// Every scheme of every `CFBundleURLTypes` entry's `CFBundleURLSchemes`, in file order.
    public var urlSchemes: [String]
    /// `UIBackgroundModes` (silent pushes need `remote-notification`).
    public var backgroundModes: [String]
    /// `FirebaseAppDelegateProxyEnabled` (default true). False means swizzling is off: the app's
    /// delegate must forward notifications and URLs to Auth itself.
    public var appDelegateProxyEnabled: Bool
    /// `CFBundleExecutable`: the app's binary in its folder.
    public var executable: String?

    public init(bundleID: String, urlSchemes: [String], backgroundModes: [String] = ["remote-notification"],
                appDelegateProxyEnabled: Bool = true, executable: String? = nil) {
        self.bundleID = bundleID
        self.urlSchemes = urlSchemes
        self.backgroundModes = backgroundModes
        self.appDelegateProxyEnabled = appDelegateProxyEnabled
        self.executable = executable
    }

    /// Reads `Info.plist`, XML or binary.
    public init(contentsOf url: URL) throws(AppFileError) {
        try self.init(plist: try PropertyListFile(contentsOf: url))
    }

    /// From a property list already read.
    public init(plist: PropertyListFile) throws(AppFileError) {
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

/// A built app's files, as in `Payload/<Name>.app/`: `Info.plist`, `GoogleService-Info.plist` and,
/// for device builds, `embedded.mobileprovision`.
public struct AppBundle: Sendable {
    public let directory: URL
    public let info: AppInfo
    public let options: FirebaseOptions
    /// `embedded.mobileprovision` when the bundle has one.
    public let provisioningProfile: URL?

    public init(directory: URL) throws(AppFileError) {
        self.directory = directory
        info = try AppInfo(contentsOf: directory.appendingPathComponent("Info.plist"))
        var options = try FirebaseOptions(contentsOf: directory.appendingPathComponent("GoogleService-Info.plist"))
        if options.bundleID.isEmpty { options.bundleID = info.bundleID }
        self.options = options
        let profile = directory.appendingPathComponent("embedded.mobileprovision")
        provisioningProfile = FileManager.default.fileExists(atPath: profile.path) ? profile : nil
    }

    /// The scheme the reCAPTCHA page returns to, as the SDK derives it: the reversed client ID when
    /// `Info.plist` registers it, else the encoded app ID.
    public var callbackScheme: String { CallbackScheme.derive(options: options, registered: info.urlSchemes) }
}

/// The SDK's choice of callback scheme.
public enum CallbackScheme {
    public static func derive(options: FirebaseOptions, registered schemes: [String]) -> String {
        if let reversed = options.reversedClientIDScheme, isRegistered(reversed, in: schemes) { return reversed }
        return options.encodedAppIDScheme
    }

    /// `AuthWebUtils.isCallbackSchemeRegistered`: a case-insensitive match.
    public static func isRegistered(_ scheme: String, in schemes: [String]) -> Bool {
        schemes.contains { $0.lowercased() == scheme.lowercased() }
    }
}

extension AppHost {
    /// The app described by a bundle's files, on a device (or a simulator).
    public convenience init(bundle: AppBundle, isSimulator: Bool = false, forwardsNotifications: Bool = true,
                            forwardsURLs: Bool = true, userDefaults: UserDefaultsStore = UserDefaultsStore(),
                            keychain: Keychain = Keychain(), recaptchaEnterprise: RecaptchaEnterpriseSDK? = nil,
                            clock: any Clock<Duration> = ContinuousClock(), wallClock: any WallClock = SystemWallClock(),
                            transport: (any HTTPTransport)? = nil,
                            logger: Logger = Logger(label: "authsim.app", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.init(bundleID: bundle.info.bundleID, urlSchemes: bundle.info.urlSchemes, isSimulator: isSimulator,
                  provisioningProfile: bundle.provisioningProfile, forwardsNotifications: forwardsNotifications,
                  forwardsURLs: forwardsURLs, userDefaults: userDefaults, keychain: keychain, recaptchaEnterprise: recaptchaEnterprise, clock: clock,
                  wallClock: wallClock, transport: transport, logger: logger)
    }
}
