/// Many operations, a bounded number at a time: what the flow and fleet benchmarks share.
enum ConcurrentRun {
    /// Runs `operation(index)` for every index below `count`, at most `concurrency` at once, each
    /// starting as another ends: each success's milliseconds, the failures, and the first's words.
    static func run(count: Int, concurrency: Int, _ operation: @escaping @Sendable (Int) async throws -> Void) async
        -> (latencies: [Double], failures: Int, firstFailure: String?) {
        let clock = ContinuousClock()
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        var failures = 0
        var firstFailure: String?
        await withTaskGroup(of: Result<Double, any Error>.self) { group in
            var next = 0
            func addNext() {
                guard next < count else { return }
                let index = next
                next += 1
                group.addTask {
                    let began = clock.now
                    do {
                        try await operation(index)
                        return .success((clock.now - began).inSeconds * 1000)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            for _ in 0..<min(concurrency, count) { addNext() }
            while let result = await group.next() {
                switch result {
                case .success(let milliseconds): latencies.append(milliseconds)
                case .failure(let error):
                    failures += 1
                    if firstFailure == nil { firstFailure = "\(error)" }
                }
                addNext()
            }
        }
        return (latencies, failures, firstFailure)
    }

    /// The `p` percentile (0…1) of sorted `values` (nearest rank); 0 for none.
    static func percentile(_ p: Double, of values: [Double]) -> Double {
        values.isEmpty ? 0 : values[min(values.count - 1, max(0, Int((p * Double(values.count)).rounded(.up)) - 1))]
    }
}
