import Foundation
import Testing

/// docs/imports.md's "Who may import whom" table against the `import` lines of Sources/: the table is
/// the rule, this test holds the code to it.
@Suite("The module layers: docs/imports.md's import table, held against Sources/")
struct ImportRulesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    /// What every module may import.
    static let everywhere: Set<String> = ["Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Darwin", "Dispatch",
                                          "Synchronization"]

    struct Row {
        let module: String
        let allowed: [String]
        let line: Int
    }

    /// The table's rows, in order (bottom of the stack first).
    static func table() throws -> [Row] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/imports.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        guard let begin = lines.firstIndex(of: "<!-- imports:begin -->"), let end = lines.firstIndex(of: "<!-- imports:end -->"), begin < end else {
            throw LayoutError("docs/imports.md has no <!-- imports:begin --> … <!-- imports:end --> table")
        }
        var rows: [Row] = []
        for index in (begin + 1)..<end {
            let cells = lines[index].split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, !cells[1].isEmpty, cells[1] != "module", !cells[1].hasPrefix("---") else { continue }
            let allowed = cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            rows.append(Row(module: cells[1], allowed: allowed, line: index + 1))
        }
        return rows
    }

    /// Every module under Sources/ and the modules its files import.
    static func imports() throws -> [String: [String: Set<String>]] {
        let sources = root.appendingPathComponent("Sources")
        var result: [String: [String: Set<String>]] = [:]
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix(".") }
        for module in modules {
            var files: [String: Set<String>] = [:]
            let folder = sources.appendingPathComponent(module)
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let path as String in walker where path.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
                files["\(module)/\(path)"] = Self.imported(by: text)
            }
            result[module] = files
        }
        return result
    }

    /// The modules a Swift file imports (`import X`, `@testable import X`, `import struct X.Y`, `@preconcurrency import X`…).
    static func imported(by text: String) -> Set<String> {
        var modules: Set<String> = []
        for line in text.components(separatedBy: "\n") {
            var words = line.trimmingCharacters(in: .whitespaces).split(separator: " ").map(String.init)
            while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            let kinds: Set<String> = ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"]
            let name = kinds.contains(words[1]) && words.count >= 3 ? words[2] : words[1]
            if let module = name.split(separator: ".").first { modules.insert(String(module)) }
        }
        return modules
    }

    @Test("every import in Sources is one the table allows, every module has a row, and each row imports only rows above it")
    func importsFollowTheTable() throws {
        let rows = try Self.table()
        let imports = try Self.imports()
        #expect(rows.count >= 20, "the table has \(rows.count) rows")
        var seen: Set<String> = []
        for row in rows {
            #expect(!seen.contains(row.module), "docs/imports.md:\(row.line): \(row.module) has two rows")
            // Modules of this package must come from the rows above: the layers go one way.
            for name in row.allowed where imports[name] != nil {
                #expect(seen.contains(name), "docs/imports.md:\(row.line): \(row.module) may import \(name), which is not above it")
            }
            seen.insert(row.module)
            #expect(imports[row.module] != nil, "docs/imports.md:\(row.line): no Sources/\(row.module)")
        }
        let table = Dictionary(rows.map { ($0.module, Set($0.allowed)) }, uniquingKeysWith: { first, _ in first })
        for (module, files) in imports.sorted(by: { $0.key < $1.key }) {
            guard let allowed = table[module] else {
                Issue.record("Sources/\(module) has no row in docs/imports.md's import table")
                continue
            }
            for (file, modules) in files.sorted(by: { $0.key < $1.key }) {
                for imported in modules.sorted() where !allowed.contains(imported) && !Self.everywhere.contains(imported) && imported != module {
                    Issue.record("Sources/\(file) imports \(imported), which docs/imports.md does not allow \(module) (add it there, with why, or drop the import)")
                }
            }
        }
    }

    /// The app side: what a package with authsim's Simulation trait off builds (Package.swift,
    /// docs/app-code-on-linux.md). It may import nothing else but swift-log and the system's modules
    /// (its rows of the table say so; `importsFollowTheTable` holds the code to them), and every
    /// other package's products must be named under the trait, or the app's build fetches them.
    static let appSide: Set<String> = ["Utilities", "CLibSSL", "HTTPTransport", "IdentityToolkitAPI", "DeviceOS", "FirebaseCore", "FirebaseAuthCore",
                                       "FirebaseAuth", "Firebase"]

    @Test("the app side's rows allow only itself, Logging and the system's modules; Package.swift names every other package's product under the Simulation trait")
    func appSideStandsAlone() throws {
        let rows = Dictionary(try Self.table().map { ($0.module, $0) }, uniquingKeysWith: { first, _ in first })
        for module in Self.appSide.sorted() {
            let row = try #require(rows[module], "docs/imports.md has no row for \(module)")
            let outside = Set(row.allowed).subtracting(Self.appSide).subtracting(Self.everywhere).subtracting(["Logging"])
            #expect(outside.isEmpty, "docs/imports.md:\(row.line): \(module) may import \(outside.sorted()): the app side would not build with the Simulation trait off")
        }
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let unconditional = manifest.matches(of: /\.product\(name: "([A-Za-z0-9_]+)", package: "([A-Za-z0-9_-]+)"\)/)
            .map { "\($0.output.1) (\($0.output.2))" }.filter { !$0.hasSuffix("(swift-log)") }
        #expect(unconditional.isEmpty, "Package.swift names \(unconditional) without the Simulation trait: use simulation(_:_:)")
    }

    @Test("the reader of import lines: attributes, kinds and submodules name the module")
    func importLines() {
        let text = """
            import Foundation
            @testable import APNsWire
            @preconcurrency import NIOCore
            import struct Crypto.P256
            import NIOHPACK.HPACKDecoder
            // import Commented
            let importer = 1
            """
        #expect(Self.imported(by: text) == ["Foundation", "APNsWire", "NIOCore", "Crypto", "NIOHPACK"])
    }
}

struct LayoutError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
