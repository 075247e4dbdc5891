/// How much of the known HTTP/2 denial-of-service patterns a connection puts up with before it
/// says GOAWAY ENHANCE_YOUR_CALM and closes. Each limit is per connection, so one abusive peer
/// loses its own connection and every other connection goes on.
///
/// The defaults follow nghttp2 (the reference server the benchmarks compare with), which a real
/// provider never comes near:
/// - rapid reset (CVE-2023-44487): streams the peer resets, a bucket of 1,000 refilled at 33 a
///   second (nghttp2's `stream_reset_burst` and `stream_reset_rate`);
/// - glitches: frames that break a stream's rules (DATA on a closed stream, a malformed request,
///   a stream that depends on itself…), the same bucket (nghttp2 1.62's `glitch_rate_limit`;
///   swift-nio-http2's glitches monitor counts the same things);
/// - SETTINGS and PING floods (CVE-2019-9515, CVE-2019-9512): frames that each oblige an ACK, a
///   bucket of 1,000 refilled at 100 a second; and at most 32 entries in one SETTINGS frame
///   (nghttp2's `max_settings`);
/// - empty DATA frame floods (CVE-2019-9518): 100 empty DATA frames in a row without END_STREAM;
/// - CONTINUATION floods (2024, CVE-2024-27316 and kin): at most 16 CONTINUATION frames after one
///   HEADERS; the header block's size is limited by ``HTTP2Connection/Configuration/maximumHeaderBlock``;
/// - HPACK: the decoder's dynamic table never grows past the SETTINGS_HEADER_TABLE_SIZE this side
///   announced (a larger size update is a COMPRESSION_ERROR), and a header list past
///   ``HTTP2Connection/Configuration/maximumHeaderListSize`` is refused the same way.
package struct HTTP2AbuseLimits: Sendable {
    package var resets = HTTP2RateLimit(burst: 1000, perSecond: 33)
    package var glitches = HTTP2RateLimit(burst: 1000, perSecond: 33)
    package var controlFrames = HTTP2RateLimit(burst: 1000, perSecond: 100)
    package var maximumSettingsEntries = 32
    package var maximumSequentialEmptyData = 100
    package var maximumContinuations = 16

    package init() {}
}

/// A token bucket: `burst` events at once, then `perSecond` more each second.
package struct HTTP2RateLimit: Sendable {
    package var burst: Int
    package var perSecond: Int

    package init(burst: Int, perSecond: Int) {
        self.burst = burst
        self.perSecond = perSecond
    }
}

/// The bucket's state. Time is whatever monotonic nanoseconds the connection is given.
struct TokenBucket {
    private let limit: HTTP2RateLimit
    private var tokens: Double
    private var last: UInt64?

    init(_ limit: HTTP2RateLimit) {
        self.limit = limit
        self.tokens = Double(limit.burst)
    }

    /// Takes one token; false when the bucket is empty.
    mutating func take(now: UInt64) -> Bool {
        if let last, now > last {
            tokens = min(Double(limit.burst), tokens + Double(now - last) / 1e9 * Double(limit.perSecond))
        }
        last = max(last ?? now, now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
