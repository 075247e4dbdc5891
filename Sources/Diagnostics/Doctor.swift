import APNsWire
import FirebaseAuthCore
import DeviceOS
import FirebaseCore
import Foundation
import LocalPKI

/// One check of `authsim doctor`: what was found and, when it is wrong, how to fix it.
package struct Finding: Sendable, Hashable {
    package enum Severity: String, Sendable, Comparable {
        case ok, warning, error
        package static func < (a: Severity, b: Severity) -> Bool {
            [Severity.ok, .warning, .error].firstIndex(of: a)! < [Severity.ok, .warning, .error].firstIndex(of: b)!
        }
    }
    /// A stable code (`urlSchemeMissing`, `tokenTypeMismatch`, …).
    package let code: String
    package let severity: Severity
    /// The file the finding is about.
    package let file: String
    package let message: String
    /// Empty when nothing is to be done.
    package let fix: String

    package init(_ code: String, _ severity: Severity, file: String, _ message: String, fix: String = "") {
        self.code = code
        self.severity = severity
        self.file = file
        self.message = message
        self.fix = fix
    }
}

/// What `authsim doctor` is given: a real app's files, the key the backend signs pushes with, and
/// the token type the app's code declares.
package struct DoctorInput: Sendable {
    package var infoPlist: URL?
    package var googleServiceInfo: URL?
    package var provisioningProfile: URL?
    package var p8: URL?
    package var keyID: String?
    package var teamID: String?
    /// What the app passes to `setAPNSToken(_:type:)`, if known.
    package var declaredTokenType: AuthAPNSTokenType?
    /// The `.app` folder, to look for the RecaptchaEnterprise SDK (its framework, or its classes
    /// in the executable `CFBundleExecutable` names).
    package var appDirectory: URL?
    package init() {}

    /// The files of an app folder (`Info.plist`, `GoogleService-Info.plist`, `embedded.mobileprovision`), where present.
    package init(appDirectory: URL) {
        func existing(_ name: String) -> URL? {
            let url = appDirectory.appendingPathComponent(name)
            return FileManager.default.fileExists(atPath: url.path) ? url : nil
        }
        infoPlist = existing("Info.plist")
        googleServiceInfo = existing("GoogleService-Info.plist")
        provisioningProfile = existing("embedded.mobileprovision")
        self.appDirectory = appDirectory
    }
}

