import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 times as the services and our logs write them: `2026-11-24T10:00:00.123Z` (UTC,
/// milliseconds, rounded), read with or without the fraction.
///
/// Written by hand, as `ISO8601DateFormatter` writes them (milliseconds rounded, as that formatter
/// rounds and Foundation's `ISO8601FormatStyle` truncates). Read by one pair of formatters, made
/// once and used under a lock (a formatter is not safe to use from two threads at once; one made
/// per call cost push-receiver two thirds of its rate on refused pushes), which also write the
/// times outside the years 0–9999.
package enum RFC3339 {
    private final class Formatters {
        let withFraction: ISO8601DateFormatter = {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter
        }()
        let withoutFraction = ISO8601DateFormatter()
    }
    private static let formatters = Mutex(Formatters())

    /// Written by hand, as the formatter writes it (`RFC3339Tests` holds them side by side): the
    /// formatter under its lock cost a sign-in's every timestamp a lock and ICU's formatting.
    package static func string(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        // The years 0000 to 9999, the ones four digits hold; the formatter writes the others.
        guard milliseconds.isFinite, milliseconds >= -62_167_219_200_000, milliseconds < 253_402_300_800_000 else {
            return formatters.withLock { $0.withFraction.string(from: date) }
        }
        let (second, millisecond) = Int64(milliseconds).quotientAndRemainder(dividingBy: 1000)
        // Rounded toward minus infinity: a time before 1970 is its second and a positive fraction.
        let (whole, fraction) = millisecond < 0 ? (second - 1, Int(millisecond) + 1000) : (second, Int(millisecond))
        var out = secondText(whole)
        out.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        out.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        out.append(UInt8(ascii: "0") + UInt8(fraction % 10))
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `2026-11-24T10:00:00.`: the UTC date and time of `second` (since 1970) up to its fraction,
    /// in bytes, as ``string(_:)`` and the delivery log's lines begin. Each field keeps its last
    /// digits (a year past 9999 would lose its first).
    package static func secondText(_ second: Int64) -> [UInt8] {
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func digits(_ value: Int32, _ width: Int, then separator: Character) {
            var divisor: Int32 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (value / divisor) % 10))
                divisor /= 10
            }
            out.append(separator.asciiValue!)
        }
        digits(parts.tm_year + 1900, 4, then: "-")
        digits(parts.tm_mon + 1, 2, then: "-")
        digits(parts.tm_mday, 2, then: "T")
        digits(parts.tm_hour, 2, then: ":")
        digits(parts.tm_min, 2, then: ":")
        digits(parts.tm_sec, 2, then: ".")
        return out
    }

    /// `2026-11-24T10:00:00.123Z` or `2026-11-24T10:00:00Z`; `nil` for anything else.
    package static func date(_ text: String) -> Date? {
        formatters.withLock { $0.withFraction.date(from: text) ?? $0.withoutFraction.date(from: text) }
    }
}
