import Foundation
import Testing

/// Foundation calls that work in a dynamically linked build but not in the release bundle, which
/// links Swift's libraries statically (`--static-swift-stdlib`): each one is kept out of Sources/
/// with the reason and what to call instead. `Tests/Release` runs the bundle itself; this catches
/// the call before a release is built.
@Suite("Sources avoid Foundation calls that break when linked statically")
struct StaticLinkTests {
    static let hazards: [(call: String, why: String)] = [
        ("PropertyListSerialization.data(fromPropertyList",
         "CoreFoundation's writer refuses any array when linked statically (NSCocoaErrorDomain 3851, 'Not A Type'): use Utilities.PropertyListWriter"),
    ]

    @Test("no file under Sources/ makes a call that fails in the static release")
    func noHazards() throws {
        let sources = ImportRulesTests.root.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(atPath: sources.path))
        var found: [String] = []
        for case let path as String in walker where path.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for (number, line) in text.components(separatedBy: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("/") {
                for hazard in Self.hazards where line.contains(hazard.call) { found.append("Sources/\(path):\(number + 1): \(hazard.why)") }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
