import Foundation
import Synchronization

/// The parts of a run, as they appear in a timeline.
public enum Part: String, Sendable, CaseIterable {
    case app, browser, backend, sender, receiver, device, interceptor, authsim
}

/// One step of a run: when (milliseconds since the run began), which part, what.
public struct TimelineEvent: Sendable, Hashable {
    public let milliseconds: Int
    public let part: Part
    public let message: String
}

/// Records what each part did, with elapsed milliseconds, and prints it as it happens.
public final class Timeline: Sendable {
    private let start = ContinuousClock.now
    private let events = Mutex<[TimelineEvent]>([])
    private let printer: (@Sendable (TimelineEvent) -> Void)?

    public init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    public func record(_ part: Part, _ message: String) {
        let elapsed = ContinuousClock.now - start
        let ms = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        let event = TimelineEvent(milliseconds: ms, part: part, message: message)
        events.withLock { $0.append(event) }
        printer?(event)
    }

    public var all: [TimelineEvent] { events.withLock { $0 } }
}

/// The timeline of the scenario that is running now, for observers (receiver, backend) that
/// outlive one scenario: what they see between scenarios is not recorded.
public final class CurrentTimeline: Sendable {
    private let current = Mutex<Timeline?>(nil)
    private let printer: (@Sendable (TimelineEvent) -> Void)?

    public init(printer: (@Sendable (TimelineEvent) -> Void)? = nil) { self.printer = printer }

    /// Records into the running scenario's timeline, if one runs.
    public func record(_ part: Part, _ message: @autoclosure () -> String) {
        current.withLock { $0 }?.record(part, message())
    }

    /// Starts the timeline of the next scenario.
    public func begin() -> Timeline {
        let timeline = Timeline(printer: printer)
        current.withLock { $0 = timeline }
        return timeline
    }

    /// No scenario runs any more.
    public func end() { current.withLock { $0 = nil } }
}
