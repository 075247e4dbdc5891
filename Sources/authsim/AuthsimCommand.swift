import ArgumentParser
import CommandSupport
import Foundation
import LocalPKI
import Scenarios

@main
struct AuthsimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authsim",
        abstract: "Run Firebase phone-auth app-verification scenarios on Linux, over the real wire formats.",
        subcommands: [Demo.self, Backend.self, Phone.self, SampleAppCommand.self],
        defaultSubcommand: Demo.self)
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate what is needed, start every part in this process, run the standard scenarios and print their timelines.",
        discussion: "Exit status 0 only when every scenario ends as it should.")

    @Option(help: "Folder with the CA, server certificate and APNs auth key (made on first use).") var certs = "Certs"
    @Option(help: "Folder for this run's delivery log.") var state = "State/demo"
    @Option(name: .customLong("scenario"), help: "Run only these scenarios (repeatable).") var only: [String] = []
    @Flag(help: "List the scenarios and exit.") var list = false

    func run() async throws {
        if list {
            for scenario in ChannelDemo.scenarios { say("\(scenario.name): \(scenario.summary)") }
            for scenario in PhoneDemo.scenarios { say("\(scenario.name): \(scenario.summary)") }
            return
        }
        let known = ChannelDemo.scenarios.map(\.name) + PhoneDemo.scenarios.map(\.name)
        let unknown = only.filter { !known.contains($0) }
        if !unknown.isEmpty {
            throw ValidationError("unknown scenario \(unknown.joined(separator: ", ")); --list shows them")
        }
        let certsURL = URL(fileURLWithPath: certs)
        let stateURL = URL(fileURLWithPath: state)
        try? FileManager.default.removeItem(at: stateURL)
        let credentials = try CertsDirectory(certsURL).ensure()
        say("authsim demo: the APNs channel, end to end on loopback (HTTP/2 + TLS, ES256 provider tokens)")
        say("credentials: \(certsURL.path)/ CA, server certificate, \(credentials.authKey.fileName) (key \(credentials.authKey.keyID), team \(credentials.authKey.teamID))")

        let printer: @Sendable (TimelineEvent) -> Void = { event in
            let ms = String(event.milliseconds).leftPadded(to: 5)
            say("  +\(ms) ms  \(event.part.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))  \(event.message)")
        }
        let channelNames = only.filter { name in ChannelDemo.scenarios.contains { $0.name == name } }
        let phoneNames = only.filter { name in PhoneDemo.scenarios.contains { $0.name == name } }
        var results: [DemoResult] = []
        if only.isEmpty || !channelNames.isEmpty {
            say("\n── The APNs channel: apns-sender → push-receiver → device")
            results += try await ChannelDemo.run(certs: certsURL, state: stateURL.appendingPathComponent("channel"), only: channelNames,
                                                 onStart: { scenario, _ in say("\n▶ \(scenario.name): \(scenario.summary)") },
                                                 printer: printer).map(\.demoResult)
        }
        if only.isEmpty || !phoneNames.isEmpty {
            say("\n── Phone sign-in: app (auth core) → backend (HTTP) → apns-sender → push-receiver → device → app")
            results += try await PhoneDemo.run(certs: certsURL, state: stateURL.appendingPathComponent("phone"), only: phoneNames,
                                               onStart: { scenario, _ in say("\n▶ \(scenario.name): \(scenario.summary)") },
                                               printer: printer)
        }
        say("")
        var failed = 0
        for result in results {
            if result.passed {
                say("✔ \(result.name): \(result.actual)")
            } else {
                failed += 1
                say("✘ \(result.name): expected \(result.expected), got \(result.actual)")
            }
        }
        say("\n\(results.count - failed) of \(results.count) scenarios ended as they should. State (delivery logs, users): \(stateURL.path)")
        if failed > 0 { throw ExitCode(1) }
    }
}
