import Foundation
import Testing

/// A page a reader can hold: every Markdown document of the repository (the README, docs/, the
/// folders' READMEs, BENCHMARKS.md) at most 15,000 bytes (issue 64). A page that grows past it is
/// split by topic, each part linked from the other.
@Suite("Every document at most 15 KB")
struct DocumentSizeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let limit = 15_000

    @Test("every .md outside build folders is at most 15,000 bytes")
    func sizes() throws {
        let skipped: Set<String> = [".build", ".swiftpm", ".git", "node_modules", "dist"]
        var pages: [(String, Int)] = []
        guard let walker = FileManager.default.enumerator(at: Self.root, includingPropertiesForKeys: [.fileSizeKey]) else {
            Issue.record("cannot list \(Self.root.path)")
            return
        }
        for case let url as URL in walker {
            if skipped.contains(url.lastPathComponent) || url.lastPathComponent.hasPrefix(".build") {
                walker.skipDescendants()
                continue
            }
            guard url.pathExtension == "md" else { continue }
            let size = try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
            pages.append((String(url.path.dropFirst(Self.root.path.count + 1)), size))
        }
        #expect(pages.count >= 25, "only \(pages.count) documents found: the walk broke")
        let large = pages.filter { $0.1 > Self.limit }.map { "\($0.0): \($0.1) bytes" }
        #expect(large.isEmpty, "over \(Self.limit) bytes: \(large.joined(separator: ", "))")
    }
}
