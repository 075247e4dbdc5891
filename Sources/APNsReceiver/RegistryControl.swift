import APNsWire
import Foundation
import Lifecycle
import NIOCore
import NIOPosix
import Utilities

/// A running receiver's device registry, changed from another process: `push-receiver devices
/// add|invalidate|remove` asks the receiver that owns the registry file to make the change, so the
/// next push sees it, with the answer the inspector's API gives. A receiver re-reads
/// `devices.json` only for a token it has not seen; this is how a change to a token it has seen
/// reaches it.
///
/// While it runs, the receiver listens on a Unix socket in this user's ``RuntimeDirectory`` (mode
/// 0600, in a 0700 folder: no other user can change devices) and names it in `push-receiver.json`
/// beside the registry file. A command that finds no receiver there (no file, or nothing listens:
/// the receiver stopped or was killed) changes the file itself.
///
/// Protocol, one exchange per connection: one JSON ``Request`` and a newline in, one JSON
/// ``Answer`` and a newline out.
package final class RegistryControl: Sendable {
    /// The socket the receiver listens on.
    package let socket: URL
    /// `push-receiver.json` beside the registry file.
    package let pointer: URL
    private let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    private let serving: Task<Void, Never>

    /// What names a running receiver's socket, beside its registry file.
    struct Pointer: Codable {
        var socket: String
        var pid: Int32
    }

    /// A change, as it travels.
    struct Request: Codable {
        enum Action: String, Codable { case register, invalidate, remove }
        var action: Action
        var device: RegisteredDevice?
        var token: String?
        var environment: APNsEnvironment?
        var state: RegisteredDevice.State?
        /// Milliseconds since the epoch.
        var time: Int64?

        init(_ change: DeviceChange) {
            switch change {
            case .register(let device): action = .register; self.device = device
            case .invalidate(let token, let environment, let state, let time):
                action = .invalidate
                self.token = token.hex
                self.environment = environment
                self.state = state
                self.time = Int64((time.timeIntervalSince1970 * 1000).rounded())
            case .remove(let token, let environment):
                action = .remove
                self.token = token.hex
                self.environment = environment
            }
        }

        var change: DeviceChange? {
            switch action {
            case .register: return device.map(DeviceChange.register)
            case .invalidate:
                guard let token = token.flatMap(DeviceToken.init(hex:)), let environment, let state, let time else { return nil }
                return .invalidate(token, environment: environment, as: state, at: Date(timeIntervalSince1970: TimeInterval(time) / 1000))
            case .remove:
                guard let token = token.flatMap(DeviceToken.init(hex:)), let environment else { return nil }
                return .remove(token, environment: environment)
            }
        }
    }

    /// The receiver's answer: whether the token was known (always true for `register`), or why
    /// the change could not be made.
    struct Answer: Codable {
        var known: Bool?
        var error: String?
    }

    /// The longest request taken (a device is a few hundred bytes).
    static let maximumRequest = 16 * 1024

    private init(socket: URL, pointer: URL, server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, serving: Task<Void, Never>) {
        self.socket = socket
        self.pointer = pointer
        self.server = server
        self.serving = serving
    }

    /// `push-receiver.json` for the registry `file`.
    package static func pointer(for file: URL) -> URL { file.deletingLastPathComponent().appendingPathComponent("push-receiver.json") }

    /// Starts taking changes for `registry` (a file's; others need none). Another live receiver
    /// on the same registry file is refused: two would each keep their own copy of it.
    package static func start(registry: DeviceRegistry, runtime: RuntimeDirectory = .standard()) async throws(ReceiverError) -> RegistryControl? {
        guard let file = registry.file else { return nil }
        let pointer = pointer(for: file)
        if let existing = readPointer(pointer), await isListening(existing.socket) {
            throw ReceiverError(.configuration, "another push-receiver (pid \(existing.pid)) uses the registry \(file.path): give this one its own --state")
        }
        if let problem = runtime.prepare() { throw ReceiverError(.configuration, "\(problem): cannot take device changes from push-receiver devices") }
        let socket = runtime.url.appendingPathComponent("receiver-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).sock")
        guard socket.path.utf8.count <= RuntimeDirectory.maximumSocketPath else {
            throw ReceiverError(.configuration, "the socket path \(socket.path) is longer than Unix sockets allow (\(RuntimeDirectory.maximumSocketPath) bytes): set a shorter AUTHSIM_RUNTIME_DIR")
        }
        let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(unixDomainSocketPath: socket.path, cleanupExistingSocketFile: true) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
            guard chmod(socket.path, 0o600) == 0 else { throw ReceiverError(.configuration, "cannot chmod \(socket.path): errno \(errno)") }
            let data = try JSONEncoder().encode(Pointer(socket: socket.path, pid: getpid()))
            try FileManager.default.createDirectory(at: pointer.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try PrivateFile.replace(pointer, with: data)
        } catch {
            try? FileManager.default.removeItem(at: socket)
            throw ReceiverError(.configuration, "cannot take device changes on \(socket.path): \(error)")
        }
        let serving = Task { await serve(server, registry: registry) }
        return RegistryControl(socket: socket, pointer: pointer, server: server, serving: serving)
    }

    /// Stops taking changes: closes the socket and removes it and the pointer (if still this one's).
    package func shutdown() async {
        try? await server.channel.close()
        // A connected command that never sends its line must not hold the stop up.
        serving.cancel()
        await serving.value
        try? FileManager.default.removeItem(at: socket)
        if Self.readPointer(pointer)?.socket == socket.path { try? FileManager.default.removeItem(at: pointer) }
    }

    /// Asks the receiver running on the registry `file` to make `change`.
    /// - Returns: whether the token was known (always true for `register`), or nil when no receiver
    ///   runs on that file (the caller changes the file itself).
    /// - Throws: ``ReceiverError`` when the receiver refused the change or did not answer.
    package static func send(_ change: DeviceChange, registryFile file: URL) async throws(ReceiverError) -> Bool? {
        guard let existing = readPointer(pointer(for: file)) else { return nil }
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: existing.socket) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
        } catch {
            // Nothing listens: the receiver stopped (or was killed) and its pointer is stale.
            return nil
        }
        let answer: Answer
        do {
            var request = try JSONEncoder().encode(Request(change))
            request.append(UInt8(ascii: "\n"))
            let line = try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(bytes: request))
                return try await readLine(inbound, limit: maximumRequest)
            }
            guard let line else { throw ReceiverError(.unavailable, "no answer") }
            answer = try JSONDecoder().decode(Answer.self, from: Data(line.utf8))
        } catch {
            throw ReceiverError(.unavailable, "the push-receiver running on \(file.path) (pid \(existing.pid), \(existing.socket)) did not answer: \(error)")
        }
        if let error = answer.error { throw ReceiverError(.storage, error) }
        return answer.known ?? true
    }

    private static func readPointer(_ file: URL) -> Pointer? {
        (try? Data(contentsOf: file)).flatMap { try? JSONDecoder().decode(Pointer.self, from: $0) }
    }

    private static func isListening(_ socket: String) async -> Bool {
        guard let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: socket).get() else { return false }
        try? await channel.close()
        return true
    }

    private static func readLine(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, limit: Int) async throws -> String? {
        var received = ByteBuffer()
        for try await var chunk in inbound {
            received.writeBuffer(&chunk)
            if let newline = received.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                return received.getString(at: received.readerIndex, length: newline - received.readerIndex)
            }
            if received.readableBytes > limit { return nil }
        }
        return nil
    }

    private static func serve(_ server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, registry: DeviceRegistry) async {
        try? await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask {
                        try? await connection.executeThenClose { inbound, outbound in
                            let answer: Answer
                            if let line = try await readLine(inbound, limit: maximumRequest),
                               let request = try? JSONDecoder().decode(Request.self, from: Data(line.utf8)), let change = request.change {
                                do { answer = Answer(known: try await registry.apply(change)) } catch {
                                    answer = Answer(error: "\(error)")
                                }
                            } else {
                                answer = Answer(error: "not a device change (one JSON line of at most \(maximumRequest) bytes)")
                            }
                            var data = try JSONEncoder().encode(answer)
                            data.append(UInt8(ascii: "\n"))
                            try await outbound.write(ByteBuffer(bytes: data))
                        }
                    }
                }
            }
        }
    }
}

extension RegistryControl: RunningPart {
    package var description: String { "push-receiver's device changes (\(socket.lastPathComponent))" }
}
