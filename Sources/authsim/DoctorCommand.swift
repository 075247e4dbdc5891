import ArgumentParser
import CommandSupport
import Diagnostics
import FirebaseAuthCore
import Foundation

/// `authsim doctor`: a real app's files against the phone-auth setup steps.
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check an app's Info.plist, GoogleService-Info.plist, embedded.mobileprovision and APNs key against Firebase's phone-auth setup.",
        discussion: """
            Each finding is printed with its fix. Exit status 0 when nothing is wrong (warnings allowed), 1 when something is.
            Example: authsim doctor --app Payload/MyApp.app --declared-type prod --p8 AuthKey_ABC123DEFG.p8 --team-id DEF123GHIJ
            """)

    @Option(help: ArgumentHelp("The built app: its .app folder, the Payload folder holding it, or the .ipa (Info.plist, GoogleService-Info.plist, embedded.mobileprovision and the executable are read).", valueName: "path"))
    var app: String?
    @Option(help: ArgumentHelp("Info.plist (XML or binary), if not in --app.", valueName: "file")) var infoPlist: String?
    @Option(help: ArgumentHelp("GoogleService-Info.plist, if not in --app.", valueName: "file")) var googleServiceInfo: String?
    @Option(help: ArgumentHelp("embedded.mobileprovision, if not in --app.", valueName: "file")) var profile: String?
    @Option(help: "What the app's code passes to setAPNSToken(_:type:): sandbox, prod or unknown.") var declaredType: String?
    @Option(help: ArgumentHelp("The APNs auth key the backend (Firebase) uses.", valueName: "AuthKey_XXXXXXXXXX.p8")) var p8: String?
    @Option(help: "The key's ID (default: from the .p8 file name).") var keyID: String?
    @Option(help: "The Apple Developer team ID.") var teamID: String?
    @Option(help: ArgumentHelp("The key's IDs as Certs/ records them: a JSON file {\"keyID\", \"teamID\"} (apns-key.json); its p8, if named, is used too.",
                               valueName: "file")) var keyJson: String?
    @Flag(help: "One JSON object per finding.") var json = false
    @Option(help: ArgumentHelp("Which findings make the exit status 1 (for a CI step): error (the default), or warning (errors and warnings, such as a check that could not run).",
                               valueName: "severity")) var failOn = "error"

    func validate() throws {
        guard ["error", "warning"].contains(failOn) else { throw ValidationError("--fail-on is error or warning, not \(failOn)") }
    }

    func run() async throws {
        let location: AppLocation?
        do { location = try app.map(AppLocation.find) } catch { throw CommandFailure(error.message) }
        defer { location?.discard() }
        var input = location.map { DoctorInput(appDirectory: $0.directory) } ?? DoctorInput()
        if let location, let given = location.givenAs, !json { say("app: \(location.directory.lastPathComponent) in \(given)") }
        if let infoPlist { input.infoPlist = URL(fileURLWithPath: infoPlist) }
        if let googleServiceInfo { input.googleServiceInfo = URL(fileURLWithPath: googleServiceInfo) }
        if let profile { input.provisioningProfile = URL(fileURLWithPath: profile) }
        if let declaredType {
            let types: [String: AuthAPNSTokenType] = ["sandbox": .sandbox, "prod": .prod, "unknown": .unknown]
            guard let type = types[declaredType] else { throw ValidationError("--declared-type is sandbox, prod or unknown") }
            input.declaredTokenType = type
        }
        input.p8 = p8.map { URL(fileURLWithPath: $0) }
        input.keyID = keyID
        input.teamID = teamID
        if let keyJson {
            struct KeyIDs: Decodable { let keyID: String; let teamID: String; let p8: String? }
            let file = URL(fileURLWithPath: keyJson)
            guard let data = FileManager.default.contents(atPath: file.path) else { throw ValidationError("--key-json \(keyJson): no such file") }
            let ids: KeyIDs
            do { ids = try JSONDecoder().decode(KeyIDs.self, from: data) } catch {
                throw ValidationError("--key-json \(keyJson) is not {\"keyID\", \"teamID\"}: \(error)")
            }
            input.keyID = keyID ?? ids.keyID
            input.teamID = teamID ?? ids.teamID
            if input.p8 == nil, let name = ids.p8 { input.p8 = file.deletingLastPathComponent().appendingPathComponent(name) }
        }
        let findings = Diagnostics.Doctor.examine(input)
        for finding in findings {
            if json {
                let object = ["code": finding.code, "severity": finding.severity.rawValue, "file": finding.file,
                              "message": finding.message, "fix": finding.fix]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                say(String(decoding: data, as: UTF8.self))
                continue
            }
            let mark = ["ok": "✔", "warning": "⚠", "error": "✘"][finding.severity.rawValue]!
            say("\(mark) \(finding.file): \(finding.message)")
            if !finding.fix.isEmpty { say("    fix: \(finding.fix)") }
        }
        let errors = findings.filter { $0.severity == .error }.count
        let warnings = findings.filter { $0.severity == .warning }.count
        if !json { say("\n\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")") }
        if errors > 0 || (failOn == "warning" && warnings > 0) { throw ExitCode(1) }
    }
}
