import Diagnostics
import FirebaseAuthCore
import Foundation
import LocalPKI
import Scenarios
import TestSupport
import Testing

/// A generated app folder (realistic files, never downloaded) with one thing changed, and the doctor's codes for it.
func doctorCodes(_ name: String, change: (inout SampleApp) -> Void = { _ in }, profile: String? = "development",
                 declared: AuthAPNSTokenType? = .sandbox, keyChange: ((inout DoctorInput, APNsAuthKey) -> Void)? = nil) throws -> (errors: Set<String>, all: [Finding]) {
    let folder = temporaryDirectory(name)
    defer { try? FileManager.default.removeItem(at: folder) }
    let credentials = try CertsDirectory(folder.appendingPathComponent("Certs")).ensure()
    var sample = SampleApp()
    sample.format = .binary
    change(&sample)
    let app = folder.appendingPathComponent("Payload/App.app")
    try sample.write(to: app)
    if let profile {
        try ProvisioningProfileFile.make(apsEnvironment: profile == "none" ? nil : profile, bundleID: sample.bundleID,
                                         teamID: credentials.authKey.teamID, credentials: credentials)
            .write(to: app.appendingPathComponent("embedded.mobileprovision"))
    }
    var input = DoctorInput(appDirectory: app)
    input.declaredTokenType = declared
    let key = credentials.authKey
    let p8 = folder.appendingPathComponent(key.fileName)
    try key.p8PEM.write(to: p8, atomically: true, encoding: .utf8)
    input.p8 = p8
    input.keyID = key.keyID
    input.teamID = key.teamID
    keyChange?(&input, key)
    let findings = Doctor.examine(input)
    return (Set(findings.filter { $0.severity == .error }.map(\.code)), findings)
}

