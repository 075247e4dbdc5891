import Foundation

/// RFC 3339 times as the services and our logs write them: `2026-11-24T10:00:00.123Z` (UTC,
/// milliseconds), read with or without the fraction.
public enum RFC3339 {
    public static func string(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// `2026-11-24T10:00:00.123Z` or `2026-11-24T10:00:00Z`; `nil` for anything else.
    public static func date(_ text: String) -> Date? {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
