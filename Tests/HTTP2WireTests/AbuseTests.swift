import HTTP2Wire
import NIOCore
import Testing

/// The known HTTP/2 denial-of-service patterns, each shown to end the connection with GOAWAY
/// ENHANCE_YOUR_CALM (or the code the RFC gives), and each shown to leave a well-behaved peer
/// alone: the same frames at a rate a real client sends them pass. Time is the test's.
/// (`APNsChannelTests/AbuseOverSocketsTests` runs each pattern against a real push-receiver while
/// another client's pushes go on.)
@Suite("HTTP/2 core: denial-of-service patterns")
struct AbuseTests {
    /// Feeds the frames and expects the connection to end with GOAWAY and `code`.
    private func expectGoAway(_ peer: inout Peer, _ frames: [ByteBuffer], _ code: HTTP2Code, sourceLocation: SourceLocation = #_sourceLocation) {
        let events = peer.feed(frames)
        guard case .connectionError(let got, _) = events.last else {
            Issue.record("no connection error after \(frames.count) frames; last events: \(events.suffix(3))", sourceLocation: sourceLocation)
            return
        }
        #expect(got == code, sourceLocation: sourceLocation)
        #expect(peer.written().last.map { $0.kind == .goAway && $0.code == code } == true, sourceLocation: sourceLocation)
        #expect(peer.connection.phase == .failed, sourceLocation: sourceLocation)
    }

    @Test("rapid reset (CVE-2023-44487): the 1,001st stream opened and reset at once ends the connection; at 30 a second it never does")
    func rapidReset() {
        var peer = Peer.server()
        var frames: [ByteBuffer] = []
        for index in 0..<1001 {
            let id = UInt32(2 * index + 1)
            frames += [peer.headers(id, endStream: false), Peer.reset(id)]
        }
        expectGoAway(&peer, frames, .enhanceYourCalm)

        var patient = Peer.server()
        for index in 0..<3000 {
            let id = UInt32(2 * index + 1)
            patient.now += 1_000_000_000 / 30
            let events = patient.feed([patient.headers(id, endStream: false), Peer.reset(id)])
            #expect(events.map(\.description) == ["headers \(id)", "streamReset \(id) 8"])
            if patient.connection.phase == .failed { break }
        }
        #expect(patient.connection.phase == .open)
    }

    @Test("CONTINUATION flood (2024): more than 16 CONTINUATIONs after one HEADERS, or a header block over 64 KiB, is ENHANCE_YOUR_CALM")
    func continuationFlood() {
        var empty = Peer.server()
        let start = Peer.frame(.headers, stream: 1, [0x82])
        expectGoAway(&empty, [start] + Array(repeating: Peer.frame(.continuation, stream: 1, []), count: 17), .enhanceYourCalm)

        var large = Peer.server()
        let filler = Peer.frame(.continuation, stream: 1, [UInt8](repeating: 0x82, count: 16_000))
        expectGoAway(&large, [start] + Array(repeating: filler, count: 5), .enhanceYourCalm)

        var fine = Peer.server()
        let block = fine.block(Peer.request)
        // The same request in a HEADERS and 16 CONTINUATIONs is fine.
        let size = block.count / 17 + 1
        var frames: [ByteBuffer] = []
        for (index, start) in stride(from: 0, to: block.count, by: size).enumerated() {
            let piece = Array(block[start..<min(start + size, block.count)])
            let last = start + size >= block.count
            frames.append(Peer.frame(index == 0 ? .headers : .continuation,
                                     flags: (index == 0 ? HTTP2Flag.endStream : 0) | (last ? HTTP2Flag.endHeaders : 0), stream: 1, piece))
        }
        #expect(frames.count <= 17)
        #expect(fine.feed(frames).map(\.description) == ["headers 1 end"])
    }

    @Test("SETTINGS flood (CVE-2019-9515): the 1,001st SETTINGS at once, or 33 entries in one frame, is ENHANCE_YOUR_CALM")
    func settingsFlood() {
        var peer = Peer.server()
        expectGoAway(&peer, Array(repeating: Peer.settings([(.maxConcurrentStreams, 100)]), count: 1001), .enhanceYourCalm)
        var wide = Peer.server()
        expectGoAway(&wide, [Peer.settings(Array(repeating: (.maxConcurrentStreams, 100), count: 33))], .enhanceYourCalm)
        var paced = Peer.server()
        for _ in 0..<2000 {
            paced.now += 20_000_000
            _ = paced.feed(Peer.settings([(.maxConcurrentStreams, 100)]))
        }
        #expect(paced.connection.phase == .open)
    }

