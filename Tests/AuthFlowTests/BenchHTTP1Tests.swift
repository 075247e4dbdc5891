import Foundation
import TestSupport
import Testing

/// `authsim bench http1-server` and `http1-client`, the layers `Benchmarks/run.sh flows` loads beside
/// nginx and h2load: each server layer answers each client layer, every exchange counted, so the
/// table's seconds are for exchanges that happened.
@Suite("authsim bench http1-server and http1-client")
struct BenchHTTP1Tests {
    @Test("every server layer answers both client layers: each exchange a 200", arguments: ["nio", "hummingbird", "backend"])
    func layers(server layer: String) async throws {
        let folder = temporaryDirectory("bench-http1")
        let body = folder.appendingPathComponent("body.json")
        try Data(#"{"phoneNumber":"+16505550101","code":"123456"}"#.utf8).write(to: body)
        let server = try ServerProcess([try executable("authsim"), "bench", "http1-server", "--layer", layer, "--body", body.path])
        defer { server.stop() }
        let line = try #require(try await server.waitFor("listening on").last { $0.contains("listening on") })
        // "listening on 127.0.0.1:PORT, path PATH"
        let address = try #require(line.split(separator: " ").dropFirst(2).first).dropLast()
        let path = try #require(line.components(separatedBy: ", path ").last)
        // The backend's route is a GET (no body); the others take the POST the sign-ins send.
        let request = layer == "backend" ? [] : ["--body", body.path]
        for client in ["nio", "transport"] {
            let run = try await runProgram([try executable("authsim"), "bench", "http1-client", "--layer", client, "--requests", "300",
                                            "--connections", "8", "--json", "http://\(address)\(path)"] + request)
            #expect(run.status == 0, "\(layer) ← \(client): \(run.output); \(server.errorTail)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data((run.output.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
            #expect(report["exchanges"] as? Int == 300 && report["failures"] as? Int == 0, "\(layer) ← \(client): \(report)")
        }
    }

    @Test("a server that answers other than 200 fails the client's run")
    func refusedExchangesFail() async throws {
        let server = try ServerProcess([try executable("authsim"), "bench", "http1-server", "--layer", "backend"])
        defer { server.stop() }
        let line = try #require(try await server.waitFor("listening on").last { $0.contains("listening on") })
        let address = try #require(line.split(separator: " ").dropFirst(2).first).dropLast()
        // The backend's route without its API key: 400 every time.
        let run = try await runProgram([try executable("authsim"), "bench", "http1-client", "--requests", "20", "--connections", "2", "--json", "http://\(address)/identitytoolkit.googleapis.com/v2/recaptchaConfig"])
        #expect(run.status != 0, "\(run.output)")
        #expect(run.output.contains("\"failures\":20"), "\(run.output)")
    }
}
