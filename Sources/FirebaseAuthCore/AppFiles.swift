import DeviceOS
import FirebaseCore
import Foundation
import HTTPTransport
import Logging
import Utilities

/// A built app's files, as in `Payload/<Name>.app/`: `Info.plist`, `GoogleService-Info.plist` and,
/// for device builds, `embedded.mobileprovision`.
package struct AppBundle: Sendable {
    package let directory: URL
    package let info: AppInfo
    package let options: FirebaseOptions
    /// `embedded.mobileprovision` when the bundle has one.
    package let provisioningProfile: URL?

    package init(directory: URL) throws(AppFileError) {
        self.directory = directory
        info = try AppInfo(contentsOf: directory.appendingPathComponent("Info.plist"))
        let options = try FirebaseOptions.read(contentsOf: directory.appendingPathComponent("GoogleService-Info.plist"))
        if options.bundleID.isEmpty { options.bundleID = info.bundleID }
        self.options = options
        let profile = directory.appendingPathComponent("embedded.mobileprovision")
        provisioningProfile = FileManager.default.fileExists(atPath: profile.path) ? profile : nil
    }
}

extension AppHost.Configuration {
    /// The app described by a bundle's files (its bundle ID, URL schemes and provisioning profile),
    /// on a device (or a simulator).
    package init(bundle: AppBundle, isSimulator: Bool = false, forwardsNotifications: Bool = true, forwardsURLs: Bool = true) {
        self.init(bundleID: bundle.info.bundleID, urlSchemes: bundle.info.urlSchemes, isSimulator: isSimulator,
                  provisioningProfile: bundle.provisioningProfile, forwardsNotifications: forwardsNotifications, forwardsURLs: forwardsURLs)
    }
}
