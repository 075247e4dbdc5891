import HTTPTransport
import Synchronization

/// Passes every request on to `inner` (a real transport) and keeps what went out: which calls the
/// auth core made, and with which header fields.
final class RecordingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let requests = Mutex<[TransportRequest]>([])
    init(_ inner: any HTTPTransport) { self.inner = inner }

    /// `METHOD url` of each request, in order.
    var seen: [String] { requests.withLock { $0.map { "\($0.method) \($0.url.absoluteString)" } } }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        requests.withLock { $0.append(request) }
        return try await inner.send(request)
    }
}
