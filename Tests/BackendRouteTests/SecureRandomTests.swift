import RS256
import Testing

/// libcrypto's generator, as the backend draws its secrets and tokens from it.
@Suite("SecureRandom (libcrypto's RAND_bytes)")
struct SecureRandomTests {
    @Test("bytes of the length asked for, different every draw, every byte value about as often")
    func bytes() {
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(1).count == 1)
        let draws = (0..<64).map { _ in SecureRandom.bytes(32) }
        #expect(Set(draws).count == 64)
        // 256 KiB: each of the 256 values is expected 1,024 times; a chi-square over 255 degrees
        // of freedom past 400 happens by chance about once in ten million runs.
        var counts = [Int](repeating: 0, count: 256)
        for byte in SecureRandom.bytes(262_144) { counts[Int(byte)] += 1 }
        let chiSquare = counts.reduce(0.0) { $0 + Double(($1 - 1024) * ($1 - 1024)) / 1024 }
        #expect(chiSquare < 400, "\(chiSquare)")
    }

    @Test("the generator's numbers in range, every value of a small range drawn")
    func generator() {
        var generator = SecureRandomGenerator()
        var seen = Set<Int>()
        for _ in 0..<2_000 {
            let value = Int.random(in: 0..<10, using: &generator)
            #expect((0..<10).contains(value))
            seen.insert(value)
        }
        #expect(seen.count == 10)
        #expect(generator.next() != generator.next())
    }
}
