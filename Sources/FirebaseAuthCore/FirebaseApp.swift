import DeviceOS
import Foundation
import Synchronization

/// The `GoogleService-Info.plist` values auth needs.
public struct FirebaseOptions: Sendable, Hashable {
    /// `GOOGLE_APP_ID`, e.g. `1:123456789:ios:123abc456def`.
    public var googleAppID: String
    public var gcmSenderID: String
    public var apiKey: String?
    public var projectID: String?
    public var bundleID: String
    /// `CLIENT_ID` (its reverse is the older reCAPTCHA callback scheme).
    public var clientID: String?

    public init(googleAppID: String, gcmSenderID: String) {
        self.googleAppID = googleAppID
        self.gcmSenderID = gcmSenderID
        self.bundleID = ""
    }

    /// `app-1-123456789-ios-123abc456def`: the custom URL scheme the reCAPTCHA page returns to.
    public var encodedAppIDScheme: String { "app-" + googleAppID.replacingOccurrences(of: ":", with: "-") }
    /// `com.googleusercontent.apps.123456` from `123456.apps.googleusercontent.com`.
    public var reversedClientIDScheme: String? {
        clientID.map { $0.split(separator: ".").reversed().joined(separator: ".") }
    }
}

/// A configured Firebase app. `FirebaseApp.configure(options:host:)` makes the default one that
/// `Auth.auth()` uses; `FirebaseApp(name:options:host:)` makes others (one per simulated app).
public final class FirebaseApp: Sendable {
    public let name: String
    public let options: FirebaseOptions
    /// The app around Firebase: its bundle, Info.plist, delegate, device.
    public let host: AppHost

    /// This app's `Auth`, made on first use (``Auth/auth(app:)``).
    private let authInstance = Mutex<Auth?>(nil)

    public init(name: String, options: FirebaseOptions, host: AppHost) {
        self.name = name
        self.options = options
        self.host = host
    }

    /// The app's `Auth`: the app keeps it (strongly; `Auth.app` is weak, as in the SDK).
    var auth: Auth {
        authInstance.withLock { instance in
            if let instance { return instance }
            let auth = Auth(app: self)
            instance = auth
            return auth
        }
    }

    private static let defaultApp = Mutex<FirebaseApp?>(nil)

    /// Configures the default app, as `FirebaseApp.configure()` does from `GoogleService-Info.plist`.
    public static func configure(options: FirebaseOptions, host: AppHost) {
        defaultApp.withLock { $0 = FirebaseApp(name: "__FIRAPP_DEFAULT", options: options, host: host) }
    }

    /// The default app, if configured.
    public static func app() -> FirebaseApp? { defaultApp.withLock { $0 } }
}
