import CLibSSL
import Foundation
import Synchronization
import Utilities
#if canImport(Glibc)
import Glibc
#endif

/// An ``HTTPTransport`` on the system's sockets, with OpenSSL's libssl for `https://`: what an
/// app's own build of `FirebaseAuth` talks HTTP with, so that it compiles no event-loop or TLS
/// package (docs/dependencies.md gives the build's cost). Kept-alive connections per scheme, host
/// and port; each exchange runs on a thread of its own, at most `connectionsPerHost` per
/// host at a time, with blocking reads bounded by the request's deadline. HTTP/1.1 answers with a
/// length, chunked or ending at the connection's close. TLS 1.2 or later, the peer's certificate
/// checked against the system's roots (and a CA the device trusts) and its name or address.
///
/// The simulation's own processes, where ten thousand apps share one process, give their apps
/// ``NIOHTTP1Transport`` instead (`NIOHTTPTransport`), which multiplexes connections on event loops.
package final class SocketTransport: HTTPTransport {
    /// The largest answer body taken (a larger one is ``TransportError/Code/tooLarge``).
    package let maximumResponseBytes: Int
    private let connectionsPerHost: Int
    private let caPEM: String?
    private let tls = Mutex<TLSClientContext?>(nil)
    private let idle = Mutex<[String: [SocketConnection]]>([:])
    private let slots = Mutex<[String: Limiter]>([:])

    /// - Parameter caPEM: a CA the device trusts beside the system's roots (the local CA a
    ///   developer installs on a simulator talking to a local backend).
    package init(connectionsPerHost: Int = 16, maximumResponseBytes: Int = 4 << 20, trustingCAPEM caPEM: String? = nil) {
        self.connectionsPerHost = max(1, connectionsPerHost)
        self.maximumResponseBytes = maximumResponseBytes
        self.caPEM = caPEM
    }

    deinit {
        for connection in idle.withLock({ $0.values.flatMap { $0 } }) { connection.close() }
    }

    package func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let target = try TransportTarget(request.url)
        let limiter = slots.withLock { slots in
            if let limiter = slots[target.key] { return limiter }
            let limiter = Limiter(connectionsPerHost)
            slots[target.key] = limiter
            return limiter
        }
        await limiter.acquire()
        defer { limiter.release() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<TransportResponse, TransportError>, Never>) in
            Self.onOwnThread { continuation.resume(returning: self.exchange(request, target: target)) }
        }
        return try result.mapError { TransportError($0.code, "\(request.method) \(request.url.absoluteString): \($0.message)") }.get()
    }

    /// Sends `request` on a connection of its own and hands each line of the answer's body to
    /// `onLine` as it comes, as ``NIOHTTP1Transport/lines(_:onLine:onEnd:)`` does.
    package func lines(_ request: TransportRequest, onLine: @escaping @Sendable ([UInt8]) -> Void,
                       onEnd: @escaping @Sendable (TransportError?) -> Void) async throws(TransportError) -> any LineStreaming {
        let target = try TransportTarget(request.url)
        let limit = maximumResponseBytes
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<SocketLineStream, TransportError>, Never>) in
            Self.onOwnThread {
                continuation.resume(returning: Result { () throws(TransportError) -> SocketLineStream in
                    let deadline = ContinuousClock.now + request.timeout
                    let connection = try self.connect(target, deadline: deadline)
                    do throws(TransportError) {
                        try connection.write(Self.head(request, target: target) + (request.body ?? []), deadline: deadline)
                        let reader = AnswerReader(connection, limit: limit)
                        let head = try reader.head(deadline: deadline, method: request.method)
                        guard head.status == 200 else {
                            let body = (try? reader.body(of: head, deadline: deadline, method: request.method)) ?? []
                            throw TransportError(.closed, "answered HTTP \(head.status): \(String(decoding: body, as: UTF8.self))")
                        }
                        return SocketLineStream(connection: connection, reader: reader, head: head, limit: limit, onLine: onLine, onEnd: onEnd)
                    } catch {
                        connection.close()
                        throw error
                    }
                })
            }
        }
        return try result.mapError { TransportError($0.code, "\(request.method) \(request.url.absoluteString): \($0.message)") }.get()
    }

    // MARK: One exchange, on a thread of its own

    /// Runs blocking work on a thread of its own. Not on Dispatch's global queues: on Linux they
    /// are as wide as the cores and also run Swift's tasks, so two exchanges waiting on a server
    /// in this process would hold the threads that server needs to answer them.
    static func onOwnThread(named name: String = "authsim HTTP exchange", _ work: @escaping @Sendable () -> Void) {
        let thread = Thread {
            // OpenSSL writes with write(2), which raises SIGPIPE when the server has closed: the
            // thread blocks it (and then gets EPIPE), so an app's process is not ended by it.
            var pipe = sigset_t()
            sigemptyset(&pipe)
            sigaddset(&pipe, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipe, nil)
            work()
        }
        thread.name = name
        thread.start()
    }

    private func exchange(_ request: TransportRequest, target: TransportTarget) -> Result<TransportResponse, TransportError> {
        let deadline = ContinuousClock.now + request.timeout
        let bytes = Self.head(request, target: target) + (request.body ?? [])
        // A kept-alive connection the server closed meanwhile fails before any of the answer: the
        // request goes once more, on a new connection.
        while let connection = idle.withLock({ $0[target.key]?.popLast() }) {
            switch attempt(bytes, method: request.method, on: connection, deadline: deadline, key: target.key) {
            case .success(let answer): return .success(answer)
            case .failure(let failure) where failure.beforeAnswer && failure.error.code != .timedOut: continue
            case .failure(let failure): return .failure(failure.error)
            }
        }
        do {
            let connection = try connect(target, deadline: deadline)
            return attempt(bytes, method: request.method, on: connection, deadline: deadline, key: target.key).mapError(\.error)
        } catch {
            return .failure(error)
        }
    }

    private struct Failure: Error {
        let error: TransportError
        /// Nothing of the answer came: a stale kept-alive connection.
        let beforeAnswer: Bool
    }

    private func attempt(_ bytes: [UInt8], method: String, on connection: SocketConnection, deadline: ContinuousClock.Instant,
                         key: String) -> Result<TransportResponse, Failure> {
        let reader = AnswerReader(connection, limit: maximumResponseBytes)
        do {
            try connection.write(bytes, deadline: deadline)
            let head = try reader.head(deadline: deadline, method: method)
            let body = try reader.body(of: head, deadline: deadline, method: method)
            if head.keepAlive && reader.untilClose == false {
                idle.withLock { $0[key, default: []].append(connection) }
            } else {
                connection.close()
            }
            return .success(TransportResponse(status: head.status, headers: head.headers, body: body))
        } catch {
            connection.close()
            return .failure(Failure(error: error, beforeAnswer: !reader.sawBytes))
        }
    }

    /// The request's head: its target as the URL has it (percent escapes kept), `Host`, its
    /// fields, `Content-Length`.
    static func head(_ request: TransportRequest, target: TransportTarget) -> [UInt8] {
        let encodedPath = request.url.path(percentEncoded: true)
        var path = encodedPath.isEmpty ? "/" : encodedPath
        if let query = request.url.query(percentEncoded: true) { path += "?" + query }
        var text = "\(request.method) \(path) HTTP/1.1\r\nHost: \(target.hostField(for: request.url))\r\n"
        for (name, value) in request.headers { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(request.body?.count ?? 0)\r\n\r\n"
        return Array(text.utf8)
    }

    private func connect(_ target: TransportTarget, deadline: ContinuousClock.Instant) throws(TransportError) -> SocketConnection {
        let context: TLSClientContext?
        if target.secure {
            context = try tls.withLock { (made: inout TLSClientContext?) throws(TransportError) -> TLSClientContext in
                if let made { return made }
                let context = try TLSClientContext(trustingCAPEM: caPEM)
                made = context
                return context
            }
        } else {
            context = nil
        }
        return try SocketConnection(target, tls: context, deadline: deadline)
    }
}

/// OpenSSL's client context: TLS 1.2 or later, peers verified against the system's roots and the
/// given CA.
final class TLSClientContext: @unchecked Sendable {
    let context: OpaquePointer

    init(trustingCAPEM caPEM: String?) throws(TransportError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TransportError(.unreachable, "cannot set up TLS: \(TLSClientContext.lastError())") }
        self.context = context
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard SSL_CTX_set_default_verify_paths(context) == 1 else { throw TransportError(.unreachable, "cannot load the system's trust roots: \(Self.lastError())") }
        if let caPEM {
            Array(caPEM.utf8).withUnsafeBytes { pem in
                guard let bio = BIO_new_mem_buf(pem.baseAddress, Int32(pem.count)) else { return }
                defer { BIO_free(bio) }
                let store = SSL_CTX_get_cert_store(context)
                while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                    X509_STORE_add_cert(store, certificate)
                    X509_free(certificate)
                }
                // The end of the PEM reads as an error: not one.
                ERR_clear_error()
            }
        }
    }

    deinit { SSL_CTX_free(context) }

    /// OpenSSL's last error on this thread, as text.
    static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no further detail" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
