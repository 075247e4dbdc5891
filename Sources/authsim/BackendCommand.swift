import APNsSender
import APNsWire
import ArgumentParser
import AuthBackend
import CommandSupport
import Foundation
import HTTPServerSupport
import IdentityToolkitAPI
import Lifecycle
import LocalPKI
import Logging
import PostgresStores

/// `authsim backend`: the local Firebase backend as its own process.
struct Backend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the local Firebase backend (Identity Toolkit over HTTP) as its own process.",
        discussion: """
            verifyClient sends its silent pushes through an APNs client to a push-receiver (default 127.0.0.1:2197,
            the environment named in TLS SNI), signing with the key in --certs.
            """)

    @Option(help: "Address to listen on. Beyond loopback the Admin and emulator routes need an admin token (--admin-token-file); the app-facing API keeps its API key.") var host = "127.0.0.1"
    @OptionGroup var admin: AdminAccessOptions
    @Option(help: "Port (0: any free port; the Firebase Auth emulator's is 9099).") var port = 9099
    @Option(help: "The push-receiver's TLS port.") var receiverPort = 2197
    @Option(help: "Folder with the CA and the APNs auth key.") var certs = "Certs"
    @OptionGroup var providerKey: ProviderKeyOptions
    @Option(help: "Folder for the backend's state (journal.jsonl, id-token-key.pem): kept across restarts, users' alone (0700).") var state = "State/backend"
    @Option(help: ArgumentHelp("Keep the backend's state in a PostgreSQL database that several backends share (a fleet behind a load balancer; docs/fleet.md) instead of the journal in --state: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-ca|verify-full][&sslrootcert=CA.pem], or postgres://USER@/DATABASE?host=/socket/folder. Also from AUTHSIM_STORE; the password also from PGPASSWORD. The schema is created and migrated on start.",
                               valueName: "url")) var store: String?
    @Option(help: ArgumentHelp("This node's name, kept with every record it writes to --store (default: the host name and --port).", valueName: "name"))
    var nodeName: String?
    @Option(help: .hidden) var storeSnapshotEvery: String?
    @Option(help: "Seconds the app is told to wait for the silent push.") var suggestedTimeout = 5
    @Option(help: "Seconds after a sign-in in which a user may delete the account, change the email or password or unlink a provider; later they get CREDENTIAL_TOO_OLD_LOGIN_AGAIN (requiresRecentLogin) until they reauthenticate. Google's is 300; 0: no limit, as the Auth Emulator.")
    var recentLoginSeconds = BackendConfiguration().recentLoginSeconds
    @Option(help: "TOTP second factors: the 30-second steps either side of now whose codes are taken (Identity Platform's adjacentIntervals, 0 to 10); -1 turns TOTP off (OPERATION_NOT_ALLOWED).")
    var totpAdjacentIntervals = BackendConfiguration().totpAdjacentIntervals ?? -1
    @Option(help: "A test phone number and its code, NUMBER=CODE (repeatable, at most 10).") var testNumber: [String] = []
    @Option(help: ArgumentHelp("How the reCAPTCHA page's challenge ends: pass, slow:<seconds>, cancel, or error:<code>[:<message>] (e.g. error:auth/network-request-failed).",
                               valueName: "outcome")) var recaptchaOutcome = "pass"
    @Option(help: ArgumentHelp("Who the user signs in as on an identity provider's page (OAuthProvider's web flow): first (the account login_hint names, else the provider's first, else a new one), new, account:<email>, cancel, or error:<code>[:<message>].",
                               valueName: "outcome")) var providerPage = "first"
    @Option(help: ArgumentHelp("reCAPTCHA SMS defense on the phone provider: off, audit or enforce (AUDIT and ENFORCE need the app to link RecaptchaEnterprise).",
                               valueName: "state")) var recaptchaEnforcement = "off"
    @Option(help: "The SMS toll-fraud risk score (0…1) every reCAPTCHA Enterprise assessment finds.") var tollFraudRisk = BackendConfiguration().tollFraudRiskScore
    @Option(help: "Toll-fraud risk scores above this (0…1) are blocked.") var tollFraudThreshold = BackendConfiguration().tollFraudThreshold
    @Option(help: ArgumentHelp("The project's API key (GoogleService-Info.plist API_KEY): given, requests with another key get 400 API_KEY_INVALID, as from Google. Without it any non-empty key is taken, as the Firebase Auth Emulator takes it, and apps are told \(BackendConfiguration().apiKey).",
                               valueName: "key")) var apiKey: String?
    @Option(help: "The project ID.") var projectID = BackendConfiguration().projectID
    @Option(help: "The iOS app's bundle ID (the push topic; the reCAPTCHA page's ibi; an accepted Apple token audience).") var bundleID = BackendConfiguration().bundleID
    @Option(help: "A Sign in with Apple services ID accepted as identity-token audience (repeatable).") var appleServicesID: [String] = []
    @Option(help: ArgumentHelp("Restrict the API key to this iOS bundle ID, as Google Cloud console's \"iOS apps\" restriction does (repeatable): requests whose X-Ios-Bundle-Identifier is another get 403 \"Requests from this iOS client application … are blocked.\"",
                               valueName: "bundle-id")) var apiKeyIOSBundleID: [String] = []
    @Option(help: "The project number (GCM_SENDER_ID), named in the API key's errors.") var projectNumber = BackendConfiguration().projectNumber
    @Option(help: ArgumentHelp("Load users and config from an Auth Emulator export (the folder `firebase emulators:export` or --export-on-exit wrote, or its auth_export folder) before serving; users with the same ID are replaced.",
                               valueName: "dir")) var `import`: String?
    @Option(help: ArgumentHelp("On SIGTERM or Ctrl-C, write users and config to this folder in the Auth Emulator's export format (firebase-export-metadata.json, auth_export/accounts.json, config.json), which `firebase emulators:start --import` loads.",
                               valueName: "dir")) var exportOnExit: String?
    @Option(help: ArgumentHelp("Every SMS carries this 6-digit code instead of a random one (CI that reads no outbox).", valueName: "code"))
    var smsCode: String?
    @Option(help: ArgumentHelp("Derive new users' IDs from this seed and their phone number or Apple ID, so the same user gets the same UID in every run.",
                               valueName: "seed")) var idSeed: String?
    @Flag(help: "Take code requests that carry no app verification (no silent-push receipt, no reCAPTCHA token) for any number, as the Firebase Auth Emulator does. Off: they are MISSING_APP_CREDENTIAL, as on a device.")
    var acceptUnverifiedCodeRequests = false
    @Option(help: ArgumentHelp("What goes to standard error: info shows refused requests and silent pushes APNs refused or that could not be sent; debug every push and request.",
                               valueName: "level")) var logLevel: Logger.Level = .info

    func validate() throws {
        try checkPorts([("--port", port), ("--receiver-port", receiverPort)])
        if apiKey?.isEmpty == true { throw ValidationError("--api-key is empty: give the project's key, or leave the option out to take any key") }
    }

    func run() async throws {
        let logger = bootstrapLogging("authsim.backend", level: logLevel)
        let access = try admin.access(listening: host)
        let credentials = try CertsDirectory(URL(fileURLWithPath: certs)).ensure()
        var configuration = BackendConfiguration()
        configuration.suggestedTimeout = suggestedTimeout
        configuration.recentLoginSeconds = recentLoginSeconds
        configuration.totpAdjacentIntervals = totpAdjacentIntervals < 0 ? nil : totpAdjacentIntervals
        if let apiKey {
            configuration.apiKey = apiKey
            configuration.apiKeyCheck = .projectKey
        }
        configuration.projectID = projectID
        configuration.bundleID = bundleID
        configuration.appleServicesIDs = appleServicesID
        configuration.apiKeyIOSBundleIDs = apiKeyIOSBundleID
        configuration.projectNumber = projectNumber
        configuration.fixedSMSCode = smsCode
        configuration.idSeed = idSeed
        configuration.acceptUnverifiedCodeRequests = acceptUnverifiedCodeRequests
        if storeSnapshotEvery != nil { throw ValidationError(StoreOptions.snapshotsGone) }
        do { configuration.recaptchaOutcome = try ReCAPTCHAOutcome(argument: recaptchaOutcome) } catch {
            throw ValidationError("--recaptcha-outcome: \(error.detail ?? error.code.rawValue)")
        }
        do { configuration.providerPageOutcome = try ProviderPageOutcome(argument: providerPage) } catch {
            throw ValidationError("--provider-page: \(error.detail ?? error.code.rawValue)")
        }
        guard let enforcement = RecaptchaEnforcement(argument: recaptchaEnforcement) else {
            throw ValidationError("--recaptcha-enforcement is off, audit or enforce, not \(recaptchaEnforcement)")
        }
        guard (0...1).contains(tollFraudRisk), (0...1).contains(tollFraudThreshold) else {
            throw ValidationError("--toll-fraud-risk and --toll-fraud-threshold are scores from 0 to 1")
        }
        configuration.phoneRecaptchaEnforcement = enforcement
        configuration.tollFraudRiskScore = tollFraudRisk
        configuration.tollFraudThreshold = tollFraudThreshold
        configuration.testPhoneNumbers = try testPhoneNumbers(testNumber)
        let key = try providerKey.key(or: credentials.authKey)
        let pusher = try localPusher(credentials, key: key, sandboxPort: receiverPort, productionPort: receiverPort)
        let storeLocation: PostgresLocation?
        do { storeLocation = try PostgresLocation.given(store) } catch { throw ValidationError("--store: \(error)") }
        let toolkit: IdentityToolkit
        let stateLine: String
        var eventLog: PostgresEventLog?
        if let location = storeLocation {
            let node = nodeName ?? PostgresLocation.defaultNodeName(port: port)
            let shared = PostgresBackendStore(location: location, node: node, logger: logger)
            do {
                toolkit = try await IdentityToolkit.open(configuration: configuration, pusher: pusher, store: shared, logger: logger)
            } catch {
                throw CommandFailure("cannot open the store \(location.address): \(error)")
            }
            // Its events, for the inspector of any `authsim serve --store` of the fleet.
            let events = PostgresEventLog(location: location, node: node, logger: logger)
            await toolkit.setEventSink(events)
            eventLog = events
            stateLine = "state: shared store \(location.address), node \(node)"
        } else {
            toolkit = try IdentityToolkit(configuration: configuration, pusher: pusher,
                                          stateDirectory: URL(fileURLWithPath: state), logger: logger)
            stateLine = "state: journal in \(state)"
        }
        if let folder = self.import {
            let report = try await EmulatorExport.load(URL(fileURLWithPath: folder), into: toolkit)
            say("authsim backend \(report.summary(of: folder))")
        }
        // Hummingbird's own lines (server started, connection errors) only when debugging.
        var serverLogger = logger
        serverLogger.logLevel = max(logLevel, .warning)
        if logLevel <= .debug { serverLogger.logLevel = logLevel }
        let exportOnExit = self.exportOnExit
        let events = eventLog
        let (hummingbirdLogger, settings, accessLine) = (serverLogger, configuration, AdminAccessOptions.describe(access))
        try await runProgram(logger: logger) { [self] parts in
            // Each part after those it depends on; they stop in reverse: the server, the export on
            // exit, the backend's state, its event log, its APNs client.
            await parts.add(pusher)
            if let events { await parts.add(events) }
            await parts.add(toolkit)
            if let folder = exportOnExit {
                await parts.add(ShutdownStep("the export on exit") {
                    try await EmulatorExport.write(toolkit, to: URL(fileURLWithPath: folder), version: "authsim")
                    let count = try await toolkit.users().count
                    say("authsim backend exported \(count) \(count == 1 ? "user" : "users") to \(folder)")
                })
            }
            let server = try await starting("--port", port: port) {
                try await BackendServer.start(toolkit: toolkit, host: host, port: port,
                                              tls: (credentials.serverCertificatePEM, credentials.serverKeyPEM), access: access,
                                              hosting: .group(parts), logger: hummingbirdLogger)
            }
            announce(server, configuration: settings, key: key, stateLine: stateLine, enforcement: enforcement, accessLine: accessLine)
        }
    }

    /// What the backend tells its user once it listens.
    private func announce(_ server: BackendServer, configuration: BackendConfiguration, key: APNsAuthKey, stateLine: String,
                          enforcement: RecaptchaEnforcement, accessLine: String) {
        say("authsim backend listening: \(server.baseURL)")
        say("  \(stateLine)")
        let keyRule = configuration.apiKeyCheck == .anyKey ? " (any key is taken, as by the Auth Emulator; --api-key to check it)" : ""
        say("  project \(configuration.projectID) (\(configuration.projectNumber)), API key \(configuration.apiKey)\(keyRule)\(apiKeyIOSBundleID.isEmpty ? "" : " restricted to iOS apps \(apiKeyIOSBundleID.joined(separator: ", "))"), iOS app \(configuration.bundleID)")
        say("  silent pushes → push-receiver 127.0.0.1:\(receiverPort) (key \(key.keyID), team \(key.teamID)\(providerKey.p8 == nil ? "" : ", \(providerKey.p8!)"))")
        say("  reCAPTCHA page: https://\(server.dialAuthority)/__/auth/handler (HTTPS on the same port, as the SDK opens it with useEmulator; trust \(certs)/ca.pem), outcome \(recaptchaOutcome)")
        say("  identity providers' sign-in page: \(server.baseURL)/emulator/auth/handler (OAuthProvider's web flow with useEmulator), outcome \(providerPage)")
        say("  Sign in with Apple: sheet POST \(server.baseURL)/appleid/auth/authorize, JWKS \(server.baseURL)/appleid/auth/keys, audiences \(([bundleID] + appleServicesID).joined(separator: ", "))")
        say("  SMS outbox: GET \(server.baseURL)/emulator/v1/projects/\(configuration.projectID)/verificationCodes")
        say("  project config (reCAPTCHA SMS defense at run time): GET/PATCH \(server.baseURL)/emulator/v1/projects/\(configuration.projectID)/config")
        say("  reCAPTCHA SMS defense: \(enforcement.rawValue)\(enforcement == .off ? "" : ", site key \(configuration.recaptchaSiteKey), toll-fraud risk \(tollFraudRisk) (blocked above \(tollFraudThreshold))")")
        say("  Admin SDKs: FIREBASE_AUTH_EMULATOR_HOST=\(server.dialAuthority) (user management, custom tokens, verify_id_token); ID-token keys at \(server.baseURL)\(JSONWebKeySet.firebaseIDTokenJWKPath)")
        say("  Admin and emulator routes: \(accessLine)")
        if let note = DialAddress.everyAddressNote(host) { say("  \(note)") }
        if let smsCode { say("  every SMS code is \(smsCode)") }
        if acceptUnverifiedCodeRequests { say("  code requests without app verification are taken for any number, as the Auth Emulator takes them") }
    }
}

