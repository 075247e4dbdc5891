import APNsReceiver
import APNsWire
import AuthBackend
import Foundation
import HTTPTypes
import Hummingbird
import Inspector
import Logging
import NIOCore
import NIOEmbedded
import Synchronization

/// The inspector API's requests (`authsim serve`'s `/api/v1/…`, `/metrics`, the health paths) as
/// a client sends them: `METHOD TARGET` on the first line, `name: value` header lines, a blank
/// line and the body. Each is answered by the inspector's own router (its error middleware, the
/// generated server's decoding, the document's checks, the handlers) over a backend, a device
/// registry and pushes in memory, as `serve` answers it; the answer's body is read to its end.
/// A 500 is a finding: every request the API cannot serve is the client's error or a 503.
package enum InspectorQueries {
    /// The state the requests read and change, made again every `renewal` requests so that
    /// users and devices added by requests stay bounded.
    private static let state = Mutex<(uses: Int, responder: RouterResponder<BasicRequestContext>?)>((0, nil))
    private static let renewal = 500
    private static let logger = Logger(label: "authsim.fuzz.inspector", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The connection every request comes on (a channel of NIO's for tests: no socket; one for the
    /// process, as a channel and its pipeline hold each other until closed).
    private static let channel = NIOAsyncTestingChannel()

    @Sendable static func respond(_ bytes: [UInt8]) async {
        guard let responder = Self.responder() else { return }
        _ = await answer(bytes, by: responder)
    }

    /// The answer's status and body size for a request (`nil`: the bytes are not a request, or ask
    /// for the live stream).
    package static func answer(_ bytes: [UInt8], by responder: RouterResponder<BasicRequestContext>) async -> (status: HTTPResponse.Status, bytes: Int)? {
        let text = String(decoding: bytes, as: UTF8.self)
        let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), Array(text[$0.upperBound...].utf8)) } ?? (text, [])
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false)
        let requestLine = lines.isEmpty ? [] : lines.removeFirst().split(separator: " ", maxSplits: 1).map(String.init)
        guard requestLine.count == 2, let method = HTTPRequest.Method(requestLine[0]) else { return nil }
        let target = requestLine[1]
        // The live stream answers until its client hangs up: no request of its own here.
        guard !target.hasPrefix("/api/v1/events") else { return nil }
        var fields = HTTPFields()
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else { continue }
            fields.append(HTTPField(name: name, value: String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
        let request = Request(head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: target, headerFields: fields),
                              body: RequestBody(buffer: ByteBuffer(bytes: body)))
        let context = BasicRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch let error as any HTTPResponseError {
            // What the server does with an error that reaches it: the error's own answer.
            guard let answer = try? error.response(from: request, context: context) else { preconditionFailure("\(error) has no answer") }
            response = answer
        } catch {
            preconditionFailure("\(method) \(target): an error that is not an HTTP answer reached the server (a 500): \(error)")
        }
        precondition(response.status != .internalServerError, "\(method) \(target) answered 500")
        let reader = BodyReader()
        try? await response.body.write(reader)
        return (response.status, reader.count.bytes)
    }

    private static func responder() -> RouterResponder<BasicRequestContext>? {
        state.withLock { state in
            if state.uses % renewal == 0 { state.responder = makeResponder() }
            state.uses += 1
            return state.responder
        }
    }

    /// The inspector over a backend in memory, two devices and a push of each kind.
    package static func makeResponder() -> RouterResponder<BasicRequestContext>? {
        let token = DeviceToken(hex: String(repeating: "ab", count: 32))!
        let registry = DeviceRegistry(devices: [RegisteredDevice(token: token, environment: .sandbox, bundleID: "com.example.authsim"),
                                                RegisteredDevice(token: DeviceToken(hex: String(repeating: "cd", count: 32))!,
                                                                 environment: .production, bundleID: "com.example.authsim", state: .unregistered)])
        let history = PushHistory(capacity: 100, registry: registry)
        let payload = Array(#"{"aps":{"content-available":1},"com.google.firebase.auth":{"receipt":"R","secret":"S/1"}}"#.utf8)
        history.record(.accepted(AcceptedPush(receivedAt: Date(timeIntervalSince1970: 1_800_000_000), environment: .sandbox,
                                              apnsID: "0E4B7ED3-1D5B-4A32-9B49-A4B7F4D0F3A1", deviceToken: token, topic: "com.example.authsim",
                                              bundleID: "com.example.authsim", pushType: .background, priority: .consideringPower,
                                              teamID: "TEAMID1234", keyID: "ABCDE12345", payload: payload, isBackground: true, dropped: false)))
        history.record(.rejected(PushRejection(.unregistered, "the device token is no longer active for the topic", timestamp: 1_799_999_000_000), apnsID: "0E4B7ED3-1D5B-4A32-9B49-A4B7F4D0F3A2",
                                 environment: .production, deviceToken: String(repeating: "cd", count: 32)))
        guard let toolkit = try? IdentityToolkit(pusher: nil, logger: logger) else { return nil }
        let sources = InspectorSources(history: history, faults: FaultPlan(), registry: registry, toolkit: toolkit)
        return try? InspectorRouter.make(sources).buildResponder()
    }

    /// Reads an answer's body to its end, as a client would.
    private struct BodyReader: ResponseBodyWriter {
        final class Count { var bytes = 0 }
        let count = Count()
        mutating func write(_ buffer: ByteBuffer) async throws { count.bytes += buffer.readableBytes }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
