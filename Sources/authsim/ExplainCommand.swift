import ArgumentParser
import Causes
import CommandSupport
import Diagnostics
import Foundation
import Scenarios

/// `authsim explain`: the root cause of a run, from its events.
struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Name the root cause of a run, and the fix, from its events (`authsim run … --json` or `authsim demo --json`).",
        discussion: """
            Reads JSON lines from the file, or from standard input when the file is - or absent; one diagnosis per scenario. \
            With --receiver-state, reads what a push-receiver saw instead (its deliveries.jsonl, rejections.jsonl and devices.json), \
            for pushes from any backend.
            """)

    @Argument(help: "The events file (JSON lines).") var file: String?
    @Option(help: ArgumentHelp("A push-receiver's --state folder.", valueName: "dir")) var receiverState: String?
    @Flag(help: "One JSON object per scenario: scenario, code, cause, fix.") var json = false
    @Option(parsing: .upToNextOption, help: ArgumentHelp("With --receiver-state: which findings make the exit status 1 (for a CI step): rejected, dropped, or none; several apart by spaces or commas.",
                                                         valueName: "finding"))
    var failOn: [String] = ["rejected", "dropped"]

    /// `--fail-on`'s findings, each once: `rejected,dropped` as `rejected dropped`.
    private var findings: [String] {
        failOn.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty }
    }

    func validate() throws {
        guard !findings.isEmpty else { throw ValidationError("--fail-on takes rejected, dropped or none") }
        for finding in findings where !["rejected", "dropped", "none"].contains(finding) {
            throw ValidationError("--fail-on takes rejected, dropped or none, not \(finding)")
        }
        if findings.contains("none") && findings.count > 1 {
            throw ValidationError("--fail-on none reports only: it goes alone, not with \(findings.filter { $0 != "none" }.joined(separator: " "))")
        }
        // A wrong folder is a usage error (64); a log that cannot be read fails the run (1).
        if let receiverState {
            do { try ReceiverStateExplainer.checkFolder(URL(fileURLWithPath: receiverState)) } catch { throw ValidationError(error.message) }
        }
    }

    func run() async throws {
        if let receiverState {
            let report: ReceiverStateExplainer.Report
            do { report = try ReceiverStateExplainer.explain(state: URL(fileURLWithPath: receiverState)) } catch {
                throw CommandFailure("\(error)")
            }
            if !json { say("push-receiver (\(receiverState)): \(report.accepted) accepted (\(report.dropped) of them dropped by a fault), \(report.rejected) rejected") }
            for (count, diagnosis) in report.diagnoses {
                if json {
                    say(try Self.line(DiagnosisLine(scenario: nil, count: count, diagnosis: diagnosis)))
                } else {
                    say("\(count) × \(diagnosis.cause).")
                    say("  fix: \(diagnosis.fix).")
                }
            }
            let findings = findings
            let failing = (findings.contains("rejected") && report.rejected > 0) || (findings.contains("dropped") && report.dropped > 0)
            if failing {
                if !json { say("exit status 1: --fail-on \(findings.joined(separator: " ")) (--fail-on none to report only)") }
                throw ExitCode(1)
            }
            return
        }
        let text: String
        if let file, file != "-" {
            do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
                throw ValidationError("cannot read \(file): \(error.localizedDescription)")
            }
        } else {
            var lines: [String] = []
            while let line = readLine() { lines.append(line) }
            text = lines.joined(separator: "\n")
        }
        let events: [(scenario: String, event: TimelineEvent)]
        do { events = try TimelineRendering.events(fromJSONLines: text) } catch {
            throw ValidationError("\(file ?? "standard input"): \(error.message)")
        }
        guard !events.isEmpty else {
            let source = file.map { $0 == "-" ? "standard input" : $0 } ?? "standard input"
            let authsim = invocation(of: "authsim")
            let text = text.contains("→") || text.contains("✔") || text.contains("✘")
                ? "\(source) is a text timeline, which explain cannot read: run it again with --json (`\(authsim) run <scenario> --json > run.jsonl`, or `\(authsim) demo --json`), then `\(authsim) explain run.jsonl`"
                : "no events in \(source): give the JSON lines of `\(authsim) run <scenario> --json` (or `\(authsim) demo --json`)"
            throw ValidationError(text)
        }
        var order: [String] = []
        var byScenario: [String: [TimelineEvent]] = [:]
        for (scenario, event) in events {
            if byScenario[scenario] == nil { order.append(scenario) }
            byScenario[scenario, default: []].append(event)
        }
        for scenario in order {
            let diagnosis = Explainer.explain(byScenario[scenario] ?? [])
            if json {
                say(try Self.line(DiagnosisLine(scenario: scenario, count: nil, diagnosis: diagnosis)))
            } else {
                say("\(scenario.isEmpty ? "run" : scenario): \(diagnosis.cause).")
                say("  fix: \(diagnosis.fix).")
            }
        }
    }

    /// One `--json` line, keys sorted.
    static func line(_ value: DiagnosisLine) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// `authsim explain --json`: one diagnosis per scenario (or per cause, with its count, for
/// `--receiver-state`).
struct DiagnosisLine: Encodable {
    var scenario: String?
    var count: Int?
    var code: String
    var cause: String
    var fix: String

    init(scenario: String?, count: Int?, diagnosis: Diagnosis) {
        self.scenario = scenario
        self.count = count
        code = diagnosis.code.rawValue
        cause = diagnosis.cause
        fix = diagnosis.fix
    }
}
