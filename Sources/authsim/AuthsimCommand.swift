import ArgumentParser
import Utilities
import CommandSupport
import Diagnostics
import Foundation
import LocalPKI
import Scenarios
import ProgramCommands

/// `authsim`, or push-receiver, apns-sender or redirect-interceptor when started under one of
/// their names: the release bundle ships one binary and links to it (Programs).
@main
enum AuthsimMain {
    static func main() async {
        let name = URL(fileURLWithPath: CommandLine.arguments.first ?? "authsim").lastPathComponent
        if await Programs.run(named: name) { return }
        await runCommand(AuthsimCommand.self)
    }
}

struct AuthsimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authsim",
        abstract: "Run Firebase phone-auth app-verification scenarios on Linux, over the real wire formats.",
        version: AuthsimVersion.current,
        subcommands: [Demo.self, Run.self, Explain.self, Doctor.self, Serve.self, Exec.self, Backend.self, Phone.self, SampleAppCommand.self, Bench.self, Docs.self],
        defaultSubcommand: Demo.self)
}

/// Options every scenario-running command shares: where the scenarios, keys and state are, and
/// how the run is shown.
struct RunOutput: ParsableArguments {
    @Option(help: "Folder with the scenario files (format authsim-scenario/1).") var scenarios = "Scenarios"
    @Option(help: "Folder with the CA, server certificate and APNs auth key (made on first use).") var certs = "Certs"
    @Flag(help: "One JSON object per event on standard output, instead of the timeline (for `authsim explain` and other programs).")
    var json = false
    @Option(help: ArgumentHelp("Also write the runs as a sequence diagram: a .mmd file (Mermaid) or a .html page.", valueName: "file"))
    var diagram: String?

