import Crypto
import Foundation
import Testing

/// The inspector's API code is generated from its OpenAPI document and committed
/// (Sources/Inspector/API/Generated, by Scripts/generate-openapi.sh), so that builds need not build the
/// generator: each generated file names the digest of the document and configuration it came from.
@Suite("The committed API code matches its OpenAPI document")
struct GeneratedAPITests {
    static let api = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/Inspector/API").standardized

    @Test("every generated file carries the sha256 of openapi.json and its generator configuration as they are now")
    func digest() throws {
        let document = try Data(contentsOf: Self.api.appendingPathComponent("openapi.json"))
            + Data(contentsOf: Self.api.appendingPathComponent("openapi-generator-config.yaml"))
        let digest = SHA256.hash(data: document).map { String(format: "%02x", $0) }.joined()
        let folder = Self.api.appendingPathComponent("Generated")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(files.contains("Server.swift") && files.contains("Types.swift"), "\(files)")
        for file in files {
            let head = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8).prefix(400)
            #expect(head.contains("sha256 \(digest)"),
                    "\(file) was generated from another openapi.json or configuration: run Scripts/generate-openapi.sh")
        }
    }
}
