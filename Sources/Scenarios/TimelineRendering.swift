import AuthBackend
import Foundation
import Utilities

/// A timeline for people (a line per step), for machines (a JSON object per line), and as a
/// sequence diagram (Mermaid text, or a self-contained HTML page).
package enum TimelineRendering {
    /// `  +  123 ms  backend   verifyClient: …` (with `→ part` for messages).
    package static func line(_ event: TimelineEvent) -> String {
        let ms = String(event.milliseconds)
        let padded = String(repeating: " ", count: max(0, 5 - ms.count)) + ms
        let part = event.part.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)
        let arrow = event.to.map { "→ \($0.rawValue): " } ?? ""
        return "  +\(padded) ms  \(part) \(arrow)\(event.message)"
    }

    /// One JSON object (sorted keys), with the scenario's name: see ``TimelineLine``.
    package static func json(_ event: TimelineEvent, scenario: String) -> String {
        let line = TimelineLine(scenario: scenario, ms: event.milliseconds, part: event.part, to: event.to, kind: event.kind?.rawValue,
                                message: event.message, facts: event.fact.map(\.facts).flatMap { $0.isEmpty ? nil : $0 },
                                signIn: event.signIn?.rawValue)
        // Strings, integers and dictionaries of strings always encode.
        return String(decoding: (try? TimelineLine.encoder.encode(line)) ?? Data(), as: UTF8.self)
    }

    /// Reads back `--json` lines: the events per scenario, in order. Lines that are not JSON
    /// objects (other output mixed in) are skipped; an event line the reader cannot take is an
    /// error naming the line.
    package static func events(fromJSONLines text: String) throws(TimelineFormatError) -> [(scenario: String, event: TimelineEvent)] {
        var events: [(scenario: String, event: TimelineEvent)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard line.first == "{" else { continue }
            let decoded: TimelineLine
            do { decoded = try JSONDecoder().decode(TimelineLine.self, from: Data(line.utf8)) } catch {
                throw TimelineFormatError("line \(index + 1) is not an event (scenario, ms, part, message, kind, facts): \(error)")
            }
            let fact: RunFact?
            do { fact = try RunFact(kind: decoded.kind, facts: decoded.facts ?? [:]) } catch {
                throw TimelineFormatError("line \(index + 1): \(error.message)")
            }
            events.append((decoded.scenario ?? "", TimelineEvent(milliseconds: decoded.ms ?? 0, part: decoded.part, to: decoded.to,
                                                                message: decoded.message, fact: fact,
                                                                signIn: decoded.signIn.map { SignInID(rawValue: $0) })))
        }
        return events
    }

    /// The parts a run involved, in the diagram's left-to-right order.
    static func participants(_ events: [TimelineEvent]) -> [Part] {
        let order: [Part] = [.app, .browser, .interceptor, .backend, .sender, .receiver, .device, .authsim]
        let used = Set(events.flatMap { [$0.part] + ($0.to.map { [$0] } ?? []) })
        return order.filter(used.contains)
    }

    /// A Mermaid `sequenceDiagram`: messages as arrows, steps as notes.
    package static func mermaid(_ result: DemoResult) -> String {
        var lines = ["sequenceDiagram", "    title \(mermaidText(result.name)): \(mermaidText(result.actual))"]
        for part in participants(result.timeline) { lines.append("    participant \(part.rawValue)") }
        for event in result.timeline {
            let text = mermaidText("+\(event.milliseconds) ms \(event.message)")
            if let to = event.to, to != event.part {
                lines.append("    \(event.part.rawValue)->>\(to.rawValue): \(text)")
            } else {
                lines.append("    Note over \(event.part.rawValue): \(text)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Mermaid message text: one line, no characters Mermaid reads as syntax, not too long.
    static func mermaidText(_ text: String) -> String {
        var cleaned = text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: ";", with: ",")
            .replacingOccurrences(of: "#", with: "no. ").replacingOccurrences(of: "%", with: " percent")
        if cleaned.count > 160 { cleaned = String(cleaned.prefix(157)) + "…" }
        return cleaned
    }

    /// What decides a run, when something went wrong: the first refusal, loss or fallback.
    static func isDecisive(_ event: TimelineEvent) -> Bool {
        isBad(event) || [.pushLost, .fallback, .apnsRegistrationFailed].contains(event.kind)
    }

    /// A refusal or an error: drawn as what went wrong.
    static func isBad(_ event: TimelineEvent) -> Bool {
        event.kind == .pushRejected || event.kind == .authError || event.backend?.refusal != nil
    }

    /// A self-contained HTML page: for each scenario, a sequence diagram (lifelines as columns,
    /// each message an arrow from one column to another, each step a note), with no scripts and
    /// nothing fetched. `causes` (by scenario name) are shown under each title; the decisive event
    /// (the first refusal, loss or fallback) is marked ◆; a push lost on the way, or accepted under
    /// a drop fault, is drawn dashed and says it never arrived.
    package static func html(_ results: [DemoResult], title: String = "authsim run", causes: [String: String] = [:]) -> String {
        var body = ""
        for result in results {
            let parts = participants(result.timeline)
            body += "<section><h2>\(escape(result.name)) <span class=\"\(result.passed ? "pass" : "fail")\">\(result.passed ? "✔" : "✘") \(escape(result.actual))</span></h2>\n"
            body += "<p class=\"summary\">\(escape(result.summary))\(result.passed ? "" : " Expected: \(escape(result.expected)).")</p>\n"
            if let cause = causes[result.name] { body += "<p class=\"cause\"><b>Why:</b> \(escape(cause))</p>\n" }
            let decisive = result.timeline.firstIndex(where: isDecisive)
            var dropFault = false
            var rows: [SequenceDiagram.Row] = []
            for (index, event) in result.timeline.enumerated() {
                if case .receiverFault(.drop) = event.fact { dropFault = true }
                let lost = event.kind == .pushLost || (event.kind == .pushAccepted && dropFault)
                if event.kind == .pushAccepted { dropFault = false }
                let marked = index == decisive
                var classes = isBad(event) ? ["bad"] : []
                if lost { classes.append("lost") }
                if marked { classes.append("decisive") }
                let text = (marked ? "◆ " : "") + event.message + (lost && event.kind == .pushAccepted ? " (dropped: never delivered)" : "")
                rows.append(SequenceDiagram.Row(time: "+\(event.milliseconds) ms", from: event.part.rawValue, to: event.to?.rawValue,
                                                text: text, classes: classes))
            }
            body += SequenceDiagram.html(parts: parts.map(\.rawValue), rows: rows) + "\n"
            body += "</section>\n"
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>
            body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
            h2 { font-size: 1.1em; margin-top: 2em; } .pass { color: #17702b; } .fail { color: #b3261e; }
            .summary { color: #555; max-width: 60em; }
            .diagram { display: grid; gap: 2px 0; font-size: 0.8em; }
            .head { font-weight: bold; text-align: center; background: #eef; border-radius: 4px; padding: 0.3em; margin: 0 0.3em; }
            .ms { color: #888; text-align: right; padding-right: 0.6em; white-space: nowrap; }
            .life { border-left: 1px dashed #bbb; margin-left: 50%; }
            .note { background: #fffbe6; border: 1px solid #e8d98c; border-radius: 4px; padding: 0.2em 0.4em; margin: 0 0.3em; }
            .arrow { position: relative; border-bottom: 2px solid #446; margin: 0 10%; padding: 0.1em 0.4em 0.2em; text-align: center; }
            .arrow.right::after { content: "▶"; position: absolute; right: -0.5em; bottom: -0.62em; color: #446; }
            .arrow.left::before { content: "◀"; position: absolute; left: -0.5em; bottom: -0.62em; color: #446; }
            .bad { border-color: #b3261e; color: #b3261e; } .note.bad { background: #fdecea; }
            .lost { border-bottom-style: dashed; color: #777; } .note.lost { border-style: dashed; background: #f4f4f4; }
            .decisive { font-weight: bold; outline: 2px solid #b3261e; outline-offset: 1px; }
            .cause { max-width: 60em; background: #fdecea; border-left: 4px solid #b3261e; padding: 0.4em 0.7em; }
            </style></head>
            <body><h1>\(escape(title))</h1>
            \(body)</body></html>
            """
    }

    static func escape(_ text: String) -> String { SequenceDiagram.escape(text) }
}

/// One `--json` line: `scenario`, `ms` since the scenario began, `part`, `to` (a message's
/// receiver), `message`, for facts `kind` and `facts` (strings; `docs/timeline-events.md`), and
/// for a backend event that is a step of a sign-in, `signIn` (its ``SignInID``).
package struct TimelineLine: Codable, Sendable, Hashable {
    package var scenario: String?
    package var ms: Int?
    package var part: Part
    package var to: Part?
    package var kind: String?
    package var message: String
    package var facts: [String: String]?
    package var signIn: String?

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