    /// The scenario folder: --scenarios, or by default Scenarios/ here, else the release's beside bin/.
    var scenarioFolder: URL {
        let directory = URL(fileURLWithPath: scenarios)
        // The release bundle (and the wheel) keep Scenarios/ beside bin/: the default finds it from anywhere.
        if scenarios == "Scenarios", !FileManager.default.fileExists(atPath: directory.path),
           let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let bundled = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scenarios")
            if FileManager.default.fileExists(atPath: bundled.path) { return bundled }
        }
        return directory
    }

    func loadScenarios() throws -> [ScenarioSpec] {
        let directory = scenarioFolder
        guard FileManager.default.fileExists(atPath: directory.path) else {
            throw ValidationError("no scenario folder \(directory.path): pass --scenarios DIR (the repository's Scenarios/, or the release's beside bin/)")
        }
        do { return try ScenarioSpec.load(directory: directory) } catch { throw ValidationError(error.message) }
    }

    var printer: @Sendable (TimelineEvent) -> Void {
        if json { return { _ in } }
        return { event in say(TimelineRendering.line(event)) }
    }

    /// Prints the results (JSON lines or the summary) and writes the diagram.
    func finish(_ results: [DemoResult], state: URL) throws -> Int {
        if json {
            for result in results {
                for event in result.timeline { say(TimelineRendering.json(event, scenario: result.name)) }
            }
        } else {
            say("")
            for result in results {
                say(result.passed ? "✔ \(result.name): \(result.actual)" : "✘ \(result.name): expected \(result.expected), got \(result.actual)")
                // Phone scenarios get their root cause; the channel's answers speak for themselves.
                if result.timeline.contains(.outcome) {
                    say("    why: \(Explainer.explain(result.timeline).cause)")
                }
            }
        }
        if let diagram {
            let file = URL(fileURLWithPath: diagram)
            var causes: [String: String] = [:]
            for result in results where result.timeline.contains(.outcome) { causes[result.name] = Explainer.explain(result.timeline).cause }
            let text = file.pathExtension == "html" ? TimelineRendering.html(results, causes: causes)
                : results.map(TimelineRendering.mermaid).joined(separator: "\n")
            do { try text.write(to: file, atomically: true, encoding: .utf8) } catch {
                throw ValidationError("cannot write \(file.path): \(error.localizedDescription)")
            }
            if !json { say("sequence diagram: \(file.path)") }
        }
        let failed = results.filter { !$0.passed }.count
        if !json { say("\n\(results.count - failed) of \(results.count) scenarios ended as they should. State (delivery logs, users): \(state.path)") }
        return failed
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate what is needed, start every part in this process, run the standard scenarios and print their timelines.",
        discussion: """
            The APNs-channel scenarios, then every phone sign-in scenario file in --scenarios, each in a world of its own \
            (push-receiver, backend, provider, device, app). Exit status 0 only when every scenario ends as it should.
            """)

    @OptionGroup var output: RunOutput
    @Option(help: "Folder for this run's delivery logs and users.") var state = "State/demo"
    @Option(name: .customLong("scenario"), help: "Run only these scenarios (repeatable).") var only: [String] = []
    @Flag(help: "List the scenarios and exit.") var list = false

    func run() async throws {
        let specs = try output.loadScenarios()
        if list {
            for scenario in ChannelDemo.scenarios { say("\(scenario.name): \(scenario.summary)") }
            for spec in specs { say("\(spec.name): \(spec.summary)") }
            return
        }
        let known = ChannelDemo.scenarios.map(\.name) + specs.map(\.name)
        let unknown = only.filter { !known.contains($0) }
        if !unknown.isEmpty {
            throw ValidationError("unknown scenario \(unknown.joined(separator: ", ")); --list shows them")
        }
        let certsURL = URL(fileURLWithPath: output.certs)
        let stateURL = URL(fileURLWithPath: state)
        try? FileManager.default.removeItem(at: stateURL)
        let credentials = try CertsDirectory(certsURL).ensure()
        let text = !output.json
        if text {
            say("authsim demo: Firebase phone auth's push-and-redirect channel, end to end on loopback (HTTP/2 + TLS, ES256 provider tokens)")
            say("credentials: \(certsURL.path)/ CA, server certificate, \(credentials.authKey.fileName) (key \(credentials.authKey.keyID), team \(credentials.authKey.teamID))")
        }
        let channelNames = only.filter { name in ChannelDemo.scenarios.contains { $0.name == name } }
        var results: [DemoResult] = []
        if only.isEmpty || !channelNames.isEmpty {
            if text { say("\n── The APNs channel: apns-sender → push-receiver → device") }
            results += try await ChannelDemo.run(certs: certsURL, state: stateURL.appendingPathComponent("channel"), only: channelNames,
                                                 onStart: { scenario, _ in if text { say("\n▶ \(scenario.name): \(scenario.summary)") } },
                                                 printer: output.printer).map(\.demoResult)
        }
        let phone = specs.filter { only.isEmpty || only.contains($0.name) }
        if !phone.isEmpty, text {
            say("\n── Phone sign-in: app (auth core) → backend (HTTP) → apns-sender → push-receiver → device → app, or the reCAPTCHA page")
        }
        for spec in phone {
            if text { say("\n▶ \(spec.name): \(spec.summary)") }
            results.append(await ScenarioRunner.run(spec, certs: certsURL, state: stateURL.appendingPathComponent(spec.name),
                                                    printer: output.printer))
        }
        if try output.finish(results, state: stateURL) > 0 { throw ExitCode(1) }
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run scenario files, each in a world of its own in this process.",
        discussion: """
            A scenario is a name from --scenarios or a path to a .json file (format authsim-scenario/1, see Scenarios/README.md). \
            Exit status 0 only when every scenario ends with the outcome it expects.
            """)

    @OptionGroup var output: RunOutput
    @Option(help: "Folder for the runs' delivery logs and users.") var state = "State/run"
    @Argument(help: "Scenario names or files.") var names: [String]

    func run() async throws {
        var specs: [ScenarioSpec] = []
        let available = names.allSatisfy { $0.hasSuffix(".json") || $0.contains("/") } ? [] : try output.loadScenarios()
        for name in names {
            if name.hasSuffix(".json") || name.contains("/") {
                do { specs.append(try ScenarioSpec(contentsOf: URL(fileURLWithPath: name))) } catch { throw ValidationError(error.message) }
            } else if let spec = available.first(where: { $0.name == name }) {
                specs.append(spec)
            } else {
                let channel = ChannelDemo.scenarios.contains { $0.name == name }
                    ? " (\(name) is an APNs-channel scenario: `\(invocation(of: "authsim")) demo --scenario \(name)` runs it)" : ""
                throw ValidationError("no scenario \(name) in \(output.scenarioFolder.path)\(channel); `\(invocation(of: "authsim")) demo --list` names them")
            }
        }
        let certsURL = URL(fileURLWithPath: output.certs)
        let stateURL = URL(fileURLWithPath: state)
        var results: [DemoResult] = []
        for spec in specs {
            if !output.json { say("▶ \(spec.name): \(spec.summary)") }
            results.append(await ScenarioRunner.run(spec, certs: certsURL, state: stateURL.appendingPathComponent(spec.name),
                                                    printer: output.printer))
        }
        if try output.finish(results, state: stateURL) > 0 { throw ExitCode(1) }
    }
}
