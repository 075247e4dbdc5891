/// Comparing secrets (codes, tokens, digests) in time that depends only on their lengths, not on
/// where they differ.
package enum ConstantTime {
    /// Whether two strings' UTF-8 bytes are equal.
    package static func equals(_ a: String, _ b: String) -> Bool {
        equals(Array(a.utf8), Array(b.utf8))
    }

    /// Whether two byte strings are equal (derived keys, digests).
    package static func equals(_ x: [UInt8], _ y: [UInt8]) -> Bool {
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
