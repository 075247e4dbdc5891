import APNsReceiver
import APNsSender
import APNsWire
import Foundation
import TestSupport
import Testing


@Suite("Clients we did not write, against push-receiver")
struct ExternalClientTests {
    @Test("curl --http2 (ALPN h2, SNI api.sandbox.push.apple.com) and curl --http2-prior-knowledge (cleartext)")
    func curl() async throws {
        guard await toolAvailable(["curl", "--version"]) else { return }
        try await withFixture { fixture in
            let token = try fixture.device(.sandbox)
            let tlsPort = try #require(fixture.channel.receiver.port(for: .sandbox))
            let clearPort = try #require(fixture.channel.receiver.port(for: .sandbox, transport: .cleartext))
            let headers = fixture.goodFields().flatMap { ["-H", "\($0.name): \($0.value)"] }
            let body = String(decoding: Fixture.silent, as: UTF8.self)
            let tls = try await runProgram(["curl", "-sS", "--http2", "--cacert", fixture.channel.credentials.caCertificateFile.path,
                                            "--resolve", "api.sandbox.push.apple.com:\(tlsPort):127.0.0.1",
                                            "-D", "-", "-o", "/dev/null", "-w", "version=%{http_version}\n", "--data-binary", body]
                                           + headers + ["https://api.sandbox.push.apple.com:\(tlsPort)/3/device/\(token.hex)"])
            #expect(tls.status == 0)
            #expect(tls.output.hasPrefix("HTTP/2 200"))
            #expect(tls.output.contains("apns-id: "))
            #expect(tls.output.contains("apns-unique-id: "))
            #expect(tls.output.contains("version=2"))

            // Prior knowledge, and a bad topic: the error body is APNs's JSON.
            let bad = try await runProgram(["curl", "-sS", "--http2-prior-knowledge", "-w", "\nstatus=%{http_code}",
                                            "--data-binary", body] + headers + ["-H", "apns-topic: com.example.other",
                                            "http://127.0.0.1:\(clearPort)/3/device/\(token.hex)"])
            #expect(bad.output.contains(#"{"reason":"DuplicateHeaders"}"#))
            #expect(bad.output.contains("status=400"))
            #expect(try fixture.deliveryLog().count == 1)
        }
    }

    @Test("aioapns (PyPI): TLS without ALPN, `host` instead of `:authority`, its own PyJWT token")
    func aioapns() async throws {
        guard await toolAvailable(["python3", "-c", "import aioapns"]) else { return }
        try await withFixture { fixture in
            let good = try fixture.device(.sandbox)
            let productionOnly = try fixture.device(.production)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../Clients/aioapns_push.py").standardized.path
            let certs = fixture.channel.credentials.caCertificateFile.deletingLastPathComponent().path
            let port = try #require(fixture.channel.receiver.port(for: .sandbox))
            let run = try await runProgram(["python3", script, certs, String(port), "sandbox", Fixture.bundleID,
                                            good.hex, productionOnly.hex, "abc"])
            #expect(run.status == 0)
            let lines = run.output.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            try #require(lines.count == 3)
            #expect(lines[0]["ok"] as? Bool == true)
            #expect(lines[0]["status"] as? String == "200")
            #expect(lines[1]["reason"] as? String == "BadDeviceToken")
            #expect(lines[2]["reason"] as? String == "BadDeviceToken")
            let log = try fixture.deliveryLog()
            #expect(log.count == 1)
            // aioapns always sends its own apns-id; the receiver echoes it, and aioapns matched it.
            #expect(log.first?.apnsID == (lines[0]["apns_id"] as? String)?.lowercased())
        }
    }
}
