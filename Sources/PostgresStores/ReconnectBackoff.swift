import Foundation

/// When a connection to the store may be tried again after connects failed: 0.1 s after the
/// first failure, doubling to 5 s. Calls in between fail at once with the last cause, so a
/// database that is down is not hammered and no caller waits for it. A value, for the sessions
/// and the event loops' connections alike.
struct ReconnectBackoff: Sendable {
    private var last: (at: Date, wait: TimeInterval, cause: String)?

    /// Why no connect may be tried at `now` (the last cause, and the wait), or nil.
    func refusal(at now: Date) -> String? {
        guard let last, now < last.at.addingTimeInterval(last.wait) else { return nil }
        return "unreachable (\(last.cause)); next attempt within \(last.wait) s"
    }

    /// A connect failed at `now` for `cause`: the wait doubles (0.1 s the first time, 5 s at most).
    mutating func failed(_ cause: String, at now: Date) {
        last = (now, min((last?.wait ?? 0.05) * 2, 5), cause)
    }

    /// A connect succeeded: true when one had failed before it (a reconnection, to log).
    mutating func succeeded() -> Bool {
        defer { last = nil }
        return last != nil
    }
}
