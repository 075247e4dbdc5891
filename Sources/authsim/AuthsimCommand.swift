import ArgumentParser
import Foundation
import LocalPKI
import Scenarios

@main
struct AuthsimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authsim",
        abstract: "Run Firebase phone-auth app-verification scenarios on Linux, over the real wire formats.",
        subcommands: [Demo.self],
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
            return
        }
        let unknown = only.filter { name in !ChannelDemo.scenarios.contains { $0.name == name } }
        if !unknown.isEmpty {
            throw ValidationError("unknown scenario \(unknown.joined(separator: ", ")); --list shows them")
        }
        let certsURL = URL(fileURLWithPath: certs)
        let stateURL = URL(fileURLWithPath: state)
        try? FileManager.default.removeItem(at: stateURL)
        let credentials = try CertsDirectory(certsURL).ensure()
        say("authsim demo: the APNs channel, end to end on loopback (HTTP/2 + TLS, ES256 provider tokens)")
        say("credentials: \(certsURL.path)/ CA, server certificate, \(credentials.authKey.fileName) (key \(credentials.authKey.keyID), team \(credentials.authKey.teamID))")

        let results = try await ChannelDemo.run(certs: certsURL, state: stateURL, only: only, onStart: { scenario, channel in
            if channel.receiver.listeners.count > 0, scenario.name == (only.first ?? ChannelDemo.scenarios[0].name) {
                say("push-receiver: " + channel.receiver.listeners.map(\.description).joined(separator: ", "))
            }
            say("\n▶ \(scenario.name): \(scenario.summary)")
        }, printer: { event in
            let ms = String(event.milliseconds).leftPadded(to: 5)
            say("  +\(ms) ms  \(event.part.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))  \(event.message)")
        })
        // Results print after their timelines (scenarios run one after another).
        say("")
        var failed = 0
        for result in results {
            if result.passed {
                say("✔ \(result.scenario.name): \(result.actual!)")
            } else {
                failed += 1
                say("✘ \(result.scenario.name): expected \(result.scenario.expected), got \(result.actual.map(\.description) ?? "error: \(result.error ?? "?")")")
            }
        }
        say("\n\(results.count - failed) of \(results.count) scenarios ended as they should. Delivery log: \(stateURL.appendingPathComponent("deliveries.jsonl").path)")
        if failed > 0 { throw ExitCode(1) }
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

/// Writes a line to standard output at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
