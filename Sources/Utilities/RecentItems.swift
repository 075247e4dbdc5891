/// The newest `capacity` items of a stream, oldest first: a ring, so that keeping one more item
/// costs the same however many are kept (an array's `removeFirst` moves every item left; at a
/// push receiver's rate that was a tenth of its time).
package struct RecentItems<Element> {
    package let capacity: Int
    private var storage: [Element] = []
    /// Where the oldest item is, once the ring is full.
    private var start = 0

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
        storage.reserveCapacity(min(self.capacity, 1024))
    }

    /// Keeps `item` as the newest.
    /// - Returns: the oldest item, when `item` took its place (the ring was full).
    @discardableResult
    package mutating func append(_ item: Element) -> Element? {
        guard storage.count == capacity else {
            storage.append(item)
            return nil
        }
        let evicted = storage[start]
        storage[start] = item
        start = (start + 1) % capacity
        return evicted
    }

    /// The items, oldest first.
    package var all: [Element] { Array(storage[start...] + storage[..<start]) }
    package var last: Element? { storage.isEmpty ? nil : storage[(start + storage.count - 1) % storage.count] }
    package var count: Int { storage.count }
}

extension RecentItems: Sendable where Element: Sendable {}
