import Foundation
@testable import PostgresStores
import Testing
import Utilities

/// The backoff between failed connects, as a value (ReconnectBackoff): what a session and an
/// event loop's connection both follow.
@Suite("A store's reconnect backoff")
struct ReconnectBackoffTests {
    @Test("no wait before a failure; 0.1 s after the first, doubling to 5 s; the cause and the wait said; a success forgets it")
    func doubling() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var backoff = ReconnectBackoff()
        #expect(backoff.refusal(at: start) == nil)
        backoff.failed("connection refused", at: start)
        #expect(backoff.refusal(at: start.addingTimeInterval(0.05)) == "unreachable (connection refused); next attempt within 0.1 s")
        #expect(backoff.refusal(at: start.addingTimeInterval(0.1)) == nil)
        var waits: [String] = []
        for _ in 0..<7 {
            backoff.failed("connection refused", at: start)
            waits.append(backoff.refusal(at: start) ?? "none")
        }
        #expect(waits.map { $0.components(separatedBy: "within ").last ?? "" } == ["0.2 s", "0.4 s", "0.8 s", "1.6 s", "3.2 s", "5.0 s", "5.0 s"])
        let reconnected = backoff.succeeded()
        #expect(reconnected, "a success after failures is a reconnection")
        #expect(backoff.refusal(at: start) == nil)
        let again = backoff.succeeded()
        #expect(!again)
    }
}
