import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import Scenarios
import Testing
import TestSupport

@Suite("App files: Info.plist and GoogleService-Info.plist, XML or binary, and the callback scheme")
struct AppFilesTests {
    @Test("a generated app reads back in both formats; the binary one also as converted by plistutil", arguments: ["xml", "binary", "plistutil"])
    func readsBothFormats(_ form: String) async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        var sample = SampleApp()
        sample.format = form == "binary" ? .binary : .xml
        try sample.write(to: folder)
        if form == "plistutil" {
            // An independent writer: libplist's converter, as on a Mac `plutil -convert binary1`.
            guard await toolAvailable(["plistutil", "-h"]) else { return }
            for name in ["Info.plist", "GoogleService-Info.plist"] {
                let path = folder.appendingPathComponent(name).path
                let converted = try await runProgram(["plistutil", "-i", path, "-o", path + ".bin", "-f", "bin"])
                #expect(converted.status == 0)
                try FileManager.default.removeItem(atPath: path)
                try FileManager.default.moveItem(atPath: path + ".bin", toPath: path)
            }
        }
        let head = try Data(contentsOf: folder.appendingPathComponent("Info.plist")).prefix(8)
        #expect((String(decoding: head, as: UTF8.self) == "bplist00") == (form != "xml"))

        let bundle = try AppBundle(directory: folder)
        #expect(try PropertyListFile(contentsOf: folder.appendingPathComponent("Info.plist")).format == (form == "xml" ? .xml : .binary))
        #expect(bundle.info.bundleID == sample.bundleID)
        #expect(bundle.info.urlSchemes == ["app-1-123456789012-ios-a1b2c3d4e5f60718"])
        #expect(bundle.info.backgroundModes == ["remote-notification"])
        #expect(bundle.info.appDelegateProxyEnabled)
        #expect(bundle.options.googleAppID == sample.googleAppID)
        #expect(bundle.options.apiKey == sample.apiKey)
        #expect(bundle.options.clientID == sample.clientID)
        #expect(bundle.provisioningProfile == nil)
        // CLIENT_ID is there but its reverse is not registered: the encoded app ID is the scheme.
        #expect(bundle.callbackScheme == "app-1-123456789012-ios-a1b2c3d4e5f60718")
    }

    @Test("the reversed client ID is the callback scheme when Info.plist registers it (in any case), else the encoded app ID")
    func callbackScheme() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        var sample = SampleApp()
        let reversed = "com.googleusercontent.apps.123456789012-a1b2c3d4e5f60718a1b2c3d4e5f6"
        sample.urlSchemes = [sample.encodedAppIDScheme, reversed.uppercased()]
        try sample.write(to: folder)
        #expect(try AppBundle(directory: folder).callbackScheme == reversed)

        sample.clientID = nil  // a newer plist: no CLIENT_ID at all
        try sample.write(to: folder)
        #expect(try AppBundle(directory: folder).callbackScheme == sample.encodedAppIDScheme)
    }

    @Test("an app whose Info.plist lacks the callback scheme fails with 17998 naming the scheme to add")
    func unregisteredScheme() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        var sample = SampleApp()
        sample.urlSchemes = ["com.example.other"]
        try sample.write(to: folder)
        let bundle = try AppBundle(directory: folder)
        let auth = Auth.auth(app: FirebaseApp(name: "unregistered-\(UUID())", options: bundle.options, host: AppHost(AppHost.Configuration(bundle: bundle))))
        await expectAuthError(.appConfigurationError) {
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505551234", uiDelegate: nil)
        }
        do throws(AuthError) {
            _ = try await AuthError.catching { try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber("+16505551234", uiDelegate: nil) }
        } catch {
            #expect(error.message.contains("Please register custom URL scheme app-1-123456789012-ios-a1b2c3d4e5f60718"))
        }
    }

    @Test("bad files get specific errors", arguments: [
        ("garbage", AppFileError.Code.notAPropertyList), ("no GOOGLE_APP_ID", .missingKey), ("web app ID", .invalidValue),
        ("API_KEY not a string", .invalidValue), ("missing file", .unreadable),
    ])
    func badFiles(_ case: String, expected: AppFileError.Code) throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("GoogleService-Info.plist")
        var plist = SampleApp().googleServiceInfo
        switch `case` {
        case "garbage": try Data("{ not a plist".utf8).write(to: file)
        case "no GOOGLE_APP_ID": plist["GOOGLE_APP_ID"] = nil
        case "web app ID": plist["GOOGLE_APP_ID"] = "1:123456789012:web:a1b2c3d4e5f6"
        case "API_KEY not a string": plist["API_KEY"] = 42
        default: break
        }
        if `case` != "garbage" && `case` != "missing file" {
            try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: file)
        }
        #expect(throws: AppFileError(expected, "")) { _ = try FirebaseOptions.read(contentsOf: file) }
        #expect(FirebaseOptions(contentsOfFile: file.path) == nil)
    }

    @Test("FirebaseAppDelegateProxyEnabled: absent → on; false or \"NO\" → off")
    func swizzlingFlag() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Info.plist")
        for (value, expected) in [(nil, true), (false as Any?, false), ("NO", false), ("YES", true)] as [(Any?, Bool)] {
            var info = SampleApp().infoPlist
            info["FirebaseAppDelegateProxyEnabled"] = value
            try PropertyListSerialization.data(fromPropertyList: info, format: .binary, options: 0).write(to: file)
            #expect(try AppInfo(contentsOf: file).appDelegateProxyEnabled == expected)
        }
    }

    @Test("a binary plist holding a set (found by fuzzing: it crashed Foundation's reader) is refused, not read")
    func binaryPlistWithSet() throws {
        let crash = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/regressions/plist/bplist-with-set").standardized
        #expect(throws: AppFileError(.notAPropertyList, "")) { _ = try PropertyListFile(contentsOf: crash) }
        #expect(throws: AppFileError(.notAPropertyList, "")) { _ = try FirebaseOptions.read(contentsOf: crash) }
        // A well-formed binary plist still reads.
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        var sample = SampleApp()
        sample.format = .binary
        try sample.write(to: folder)
        #expect(try FirebaseOptions.read(contentsOf: folder.appendingPathComponent("GoogleService-Info.plist")).googleAppID == sample.googleAppID)
    }
}
