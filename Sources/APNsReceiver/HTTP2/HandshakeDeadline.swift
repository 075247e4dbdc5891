import NIOCore

/// Closes a new connection whose client holds its turn too long before its HTTP/2 preface: a
/// socket that says nothing, half a ClientHello, a TLS handshake left unfinished.
///
/// The time counts the client's turn, not the receiver's: it starts when the connection is
/// accepted and starts again each time the receiver sends a flight (its TLS ServerHello…Finished,
/// its SETTINGS), so a receiver that is merely slow (a busy machine, thousands of idle sockets
/// to close) never cuts a real provider's handshake; a client that trickles bytes without
/// finishing its part gains nothing, since only the receiver's writes restart the clock, and at
/// most ``maximumFlights`` of them do, so no client can hold a socket by eliciting answers.
/// It sits first in the pipeline (next to the socket), where it sees the TLS records themselves.
/// ``APNsConnectionHandler`` calls ``finish()`` once the client's SETTINGS arrive.
final class HandshakeDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How many of the receiver's flights restart the client's time: TLS 1.2 has two, TLS 1.3
    /// one (and session tickets), HTTP/2 one (the server's SETTINGS); the rest is slack.
    static let maximumFlights = 8

    private let timeout: TimeAmount
    private let expired: @Sendable () -> Void
    private var deadline: Scheduled<Void>?
    private var flights = 0
    private var finished = false
    private var context: ChannelHandlerContext?

    /// - Parameter expired: told when a client's turn ran out, before the connection is closed.
    init(timeout: TimeAmount, expired: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.expired = expired
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        arm(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        guard !finished, flights < Self.maximumFlights else { return }
        flights += 1
        arm(context)
    }

    /// No deadline from now on.
    func finish() {
        finished = true
        deadline?.cancel()
        deadline = nil
    }

    /// The client sent its preface and SETTINGS: no deadline from now on (idle connections are
    /// the idle timeout's), and the handler leaves the pipeline, so the connection's reads and
    /// writes no longer pass through it.
    func handshakeDone() {
        finish()
        guard let context else { return }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard !finished else { return }
        deadline?.cancel()
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) { handler.value.expire() }
    }

    private func expire() {
        guard !finished, let context else { return }
        finish()
        expired()
        context.close(promise: nil)
    }
}