/// `--test-number NUMBER=CODE` options as the backend's test numbers (checked by the configuration).
func testPhoneNumbers(_ entries: [String]) throws -> [String: String] {
    var numbers: [String: String] = [:]
    for entry in entries {
        let parts = entry.split(separator: "=").map(String.init)
        guard parts.count == 2 else { throw ValidationError("--test-number takes NUMBER=CODE, e.g. +16505553434=654321") }
        numbers[parts[0]] = parts[1]
    }
    return numbers
}

/// The backend's way out to a local push-receiver: an APNs client per environment, trusting the
/// local CA and signing with the key in the certs folder.
/// `--p8`, `--key-id`, `--team-id`: the APNs auth key the project's Firebase signs its silent pushes
/// with (as uploaded in the Firebase console), instead of the one in --certs.
struct ProviderKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Your APNs auth key (AuthKey_<KEYID>.p8), as uploaded to the Firebase project: the backend signs its silent pushes with it (and authsim serve's push-receiver trusts it), instead of the key in --certs. Needs --team-id.",
                               valueName: "file")) var p8: String?
    @Option(help: "The key ID of --p8 (default: from its file name AuthKey_<KEYID>.p8).") var keyID: String?
    @Option(help: "The team ID of --p8 (Apple Developer → Membership).") var teamID: String?

    /// The key to sign with: --p8's, else `fallback` (the one in --certs).
    func key(or fallback: APNsAuthKey) throws -> APNsAuthKey {
        guard let p8 else {
            if keyID != nil || teamID != nil { throw ValidationError("--key-id and --team-id name the key of --p8: give --p8 too") }
            return fallback
        }
        guard let teamID else { throw ValidationError("--p8 needs --team-id (Apple Developer → Membership → Team ID)") }
        do { return try APNsAuthKey.load(p8: URL(fileURLWithPath: p8), keyID: keyID, teamID: teamID) } catch {
            throw ValidationError("--p8 \(p8): \(error.message)")
        }
    }
}

func localPusher(_ credentials: LocalCredentials, key: APNsAuthKey, sandboxPort: Int, productionPort: Int) throws -> APNsPusher {
    func client(_ environment: APNsEnvironment, port: Int) throws -> APNsClient {
        try APNsClient(configuration: .local(environment, port: port, caPEM: credentials.caCertificatePEM),
                       tokens: try ProviderTokenCache(signer: key.signer))
    }
    return APNsPusher(sandbox: try client(.sandbox, port: sandboxPort), production: try client(.production, port: productionPort))
}

/// What the `--store` options say that is not an option of their own.
enum StoreOptions {
    /// `--store-snapshot-every`, of a fleet that kept records: refused, with why and where to read.
    static let snapshotsGone = "--store-snapshot-every is gone: a fleet keeps the backend's state as rows, each dropped once it expires, "
        + "so there are no records to snapshot (docs/fleet-internals.md). Drop the option."
}