@Suite("authsim doctor: an app's files against the phone-auth setup")
struct DoctorTests {
    @Test("a correctly set-up app (binary plists, development profile, .sandbox, the right key) has no errors")
    func healthy() throws {
        let (errors, all) = try doctorCodes(#function)
        #expect(errors.isEmpty, "\(all)")
        #expect(Set(all.map(\.code)).isSuperset(of: ["urlScheme", "backgroundMode", "swizzling", "pushEntitlement", "tokenType", "p8"]))
    }

    @Test("each misconfiguration is found, with its fix", arguments: [
        "schemeMissing", "reversedClientIDOnly", "backgroundMode", "devProfileDeclaresProd", "prodProfileDeclaresSandbox",
        "noPushEntitlement", "keyAndTeamSwapped", "bundleIDMismatch", "swizzlingOff", "unknownIsFine",
        "declaredTypeNotGiven", "anotherTeam", "keyIDIsTheProfilesTeam",
    ])
    func misconfiguration(_ which: String) throws {
        switch which {
        case "schemeMissing":
            let (errors, all) = try doctorCodes(which, change: { $0.urlSchemes = ["app-1-999999999999-ios-ffffffffffffffff"] })
            #expect(errors == ["urlSchemeMissing"])
            let finding = try #require(all.first { $0.code == "urlSchemeMissing" })
            #expect(finding.fix.contains("app-1-123456789012-ios-a1b2c3d4e5f60718"))
            #expect(finding.message.contains("looks like an encoded app ID but is not"))
        case "reversedClientIDOnly":
            let (errors, all) = try doctorCodes(which, change: { $0.urlSchemes = ["com.googleusercontent.apps.123456789012-a1b2c3d4e5f60718a1b2c3d4e5f6"] })
            #expect(errors.isEmpty)
            #expect(all.contains { $0.code == "urlScheme" && $0.message.contains("reversed client ID") })
        case "backgroundMode":
            #expect(try doctorCodes(which, change: { $0.backgroundModes = ["fetch"] }).errors == ["backgroundModeMissing"])
        case "devProfileDeclaresProd":
            let (errors, all) = try doctorCodes(which, declared: .prod)
            #expect(errors == ["tokenTypeMismatch"])
            #expect(all.first { $0.code == "tokenTypeMismatch" }?.message.contains("BadDeviceToken") == true)
        case "prodProfileDeclaresSandbox":
            #expect(try doctorCodes(which, profile: "production", declared: .sandbox).errors == ["tokenTypeMismatch"])
        case "noPushEntitlement":
            #expect(try doctorCodes(which, profile: "none").errors == ["pushEntitlementMissing"])
        case "keyAndTeamSwapped":
            let (errors, _) = try doctorCodes(which, keyChange: { input, key in
                input.keyID = key.teamID
                input.teamID = key.keyID
            })
            #expect(errors == ["keyAndTeamSwapped"])
        case "bundleIDMismatch":
            let (errors, _) = try doctorCodes(which, change: { $0.bundleID = "com.example.other" }, keyChange: { input, _ in
                // GoogleService-Info.plist stays for com.example.other; Info.plist says another app.
                let info = input.infoPlist!
                var plist = try! PropertyListSerialization.propertyList(from: Data(contentsOf: info), format: nil) as! [String: Any]
                plist["CFBundleIdentifier"] = "com.example.authsim"
                try! PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0).write(to: info)
            })
            #expect(errors.contains("bundleIDMismatch"))
        case "swizzlingOff":
            let (errors, all) = try doctorCodes(which, change: { $0.appDelegateProxyEnabled = false })
            #expect(errors.isEmpty)
            #expect(all.first { $0.code == "swizzlingOff" }?.fix.contains("canHandleNotification") == true)
        case "unknownIsFine":
            let (errors, all) = try doctorCodes(which, profile: "production", declared: .unknown)
            #expect(errors.isEmpty)
            #expect(all.contains { $0.code == "tokenType" && $0.message.contains("production") })
        // Issue 19: these passed as "0 errors" before.
        case "declaredTypeNotGiven":
            let (errors, all) = try doctorCodes(which, declared: nil)
            #expect(errors.isEmpty)
            let warning = try #require(all.first { $0.code == "tokenTypeUnchecked" })
            #expect(warning.severity == .warning && warning.fix.contains("--declared-type"))
        case "anotherTeam":
            let (errors, all) = try doctorCodes(which, keyChange: { input, _ in input.teamID = "ZZZZZ99999" })
            #expect(errors == ["teamIDMismatch"], "\(all)")
        case "keyIDIsTheProfilesTeam":
            let (errors, all) = try doctorCodes(which, keyChange: { input, key in
                input.p8 = nil
                input.keyID = key.teamID
            })
            #expect(errors == ["keyAndTeamSwapped"], "\(all)")
        default: Issue.record("no case \(which)")
        }
    }

    // SMS defense needs RecaptchaEnterprise with RCAAction (RV, PAP 367–413: 17208, 17210).
    @Test("RecaptchaEnterprise in the app's executable: linked (ok), missing (a warning naming 17208), without RCAAction (an error naming 17210), no executable (unchecked)")
    func recaptchaEnterprise() throws {
        let linked = try doctorCodes("rceLinked", change: { $0.linkedClasses = ["AppDelegate", "RCARecaptcha", "RCAAction", "RCARecaptchaClient"] })
        #expect(linked.all.contains { $0.code == "recaptchaEnterprise" && $0.severity == .ok })
        let missing = try doctorCodes("rceMissing", change: { $0.linkedClasses = ["AppDelegate", "SceneDelegate"] })
        let warning = try #require(missing.all.first { $0.code == "recaptchaEnterpriseMissing" })
        #expect(warning.severity == .warning && warning.message.contains("17208"))
        #expect(missing.errors.isEmpty)
        let old = try doctorCodes("rceOld", change: { $0.linkedClasses = ["AppDelegate", "RCARecaptcha"] })
        #expect(old.errors == ["recaptchaEnterpriseOld"])
        #expect(old.all.first { $0.code == "recaptchaEnterpriseOld" }?.message.contains("17210") == true)
        let unchecked = try doctorCodes("rceUnchecked")
        #expect(unchecked.all.contains { $0.code == "recaptchaEnterpriseUnchecked" && $0.severity == .warning })
    }

