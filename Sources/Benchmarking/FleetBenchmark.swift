import AuthBackend
import Foundation
import HTTPTransport
import NIOHTTPTransport
import IdentityToolkitAPI
import Utilities

/// Phone sign-ins over HTTP against backends as nodes of one fleet (`authsim bench fleet`): the
/// code requested from one node and checked on the next, as a load balancer would spread them.
/// Each sign-in is two requests and two changes of the backend's state: `sendVerificationCode`
/// (a session and its SMS) and `signInWithPhoneNumber` (the code spent, the user, the refresh
/// token; then the RS256 ID token).
package enum FleetBenchmark {
    package struct Report: Sendable {
        package let nodes: Int
        package let signIns: Int
        package let seconds: Double
        package let p50Milliseconds: Double
        package let p99Milliseconds: Double
        package let failures: Int
        package let firstFailure: String?
        package var signInsPerSecond: Double { Double(signIns - failures) / seconds }
        /// Changes of the backend's state per second (two per sign-in).
        package var changesPerSecond: Double { 2 * signInsPerSecond }
    }

    /// Serves each toolkit on its own port and runs `count` sign-ins, `concurrency` at a time.
    /// The toolkits must take code requests without app verification and text `123456`.
    package static func run(_ toolkits: [IdentityToolkit], count: Int, concurrency: Int) async throws -> Report {
        var servers: [BackendServer] = []
        for toolkit in toolkits { servers.append(try await BackendServer.start(toolkit: toolkit)) }
        let transport = NIOHTTP1Transport(connectionsPerHost: max(concurrency, 1))
        defer { transport.shutdown() }
        let bases = servers.map(\.baseURL)
        let key = toolkits[0].configuration.apiKey
        let clock = ContinuousClock()
        let start = clock.now
        var (latencies, failures, firstFailure) = await ConcurrentRun.run(count: count, concurrency: concurrency) { index in
            try await signIn(index, bases: bases, key: key, transport: transport)
        }
        let seconds = (clock.now - start).inSeconds
        for server in servers { await server.shutdown() }
        latencies.sort()
        return Report(nodes: toolkits.count, signIns: count, seconds: seconds, p50Milliseconds: ConcurrentRun.percentile(0.5, of: latencies),
                      p99Milliseconds: ConcurrentRun.percentile(0.99, of: latencies),
                      failures: failures, firstFailure: firstFailure)
    }

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// One sign-in: the code from node `index`, checked on node `index + 1`.
    static func signIn(_ index: Int, bases: [String], key: String, transport: NIOHTTP1Transport) async throws {
        let number = String(format: "+1650%07d", index % 10_000_000)
        let sent = try await post(bases[index % bases.count], "accounts:sendVerificationCode", key: key, ["phoneNumber": number], transport)
        guard let sessionInfo = sent["sessionInfo"] as? String else { throw Refused(description: "sendVerificationCode: \(sent)") }
        let signedIn = try await post(bases[(index + 1) % bases.count], "accounts:signInWithPhoneNumber", key: key,
                                      ["sessionInfo": sessionInfo, "code": "123456"], transport)
        guard signedIn["idToken"] is String else { throw Refused(description: "signInWithPhoneNumber: \(signedIn)") }
    }

    static func post(_ base: String, _ method: String, key: String, _ body: [String: String], _ transport: NIOHTTP1Transport) async throws -> [String: Any] {
        let url = URL(string: "\(base)/identitytoolkit.googleapis.com/v1/\(method)?key=\(key)")!
        let bytes = Array(try JSONSerialization.data(withJSONObject: body))
        let response = try await transport.send(TransportRequest(method: "POST", url: url, headers: [("content-type", "application/json")], body: bytes))
        return (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }
}
