import Foundation
import NIOCore
import NIOPosix

/// The interceptor's side: hands a URL to the running app that owns its scheme and returns the
/// app's answer.
package enum RedirectDispatcher {
    /// How long an app has to answer, by default.
    package static let answerTimeout: TimeAmount = .seconds(10)

    /// Sends `text` (a URL) to the app that owns its scheme in `directory`.
    /// - Parameter answerTimeout: how long the app has to answer (`redirect-interceptor open
    ///   --answer-timeout`): an app on a machine that is busy, or paused in a debugger, needs more.
    package static func dispatch(_ text: String, directory: SchemeDirectory = .standard(),
                                answerTimeout: TimeAmount = answerTimeout) async throws(InterceptorError) -> InterceptorAnswer {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let scheme = try URLSchemeSyntax.scheme(of: trimmed)
        guard URL(string: trimmed) != nil, !trimmed.contains("\n") else {
            throw InterceptorError(.invalidURL, "\"\(trimmed.prefix(80))\" is not a valid URL")
        }
        guard trimmed.utf8.count <= SchemeListener.maximumURLLength else {
            throw InterceptorError(.urlTooLong, "the URL is \(trimmed.utf8.count) bytes; at most \(SchemeListener.maximumURLLength) are carried")
        }
        let socket = try directory.socket(for: scheme)
        guard FileManager.default.fileExists(atPath: socket.path) else {
            throw InterceptorError(.noRunningApp, noAppMessage(scheme: scheme, directory: directory))
        }
        let connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            connection = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socket.path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw InterceptorError(.appNotResponding, "the app that claimed \(scheme) is not running (stale \(socket.path): \(error))")
        }
        let channel = connection.channel
        let timeout = channel.eventLoop.scheduleTask(in: answerTimeout) { channel.close(promise: nil) }
        defer { timeout.cancel() }
        let reply: ByteBuffer
        do {
            reply = try await connection.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: trimmed + "\n"))
                var received = ByteBuffer()
                for try await var chunk in inbound {
                    received.writeBuffer(&chunk)
                    if received.readableBytesView.contains(UInt8(ascii: "\n")) { break }
                }
                return received
            }
        } catch {
            throw InterceptorError(.appNotResponding, "the app that owns \(scheme) did not answer: \(error)")
        }
        guard reply.readableBytes > 0 else {
            throw InterceptorError(.appNotResponding, "the app that owns \(scheme) closed the connection without answering within \(answerTimeout.nanoseconds / 1_000_000_000) s (--answer-timeout gives it longer)")
        }
        do {
            return try JSONDecoder().decode(InterceptorAnswer.self, from: Data(reply.readableBytesView))
        } catch {
            throw InterceptorError(.badAnswer, "the app that owns \(scheme) answered \(String(buffer: reply).prefix(120))")
        }
    }

    /// Whether an app listens on `socket`.
    package static func isAlive(socket: URL) async -> Bool {
        guard let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: socket.path).get() else { return false }
        try? await channel.close()
        return true
    }

    private static func noAppMessage(scheme: String, directory: SchemeDirectory) -> String {
        let claims = directory.claims()
        var message = "no running app owns scheme \(scheme) (nothing listens in \(directory.url.path))"
        if claims.isEmpty { return message + "; no app has claimed any scheme there" }
        message += "; claimed: " + claims.map { "\($0.scheme) (\($0.bundleID))" }.joined(separator: ", ")
        if let near = claims.min(by: { URLSchemeSyntax.distance($0.scheme, scheme) < URLSchemeSyntax.distance($1.scheme, scheme) }),
           URLSchemeSyntax.distance(near.scheme, scheme) <= 3 {
            message += ". \(scheme) looks like \(near.scheme) but is not it: check the scheme the page redirects to against GOOGLE_APP_ID / CLIENT_ID"
        }
        return message
    }
}
