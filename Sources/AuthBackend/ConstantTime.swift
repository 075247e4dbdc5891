/// Compares two secrets in time that depends only on their lengths, not on where they differ.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    constantTimeEquals(Array(a.utf8), Array(b.utf8))
}

/// ``constantTimeEquals(_:_:)`` for bytes (derived keys, digests).
func constantTimeEquals(_ x: [UInt8], _ y: [UInt8]) -> Bool {
    var difference = UInt8(x.count == y.count ? 0 : 1)
    for index in 0..<max(x.count, y.count) {
        difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
    }
    return difference == 0
}
