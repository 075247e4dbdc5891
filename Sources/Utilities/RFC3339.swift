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

    /// Written by hand, as the formatter writes it (`RFC3339Tests` holds them side by side): the
    /// formatter under its lock cost a sign-in's every timestamp a lock and ICU's formatting.
    public static func string(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) < 1e15 else { return formatters.withLock { $0.withFraction.string(from: date) } }
        let whole = Int64(milliseconds)
        var seconds = time_t(whole >= 0 ? whole / 1000 : (whole - 999) / 1000)
        let millis = Int(whole - Int64(seconds) * 1000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil, parts.tm_year + 1900 >= 0, parts.tm_year + 1900 <= 9999 else {
            return formatters.withLock { $0.withFraction.string(from: date) }
        }
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); out.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2); out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); out.append(UInt8(ascii: "."))
        digits(millis, 3); out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `2026-11-24T10:00:00.123Z` or `2026-11-24T10:00:00Z`; `nil` for anything else.
    public static func date(_ text: String) -> Date? {
        formatters.withLock { $0.withFraction.date(from: text) ?? $0.withoutFraction.date(from: text) }
    }
}
