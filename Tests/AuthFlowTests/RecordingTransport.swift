import DeviceOS
import FirebaseCore
import FirebaseAuthCore
import Foundation
import Utilities
import HTTPTransport
import Scenarios
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

    func lines(_ request: TransportRequest, onLine: @escaping @Sendable ([UInt8]) -> Void,
               onEnd: @escaping @Sendable (TransportError?) -> Void) async throws(TransportError) -> any LineStreaming {
        requests.withLock { $0.append(request) }
        return try await inner.lines(request, onLine: onLine, onEnd: onEnd)
    }
}

/// An app on its own transport recorder, in `world`.
func recordingApp(_ world: PhoneAuthWorld, profile: AppProfile = AppProfile(), clock: (any Clock<Duration>)? = nil,
                  wallClock: any WallClock = SystemWallClock(), urlSchemes: [String]? = nil, linksRecaptcha: Bool = false,
                  recaptcha: RecaptchaEnterpriseSDK? = nil) async throws -> (Auth, RecordingTransport) {
    let options = world.options(for: profile)
    options.bundleID = profile.bundleID
    let recording = RecordingTransport(world.transport)
    let host = AppHost(AppHost.Configuration(bundleID: profile.bundleID, urlSchemes: urlSchemes ?? [options.encodedAppIDScheme]), recaptchaEnterprise: recaptcha ?? (linksRecaptcha ? RecaptchaEnterpriseSDK(service: world.backendURL) : nil), clock: clock ?? world.appClock, wallClock: wallClock, transport: recording)
    let auth = world.auth(options: options, host: host)
    let token = try await world.devices.installDevice(for: host, environment: .sandbox) { _, _ in }
    auth.setAPNSToken(Data(token.bytes), type: .sandbox)
    return (auth, recording)
}

/// The JSON body of the recorded requests to `endpoint` (how the path ends).
func requestBodies(_ recording: RecordingTransport, _ endpoint: String) -> [[String: Any]] {
    recording.requests.withLock { $0 }.filter { $0.url.path.hasSuffix("/" + endpoint) }.compactMap { request in
        request.body.flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }
    }
}
