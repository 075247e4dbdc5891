import APNsWire
import Foundation

/// Sends many pushes with a bounded number in flight, and tallies the answers.
public struct BulkSender: Sendable {
    public struct Result: Sendable {
        public let request: PushRequest
        public let outcome: Swift.Result<APNsResponse, SenderError>
    }

    public struct Report: Sendable {
        public var sent = 0
        public var accepted = 0
        public var rejected = 0
        public var unanswered = 0
        /// Of the unanswered, those whose connection died after they were sent: APNs may have them.
        public var interrupted = 0
        public var reasons: [APNsReason: Int] = [:]
        public var seconds: Double = 0
        public var pushesPerSecond: Double { seconds > 0 ? Double(sent) / seconds : 0 }
    }

    public let client: APNsClient
    public let concurrency: Int

    /// Give every push an `apns-id` of its own (a new UUID), so each answer, log line and failure
    /// can be matched to its push; requests that carry one keep it.
    public let assignAPNsIDs: Bool

    public init(client: APNsClient, concurrency: Int, assignAPNsIDs: Bool = false) {
        self.client = client
        self.concurrency = max(1, concurrency)
        self.assignAPNsIDs = assignAPNsIDs
    }

    /// Sends each request `times` times, `concurrency` at once; `onResult` sees each answer as it comes.
    public func send(_ requests: [PushRequest], times: Int = 1,
                     onResult: (Result) -> Void = { _ in }) async -> Report {
        let total = requests.count * max(1, times)
        let start = ContinuousClock.now
        var report = Report()
        await withTaskGroup(of: Result.self) { group in
            var next = 0
            func addNext() {
                guard next < total else { return }
                var request = requests[next % requests.count]
                if assignAPNsIDs, request.headers.apnsID == nil { request.headers.apnsID = UUID() }
                next += 1
                group.addTask { [client] in
                    do throws(SenderError) { return Result(request: request, outcome: .success(try await client.send(request))) } catch {
                        return Result(request: request, outcome: .failure(error))
                    }
                }
            }
            for _ in 0..<min(concurrency, total) { addNext() }
            while let result = await group.next() {
                report.sent += 1
                switch result.outcome {
                case .success(let response) where response.isSuccess: report.accepted += 1
                case .success(let response):
                    report.rejected += 1
                    report.reasons[response.reason ?? APNsReason(rawValue: "HTTP \(response.status)"), default: 0] += 1
                case .failure(let error):
                    report.unanswered += 1
                    if error.code == .interrupted { report.interrupted += 1 }
                }
                onResult(result)
                addNext()
            }
        }
        let elapsed = ContinuousClock.now - start
        report.seconds = elapsed.inSeconds
        return report
    }
}
