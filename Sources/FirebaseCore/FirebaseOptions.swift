import DeviceOS
import Foundation
import Synchronization

/// `FirebaseOptions`: the values of the app's `GoogleService-Info.plist`, as FirebaseCore 12.19
/// names them (FirebaseCore/Sources/Public/FirebaseCore/FIROptions.h).
///
/// A class, as the SDK's is: `FirebaseApp.configure(options:)` keeps a copy and locks it, and
/// changing a locked copy (`FirebaseApp.app()!.options.apiKey = …`) stops the program with the
/// SDK's message, as its `NSException` does (FIROptions.m, `checkEditingLocked`).
///
/// `@unchecked Sendable`: every property lives in one `Mutex`.
public final class FirebaseOptions: NSObject, NSCopying, @unchecked Sendable {
    /// What the SDK keeps in its options dictionary, under the plist's keys.
    struct Values: Hashable {
        var googleAppID: String
        var gcmSenderID: String
        var apiKey: String?
        var bundleID: String
        var clientID: String?
        var projectID: String?
        var databaseURL: String?
        var storageBucket: String?
        var appGroupID: String?
    }

    private let state: Mutex<(values: Values, locked: Bool)>

    init(values: Values, locked: Bool = false) {
        state = Mutex((values, locked))
    }

    /// `FirebaseOptions(googleAppID:gcmSenderID:)`. The bundle ID starts as the main bundle's, as
    /// the SDK's does (`[[NSBundle mainBundle] bundleIdentifier]`); authsim's main bundle is the
    /// simulated app's when one is bound (AuthsimTesting), else `Bundle.main`'s.
    public init(googleAppID: String, gcmSenderID: String) {
        let bundleID = AppProcess.current?.host.bundleID ?? Bundle.main.bundleIdentifier ?? ""
        state = Mutex((Values(googleAppID: googleAppID, gcmSenderID: gcmSenderID, bundleID: bundleID), false))
    }

    /// `FirebaseOptions(contentsOfFile:)`: nil when the file is missing, is not a property list, or
    /// lacks `GOOGLE_APP_ID` or `GCM_SENDER_ID`. (`FirebaseOptions.read(contentsOf:)` says which.)
    public convenience init?(contentsOfFile plistPath: String) {
        guard let values = try? Self.values(of: PropertyListFile(contentsOf: URL(fileURLWithPath: plistPath))) else { return nil }
        self.init(values: values)
    }

    /// `FirebaseOptions.defaultOptions()`: the main bundle's `GoogleService-Info.plist`, or nil.
    /// The main bundle is the simulated app's when one is bound to this task or installed for the
    /// process (AuthsimTesting), else `Bundle.main`, then the folder of `Bundle.main`'s executable.
    public static func defaultOptions() -> FirebaseOptions? {
        guard let file = MainBundle.current.googleServiceInfo,
              let values = try? values(of: PropertyListFile(contentsOf: file))
        else { return nil }
        return FirebaseOptions(values: values)
    }

    // MARK: The SDK's properties

    /// `API_KEY`.
    public var apiKey: String? {
        get { read(\.apiKey) }
        set { write(\.apiKey, newValue) }
    }
    /// `BUNDLE_ID`, else the main bundle's identifier.
    public var bundleID: String {
        get { read(\.bundleID) }
        set { write(\.bundleID, newValue) }
    }
    /// `CLIENT_ID` (its reverse is the older reCAPTCHA callback scheme).
    public var clientID: String? {
        get { read(\.clientID) }
        set { write(\.clientID, newValue) }
    }
    /// `GCM_SENDER_ID`.
    public var gcmSenderID: String {
        get { read(\.gcmSenderID) }
        set { write(\.gcmSenderID, newValue) }
    }
    /// `PROJECT_ID`.
    public var projectID: String? {
        get { read(\.projectID) }
        set { write(\.projectID, newValue) }
    }
    /// `GOOGLE_APP_ID`, e.g. `1:123456789:ios:123abc456def`.
    public var googleAppID: String {
        get { read(\.googleAppID) }
        set { write(\.googleAppID, newValue) }
    }
    /// `DATABASE_URL`.
    public var databaseURL: String? {
        get { read(\.databaseURL) }
        set { write(\.databaseURL, newValue) }
    }
    /// `STORAGE_BUCKET`.
    public var storageBucket: String? {
        get { read(\.storageBucket) }
        set { write(\.storageBucket, newValue) }
    }
    /// The App Group shared with extensions (set in code; no plist key).
    public var appGroupID: String? {
        get { read(\.appGroupID) }
        set { write(\.appGroupID, newValue) }
    }