    @Test("PING flood (CVE-2019-9512): the 1,001st PING at once is ENHANCE_YOUR_CALM; one every 20 ms is answered for ever")
    func pingFlood() {
        var peer = Peer.server()
        expectGoAway(&peer, Array(repeating: Peer.ping(), count: 1001), .enhanceYourCalm)
        var paced = Peer.server()
        for _ in 0..<2000 {
            paced.now += 20_000_000
            _ = paced.feed(Peer.ping())
        }
        #expect(paced.connection.phase == .open)
        #expect(paced.written().count == 2000)
    }

    @Test("empty DATA flood (CVE-2019-9518): 101 empty DATA frames in a row is ENHANCE_YOUR_CALM; empty frames between real ones are fine")
    func emptyDataFlood() {
        var peer = Peer.server()
        _ = peer.feed(peer.headers(1, endStream: false))
        expectGoAway(&peer, Array(repeating: Peer.data(1), count: 101), .enhanceYourCalm)
        var mixed = Peer.server()
        _ = mixed.feed(mixed.headers(1, endStream: false))
        for _ in 0..<50 { _ = mixed.feed(Array(repeating: Peer.data(1), count: 50) + [Peer.data(1, [1])]) }
        #expect(mixed.connection.phase == .open)
    }

    @Test("glitches: the 1,001st stream error at once (malformed requests here) is ENHANCE_YOUR_CALM")
    func glitchFlood() {
        var peer = Peer.server()
        var frames: [ByteBuffer] = []
        for index in 0..<1001 {
            frames.append(peer.headers(UInt32(2 * index + 1), [(":method", "GET")]))
        }
        expectGoAway(&peer, frames, .enhanceYourCalm)
    }

    @Test("HPACK: a table size update past the 4,096 bytes announced is COMPRESSION_ERROR; so is a header list past the limit")
    func hpackBounds() {
        var table = Peer.server()
        var update = ByteBuffer()
        HPACK.writeInteger(1 << 20, prefixBits: 5, pattern: 0x20, into: &update)
        update.writeBytes([0x83, 0x87, 0x84])
        expectGoAway(&table, [Peer.frame(.headers, flags: HTTP2Flag.endHeaders | HTTP2Flag.endStream, stream: 1, Array(update.readableBytesView))], .compressionError)

        var configuration = Peer.apnsLike
        configuration.maximumHeaderListSize = 1000
        var list = Peer.server(configuration)
        expectGoAway(&list, [list.headers(1, Peer.request + [("x-big", String(repeating: "a", count: 2000))])], .compressionError)
    }

    @Test("a repeated header block is decoded once, and not reused once the table changes")
    func headMemo() {
        var peer = Peer.server()
        let first = peer.headers(1, Peer.request + [("x-n", "1")])
        let events = peer.feed(first)
        guard case .headers(_, let head, _) = events.first else { Issue.record("\(events)"); return }
        #expect(head.field("x-n") == "1")
        // The encoder now refers to its table: the same fields give a shorter, table-pure block.
        let second = peer.headers(3, Peer.request + [("x-n", "1")])
        let third = peer.headers(5, Peer.request + [("x-n", "1")])
        for (frame, id) in [(second, UInt32(3)), (third, 5)] {
            guard case .headers(id, let repeated, true) = peer.feed(frame).first else { Issue.record("stream \(id)"); return }
            #expect(repeated.field("x-n") == "1")
            #expect(repeated.path == "/3/device/abc")
        }
        // A new value changes the table; the same bytes as before must now be decoded again.
        _ = peer.feed(peer.headers(7, Peer.request + [("x-n", "2")]))
        guard case .headers(9, let after, true) = peer.feed(peer.headers(9, Peer.request + [("x-n", "2")])).first else { Issue.record("stream 9"); return }
        #expect(after.field("x-n") == "2")
    }
}
