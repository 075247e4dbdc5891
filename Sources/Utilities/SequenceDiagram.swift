import Foundation

/// A sequence diagram as HTML: lifelines as grid columns, each message an arrow from one column
/// to another, each step a note on its part's column; no scripts. The one renderer of the
/// diagrams authsim draws: a run's timeline (`authsim run --diagram`) and a sign-in in the
/// inspector's page, which shows what this returns. The classes (`diagram`, `head`, `ms`, `life`,
/// `arrow right|left`, `note`, and a row's own) are styled by the page that holds it.
package enum SequenceDiagram {
    package struct Row: Sendable, Hashable {
        /// The left margin's label (`+12 ms`).
        package var time: String
        package var from: String
        /// The receiving part; nil (or `from`) for a step drawn as a note.
        package var to: String?
        package var text: String
        /// Extra classes of the arrow or note (`bad`, `lost`, `decisive`).
        package var classes: [String]

        package init(time: String, from: String, to: String? = nil, text: String, classes: [String] = []) {
            self.time = time
            self.from = from
            self.to = to
            self.text = text
            self.classes = classes
        }
    }

    /// The `<div class="diagram">` for `rows` between `parts` (left to right); a row whose part
    /// is not in `parts` is left out.
    package static func html(parts: [String], rows: [Row], timeColumn: String = "6em") -> String {
        let columns = parts.count
        var body = "<div class=\"diagram\" style=\"grid-template-columns: \(timeColumn) repeat(\(columns), 1fr)\">\n<div></div>"
        for part in parts { body += "<div class=\"head\">\(escape(part))</div>" }
        body += "\n"
        for row in rows {
            guard let from = parts.firstIndex(of: row.from) else { continue }
            let classes = row.classes.map { " \($0)" }.joined()
            body += "<div class=\"ms\">\(escape(row.time))</div>"
            if let to = row.to, let target = parts.firstIndex(of: to), target != from {
                let (low, high) = (min(from, target), max(from, target))
                for column in 0..<low { body += "<div class=\"life\" data-col=\"\(column)\"></div>" }
                body += "<div class=\"arrow \(target > from ? "right" : "left")\(classes)\" style=\"grid-column: \(low + 2) / span \(high - low + 1)\"><span>\(escape(row.text))</span></div>"
                for column in (high + 1)..<max(high + 1, columns) { body += "<div class=\"life\" data-col=\"\(column)\"></div>" }
            } else {
                for column in 0..<from { body += "<div class=\"life\" data-col=\"\(column)\"></div>" }
                body += "<div class=\"note\(classes)\">\(escape(row.text))</div>"
                for column in (from + 1)..<max(from + 1, columns) { body += "<div class=\"life\" data-col=\"\(column)\"></div>" }
            }
            body += "\n"
        }
        return body + "</div>"
    }

    /// Text as HTML text or an attribute's value.
    package static func escape(_ text: String) -> String { WebText.escapeHTML(text) }
}