    @Test("unreadable files and a SEC1 key are errors that say what to do")
    func badFiles() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = folder.appendingPathComponent("GoogleService-Info.plist")
        try Data("<plist".utf8).write(to: garbage)
        var input = DoctorInput()
        input.googleServiceInfo = garbage
        #expect(Doctor.examine(input).contains { $0.code == "googleServiceInfoUnreadable" && $0.severity == .error })

        guard await toolAvailable(["openssl", "version"]) else { return }
        let sec1 = folder.appendingPathComponent("AuthKey_ABCDE12345.p8")
        let made = try await runProgram(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", sec1.path])
        #expect(made.status == 0)
        input = DoctorInput()
        input.p8 = sec1
        input.teamID = "FGHIJ67890"
        let finding = try #require(Doctor.examine(input).first { $0.code == "p8Invalid" })
        #expect(finding.message.contains("openssl pkcs8"))
    }

    @Test("--app takes the .app, the Payload folder, the folder holding Payload, or the .ipa; anything else exits 1")
    func appShapes() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        // A development profile declared .prod: one error, whatever shape the app comes in.
        let app = folder.appendingPathComponent("Payload/My App.app")
        let made = try await runProgram([authsim, "sample-app", "--output", app.path, "--binary", "--profile", "development",
                                         "--certs", folder.appendingPathComponent("Certs").path])
        #expect(made.status == 0, "\(made.output)")
        // The .ipa as Xcode exports it: a zip of Payload/<Name>.app/, made by Python's zipfile (deflated).
        let ipa = folder.appendingPathComponent("MyApp.ipa")
        let zipped = try await runProgram(["python3", "-c", """
            import os, sys, zipfile
            with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
                for root, _, files in os.walk(os.path.join(sys.argv[1], "Payload")):
                    for name in files:
                        path = os.path.join(root, name)
                        z.write(path, os.path.relpath(path, sys.argv[1]))
            """, folder.path, ipa.path])
        #expect(zipped.status == 0, "\(zipped.output)")
        for given in [app.path, app.deletingLastPathComponent().path, folder.path, ipa.path] {
            let run = try await runProgram([authsim, "doctor", "--app", given, "--declared-type", "prod"])
            #expect(run.status == 1, "\(given): \(run.output)")
            #expect(run.output.contains("aps-environment = development (sandbox tokens) but the app declares") && run.output.contains("1 error,"),
                    "\(given): \(run.output)")
        }
        // What doctor unpacked from the .ipa is gone afterwards.
        let left = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)
        #expect(!left.contains { $0.hasPrefix("authsim-doctor-") }, "\(left.filter { $0.hasPrefix("authsim-doctor-") })")

        // Not an app: a plain file, an empty .app, a folder with nothing in it, a zip without Payload/.
        let plain = folder.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: plain)
        let empty = folder.appendingPathComponent("Empty.app")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let nothing = folder.appendingPathComponent("nothing")
        try FileManager.default.createDirectory(at: nothing, withIntermediateDirectories: true)
        let otherZip = folder.appendingPathComponent("other.zip")
        _ = try await runProgram(["python3", "-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w').writestr('a.txt', 'x')", otherZip.path])
        for (given, says) in [(plain.path, "not an .ipa"), (empty.path, "has no Info.plist"), (nothing.path, "no .app in it"),
                              (otherZip.path, "without Payload/"), (folder.appendingPathComponent("absent.ipa").path, "does not exist")] {
            // Standard error too: where a command's failure is said.
            let run = try await runProgram(["sh", "-c", "\"$0\" doctor --app \"$1\" 2>&1", authsim, given])
            #expect(run.status == 1, "\(given): \(run.output)")
            #expect(run.output.contains(says), "\(given): \(run.output)")
        }
    }

    @Test("a team ID that is not Apple's shape gets advice on the IDs, not on the key file; a team with no profile is unchecked")
    func teamIDAdvice() throws {
        let (errors, all) = try doctorCodes(#function, keyChange: { input, _ in input.teamID = "abc" })
        #expect(errors == ["keyIdentifierInvalid"], "\(all)")
        let finding = try #require(all.first { $0.code == "keyIdentifierInvalid" })
        #expect(finding.message.contains("team ID \"abc\" must be 10 uppercase"))
        #expect(finding.fix.contains("Membership") && !finding.fix.contains("download"), "\(finding.fix)")

        let (_, withoutProfile) = try doctorCodes(#function + "-noProfile", profile: nil)
        let unchecked = try #require(withoutProfile.first { $0.code == "teamUnchecked" })
        #expect(unchecked.severity == .warning && unchecked.message.contains("InvalidProviderToken"))
    }

    @Test("the command prints each finding and exits 1 on errors")
    func command() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        let made = try await runProgram([authsim, "sample-app", "--output", folder.appendingPathComponent("App.app").path, "--binary",
                                         "--profile", "development", "--certs", folder.appendingPathComponent("Certs").path])
        #expect(made.status == 0)
        let good = try await runProgram([authsim, "doctor", "--app", folder.appendingPathComponent("App.app").path, "--declared-type", "unknown"])
        #expect(good.status == 0, "\(good.output)")
        #expect(good.output.contains("0 errors"))
        // The key's IDs as Certs/ records them; a team that is not the profile's is an error.
        let certs = folder.appendingPathComponent("Certs")
        let withKey = try await runProgram([authsim, "doctor", "--app", folder.appendingPathComponent("App.app").path, "--declared-type", "unknown",
                                            "--key-json", certs.appendingPathComponent("apns-key.json").path])
        #expect(withKey.status == 0, "\(withKey.output)")
        #expect(withKey.output.contains("PKCS#8 P-256 key"), "\(withKey.output)")
        let otherTeam = try await runProgram([authsim, "doctor", "--app", folder.appendingPathComponent("App.app").path, "--declared-type", "unknown",
                                              "--key-json", certs.appendingPathComponent("apns-key.json").path, "--team-id", "ZZZZZ99999", "--json"])
        #expect(otherTeam.status == 1)
        #expect(otherTeam.output.contains(#""code":"teamIDMismatch""#), "\(otherTeam.output)")
        let unchecked = try await runProgram([authsim, "doctor", "--app", folder.appendingPathComponent("App.app").path])
        #expect(unchecked.output.contains("not checked: the token type"), "\(unchecked.output)")
        #expect(unchecked.status == 0)
        // A CI step that wants every check to have run: warnings fail it too.
        let strict = try await runProgram([authsim, "doctor", "--app", folder.appendingPathComponent("App.app").path, "--fail-on", "warning"])
        #expect(strict.status == 1, "\(strict.output)")

        // Without --output, sample-app writes under the temporary directory, not into the checkout.
        let here = FileManager.default.currentDirectoryPath
        let elsewhere = try await runProgram([authsim, "sample-app", "--certs", folder.appendingPathComponent("Certs").path])
        #expect(elsewhere.status == 0)
        #expect(elsewhere.output.contains(FileManager.default.temporaryDirectory.path) && !elsewhere.output.contains(here + "/Payload"), "\(elsewhere.output)")
        let bad = try await runProgram([authsim, "doctor", "--app", folder.appendingPathComponent("App.app").path, "--declared-type", "prod", "--json"])
        #expect(bad.status == 1)
        #expect(bad.output.contains(#""code":"tokenTypeMismatch""#))
    }
}
