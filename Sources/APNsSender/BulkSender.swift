import APNsWire
import Utilities
import Foundation
import Synchronization

/// Sends many pushes with a bounded number in flight, and tallies the answers.
package struct BulkSender: Sendable {
    package struct Result: Sendable {
        package let request: PushRequest
        package let outcome: Swift.Result<APNsResponse, SenderError>
    }

    package struct Report: Sendable {
        package var sent = 0
        package var accepted = 0
        package var rejected = 0
        package var unanswered = 0
        /// Of the unanswered, those whose connection died after they were sent: APNs may have them.
        package var interrupted = 0
        package var reasons: [APNsReason: Int] = [:]
        package var seconds: Double = 0
        package var pushesPerSecond: Double { seconds > 0 ? Double(sent) / seconds : 0 }

        mutating func record(_ outcome: Swift.Result<APNsResponse, SenderError>) {
            sent += 1
            switch outcome {
            case .success(let response) where response.isSuccess: accepted += 1
            case .success(let response):
                rejected += 1
                reasons[response.reason ?? APNsReason(rawValue: "HTTP \(response.status)"), default: 0] += 1
            case .failure(let error):
                unanswered += 1
                if error.code == .interrupted { interrupted += 1 }
            }
        }

        mutating func add(_ other: Report) {
            sent += other.sent
            accepted += other.accepted
            rejected += other.rejected
            unanswered += other.unanswered
            interrupted += other.interrupted
            reasons.merge(other.reasons, uniquingKeysWith: +)
        }
    }

    package let client: APNsClient
    package let concurrency: Int

    /// Give every push an `apns-id` of its own (a new UUID), so each answer, log line and failure
    /// can be matched to its push; requests that carry one keep it.
    package let assignAPNsIDs: Bool

    package init(client: APNsClient, concurrency: Int, assignAPNsIDs: Bool = false) {
        self.client = client
        self.concurrency = max(1, concurrency)
        self.assignAPNsIDs = assignAPNsIDs
    }

    /// Sends each request `times` times, `concurrency` at once; `onResult` sees each answer as it
    /// comes (on the connections' event loops, or from the tasks that send again: keep it short).
    ///
    /// First, each connection's event loop keeps its share of the streams full and tallies the
    /// answers itself (``BulkFeeder``: no task per push). Then worker tasks send, with
    /// ``APNsClient/send(_:)``'s retries, the pushes the server refused before processing and any
    /// the connections did not take (a connection that could not be made or closed early).
    package func send(_ requests: [PushRequest], times: Int = 1,
                     onResult: (@Sendable (Result) -> Void)? = nil) async -> Report {
        let total = requests.count * max(1, times)
        let start = ContinuousClock.now
        let claims = BulkClaims(total: total)
        let fed = await client.feed(requests, claims: claims, concurrency: concurrency, assignAPNsIDs: assignAPNsIDs, onResult: onResult)
        var report = fed.report
        let again = Again(fed.again)
        await withTaskGroup(of: Report.self) { group in
            for _ in 0..<min(concurrency, total) {
                group.addTask { [client, assignAPNsIDs] in
                    var partial = Report()
                    while true {
                        var request: PushRequest
                        if let retry = again.next() {
                            request = retry
                        } else if let index = claims.next() {
                            request = requests[index % requests.count]
                            if assignAPNsIDs, request.headers.apnsID == nil { request.headers.apnsID = UUID() }
                        } else {
                            break
                        }
                        let outcome: Swift.Result<APNsResponse, SenderError>
                        do throws(SenderError) { outcome = .success(try await client.send(request)) } catch { outcome = .failure(error) }
                        partial.record(outcome)
                        onResult?(Result(request: request, outcome: outcome))
                    }
                    return partial
                }
            }
            for await partial in group { report.add(partial) }
        }
        let elapsed = ContinuousClock.now - start
        report.seconds = elapsed.inSeconds
        return report
    }
}

/// The pushes to send again, each once.
private final class Again: Sendable {
    private let pending: Mutex<[PushRequest]>
    init(_ requests: [PushRequest]) { pending = Mutex(requests) }
    func next() -> PushRequest? { pending.withLock { $0.popLast() } }
}
