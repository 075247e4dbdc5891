import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

// HTTP and HTTPS on one port. FirebaseAuth's `useEmulator(withHost:port:)` makes the emulator's
// host:port the auth domain, and the SDK opens the reCAPTCHA page at
// `https://<host:port>/__/auth/handler` (AuthWebUtils.swift `fetchAuthDomain`,
// PhoneAuthProvider.swift `reCAPTCHAURL`), while every Identity Toolkit call to the same host:port
// is plain `http://`. A connection whose first byte is a TLS handshake record (0x16) gets TLS in
// front of the HTTP/1.1 handlers; any other gets HTTP/1.1 as it is.

extension HTTPServerBuilder {
    /// HTTP/1.1, and HTTPS on the same port for clients that start with a TLS handshake; each
    /// connection's task runs on its event loop (``EventLoopBoundChannel``).
    package static func http1AndTLS(tlsConfiguration: TLSConfiguration) throws -> HTTPServerBuilder {
        let context = try NIOSSLContext(configuration: tlsConfiguration)
        return .init { responder in
            SniffingTLSChannel(base: EventLoopBoundChannel(base: HTTP1Channel(responder: responder)), sslContext: context)
        }
    }
}

/// A child channel that adds TLS to `base` when the client's first byte says TLS.
struct SniffingTLSChannel<Base: HTTPChannelHandler>: ServerChildChannel, HTTPChannelHandler {
    typealias Value = Base.Value
    let base: Base
    let sslContext: NIOSSLContext

    var responder: HTTPChannelHandler.Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(TLSSniffer(sslContext: sslContext))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Looks at the first bytes of a connection: a TLS handshake record puts an `NIOSSLServerHandler`
/// behind itself; then it steps out of the pipeline, handing on what it read.
final class TLSSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The first byte of a TLS record carrying a handshake.
    static let handshakeRecord: UInt8 = 0x16
    private let sslContext: NIOSSLContext

    init(sslContext: NIOSSLContext) { self.sslContext = sslContext }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else {
            context.fireChannelRead(data)
            return
        }
        do {
            if first == Self.handshakeRecord {
                try context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext), position: .after(self))
            }
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }
}

extension HTTPServerBuilder {
    /// ``http1AndTLS(tlsConfiguration:)`` with a PEM certificate chain and key: TLS 1.2 or later,
    /// ALPN `http/1.1`.
    package static func http1AndTLS(certificateChainPEM: String, privateKeyPEM: String) throws -> HTTPServerBuilder {
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["http/1.1"]
        // Closing, the server sends close_notify and waits this long for the client's before it
        // lets the socket go (NIOSSL's default is 5 s). HTTP clients often never answer one (RFC
        // 8446 §6.1 lets either side close without waiting), and every stop of the backend would wait.
        tls.shutdownTimeout = .milliseconds(200)
        return try http1AndTLS(tlsConfiguration: tls)
    }
}
