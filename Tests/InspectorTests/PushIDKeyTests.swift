import Foundation
@testable import Inspector
import Testing

/// The inspector keeps what the device side did with a push by its `apns-id`, a lowercase UUID
/// kept as 128 bits; any other text is kept as text. Two IDs must be one key exactly when they
/// are the same text.
@Suite("PushHistory's key for an apns-id")
struct PushIDKeyTests {
    @Test("a lowercase UUID, an uppercase one and other text: equal keys only for equal text")
    func sameTextOnly() {
        let id = "0e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3a1"
        #expect(PushIDKey(id) == PushIDKey(String(id)))
        #expect(PushIDKey(id) != PushIDKey("0e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3a2"))  // the low word
        #expect(PushIDKey(id) != PushIDKey("1e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3a1"))  // the high word
        #expect(PushIDKey(id) != PushIDKey(id.uppercased()))
        #expect(PushIDKey(id.uppercased()) == PushIDKey(id.uppercased()))
        #expect(PushIDKey("p1") == PushIDKey("p1"))
        #expect(PushIDKey("p1") != PushIDKey("p2"))
        // 36 characters with the dashes in place, but not hex: text.
        let notHex = "0e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3ag"
        #expect(PushIDKey(notHex) == PushIDKey(notHex))
        #expect(PushIDKey(notHex) != PushIDKey(id))
        // Dashes elsewhere: text, not the UUID with the same digits.
        #expect(PushIDKey("0e4b7ed31-d5b-4a32-9b49-a4b7f4d0f3a1") != PushIDKey(id))
    }

    @Test("10,000 random apns-ids are 10,000 keys")
    func distinct() {
        let ids = (0..<10_000).map { _ in UUID().uuidString.lowercased() }
        #expect(Set(ids.map(PushIDKey.init)).count == Set(ids).count)
    }
}
