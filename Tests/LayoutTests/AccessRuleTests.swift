import Foundation
import Testing

/// docs/layout.md's access rule against Package.swift and Sources/: a module a library product
/// ships declares its API `public`; a library module no product ships declares nothing `public`
/// or `open` (what its executables and tests use is `package`), so that it is nobody else's API.
@Suite("Access: only the modules a library product ships have a public API")
struct AccessRuleTests {
    static let root = ImportRulesTests.root

    /// The targets Package.swift's library products ship, its executable targets, and every target.
    static func package() throws -> (shipped: Set<String>, executables: Set<String>, systemLibraries: Set<String>) {
        let text = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        func names(_ pattern: String) throws -> Set<String> {
            let regex = try Regex(pattern)
            return Set(text.matches(of: regex).compactMap { $0.output[1].substring.map(String.init) })
        }
        let products = try names(#"\.library\(name: "[^"]+", targets: \["([^"]+)"\]\)"#)
        let executables = try names(#"\.executableTarget\(\s*name: "([^"]+)""#)
        let system = try names(#"\.systemLibrary\(name: "([^"]+)""#)
        return (products, executables, system)
    }

    /// A line that declares something `public` or `open` (attributes before it allowed).
    static func isPublicDeclaration(_ line: String) -> Bool {
        line.firstMatch(of: /^\s*(@[A-Za-z_]+(\([^)]*\))?\s+)*(public[\s(]|open\s)/) != nil
    }

    @Test("no library module outside the products declares anything public or open; every product ships a module here")
    func unshippedModulesArePackage() throws {
        let (shipped, executables, system) = try Self.package()
        #expect(shipped.isSuperset(of: ["FirebaseAuth", "FirebaseCore", "Firebase", "AuthsimTesting"]), "\(shipped.sorted())")
        let sources = Self.root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix(".") }
        for product in shipped { #expect(modules.contains(product), "a product ships \(product), which has no Sources/\(product)") }
        for module in modules.sorted() where !shipped.contains(module) && !executables.contains(module) && !system.contains(module) {
            let folder = sources.appendingPathComponent(module)
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let path as String in walker where path.hasSuffix(".swift") {
                let lines = try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8).components(separatedBy: "\n")
                for (number, line) in lines.enumerated() where Self.isPublicDeclaration(line) {
                    Issue.record("Sources/\(module)/\(path):\(number + 1) is public, but no product ships \(module): make it package")
                }
            }
        }
    }

    @Test("the rule's reader: attributes before public, public(set), open; not a word in a comment or a name")
    func declarationLines() {
        #expect(Self.isPublicDeclaration("public struct A {"))
        #expect(Self.isPublicDeclaration("    @discardableResult public func f() {}"))
        #expect(Self.isPublicDeclaration("    public(set) var x = 1"))
        #expect(Self.isPublicDeclaration("@_spi(Authsim) public var y: Int"))
        #expect(Self.isPublicDeclaration("open class C {}"))
        #expect(!Self.isPublicDeclaration("    package func f() {}"))
        #expect(!Self.isPublicDeclaration("    /// a public key"))
        #expect(!Self.isPublicDeclaration("    let publicKey = 1"))
        #expect(!Self.isPublicDeclaration("            open(push)"), "a call of a function named open")
    }
}
