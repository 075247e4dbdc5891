import HummingbirdCore
import Logging
import NIOCore
import NIOPosix

/// A server's connections whose tasks run on their channel's event loop (``EventLoopExecutor``).
///
/// Hummingbird runs each connection in a Swift task on the global executor: a request read on
/// the loop resumes that task on another thread, and its answer goes back to the loop, two
/// thread hand-offs per exchange besides the client's. Bound to its loop, the connection's task
/// reads, calls the handler and writes where the bytes are. The backend serves this way, on
/// ``HandlerEventLoops/shared``.
struct EventLoopBoundChannel<Base: HTTPChannelHandler>: ServerChildChannel, HTTPChannelHandler {
    typealias Value = Base.Value
    let base: Base

    var responder: HTTPChannelHandler.Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger)
    }

    func handle(value: Base.Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopExecutor.of(value.channel.eventLoop)) {
            await base.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 whose connections' tasks run on their event loops (``EventLoopBoundChannel``).
    package static func http1OnEventLoops() -> HTTPServerBuilder {
        .init { responder in EventLoopBoundChannel(base: HTTP1Channel(responder: responder)) }
    }
}

/// The event loops of servers whose handlers run on them (``HTTPServerBuilder/http1OnEventLoops()``):
/// apart from SwiftNIO's singleton group, which the HTTP clients, push-receiver and apns-sender use
/// in the same process, so a handler's CPU work (an RS256 signature, JSON, the backend's actor)
/// never holds up their reads. Twice as many loops as cores: a connection stays on its loop, and with
/// one loop per core a loop with queued work left the other core idle (10,000 sign-ins, `authsim bench
/// flows`: as much wall time as with no binding at all); with two per core the kernel spreads them.
/// Made on first use and kept for the process's life, as the singleton is.
package enum HandlerEventLoops {
    package static let shared: any EventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2 * System.coreCount)
}
