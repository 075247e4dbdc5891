import ArgumentParser
import CommandSupport
import FirebaseCore
import Foundation
import LocalPKI
import Scenarios
import APNsWire

/// `authsim sample-app`: writes a built app's plists, as Xcode and the Firebase console make them.
struct SampleAppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample-app",
        abstract: "Write an app's Info.plist and GoogleService-Info.plist (XML or binary) for authsim phone --app.",
        discussion: "The values match authsim backend's defaults, so the two work together as they are.")

    @Option(help: "The app folder to write (default: AuthsimSample.app in a new folder under the system's temporary directory, not your checkout).")
    var output: String?
    @Option(help: "CFBundleIdentifier / BUNDLE_ID.") var bundleID = SampleApp().bundleID
    @Option(help: "GOOGLE_APP_ID (1:<project number>:ios:<hex>).") var googleAppID = SampleApp().googleAppID
    @Option(help: "CFBundleURLSchemes (repeatable; default: the encoded app ID).") var scheme: [String] = []
    @Flag(help: "No CLIENT_ID / REVERSED_CLIENT_ID (as newer GoogleService-Info.plist files).") var noClientID = false
    @Flag(help: "FirebaseAppDelegateProxyEnabled = NO (swizzling off).") var swizzlingOff = false
    @Flag(help: "Binary plists (bplist00), as in a built .app.") var binary = false
    @Option(help: "Also write embedded.mobileprovision with this aps-environment (development or production), signed with --certs.")
    var profile: String?
    @Option(help: "Folder with the credentials that sign the profile.") var certs = "Certs"
    @Flag(help: "Also write the APNs auth key of --certs beside the app as AuthKey_<KEYID>.p8.") var p8 = false

    func run() throws {
        var sample = SampleApp()
        sample.bundleID = bundleID
        sample.googleAppID = googleAppID
        if !scheme.isEmpty { sample.urlSchemes = scheme }
        if noClientID { sample.clientID = nil }
        if swizzlingOff { sample.appDelegateProxyEnabled = false }
        sample.format = binary ? .binary : .xml
        let folder = output.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("authsim-sample-\(UUID().uuidString.prefix(8))/AuthsimSample.app")
        try sample.write(to: folder)
        say("wrote \(folder.appendingPathComponent("Info.plist").path) and GoogleService-Info.plist (\(binary ? "binary" : "XML"))")
        if profile != nil || p8 {
            let credentials = try CertsDirectory(URL(fileURLWithPath: certs)).ensure()
            if let profile {
                guard APNsEnvironment(apsEnvironment: profile) != nil else { throw ValidationError("--profile is development or production, not \(profile)") }
                try ProvisioningProfileFile.make(apsEnvironment: profile, bundleID: sample.bundleID, teamID: credentials.authKey.teamID,
                                                 credentials: credentials).write(to: folder.appendingPathComponent("embedded.mobileprovision"))
                say("wrote \(folder.appendingPathComponent("embedded.mobileprovision").path) (aps-environment \(profile), team \(credentials.authKey.teamID))")
            }
            if p8 {
                let file = folder.deletingLastPathComponent().appendingPathComponent(credentials.authKey.fileName)
                try credentials.authKey.p8PEM.write(to: file, atomically: true, encoding: .utf8)
                say("wrote \(file.path) (key \(credentials.authKey.keyID), team \(credentials.authKey.teamID))")
            }
        }
        say("  bundle \(sample.bundleID), GOOGLE_APP_ID \(sample.googleAppID), URL schemes \((sample.urlSchemes ?? [sample.encodedAppIDScheme]).joined(separator: ", "))")
    }
}
