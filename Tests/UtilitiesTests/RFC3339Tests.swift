import Foundation
import Testing
import Utilities

@Suite("RFC 3339 times")
struct RFC3339Tests {
    /// What `ISO8601DateFormatter` with internet date-time and fractional seconds writes and reads,
    /// which the logs and the services' `enrolledAt` were written with before.
    @Test("written as ISO8601DateFormatter writes them (milliseconds, Z); read with or without the fraction, and nothing else")
    func sameAsFormatter() {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for seconds in [0, 1_795_493_039.55, 1_795_493_039.001, 1_700_000_000, 4_102_444_799.999, 951_782_400.5] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(RFC3339.string(date) == reference.string(from: date))
            #expect(RFC3339.date(RFC3339.string(date)).map { abs($0.timeIntervalSince(date)) < 0.001 } == true)
        }
        // Random times, and fractions at the rounding edges, from 1970 to 2100 and before 1970.
        var random = SplitMix(seed: 3339)
        var times: [Double] = [-0.0005, -1.5, -86_400.0004, 0.0005, 0.0015, 59.9995, 86_399.9996, 1_795_493_039.0005]
        for _ in 0..<2_000 { times.append(Double(random.next() % 4_102_444_800) + Double(random.next() % 10_000) / 10_000) }
        for _ in 0..<200 { times.append(-Double(random.next() % 2_000_000_000) - Double(random.next() % 1_000) / 1_000) }
        for seconds in times {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(RFC3339.string(date) == reference.string(from: date), "\(seconds)")
        }
        #expect(RFC3339.date("2026-11-24T10:00:00Z") == Date(timeIntervalSince1970: 1_795_514_400))
        #expect(RFC3339.date("2026-11-24T10:00:00.250Z") == Date(timeIntervalSince1970: 1_795_514_400.25))
        #expect(RFC3339.date("yesterday") == nil)
        #expect(RFC3339.date("2026-11-24") == nil)
    }
}
