import Synchronization

/// Reads of a store's latest state, shared: a caller that arrives while a read is under way
/// waits for the next one, which starts after that one (so it sees everything committed before
/// the caller arrived), and every caller waiting when a read starts shares it. A flood of callers
/// costs one read per round trip, not one each.
package final class CoalescedReads<Failure: Error>: Sendable {
    private typealias Waiter = CheckedContinuation<Result<Void, Failure>, Never>
    private let rounds = Mutex<(waiting: [Waiter], running: Bool)>(([], false))

    package init() {}

    /// Returns once a read that started after this call has ended, with its result.
    /// - Parameter read: one read (every caller passes the same); its result goes to every caller
    ///   that shared it.
    package func run(_ read: @escaping @Sendable () async throws(Failure) -> Void) async throws(Failure) {
        let result = await withCheckedContinuation { (waiter: Waiter) in
            let starts = rounds.withLock { rounds -> Bool in
                rounds.waiting.append(waiter)
                guard !rounds.running else { return false }
                rounds.running = true
                return true
            }
            if starts { Task { await self.readRounds(read) } }
        }
        try result.get()
    }

    /// Reads for the callers waiting when each read starts, until none is left.
    private func readRounds(_ read: @Sendable () async throws(Failure) -> Void) async {
        while true {
            let waiters = rounds.withLock { rounds -> [Waiter] in
                defer { rounds.waiting.removeAll() }
                if rounds.waiting.isEmpty { rounds.running = false }
                return rounds.waiting
            }
            if waiters.isEmpty { return }
            let result: Result<Void, Failure>
            do throws(Failure) { try await read(); result = .success(()) } catch { result = .failure(error) }
            for waiter in waiters { waiter.resume(returning: result) }
        }
    }
}
