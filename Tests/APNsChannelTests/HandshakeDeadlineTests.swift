@testable import APNsReceiver
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// The handshake deadline counts the client's turn only (HostileClientTests' flood once cut a
/// real sender's handshake on a busy machine: the receiver was slow, not the client). On an
/// EmbeddedChannel, whose loop's time moves only when told.
@Suite("The handshake deadline: the client's turn, not the receiver's")
struct HandshakeDeadlineTests {
    final class Expiries: Sendable {
        let count = Mutex(0)
    }

    /// A channel whose first handler is a 3-second deadline, connected.
    static func channel() throws -> (EmbeddedChannel, HandshakeDeadline, Expiries) {
        let expiries = Expiries()
        let deadline = HandshakeDeadline(timeout: .seconds(3)) { expiries.count.withLock { $0 += 1 } }
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(deadline)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50_000)).wait()
        return (channel, deadline, expiries)
    }

    static func flight(_ channel: EmbeddedChannel) throws {
        try channel.writeAndFlush(ByteBuffer(bytes: [0x16, 0x03, 0x03])).wait()
        _ = try channel.readOutbound(as: ByteBuffer.self)
    }

    @Test("a client that says nothing, or half a ClientHello, is closed when its time runs out; its bytes do not restart it")
    func silentAndTorn() throws {
        let (channel, _, expiries) = try Self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        try channel.writeInbound(ByteBuffer(bytes: [0x16, 0x03, 0x01, 0x02, 0x00]))  // Half a ClientHello.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
        #expect(expiries.count.withLock { $0 } == 1)
    }

    @Test("each flight the receiver sends gives the client its full time again, however late the receiver was")
    func receiverFlightsRestartIt() throws {
        let (channel, _, expiries) = try Self.channel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2_900))  // A busy receiver answers the ClientHello late.
        try Self.flight(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2_900))
        try Self.flight(channel)  // And its SETTINGS after the client's Finished.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2_999))
        #expect(channel.isActive && expiries.count.withLock { $0 } == 0)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive && expiries.count.withLock { $0 } == 1)
    }

    @Test("at most eight flights restart it: a client cannot hold a socket by eliciting answers")
    func flightsAreBounded() throws {
        let (channel, _, expiries) = try Self.channel()
        for _ in 0..<HandshakeDeadline.maximumFlights {
            channel.embeddedEventLoop.advanceTime(by: .seconds(2))
            try Self.flight(channel)
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        try Self.flight(channel)  // The ninth restarts nothing: one second is left of the eighth's three.
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive && expiries.count.withLock { $0 } == 1)
    }

    @Test("once the client's SETTINGS arrive the deadline is over and the handler leaves the pipeline")
    func handshakeDone() throws {
        let (channel, deadline, expiries) = try Self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        deadline.handshakeDone()
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.context(handlerType: HandshakeDeadline.self) }
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive && expiries.count.withLock { $0 } == 0)
        _ = try channel.finish()
    }
}
