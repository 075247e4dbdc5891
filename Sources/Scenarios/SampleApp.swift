import AuthBackend
import FirebaseCore
import Foundation
import Utilities

/// A built app's files, generated (never downloaded): `Info.plist` and `GoogleService-Info.plist`
/// with the keys Xcode and the Firebase console write, in XML or binary form. For `authsim phone
/// --app`, for tests, and as a starting point to compare a real app's files against.
package struct SampleApp: Sendable {
    /// The sample app's IDs, the defaults of every description of an app (``AppProfile``, the
    /// testing module's `SimulatedApp`): the bundle ID the backend's project registers, and a Google
    /// app ID of its project number.
    package static let defaultBundleID = BackendConfiguration().bundleID
    package static let defaultGoogleAppID = "1:\(BackendConfiguration().projectNumber):ios:a1b2c3d4e5f60718"

    package var bundleID = Self.defaultBundleID
    package var googleAppID = Self.defaultGoogleAppID
    package var apiKey = BackendConfiguration().apiKey
    package var projectID = BackendConfiguration().projectID
    /// `CLIENT_ID` (older plists; nil: a newer plist without CLIENT_ID / REVERSED_CLIENT_ID).
    package var clientID: String? = "123456789012-a1b2c3d4e5f60718a1b2c3d4e5f6.apps.googleusercontent.com"
    /// `CFBundleURLSchemes` (nil: the encoded app ID, as the phone-auth guide says).
    package var urlSchemes: [String]? = nil
    package var backgroundModes = ["remote-notification"]
    /// `FirebaseAppDelegateProxyEnabled` (nil: absent, i.e. swizzling on).
    package var appDelegateProxyEnabled: Bool? = nil
    /// `.xml` or `.binary` (what a built `.app` holds).
    package var format: PropertyListSerialization.PropertyListFormat = .xml
    /// When set, a stand-in for the app's executable (`AuthsimSample`) is written: a Mach-O 64 magic
    /// and these Objective-C class names, NUL-separated, as `__objc_classname` holds them (e.g.
    /// `RCARecaptcha` and `RCAAction` for an app that links RecaptchaEnterprise statically). It
    /// is not runnable; `authsim doctor` reads the names out of it as it does out of a real binary.
    package var linkedClasses: [String]? = nil

    package init() {}

    package var encodedAppIDScheme: String { "app-" + googleAppID.replacingOccurrences(of: ":", with: "-") }

    package var infoPlist: [String: Any] {
        var info: [String: Any] = [
            "CFBundleDevelopmentRegion": "en", "CFBundleExecutable": "AuthsimSample", "CFBundleIdentifier": bundleID,
            "CFBundleInfoDictionaryVersion": "6.0", "CFBundleName": "AuthsimSample", "CFBundlePackageType": "APPL",
            "CFBundleShortVersionString": "1.0", "CFBundleVersion": "1", "LSRequiresIPhoneOS": true,
            "CFBundleURLTypes": [[
                "CFBundleTypeRole": "Editor", "CFBundleURLName": bundleID,
                "CFBundleURLSchemes": urlSchemes ?? [encodedAppIDScheme],
            ] as [String: Any]],
            "UIBackgroundModes": backgroundModes,
        ]
        if let appDelegateProxyEnabled { info["FirebaseAppDelegateProxyEnabled"] = appDelegateProxyEnabled }
        return info
    }

    package var googleServiceInfo: [String: Any] {
        var plist: [String: Any] = [
            "API_KEY": apiKey, "GCM_SENDER_ID": googleAppID.split(separator: ":").dropFirst().first.map(String.init) ?? "",
            "PLIST_VERSION": "1", "BUNDLE_ID": bundleID, "PROJECT_ID": projectID, "STORAGE_BUCKET": "\(projectID).appspot.com",
            "IS_ADS_ENABLED": false, "IS_ANALYTICS_ENABLED": false, "IS_APPINVITE_ENABLED": true, "IS_GCM_ENABLED": true,
            "IS_SIGNIN_ENABLED": true, "GOOGLE_APP_ID": googleAppID,
        ]
        if let clientID {
            plist["CLIENT_ID"] = clientID
            plist["REVERSED_CLIENT_ID"] = clientID.split(separator: ".").reversed().joined(separator: ".")
        }
        return plist
    }

    /// Writes `Info.plist` and `GoogleService-Info.plist` into `directory` (created if needed).
    package func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, plist) in [("Info.plist", infoPlist), ("GoogleService-Info.plist", googleServiceInfo)] {
            let data = try PropertyListWriter.data(plist, format: format)
            try data.write(to: directory.appendingPathComponent(name))
        }
        if let linkedClasses {
            var binary: [UInt8] = [0xCF, 0xFA, 0xED, 0xFE]  // MH_MAGIC_64, little-endian
            for name in linkedClasses { binary += Array(name.utf8) + [0] }
            try Data(binary).write(to: directory.appendingPathComponent("AuthsimSample"))
        }
    }
}
