import APNsSender
import APNsWire
import Utilities
import ArgumentParser
import CommandSupport
import Foundation
import LocalPKI
import Logging

struct APNsSenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-sender",
        abstract: "Send pushes as an APNs provider: ES256 provider token from a .p8, HTTP/2 over TLS.",
        discussion: """
            Where pushes go:
              (default)                     the local push-receiver, sandbox: 127.0.0.1:2197, trusting Certs/ca.pem
              --environment production      Apple's real host (api.push.apple.com:443), system trust
              --environment X --local       the local receiver, environment X (named in TLS SNI)
              --host H [--port P] [--ca F]  anywhere else; SNI and :authority name Apple's host for --environment

            Exit status: 0 when every push was answered 200, 1 when any was rejected, 2 when any got no answer.
            """,
        version: AuthsimVersion.current)

    @Argument(help: "Payload files: APNs JSON, or xcrun simctl push .apns files (\"Simulator Target Bundle\" sets the topic).")
    var payloads: [String] = []
    @Option(name: .customLong("token"), help: "Device token (hex). Repeatable.") var tokens: [String] = []
    @Option(help: "apns-topic (default: the payload's Simulator Target Bundle).") var topic: String?
    @Option(help: "apns-push-type (default: background for content-available-only payloads, else alert).")
    var pushType: String?
    @Option(help: "apns-priority: 10, 5 or 1 (default: 5 for background, else 10).") var priority: Int?
    @Option(help: "apns-expiration, epoch seconds (0: deliver once, don't store).") var expiration: Int?
    @Option(help: "apns-collapse-id.") var collapseID: String?
    @Option(help: "apns-id to send (default: none, APNs makes one).") var apnsID: String?
    @Flag(name: .customLong("unique-apns-ids"), help: "Give each push an apns-id of its own (a new UUID), to match answers, failures and the receiver's log.") var uniqueAPNsIDs = false
    @Option(help: "Send each payload to each token this many times.") var count = 1
    @Option(help: "Pushes in flight at once.") var concurrency = 1
    @Option(help: "HTTP/2 connections to spread them over.") var connections = 1
    @Option(help: "Times a push refused unprocessed (REFUSED_STREAM, excluded by GOAWAY) is sent again.") var retries = 2

    @Option(help: "sandbox or production. Without --local or --host, this sends to Apple's real host.")
    var environment: APNsEnvironment?
    @Flag(help: "Send to the local push-receiver (the default when neither --environment nor --host is given).")
    var local = false
    @Option(help: "Connect to this host instead.") var host: String?
    @Option(help: "Port (default 2197 for the local receiver, 443 otherwise).") var port: Int?
    @Option(help: "Trust these PEM certificates (default: Certs/ca.pem for the local receiver, the system's roots otherwise).")
    var ca: String?
    @Flag(help: "Cleartext HTTP/2 with prior knowledge (the receiver's --cleartext-port).") var cleartext = false

    @Option(help: "Folder with the CA and the APNs auth key (made on first use).") var certs = "Certs"
    @Option(help: "Sign with this .p8 instead of the --certs key; needs --team-id.") var p8: String?
    @Option(help: "Key ID of --p8 (default: from its AuthKey_<KEYID>.p8 name).") var keyID: String?
    @Option(help: "Team ID of --p8.") var teamID: String?
    @Option(help: "Shift the provider's clock by this many seconds (to reproduce ExpiredProviderToken).")
    var clockOffset: Double = 0
    @Option(help: "Mint a new provider token after this many minutes (20 ≤ m < 60).") var tokenRefreshMinutes = 50.0
    @Flag(help: "One JSON object per push, then a summary object.") var json = false
    @Flag(help: "Print only the summary (for load runs: a line per push costs more than sending it).") var quiet = false
    @Flag(help: "Print a provider token (for curl or h2load: -H \"authorization: bearer $(…)\") and exit.")
    var printToken = false
    @Flag(help: "Log connections and retries to stderr.") var verbose = false

    func validate() throws {
        if printToken { return }
        if let port, !(1...65_535).contains(port) { throw ValidationError("--port \(port) is not a port: 1 to 65535") }
        if payloads.isEmpty { throw ValidationError("give at least one payload file (see Payloads/)") }
        if tokens.isEmpty { throw ValidationError("give --token <hex device token>") }
        if count < 1 || concurrency < 1 || connections < 1 { throw ValidationError("--count, --concurrency and --connections must be at least 1") }
        if retries < 0 { throw ValidationError("--retries must be 0 or more") }
        if let priority, APNsPriority(rawValue: priority) == nil { throw ValidationError("--priority must be 10, 5 or 1") }
        if let apnsID, parseAPNsID(apnsID) == nil { throw ValidationError("--apns-id must be a UUID") }
        if apnsID != nil, uniqueAPNsIDs { throw ValidationError("--apns-id and --unique-apns-ids exclude each other") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "apns-sender")
        logger.logLevel = verbose ? .debug : .warning

        let certsDirectory = CertsDirectory(URL(fileURLWithPath: certs))
        let toLocal = local || (environment == nil && host == nil)
        let env = environment ?? .sandbox
        let key: APNsAuthKey
        if let p8 {
            guard let teamID else { throw ValidationError("--p8 needs --team-id") }
            key = try APNsAuthKey.load(p8: URL(fileURLWithPath: p8), keyID: keyID, teamID: teamID)
        } else {
            key = try toLocal ? certsDirectory.ensure().authKey : certsDirectory.ensureAuthKey()
        }
        if printToken {
            let clock: any WallClock = clockOffset == 0 ? SystemWallClock() : OffsetWallClock(offset: clockOffset)
            say(key.signer.token(issuedAt: clock.now))
            return
        }
        var trustPEM: String? = try ca.map { try String(contentsOfFile: $0, encoding: .utf8) }
        if trustPEM == nil, toLocal { trustPEM = try certsDirectory.ensure().caCertificatePEM }
        let target = host ?? (toLocal ? "127.0.0.1" : env.appleHost)
        let configuration = APNsClientConfiguration(
            environment: env, host: target, port: port ?? (toLocal ? 2197 : 443),
            tls: cleartext ? nil : .init(trustedRootsPEM: trustPEM), connections: connections, retries: retries)
        let clock: any WallClock = clockOffset == 0 ? SystemWallClock() : OffsetWallClock(offset: clockOffset)
        let cache = try ProviderTokenCache(signer: key.signer, clock: clock, refreshInterval: tokenRefreshMinutes * 60)
        // One event-loop thread per connection, up to one per core.
        let threads = min(connections, ProcessInfo.processInfo.activeProcessorCount)
        let client = try APNsClient(configuration: configuration, tokens: cache, threads: threads, logger: logger)

        let composer = PushComposer(
            topic: topic, pushType: pushType.map(APNsPushType.init(rawValue:)), priority: priority.flatMap(APNsPriority.init(rawValue:)),
            expiration: expiration, collapseID: collapseID, apnsID: apnsID.flatMap(UUID.init(uuidString:)))
        var requests: [PushRequest] = []
        for file in payloads {
            let payload = try NotificationPayload(contentsOf: URL(fileURLWithPath: file))
            let headers = try composer.headers(for: payload)
            for token in tokens {
                // A malformed token is sent as given: seeing APNs's answer to it is the point.
                requests.append(PushRequest(rawDeviceToken: token, headers: headers, payload: payload.bytes))
            }
        }
        if !json {
            let where_ = "\(configuration.host):\(configuration.port) as \(configuration.serverName) (\(env))"
            say("sending \(requests.count * count) push(es) to \(where_), key \(key.keyID), team \(key.teamID)")
        }

        // (No per-push callback at all with --quiet: a bulk run then makes no result per answer.)
        let json = json
        // One line per answer, written in batches: a bulk send says 200,000 of them.
        let results = BufferedLines()
        let printEach: (@Sendable (BulkSender.Result) -> Void)? = quiet ? nil : { @Sendable result in results.say(Self.line(for: result, json: json)) }
        let report = await BulkSender(client: client, concurrency: concurrency, assignAPNsIDs: uniqueAPNsIDs)
            .send(requests, times: count, onResult: printEach)
        results.flush()
        await client.shutdown()
        say(report.summary(json: json))
        if report.unanswered > 0 {
            if toLocal && host == nil && !json {
                say("no answer from the local receiver at \(configuration.host):\(configuration.port): is it running? (\(invocation(of: "push-receiver")))")
            }
            throw ExitCode(2)
        }
        if report.rejected > 0 { throw ExitCode(1) }
    }

    static func line(for result: BulkSender.Result, json: Bool) -> String {
        switch result.outcome {
        case .success(let response):
            if json {
                var object: [String: Any] = ["device-token": result.request.deviceToken, "status": response.status]
                object["apns-id"] = response.apnsID
                object["apns-unique-id"] = response.apnsUniqueID
                object["reason"] = response.reason?.rawValue
                object["timestamp"] = response.timestamp
                return jsonLine(object)
            }
            var text = "\(response.status) \(String(result.request.deviceToken.prefix(16)))… apns-id=\(response.apnsID ?? "-")"
            if let unique = response.apnsUniqueID { text += " apns-unique-id=\(unique)" }
            if let reason = response.reason { text += " reason=\(reason) (\(reason.meaning))" }
            if let timestamp = response.timestamp { text += " timestamp=\(timestamp)" }
            return text
        case .failure(let error):
            let sentID = result.request.headers.apnsID?.uuidString.lowercased()
            if json {
                var object: [String: Any] = ["device-token": result.request.deviceToken, "error": error.message, "code": error.code.rawValue]
                object["apns-id"] = sentID
                return jsonLine(object)
            }
            return "ERR \(String(result.request.deviceToken.prefix(16)))… \(sentID.map { "apns-id=\($0) " } ?? "")\(error.message)"
        }
    }
}

func jsonLine(_ object: [String: Any]) -> String {
    CompactJSON.encode(object) ?? "{}"
}


extension BulkSender.Report {
    func summary(json: Bool) -> String {
        if json {
            return jsonLine(["sent": sent, "accepted": accepted, "rejected": rejected, "unanswered": unanswered, "interrupted": interrupted,
                             "seconds": seconds, "pushesPerSecond": pushesPerSecond,
                             "reasons": Dictionary(uniqueKeysWithValues: reasons.map { ($0.key.rawValue, $0.value) })])
        }
        var text = "sent \(sent): \(accepted) accepted, \(rejected) rejected, \(unanswered) unanswered\(interrupted > 0 ? " (\(interrupted) interrupted after sending: APNs may have them)" : "") in \(String(format: "%.3f", seconds)) s (\(Int(pushesPerSecond)) pushes/s)"
        for (reason, count) in reasons.sorted(by: { $0.value > $1.value }) { text += "\n  \(count)× \(reason): \(reason.meaning)" }
        return text
    }
}
