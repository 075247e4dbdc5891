import Foundation
import Synchronization

/// RFC 3339 times as the services and our logs write them: `2026-11-24T10:00:00.123Z` (UTC,
/// milliseconds, rounded), read with or without the fraction.
///
/// One pair of `ISO8601DateFormatter`s, made once and used under a lock (a formatter is not
/// safe to use from two threads at once): one made per call cost push-receiver two thirds of its
/// rate on refused pushes, each of which the rejection log timestamps. (Foundation's
/// `ISO8601FormatStyle` would need no lock, but it truncates where the formatter rounds: the
/// logs' times would move by a millisecond.)
public enum RFC3339 {
    private final class Formatters {
        let withFraction: ISO8601DateFormatter = {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter
        }()
        let withoutFraction = ISO8601DateFormatter()
    }
    private static let formatters = Mutex(Formatters())

    public static func string(_ date: Date) -> String {
        formatters.withLock { $0.withFraction.string(from: date) }
    }

    /// `2026-11-24T10:00:00.123Z` or `2026-11-24T10:00:00Z`; `nil` for anything else.
    public static func date(_ text: String) -> Date? {
        formatters.withLock { $0.withFraction.date(from: text) ?? $0.withoutFraction.date(from: text) }
    }
}
