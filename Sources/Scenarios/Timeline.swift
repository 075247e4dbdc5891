import Foundation
import Synchronization

/// The parts of a run, as they appear in a timeline.
public enum Part: String, Sendable, CaseIterable {
    case app, backend, sender, receiver, device, interceptor, authsim
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
