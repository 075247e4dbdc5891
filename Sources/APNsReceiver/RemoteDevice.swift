import APNsWire
import Utilities
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A push as a device in another process receives it from the ``DeviceGateway``.
public struct RemotePush: Sendable {
    public let apnsID: String
    public let bundleID: String
    public let pushType: String
    public let environment: APNsEnvironment
    /// The payload, as JSON bytes.
    public let payload: [UInt8]
}

/// A simulated device in this process, linked to a push-receiver in another one through its
/// ``DeviceGateway``: registers for a token, then keeps the notification stream open.
public final class RemoteDevice: Sendable {
    public let token: DeviceToken
    public let environment: APNsEnvironment
    private let channel: Channel
    private let group: MultiThreadedEventLoopGroup

    private init(token: DeviceToken, environment: APNsEnvironment, channel: Channel, group: MultiThreadedEventLoopGroup) {
        self.token = token
        self.environment = environment
        self.channel = channel
        self.group = group
    }

    /// Asks the gateway for a token for `bundleID` in `environment` (as `registerForRemoteNotifications` does).
    public static func register(gatewayHost: String, gatewayPort: Int, environment: APNsEnvironment,
                                bundleID: String) async throws(ReceiverError) -> DeviceToken {
        let body = "{\"environment\":\"\(environment.rawValue)\",\"bundleID\":\(CompactJSON.string(bundleID))}"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { Task { try? await group.shutdownGracefully() } }
        let promise = group.next().makePromise(of: [UInt8].self)
        let channel = try await open(group: group, host: gatewayHost, port: gatewayPort, handler: LineCollector(onLine: nil, done: promise))
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/devices")
        head.headers = HTTPHeaders([("host", gatewayHost), ("content-type", "application/json"),
                                    ("content-length", String(body.utf8.count)), ("connection", "close")])
        send(head, body: body, on: channel)
        let answer: [UInt8]
        do { answer = try await promise.futureResult.get() } catch {
            throw ReceiverError(.configuration, "the device gateway at \(gatewayHost):\(gatewayPort) did not answer: \(error)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(answer))) as? [String: Any],
              let token = (object["token"] as? String).flatMap(DeviceToken.init(hex:))
        else { throw ReceiverError(.configuration, "the device gateway refused: \(String(decoding: answer, as: UTF8.self))") }
        return token
    }

    /// Opens the notification stream for `token`; returns once the gateway says it is connected.
    public static func connect(gatewayHost: String, gatewayPort: Int, token: DeviceToken, environment: APNsEnvironment,
                               onPush: @escaping @Sendable (RemotePush) -> Void) async throws(ReceiverError) -> RemoteDevice {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connected = OncePromise(group.next().makePromise(of: Void.self))
        let collector = LineCollector(onLine: { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else { return }
            if object["connected"] as? Bool == true {
                connected.succeed(())
                return
            }
            guard let payload = object["payload"],
                  let bytes = try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]) else { return }
            onPush(RemotePush(apnsID: object["apns-id"] as? String ?? "", bundleID: object["bundle-id"] as? String ?? "",
                              pushType: object["push-type"] as? String ?? "",
                              environment: APNsEnvironment(rawValue: object["environment"] as? String ?? "") ?? environment,
                              payload: Array(bytes)))
        }, done: nil)
        let channel: Channel
        do {
            channel = try await open(group: group, host: gatewayHost, port: gatewayPort, handler: collector)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/devices/\(environment.rawValue)/\(token.hex)/notifications")
        head.headers = HTTPHeaders([("host", gatewayHost)])
        send(head, body: nil, on: channel)
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) {
            connected.fail(ReceiverError(.configuration, "the device gateway did not confirm the stream"))
        }
        do { try await connected.future.get() } catch {
            try? await channel.close()
            try? await group.shutdownGracefully()
            throw ReceiverError(.configuration, "cannot open the notification stream: \(error)")
        }
        timeout.cancel()
        return RemoteDevice(token: token, environment: environment, channel: channel, group: group)
    }

    public func disconnect() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    private static func open(group: EventLoopGroup, host: String, port: Int, handler: LineCollector) async throws(ReceiverError) -> Channel {
        let bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }
        do { return try await bootstrap.connect(host: host, port: port).get() } catch {
            throw ReceiverError(.configuration, "cannot reach the device gateway at \(host):\(port): \(error)")
        }
    }

    private static func send(_ head: HTTPRequestHead, body: String?, on channel: Channel) {
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body {
            var buffer = channel.allocator.buffer(capacity: body.utf8.count)
            buffer.writeString(body)
            channel.write(HTTPClientRequestPart.body(.byteBuffer(buffer)), promise: nil)
        }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }
}

/// Splits a response body into lines (for the stream), or collects it whole (for one answer).
private final class LineCollector: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPClientResponsePart
    private let onLine: (@Sendable ([UInt8]) -> Void)?
    private let done: EventLoopPromise<[UInt8]>?
    private let buffer = Mutex<[UInt8]>([])
    private let finished = Mutex(false)

    init(onLine: (@Sendable ([UInt8]) -> Void)?, done: EventLoopPromise<[UInt8]>?) {
        self.onLine = onLine
        self.done = done
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: break
        case .body(let bytes):
            let lines = buffer.withLock { pending -> [[UInt8]] in
                pending.append(contentsOf: bytes.readableBytesView)
                guard onLine != nil else { return [] }
                var lines: [[UInt8]] = []
                while let newline = pending.firstIndex(of: 0x0A) {
                    lines.append(Array(pending[..<newline]))
                    pending.removeSubrange(...newline)
                }
                return lines
            }
            for line in lines { onLine?(line) }
        case .end:
            finish(.success(buffer.withLock { $0 }))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ReceiverError(.configuration, "the connection closed before an answer")))
        context.fireChannelInactive()
    }

    /// Completes `done` once (a promise completed twice stops the process).
    private func finish(_ result: Result<[UInt8], any Error>) {
        guard let done, finished.withLock({ finished in
            defer { finished = true }
            return !finished
        }) else { return }
        done.completeWith(result)
    }
}

/// A promise that may be completed from several places (an answer, a timeout, a closed
/// connection); only the first completion counts.
final class OncePromise<Value: Sendable>: Sendable {
    private let promise: EventLoopPromise<Value>
    private let done = Mutex(false)
    init(_ promise: EventLoopPromise<Value>) { self.promise = promise }
    var future: EventLoopFuture<Value> { promise.futureResult }
    func succeed(_ value: Value) { if first() { promise.succeed(value) } }
    func fail(_ error: any Error) { if first() { promise.fail(error) } }
    private func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
