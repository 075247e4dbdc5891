import APNsWire
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/2 connection to APNs (or to the receiver), carrying many pushes as concurrent streams.
/// The HTTP/2 is ``HTTP2ClientHandler``'s: frames on the connection's bytes, no per-stream channels.
///
/// Made at once and connected in the background: pushes handed over meanwhile wait on the
/// connection's event loop and go out right behind the preface, so no task has to wake between
/// "connected" and "push written" (a server's idle timer counts from the preface, and a starved
/// task pool once let a fresh connection idle out before its first push).
final class APNsConnection: Sendable {
    let eventLoop: any EventLoop
    private let channel: EventLoopFuture<Channel>
    private let loopSide: NIOLoopBoundBox<LoopSide>
    private let state: ClientConnectionState
    /// Pushes handed over by tasks, taken by the event loop in batches: one wake-up of the loop
    /// for all the pushes that arrive while it is busy, not one per push.
    private let mailbox = Mutex(Mailbox())
    private struct Mailbox {
        var pushes: [OutgoingPush] = []
        var scheduled = false
    }
    /// What only the event loop touches: the handler once the channel has one, the pushes that
    /// came before it, and why the connection could not be made.
    private struct LoopSide {
        var handler: HTTP2ClientHandler?
        var early: [OutgoingPush] = []
        var failure: SenderError?
    }

    private init(eventLoop: any EventLoop, channel: EventLoopFuture<Channel>, loopSide: NIOLoopBoundBox<LoopSide>,
                 state: ClientConnectionState) {
        self.eventLoop = eventLoop
        self.channel = channel
        self.loopSide = loopSide
        self.state = state
    }

    /// Whether new pushes may go on this connection (true while it is being made).
    var isUsable: Bool { state.usable }
    /// The reason of a GOAWAY the server sent, if any.
    var goAwayReason: APNsReason? { state.goAwayReason }

    /// Starts connecting and returns at once. A connection that cannot be made fails the pushes
    /// given to it with ``SenderError/Code/connect``; one the server closes before they went out
    /// fails them with ``SenderError/Code/connectionClosed`` (not processed, safe to retry).
    static func connect(group: EventLoopGroup, host: String, port: Int, authority: String, sslContext: NIOSSLContext?,
                        serverName: String?, timeout: TimeAmount) -> APNsConnection {
        let loop = group.next()
        let state = ClientConnectionState()
        let loopSide = NIOLoopBoundBox.makeBoxSendingValue(LoopSide(), eventLoop: loop)
        let scheme = sslContext == nil ? "http" : "https"
        let bootstrap = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    let handler = HTTP2ClientHandler(state: state, scheme: scheme, authority: authority,
                                                     behindTLS: sslContext != nil, allocator: channel.allocator)
                    try sync.addHandler(handler)
                    loopSide.value.handler = handler
                    let early = loopSide.value.early
                    loopSide.value.early = []
                    if !early.isEmpty { handler.enqueue(early) }
                }
            }
        let channel = bootstrap.connect(host: host, port: port).hop(to: loop)
        channel.whenFailure { error in
            let failure = SenderError(.connect, "cannot connect to \(host):\(port): \(error)")
            state.retire(because: failure.message)
            loopSide.value.failure = failure
            loopSide.value.handler?.connectFailed(failure)
            let early = loopSide.value.early
            loopSide.value.early = []
            for push in early { push.fail(failure) }
        }
        return APNsConnection(eventLoop: loop, channel: channel, loopSide: loopSide, state: state)
    }

    /// Waits until the connection is made; false if it could not be.
    func established() async -> Bool {
        (try? await channel.get()) != nil
    }

    /// Sends one push and waits for its answer.
    func send(method: String = "POST", path: String, fields: [(name: String, value: String)], payload: [UInt8],
              timeout: TimeAmount) async throws(SenderError) -> APNsResponse {
        let result = await withUnsafeContinuation { (reply: UnsafeContinuation<Result<APNsResponse, SenderError>, Never>) in
            post(OutgoingPush(method: method, path: path, fields: fields, body: payload, reply: .task(reply), timeout: timeout))
        }
        return try result.get()
    }

    private func post(_ push: OutgoingPush) {
        let wake = mailbox.withLock { mailbox -> Bool in
            mailbox.pushes.append(push)
            defer { mailbox.scheduled = true }
            return !mailbox.scheduled
        }
        guard wake else { return }
        eventLoop.execute { [self] in
            let batch = mailbox.withLock { mailbox -> [OutgoingPush] in
                mailbox.scheduled = false
                defer { mailbox.pushes.removeAll(keepingCapacity: true) }
                return mailbox.pushes
            }
            // (The failure first: a handler whose connection could not be made only says "closing".)
            if let failure = loopSide.value.failure {
                for push in batch { push.fail(failure) }
            } else if let handler = loopSide.value.handler {
                handler.enqueue(batch)
            } else {
                loopSide.value.early += batch
            }
        }
    }

    /// Runs `body` on the connection's event loop with its handler (a bulk feeder's pushes go
    /// straight to it from there, with no hop per push); with nil when the connection could not
    /// be made. Call it once ``established()`` has said whether it was.
    func onLoop(_ body: @escaping @Sendable (HTTP2ClientHandler?) -> Void) {
        eventLoop.execute { [loopSide] in body(loopSide.value.handler) }
    }

    /// Closes the connection (once it is made, if it is still being made).
    func close() {
        state.retire()
        channel.whenSuccess { $0.close(promise: nil) }
    }
}