    public func copy(with zone: NSZone? = nil) -> Any {
        let (values, locked) = state.withLock { ($0.values, $0.locked) }
        return FirebaseOptions(values: values, locked: locked)
    }

    /// Equal when every value is (FIROptions.m `isEqualToOptions:` compares its dictionaries).
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? FirebaseOptions else { return false }
        return other === self || other.values == values
    }

    public override var hash: Int { values.hashValue }

    public override var description: String {
        let values = self.values
        return "FirebaseOptions(googleAppID: \(values.googleAppID), bundleID: \(values.bundleID), projectID: \(values.projectID ?? "nil"))"
    }

    // MARK: Storage

    var values: Values { state.withLock { $0.values } }

    /// A locked copy, as `FirebaseApp` keeps it.
    func lockedCopy() -> FirebaseOptions { FirebaseOptions(values: values, locked: true) }

    private func read<T>(_ key: KeyPath<Values, T>) -> T { values[keyPath: key] }

    private func write<T: Sendable>(_ key: WritableKeyPath<Values, T> & Sendable, _ value: T) {
        let locked = state.withLock { state in
            if !state.locked { state.values[keyPath: key] = value }
            return state.locked
        }
        if locked {
            // FIROptions.m, kFIRExceptionBadModification, raised as an NSException.
            fatalError("Attempted to modify options after it's set on FIRApp. Please modify all properties before initializing FIRApp.")
        }
    }
}

extension FirebaseOptions {
    /// Reads `GoogleService-Info.plist` (XML or binary), saying what is wrong where
    /// `FirebaseOptions(contentsOfFile:)` gives nil: `GOOGLE_APP_ID` and `GCM_SENDER_ID` are
    /// required, and the app ID must be an iOS one; `API_KEY`, `PROJECT_ID`, `BUNDLE_ID`,
    /// `CLIENT_ID`, `DATABASE_URL` and `STORAGE_BUCKET` are read when present.
    package static func read(contentsOf url: URL) throws(AppFileError) -> FirebaseOptions {
        FirebaseOptions(values: try values(of: try PropertyListFile(contentsOf: url)))
    }

    /// From a property list already read.
    package static func read(plist: PropertyListFile) throws(AppFileError) -> FirebaseOptions {
        FirebaseOptions(values: try values(of: plist))
    }

    static func values(of plist: PropertyListFile) throws(AppFileError) -> Values {
        let url = plist.url
        let appID = try plist.string("GOOGLE_APP_ID", required: true)!
        let parts = appID.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "1", parts[1].allSatisfy(\.isNumber), !parts[1].isEmpty, parts[2] == "ios", !parts[3].isEmpty else {
            throw AppFileError(.invalidValue, """
                \(url.lastPathComponent): GOOGLE_APP_ID \(appID) is not an iOS app ID (1:<project number>:ios:<hex>); \
                download the plist of the iOS app from the Firebase console
                """)
        }
        return Values(googleAppID: appID, gcmSenderID: try plist.string("GCM_SENDER_ID", required: true)!,
                      apiKey: try plist.string("API_KEY", required: false),
                      bundleID: try plist.string("BUNDLE_ID", required: false) ?? "",
                      clientID: try plist.string("CLIENT_ID", required: false),
                      projectID: try plist.string("PROJECT_ID", required: false),
                      databaseURL: try plist.string("DATABASE_URL", required: false),
                      storageBucket: try plist.string("STORAGE_BUCKET", required: false))
    }

    /// `app-1-123456789-ios-123abc456def`: the custom URL scheme the reCAPTCHA page returns to.
    package var encodedAppIDScheme: String {
        // Byte by byte: `replacingOccurrences` goes through Foundation's locale-aware search, and
        // the SDK checks this scheme on every verifyPhoneNumber.
        "app-" + String(decoding: googleAppID.utf8.map { $0 == UInt8(ascii: ":") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
    }

    /// `com.googleusercontent.apps.123456` from `123456.apps.googleusercontent.com`.
    package var reversedClientIDScheme: String? {
        clientID.map { $0.split(separator: ".").reversed().joined(separator: ".") }
    }
}
