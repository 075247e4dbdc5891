import Foundation
import Synchronization

/// How long the backend took to answer, per route and status: Prometheus histograms for the
/// inspector's `/metrics`. One lock per request, held for a few additions.
package final class RequestMetrics: Sendable {
    /// Upper bounds of the buckets, in seconds (Prometheus' `le`).
    package static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    package struct Key: Hashable, Sendable, Comparable {
        /// The route as the router knows it (`/www.googleapis.com/…/verifyClient`), or `unmatched`.
        package let route: String
        package let status: Int
        package static func < (a: Key, b: Key) -> Bool { (a.route, a.status) < (b.route, b.status) }
    }
    package struct Histogram: Sendable {
        /// Counts per bucket (not cumulative), the last one for above the largest bound.
        package var buckets: [Int] = Array(repeating: 0, count: RequestMetrics.bounds.count + 1)
        package var sum: Double = 0
        package var count: Int = 0

        mutating func add(_ seconds: Double, inBucket bucket: Int) {
            buckets[bucket] += 1
            sum += seconds
            count += 1
        }
    }
    private let histograms = Mutex<[Key: Histogram]>([:])

    package init() {}

    package func observe(route: String, status: Int, seconds: Double) {
        let bucket = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        histograms.withLock { all in
            // In place, with one lookup: a copy taken out and put back would copy the buckets on every request.
            all[Key(route: route, status: status), default: Histogram()].add(seconds, inBucket: bucket)
        }
    }

    package var snapshot: [Key: Histogram] { histograms.withLock { $0 } }
}
