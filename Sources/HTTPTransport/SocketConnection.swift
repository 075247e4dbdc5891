import CLibSSL
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One TCP connection, over TLS when its target is `https://`, read and written by one thread at
/// a time with blocking calls bounded by a deadline (the socket's receive and send timeouts).
final class SocketConnection: @unchecked Sendable {
    private let descriptor: Int32
    private let ssl: OpaquePointer?
    /// Whether the descriptor is closed. ``close()`` and ``interrupt()`` hold it: once a number
    /// is closed the system may give it to the next socket this process opens (a server's), which
    /// a late interrupt must not shut down.
    private let closed = Mutex<Bool>(false)

    init(_ target: TransportTarget, tls: TLSClientContext?, deadline: ContinuousClock.Instant) throws(TransportError) {
        descriptor = try Self.open(target, deadline: deadline)
        guard let tls else {
            ssl = nil
            return
        }
        guard let ssl = SSL_new(tls.context) else {
            Glibc.close(descriptor)
            throw TransportError(.unreachable, "cannot set up TLS: \(TLSClientContext.lastError())")
        }
        self.ssl = ssl
        SSL_set_fd(ssl, descriptor)
        let name = target.bareHost
        // An IP literal is no server name (RFC 6066 §3): no SNI, and the certificate is checked
        // against the peer's address; a name is sent and checked.
        if TransportTarget.isIPAddress(name) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name)
        } else {
            name.withCString { pointer in
                _ = SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: pointer))
                _ = SSL_set1_host(ssl, pointer)
            }
        }
        do {
            try setTimeouts(deadline)
        } catch {
            close()
            throw error
        }
        guard SSL_connect(ssl) == 1 else {
            let verify = SSL_get_verify_result(ssl)
            let reason = verify != X509_V_OK ? "the server's certificate: \(String(cString: X509_verify_cert_error_string(verify)))"
                : TLSClientContext.lastError()
            close()
            throw TransportError(.unreachable, "TLS with \(target.key) failed: \(reason)")
        }
    }

    deinit { close() }

    /// Closes the connection (once); a thread blocked reading it wakes with its end.
    func close() {
        closed.withLock { closed in
            guard !closed else { return }
            closed = true
            shutdown(descriptor, Int32(SHUT_RDWR))
            if let ssl { SSL_free(ssl) }
            Glibc.close(descriptor)
        }
    }

    /// Ends a thread's blocking read from another thread, without freeing what it reads with;
    /// nothing once the connection is closed.
    func interrupt() {
        closed.withLock { closed in
            if !closed { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    func write(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(TransportError) {
        try setTimeouts(deadline)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { raw -> Int in
                let start = raw.baseAddress! + written
                if let ssl { return Int(SSL_write(ssl, start, Int32(min(raw.count - written, Int(Int32.max))))) }
                return Glibc.send(descriptor, start, raw.count - written, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                written += count
                continue
            }
            if ssl == nil, count < 0, errno == EINTR { continue }
            if ContinuousClock.now >= deadline { throw TransportError(.timedOut, "no answer by its deadline") }
            throw TransportError(.closed, "the connection closed while the request was written")
        }
    }

    /// Up to `capacity` bytes as they come; empty at the connection's end. `deadline` nil: no bound.
    func read(capacity: Int, deadline: ContinuousClock.Instant?) throws(TransportError) -> [UInt8] {
        if let deadline { try setTimeouts(deadline) } else { try setTimeouts(nil) }
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw -> Int in
                if let ssl { return Int(SSL_read(ssl, raw.baseAddress, Int32(raw.count))) }
                return Glibc.recv(descriptor, raw.baseAddress, raw.count, 0)
            }
            if count > 0 { return Array(buffer[..<count]) }
            let error = errno
            if let ssl {
                switch SSL_get_error(ssl, Int32(count)) {
                case SSL_ERROR_ZERO_RETURN: return []
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: break
                case SSL_ERROR_SYSCALL where count == 0 || error == 0 || error == ECONNRESET || error == EPIPE: return []
                case SSL_ERROR_SYSCALL where error == EAGAIN || error == EWOULDBLOCK || error == EINTR: break
                default: throw TransportError(.closed, "TLS failed while reading: \(TLSClientContext.lastError())")
                }
            } else {
                if count == 0 { return [] }
                if error == EINTR { continue }
                guard error == EAGAIN || error == EWOULDBLOCK else {
                    if error == ECONNRESET { return [] }
                    throw TransportError(.closed, "reading failed: \(String(cString: strerror(error)))")
                }
            }
            if closed.withLock({ $0 }) { return [] }
            guard let deadline, ContinuousClock.now < deadline else { throw TransportError(.timedOut, "no whole answer by its deadline") }
            try setTimeouts(deadline)
        }
    }

    /// The socket's receive and send timeouts: what is left until `deadline` (none when nil).
    private func setTimeouts(_ deadline: ContinuousClock.Instant?) throws(TransportError) {
        var value = timeval()
        if let deadline {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw TransportError(.timedOut, "no whole answer by its deadline") }
            value = Self.socketTimeout(left)
        }
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// `left` (more than zero) as a socket timeout, at least a microsecond (zero would mean none).
    private static func socketTimeout(_ left: Duration) -> timeval {
        let (seconds, attoseconds) = left.components
        return timeval(tv_sec: Int(seconds), tv_usec: max(1, Int(attoseconds / 1_000_000_000_000)))
    }

    /// A connected socket to one of the target's addresses, tried in the resolver's order; the
    /// connect bounded by 10 s or the deadline, whichever is first.
    private static func open(_ target: TransportTarget, deadline: ContinuousClock.Instant) throws(TransportError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(target.bareHost, String(target.port), &hints, &found)
        guard status == 0, let first = found else {
            throw TransportError(.unreachable, "cannot connect to \(target.key): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var reason = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            let left = min(deadline - ContinuousClock.now, .seconds(10))
            guard left > .zero else {
                Glibc.close(descriptor)
                throw TransportError(.timedOut, "no connection to \(target.key) by its deadline")
            }
            var limit = Self.socketTimeout(left)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return descriptor }
            reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
        }
        throw TransportError(.unreachable, "cannot connect to \(target.key): \(reason)")
    }
}

/// An answer's head: status, fields (names lowercased), whether the connection stays open, and
/// how its body is framed.
struct AnswerHead {
    var status: Int
    var headers: [(name: String, value: String)]
    var keepAlive: Bool
    var chunked: Bool
    var length: Int?
}

/// Reads answers off a connection: the head, then a body by its length, its chunks, or to the
/// connection's end; every read bounded by the deadline and the body by `limit`. Used by one
/// thread at a time: a line stream's reader is handed whole to the thread that reads the stream.
final class AnswerReader: @unchecked Sendable {
    private let connection: SocketConnection
    private let limit: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Whether any byte of the answer came (a kept-alive connection that fails before is stale).
    private(set) var sawBytes = false
    /// The body ran to the connection's end: the connection cannot be kept.
    private(set) var untilClose = false
    private static let headLimit = 64 << 10

    init(_ connection: SocketConnection, limit: Int) {
        self.connection = connection
        self.limit = limit
    }

    /// More bytes into the buffer; false at the connection's end.
    private func fill(_ deadline: ContinuousClock.Instant?) throws(TransportError) -> Bool {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        let more = try connection.read(capacity: 16 << 10, deadline: deadline)
        guard !more.isEmpty else { return false }
        sawBytes = true
        buffer += more
        return true
    }

    /// A line ending in CRLF (or LF), without it.
    private func line(_ deadline: ContinuousClock.Instant?, limit: Int) throws(TransportError) -> [UInt8] {
        // Bytes after `start` already searched (a fill may move the unread bytes to the front).
        var searched = 0
        while true {
            if let newline = buffer[(start + searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                defer { start = newline + 1 }
                return Array(buffer[start..<end])
            }
            searched = buffer.count - start
            guard buffer.count - start <= limit else { throw TransportError(.tooLarge, "a line of the answer is longer than \(limit) bytes") }
            guard try fill(deadline) else {
                throw TransportError(.closed, sawBytes ? "the connection closed in the middle of the answer" : "the connection closed before an answer")
            }
        }
    }

    /// Exactly `count` bytes.
    private func bytes(_ count: Int, _ deadline: ContinuousClock.Instant?) throws(TransportError) -> ArraySlice<UInt8> {
        while buffer.count - start < count {
            guard try fill(deadline) else { throw TransportError(.closed, "the connection closed in the middle of the answer") }
        }
        defer { start += count }
        return buffer[start..<(start + count)]
    }

    func head(deadline: ContinuousClock.Instant?, method: String) throws(TransportError) -> AnswerHead {
        while true {
            let statusLine = String(decoding: try line(deadline, limit: Self.headLimit), as: UTF8.self)
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (100...599).contains(status) else {
                throw TransportError(.closed, "the answer is not HTTP/1.1: \(statusLine.prefix(80))")
            }
            var headers: [(name: String, value: String)] = []
            var size = 0
            while true {
                let field = try line(deadline, limit: Self.headLimit)
                if field.isEmpty { break }
                size += field.count
                guard size <= Self.headLimit else { throw TransportError(.tooLarge, "the answer's head is larger than \(Self.headLimit) bytes") }
                let text = String(decoding: field, as: UTF8.self)
                guard let colon = text.firstIndex(of: ":") else { continue }
                headers.append((text[..<colon].lowercased(), text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            // 100 Continue and other interim answers: the real one follows.
            if (100..<200).contains(status) && status != 101 { continue }
            let connection = headers.filter { $0.name == "connection" }.map { $0.value.lowercased() }
            let http10 = parts[0] == "HTTP/1.0"
            let keepAlive = http10 ? connection.contains("keep-alive") : !connection.contains("close")
            let chunked = headers.contains { $0.name == "transfer-encoding" && $0.value.lowercased().contains("chunked") }
            let length = headers.first { $0.name == "content-length" }.flatMap { Int($0.value) }
            return AnswerHead(status: status, headers: headers, keepAlive: keepAlive, chunked: chunked, length: length)
        }
    }

    /// The whole body of the answer `head` began.
    func body(of head: AnswerHead, deadline: ContinuousClock.Instant?, method: String) throws(TransportError) -> [UInt8] {
        var body: [UInt8] = []
        try chunks(of: head, deadline: deadline, method: method) { (piece: ArraySlice<UInt8>) throws(TransportError) in
            guard body.count + piece.count <= limit else { throw TransportError(.tooLarge, "the answer is larger than \(limit) bytes") }
            body += piece
        }
        return body
    }

    /// The body of the answer `head` began, piece by piece as it comes.
    func chunks(of head: AnswerHead, deadline: ContinuousClock.Instant?, method: String,
                _ take: (ArraySlice<UInt8>) throws(TransportError) -> Void) throws(TransportError) {
        if method == "HEAD" || head.status == 204 || head.status == 304 { return }
        if head.chunked {
            while true {
                let sizeLine = String(decoding: try line(deadline, limit: 1024), as: UTF8.self)
                guard let size = Int(sizeLine.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16), size >= 0 else {
                    throw TransportError(.closed, "the answer's chunk size is not hex: \(sizeLine.prefix(40))")
                }
                if size == 0 {
                    while try !line(deadline, limit: Self.headLimit).isEmpty {}
                    return
                }
                guard size <= limit else { throw TransportError(.tooLarge, "the answer is larger than \(limit) bytes") }
                var left = size
                while left > 0 {
                    if start == buffer.count { guard try fill(deadline) else { throw TransportError(.closed, "the connection closed in the middle of the answer") } }
                    let count = min(left, buffer.count - start)
                    try take(buffer[start..<(start + count)])
                    start += count
                    left -= count
                }
                guard try line(deadline, limit: 2).isEmpty else { throw TransportError(.closed, "a chunk of the answer does not end with CRLF") }
            }
        } else if let length = head.length {
            guard length <= limit else { throw TransportError(.tooLarge, "the answer is larger than \(limit) bytes") }
            try take(try bytes(length, deadline))
        } else {
            untilClose = true
            while true {
                if start < buffer.count {
                    try take(buffer[start...])
                    start = buffer.count
                }
                guard try fill(deadline) else { return }
            }
        }
    }
}

/// A streamed answer's lines, read by a thread of its own until the server ends it or
/// ``close()`` does.
final class SocketLineStream: LineStreaming, @unchecked Sendable {
    private let connection: SocketConnection
    private let closedHere = Flag()

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// - Parameter reader: the reader that read the answer's head (it may hold the body's start).
    init(connection: SocketConnection, reader: AnswerReader, head: AnswerHead, limit: Int, onLine: @escaping @Sendable ([UInt8]) -> Void,
         onEnd: @escaping @Sendable (TransportError?) -> Void) {
        self.connection = connection
        let closedHere = self.closedHere
        SocketTransport.onOwnThread(named: "authsim line stream") {
            var pending: [UInt8] = []
            var failure: TransportError?
            do throws(TransportError) {
                try reader.chunks(of: head, deadline: nil, method: "GET") { (piece: ArraySlice<UInt8>) throws(TransportError) in
                    pending += piece
                    var from = 0
                    while let newline = pending[from...].firstIndex(of: UInt8(ascii: "\n")) {
                        onLine(Array(pending[from..<newline]))
                        from = newline + 1
                    }
                    pending.removeFirst(from)
                    guard pending.count <= limit else { throw TransportError(.tooLarge, "a line is longer than \(limit) bytes") }
                }
            } catch {
                failure = error
            }
            if !closedHere.value.load(ordering: .acquiring) { onEnd(failure) }
            connection.close()
        }
    }

    package func close() async {
        closedHere.value.store(true, ordering: .releasing)
        connection.interrupt()
    }
}
