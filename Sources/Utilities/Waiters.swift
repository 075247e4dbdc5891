/// Tasks waiting for a value to meet their condition ("at least 2 sleepers", "no device left"),
/// kept by the owner of the value inside its lock or actor: ``add(_:_:)`` under the lock with the
/// value as it is, ``ready(for:)`` under the lock after each change, the continuations resumed
/// after the lock is let go. One piece of code for every "wake me when the count reaches N".
package struct Waiters<Value>: Sendable {
    private var entries: [(condition: @Sendable (Value) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    package init() {}

    /// Keeps `continuation` until `condition` holds; returns false (keeping nothing) when it holds
    /// for `value` already, and the caller resumes it at once.
    package mutating func add(_ condition: @escaping @Sendable (Value) -> Bool, _ continuation: CheckedContinuation<Void, Never>,
                             now value: Value) -> Bool {
        if condition(value) { return false }
        entries.append((condition, continuation))
        return true
    }

    /// The continuations whose condition `value` meets, no longer kept: resume them.
    package mutating func ready(for value: Value) -> [CheckedContinuation<Void, Never>] {
        guard !entries.isEmpty else { return [] }
        var met: [CheckedContinuation<Void, Never>] = []
        entries.removeAll { entry in
            guard entry.condition(value) else { return false }
            met.append(entry.continuation)
            return true
        }
        return met
    }
}
