import Foundation

/// A finished scenario of any kind: what was expected, what happened, and its timeline.
public struct DemoResult: Sendable {
    public let name: String
    public let summary: String
    public let expected: String
    public let actual: String
    public let timeline: [TimelineEvent]
    public var passed: Bool { expected == actual }
    public init(name: String, summary: String, expected: String, actual: String, timeline: [TimelineEvent]) {
        self.name = name
        self.summary = summary
        self.expected = expected
        self.actual = actual
        self.timeline = timeline
    }
}

extension ChannelScenarioResult {
    /// The same result in the demo's common shape.
    public var demoResult: DemoResult {
        DemoResult(name: scenario.name, summary: scenario.summary, expected: scenario.expected.description,
                   actual: actual?.description ?? "error: \(error ?? "?")", timeline: timeline)
    }
}