/// Checks an app's files against every setup step of Firebase's phone-auth guide for Apple
/// platforms: URL scheme, background mode, push entitlement and token type, swizzling and what it
/// asks of the delegate, the APNs key.
package enum Doctor {
    package static func examine(_ input: DoctorInput, now: Date = Date()) -> [Finding] {
        var findings: [Finding] = []
        var info: AppInfo?
        var options: FirebaseOptions?

        if let url = input.infoPlist {
            do {
                let plist = try PropertyListFile(contentsOf: url)
                info = try AppInfo(contentsOf: url)
                findings.append(Finding("infoPlist", .ok, file: url.lastPathComponent, "\(plist.format) plist, bundle ID \(info!.bundleID)"))
            } catch {
                findings.append(Finding("infoPlistUnreadable", .error, file: url.lastPathComponent, error.message,
                                        fix: "give the app's Info.plist (XML or binary), with CFBundleIdentifier"))
            }
        } else if let directory = input.appDirectory {
            findings.append(Finding("appInfoPlistMissing", .error, file: "Info.plist",
                                    "\(directory.path) has no Info.plist: not a built app (an empty or unfinished .app folder?), so nothing of its setup can be checked",
                                    fix: "give the .app Xcode built (Products, or Payload/<Name>.app inside the .ipa), or the .ipa itself"))
        } else {
            findings.append(Finding("infoPlistMissing", .warning, file: "Info.plist", "not given: URL scheme, background mode and swizzling are not checked",
                                    fix: "pass --app <folder of the .app> or --info-plist"))
        }
        if let url = input.googleServiceInfo {
            do {
                options = try FirebaseOptions.read(contentsOf: url)
                findings.append(Finding("googleServiceInfo", .ok, file: url.lastPathComponent, "GOOGLE_APP_ID \(options!.googleAppID)"))
            } catch {
                findings.append(Finding("googleServiceInfoUnreadable", .error, file: url.lastPathComponent, error.message,
                                        fix: "download GoogleService-Info.plist for this iOS app from the Firebase console (Project settings → Your apps)"))
            }
        } else {
            findings.append(Finding("googleServiceInfoMissing", .warning, file: "GoogleService-Info.plist", "not given: the callback scheme cannot be derived",
                                    fix: "pass --app or --google-service-info"))
        }

        if let info, let options {
            findings += checkSchemes(info: info, options: options)
            if !options.bundleID.isEmpty, options.bundleID != info.bundleID {
                findings.append(Finding("bundleIDMismatch", .error, file: "GoogleService-Info.plist",
                                        "BUNDLE_ID is \(options.bundleID) but Info.plist's CFBundleIdentifier is \(info.bundleID): this plist belongs to another app",
                                        fix: "download the GoogleService-Info.plist of the Firebase iOS app registered for \(info.bundleID)"))
            }
            if options.apiKey == nil {
                findings.append(Finding("apiKeyMissing", .error, file: "GoogleService-Info.plist", "no API_KEY: every Auth request fails",
                                        fix: "download a fresh GoogleService-Info.plist"))
            }
        }
        if let info {
            if info.backgroundModes.contains("remote-notification") {
                findings.append(Finding("backgroundMode", .ok, file: "Info.plist", "UIBackgroundModes has remote-notification"))
            } else {
                findings.append(Finding("backgroundModeMissing", .error, file: "Info.plist",
                                        "UIBackgroundModes lacks remote-notification: silent pushes never wake the app, so every verification falls back to reCAPTCHA",
                                        fix: "Signing & Capabilities → Background Modes → Remote notifications (UIBackgroundModes: remote-notification)"))
            }
            if info.appDelegateProxyEnabled {
                findings.append(Finding("swizzling", .ok, file: "Info.plist",
                                        "FirebaseAppDelegateProxyEnabled is on: the SDK forwards the APNs token, notifications and URLs itself"))
            } else {
                findings.append(Finding("swizzlingOff", .warning, file: "Info.plist",
                                        "FirebaseAppDelegateProxyEnabled = NO: the app's delegate must hand Auth the APNs token, every remote notification and every opened URL, or verification fails (17054 notificationNotForwarded, or a reCAPTCHA page that never closes)",
                                        fix: "Auth.auth().setAPNSToken(deviceToken, type: .unknown) in didRegisterForRemoteNotificationsWithDeviceToken; if Auth.auth().canHandleNotification(userInfo) { return } in didReceiveRemoteNotification; if Auth.auth().canHandle(url) { return true } in application(_:open:options:) / scene(_:openURLContexts:)"))
            }
        }
        findings += checkProfile(input, bundleID: info?.bundleID, now: now)
        findings += checkKey(input)
        if let directory = input.appDirectory { findings += checkRecaptchaEnterprise(directory, executable: info?.executable) }
        return findings
    }

    /// reCAPTCHA SMS defense (AUDIT or ENFORCE) needs the RecaptchaEnterprise SDK in the app, with
    /// `RCAAction` (18.x): without it FirebaseAuth 12.19 fails with 17208, in AUDIT too; with an
    /// old one, 17210. Linked dynamically it is `Frameworks/RecaptchaEnterprise.framework`;
    /// statically (Swift Package Manager), its Objective-C class names are in the executable.
    static func checkRecaptchaEnterprise(_ directory: URL, executable: String?) -> [Finding] {
        var places: [URL] = []
        let framework = directory.appendingPathComponent("Frameworks/RecaptchaEnterprise.framework/RecaptchaEnterprise")
        if FileManager.default.fileExists(atPath: framework.path) { places.append(framework) }
        if let executable { places.append(directory.appendingPathComponent(executable)) }
        let readable = places.compactMap { url in (try? Data(contentsOf: url, options: .mappedIfSafe)).map { (url, $0) } }
        guard !readable.isEmpty else {
            return [Finding("recaptchaEnterpriseUnchecked", .warning, file: executable ?? "the app's executable",
                            "no executable to look in: whether the app links RecaptchaEnterprise (needed when the project turns on reCAPTCHA SMS defense) is not checked",
                            fix: "pass the built .app folder (with its executable) to --app")]
        }
        let hasRecaptcha = readable.first { $0.1.range(of: Data("RCARecaptcha".utf8)) != nil }
        guard let hasRecaptcha else {
            return [Finding("recaptchaEnterpriseMissing", .warning, file: readable[0].0.lastPathComponent,
                            "the app does not link RecaptchaEnterprise: if the project's phone provider turns on reCAPTCHA SMS defense (AUDIT or ENFORCE), verifyPhoneNumber fails with 17208 recaptchaSDKNotLinked before any code is sent (in AUDIT too; nothing falls back to APNs)",
                            fix: "add the RecaptchaEnterprise package (https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps) before the project turns SMS defense on")]
        }
        guard readable.contains(where: { $0.1.range(of: Data("RCAAction".utf8)) != nil }) else {
            return [Finding("recaptchaEnterpriseOld", .error, file: hasRecaptcha.0.lastPathComponent,
                            "RecaptchaEnterprise is linked without RCAAction: with SMS defense on, FirebaseAuth cannot make its action and verifyPhoneNumber fails with 17210",
                            fix: "update the RecaptchaEnterprise package to 18.x")]
        }
        return [Finding("recaptchaEnterprise", .ok, file: hasRecaptcha.0.lastPathComponent,
                        "RecaptchaEnterprise is linked (RCARecaptcha, RCAAction): reCAPTCHA SMS defense can run")]
    }

    static func checkSchemes(info: AppInfo, options: FirebaseOptions) -> [Finding] {
        let callback = CallbackScheme.derive(options: options, registered: info.urlSchemes)
        if CallbackScheme.isRegistered(callback, in: info.urlSchemes) {
            let which = callback == options.encodedAppIDScheme ? "the encoded app ID" : "the reversed client ID"
            return [Finding("urlScheme", .ok, file: "Info.plist", "the reCAPTCHA callback scheme \(callback) (\(which)) is registered")]
        }
        var message = "no URL scheme for the reCAPTCHA fallback: the SDK needs \(options.encodedAppIDScheme) (the encoded app ID)"
        if let reversed = options.reversedClientIDScheme { message += " or \(reversed) (the reversed client ID)" }
        message += " in CFBundleURLTypes; verifyPhoneNumber stops the app with fatalError"
        if !info.urlSchemes.isEmpty { message += " (registered: \(info.urlSchemes.joined(separator: ", ")))" }
        if let near = info.urlSchemes.first(where: { $0.lowercased().hasPrefix("app-") && $0.lowercased() != options.encodedAppIDScheme.lowercased() }) {
            message += "; \(near) looks like an encoded app ID but is not this GoogleService-Info.plist's (another Firebase app?)"
        }
        return [Finding("urlSchemeMissing", .error, file: "Info.plist", message,
                        fix: "add \(options.encodedAppIDScheme) to Info → URL Types → URL Schemes")]
    }

    static func checkProfile(_ input: DoctorInput, bundleID: String?, now: Date) -> [Finding] {
        guard let url = input.provisioningProfile else {
            let declared = input.declaredTokenType.map { " (the app declares .\($0))" } ?? ""
            var findings = [Finding("profileMissing", .warning, file: "embedded.mobileprovision",
                                    "not given\(declared): without it .unknown resolves to .prod, which is wrong for debug builds",
                                    fix: "pass --app with the built .app, or --profile")]
            if let teamID = input.teamID {
                findings.append(Finding("teamUnchecked", .warning, file: "embedded.mobileprovision",
                                        "not checked: whether team \(teamID) owns the app. The profile's TeamIdentifier says which team may push to its topic; a key of another team signs valid tokens that APNs refuses for this app (InvalidProviderToken)",
                                        fix: "pass --app with the built .app (it holds embedded.mobileprovision), or --profile"))
            }
            return findings
        }
        guard let plist = ProvisioningProfile.plist(at: url) else {
            return [Finding("profileUnreadable", .error, file: url.lastPathComponent, "no plist inside: not a provisioning profile",
                            fix: "use the embedded.mobileprovision from the built .app")]
        }
        var findings: [Finding] = []
        let entitlements = plist["Entitlements"] as? [String: Any] ?? [:]
        let aps = entitlements["aps-environment"] as? String
        if let expiry = plist["ExpirationDate"] as? Date, expiry < now {
            findings.append(Finding("profileExpired", .error, file: url.lastPathComponent, "expired on \(expiry)",
                                    fix: "renew the provisioning profile and rebuild"))
        }
        if let appID = entitlements["application-identifier"] as? String, let bundleID,
           !(appID.hasSuffix(".\(bundleID)") || appID.hasSuffix(".*")) {
            findings.append(Finding("profileAppID", .error, file: url.lastPathComponent,
                                    "application-identifier \(appID) is not for \(bundleID)", fix: "sign the app with its own profile"))
        }
        guard let aps else {
            findings.append(Finding("pushEntitlementMissing", .error, file: url.lastPathComponent,
                                    "no aps-environment entitlement: registerForRemoteNotifications() fails (no valid aps-environment entitlement string found for application), which ends FirebaseAuth's wait for a token at once, and every verification falls back to reCAPTCHA",
                                    fix: "Signing & Capabilities → + Push Notifications, then regenerate the profile"))
            return findings
        }
        let environment = APNsEnvironment(apsEnvironment: aps) ?? .production
        findings.append(Finding("pushEntitlement", .ok, file: url.lastPathComponent, "aps-environment = \(aps): APNs issues \(environment) tokens"))
        switch (environment, input.declaredTokenType) {
        case (.sandbox, .prod?):
            findings.append(Finding("tokenTypeMismatch", .error, file: url.lastPathComponent,
                                    "aps-environment = development (sandbox tokens) but the app declares setAPNSToken(token, type: .prod): the backend pushes through production, APNs answers BadDeviceToken, and reCAPTCHA shows every time",
                                    fix: "use type: .sandbox for debug builds, or .unknown to let the SDK read this profile"))
        case (.production, .sandbox?):
            findings.append(Finding("tokenTypeMismatch", .error, file: url.lastPathComponent,
                                    "aps-environment = production (TestFlight / App Store tokens) but the app declares setAPNSToken(token, type: .sandbox): BadDeviceToken in sandbox, reCAPTCHA every time",
                                    fix: "use type: .prod for release builds, or .unknown"))
        case (_, .unknown?):
            findings.append(Finding("tokenType", .ok, file: url.lastPathComponent, "the app declares .unknown: the SDK reads aps-environment = \(aps) and sends the token as \(environment)"))
        case (_, let type?):
            findings.append(Finding("tokenType", .ok, file: url.lastPathComponent, "the app declares .\(type), which matches aps-environment = \(aps)"))
        case (_, nil):
            findings.append(Finding("tokenTypeUnchecked", .warning, file: url.lastPathComponent,
                                    "not checked: the token type the app passes to setAPNSToken(_:type:). A type that disagrees with aps-environment = \(aps) is the most common cause of reCAPTCHA every time",
                                    fix: "pass --declared-type sandbox, prod or unknown: what the app's code passes"))
        }
        // The provider token's team must be the one that owns the app; a key ID equal to it means the IDs were swapped.
        let teams = plist["TeamIdentifier"] as? [String] ?? []
        if let team = teams.first {
            if let given = input.teamID, !teams.contains(given), AppleIdentifier.isValid(given) {
                if given == input.keyID || given == input.p8.flatMap({ APNsAuthKey.keyIDFromFileName($0.lastPathComponent) }) {
                    // Said by the key check (the IDs are swapped).
                } else {
                    findings.append(Finding("teamIDMismatch", .error, file: url.lastPathComponent,
                                            "the team ID given (\(given)) is not the profile's (\(team)): provider tokens signed for another team get InvalidProviderToken for this app's topic",
                                            fix: "use Team ID \(team) (Apple Developer → Membership), and a key of that team"))
                }
            }
            if let keyID = input.keyID ?? input.p8.flatMap({ APNsAuthKey.keyIDFromFileName($0.lastPathComponent) }), keyID == team {
                findings.append(Finding("keyAndTeamSwapped", .error, file: url.lastPathComponent,
                                        "the key ID (\(keyID)) is the profile's team ID: the key ID and team ID are swapped, and APNs answers InvalidProviderToken",
                                        fix: "kid is the key's ID (from AuthKey_<KEYID>.p8), iss is the team ID \(team)"))
            }
        }
        return findings
    }

    /// What to change when the key cannot be loaded, by why.
    static func keyFix(_ code: PKIError.Code) -> String {
        switch code {
        case .badIdentifier:
            return "give the IDs as Apple Developer shows them, 10 uppercase letters or digits: --team-id from Membership details (Team ID), --key-id from Certificates, IDs & Profiles → Keys (Key ID, also in the file name AuthKey_<KEYID>.p8)"
        case .unreadable:
            return "check the path and that this user may read the file"
        default:
            return "download the .p8 from Apple Developer → Keys (APNs enabled) again; it can be downloaded only once"
        }
    }

    static func checkKey(_ input: DoctorInput) -> [Finding] {
        guard let p8 = input.p8 else { return [] }
        let name = p8.lastPathComponent
        var findings: [Finding] = []
        let fromName = APNsAuthKey.keyIDFromFileName(name)
        guard let teamID = input.teamID else {
            return [Finding("teamIDMissing", .error, file: name, "no team ID given", fix: "pass --team-id (Apple Developer → Membership → Team ID)")]
        }
        let keyID = input.keyID ?? fromName
        if let keyID, teamID == fromName, keyID != fromName {
            findings.append(Finding("keyAndTeamSwapped", .error, file: name,
                                    "the team ID \(teamID) is the key ID in the file name, and the key ID \(keyID) looks like the team ID: they are swapped, and APNs will answer InvalidProviderToken",
                                    fix: "Key ID \(fromName!) (from AuthKey_\(fromName!).p8), Team ID \(keyID)"))
            return findings
        }
        if let keyID, let fromName, keyID != fromName {
            findings.append(Finding("keyIDMismatch", .error, file: name, "the key ID \(keyID) is not the one in the file name (\(fromName))",
                                    fix: "use the Key ID shown for this key in Apple Developer → Keys (usually the file name's)"))
        }
        do {
            let key = try APNsAuthKey.load(p8: p8, keyID: keyID, teamID: teamID)
            findings.append(Finding("p8", .ok, file: name, "PKCS#8 P-256 key \(key.keyID), team \(key.teamID): ES256 provider tokens can be signed"))
        } catch {
            findings.append(Finding(error.code == .badIdentifier ? "keyIdentifierInvalid" : "p8Invalid", .error, file: name, error.message,
                                    fix: Self.keyFix(error.code)))
        }
        return findings
    }
}
