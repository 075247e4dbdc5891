@testable import APNsSender
import NIOCore
import NIOHPACK
import Testing

/// apns-sender's HPACK encoder keeps its own copy of the server's dynamic table; these tests
/// decode what it writes with swift-nio-http2's decoder, which keeps the other copy.
@Suite("apns-sender's HPACK encoder, checked by NIOHPACK's decoder")
struct HPACKRequestEncoderTests {
    static func request(token: String, jwt: String, id: String?, topic: String = "com.example.app") -> [(name: String, value: String)] {
        var fields = [(":method", "POST"), (":scheme", "https"), (":path", "/3/device/\(token)"), (":authority", "api.push.apple.com"),
                      ("authorization", "bearer \(jwt)"), ("apns-push-type", "background"), ("apns-topic", topic), ("apns-priority", "5")]
        if let id { fields.append(("apns-id", id)) }
        fields.append(("content-length", "92"))
        return fields
    }

    @Test("5,000 requests with changing tokens, topics, IDs and table sizes decode to exactly what was sent")
    func roundTrip() throws {
        var encoder = HPACKRequestEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var random = SystemRandomNumberGenerator()
        let jwts = (0..<3).map { n in String(repeating: "eyJhbGciOiJFUzI1NiJ9.\(n)", count: 6) }
        for round in 0..<5_000 {
            if round % 700 == 699 {
                // The server changes SETTINGS_HEADER_TABLE_SIZE; the decoder learns it from the block's size update.
                let size = [0, 256, 1024, 4096, 65536].randomElement(using: &random)!
                encoder.setPeerTableSize(size)
                decoder.maxDynamicTableLength = min(size, 4096)
            }
            let fields = Self.request(token: String(repeating: String(round % 37, radix: 16), count: 8),
                                      jwt: jwts[round / 1_000 % jwts.count],
                                      id: round % 3 == 0 ? "\(round)-0000-4000-8000-000000000000" : nil,
                                      topic: round % 11 == 0 ? "com.example.other\(round % 5)" : "com.example.app")
            var block = ByteBuffer()
            encoder.encode(fields, into: &block)
            let decoded = try decoder.decodeHeaders(from: &block)
            #expect(decoded.map { "\($0.name): \($0.value)" } == fields.map { "\($0.name): \($0.value)" }, "round \(round)")
            #expect(block.readableBytes == 0)
        }
        // Repeats are cheap: a request like the previous one is mostly one-byte indexes.
        var encoderB = HPACKRequestEncoder()
        var first = ByteBuffer(), second = ByteBuffer()
        let fields = Self.request(token: "ab", jwt: jwts[0], id: nil)
        encoderB.encode(fields, into: &first)
        encoderB.encode(fields, into: &second)
        #expect(second.readableBytes == fields.count, "every field indexed: \(second.readableBytes) bytes for \(fields.count) fields")
        #expect(first.readableBytes > 200)
    }
}
