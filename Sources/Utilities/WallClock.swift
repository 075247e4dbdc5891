import Foundation
import Synchronization

/// Wall-clock time, injected wherever a timeout or a token age matters, so tests move time
/// instead of sleeping.
///
/// (Swift's `Clock` measures instants, not dates; provider tokens carry dates, so this is a clock of
/// dates.)
package protocol WallClock: Sendable {
    var now: Date { get }
}

/// The system's clock.
package struct SystemWallClock: WallClock {
    package init() {}
    package var now: Date { Date() }
}

/// A clock that moves only when told: for tests, and for `authsim` scenarios that put a provider's
/// clock an hour off.
package final class ManualWallClock: WallClock {
    private let current: Mutex<Date>
    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }
    package var now: Date { current.withLock { $0 } }
    package func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    package func set(_ date: Date) { current.withLock { $0 = date } }
}

/// Another clock shifted by a fixed offset: a provider whose clock is wrong.
package struct OffsetWallClock: WallClock {
    package let base: any WallClock
    package let offset: TimeInterval
    package init(base: any WallClock = SystemWallClock(), offset: TimeInterval) {
        self.base = base
        self.offset = offset
    }
    package var now: Date { base.now.addingTimeInterval(offset) }
}

/// The system's time plus an offset that can be moved while it runs: a backend whose clock a
/// scenario jumps ahead ("the user types the code ten minutes later").
package final class AdjustableWallClock: WallClock {
    private let offset = Mutex<TimeInterval>(0)
    package init() {}
    package var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }
    package func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}
