import APNsWire
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/2 connection to APNs (or to the receiver), carrying many pushes as concurrent streams.
/// The HTTP/2 is ``HTTP2ClientHandler``'s: frames on the connection's bytes, no per-stream channels.
final class APNsConnection: Sendable {
    let channel: Channel
    private let handler: NIOLoopBound<HTTP2ClientHandler>
    private let state: ClientConnectionState
    /// Pushes handed over by tasks, taken by the event loop in batches: one wake-up of the loop
    /// for all the pushes that arrive while it is busy, not one per push.
    private let mailbox = Mutex(Mailbox())
    private struct Mailbox {
        var pushes: [OutgoingPush] = []
        var scheduled = false
    }

    private init(channel: Channel, handler: NIOLoopBound<HTTP2ClientHandler>, state: ClientConnectionState) {
        self.channel = channel
        self.handler = handler
        self.state = state
    }

    /// Whether new pushes may go on this connection.
    var isUsable: Bool { channel.isActive && state.usable }
    /// The reason of a GOAWAY the server sent, if any.
    var goAwayReason: APNsReason? { state.goAwayReason }

    static func connect(group: EventLoopGroup, host: String, port: Int, authority: String, sslContext: NIOSSLContext?,
                        serverName: String?, timeout: TimeAmount) async throws(SenderError) -> APNsConnection {
        let state = ClientConnectionState()
        let scheme = sslContext == nil ? "http" : "https"
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    try sync.addHandler(HTTP2ClientHandler(state: state, scheme: scheme, authority: authority, allocator: channel.allocator))
                }
            }
        let channel: Channel
        do { channel = try await bootstrap.connect(host: host, port: port).get() } catch {
            throw SenderError(.connect, "cannot connect to \(host):\(port): \(error)")
        }
        let handler: NIOLoopBound<HTTP2ClientHandler>
        do {
            handler = try await channel.eventLoop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self), eventLoop: channel.eventLoop)
            }.get()
        } catch {
            // A server that closed at once (an idle timeout, a GOAWAY) leaves no pipeline to find:
            // nothing was sent, so the push may go again.
            channel.close(promise: nil)
            let why = state.closedBecause ?? "closed by the server"
            throw SenderError(.connectionClosed, "the connection closed while HTTP/2 was being set up (\(why)): not processed, safe to retry")
        }
        return APNsConnection(channel: channel, handler: handler, state: state)
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
        let handler = self.handler
        channel.eventLoop.execute { [self] in
            let batch = mailbox.withLock { mailbox -> [OutgoingPush] in
                mailbox.scheduled = false
                defer { mailbox.pushes.removeAll(keepingCapacity: true) }
                return mailbox.pushes
            }
            handler.value.enqueue(batch)
        }
    }

    /// Runs `body` on the connection's event loop with its handler (a bulk feeder's pushes go
    /// straight to it from there, with no hop per push).
    func onLoop(_ body: @escaping @Sendable (HTTP2ClientHandler) -> Void) {
        let handler = self.handler
        channel.eventLoop.execute { body(handler.value) }
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    func close() async {
        try? await channel.close()
    }
}
