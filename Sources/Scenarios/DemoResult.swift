import Foundation

/// A finished scenario of any kind: what was expected, what happened, and its timeline.
package struct DemoResult: Sendable {
    package let name: String
    package let summary: String
    package let expected: String
    package let actual: String
    package let timeline: [TimelineEvent]
    package var passed: Bool { expected == actual }
    package init(name: String, summary: String, expected: String, actual: String, timeline: [TimelineEvent]) {
        self.name = name
        self.summary = summary
        self.expected = expected
        self.actual = actual
        self.timeline = timeline
    }
}

extension ChannelScenarioResult {
    /// The same result in the demo's common shape.
    package var demoResult: DemoResult {
        DemoResult(name: scenario.name, summary: scenario.summary, expected: scenario.expected.description,
                   actual: actual?.description ?? "error: \(error ?? "?")", timeline: timeline)
    }
}
