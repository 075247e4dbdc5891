import Foundation
import Testing

/// docs/layout.md's access rule against Package.swift and Sources/: a module a library product
/// ships declares its API `public`; a library module no product ships declares nothing `public`
/// or `open` (what its executables and tests use is `package`), so that it is nobody else's API,
/// but for the types a product's public API hands a user (the compiler requires them public),
/// each listed here with the declaration that hands it over.
@Suite("Access: only the modules a library product ships have a public API")
struct AccessRuleTests {
    /// The modules no product ships whose types a product's public API hands a user: the type,
    /// and where (its members follow it). FirebaseAuthCore's are what FirebaseAuth re-exports.
    static let handedOver: [String: [String: String]] = [
        "Scenarios": ["AppProfile": "AuthsimTesting's SimulatedApp"],
        "AuthBackend": ["SilentPushRecord": "Simulation.silentPushes()", "PushResult": "SilentPushRecord.result",
                        "SignInID": "SilentPushRecord.signIn"],
        "APNsWire": ["APNsEnvironment": "SilentPushRecord.environment", "APNsReason": "PushResult.reason"],
        "DeviceLink": ["APNsRegistrationOutcome": "SimulatedApp.apnsRegistration"],
        "IdentityToolkitAPI": ["AppVerification": "Simulation.lastAppVerification"],
        "DeviceOS": ["AppHost": "AuthUIDelegate.present(_:host:) (UIKit's view controllers do not exist here)"],
    ]

    /// The names FirebaseAuth re-exports from the auth core (`@_exported import class FirebaseAuthCore.Auth`).
    static func reExported() throws -> Set<String> {
        let text = try String(contentsOf: root.appendingPathComponent("Sources/FirebaseAuth/FirebaseAuth.swift"), encoding: .utf8)
        return Set(text.matches(of: /@_exported import [a-z]+ FirebaseAuthCore\.([A-Za-z_]+)/).map { String($0.output.1) })
    }

    /// The name a top-level (unindented) public declaration declares, or nil for any other line.
    static func topLevelName(_ line: String) -> String? {
        line.firstMatch(of: /^(?:@[A-Za-z_][A-Za-z_0-9]*(?:\([^)]*\))?\s+)*public\s+(?:final\s+)?(?:class|struct|enum|protocol|actor|typealias|func|let|var|extension)\s+([A-Za-z_][A-Za-z_0-9]*)/)
            .map { String($0.output.1) }
    }
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
        // The words first: Regex, unoptimized, over every line of Sources/ took 9 s of the suite.
        (line.contains("public") || line.contains("open")) && line.firstMatch(of: /^\s*(@[A-Za-z_][A-Za-z_0-9]*(\([^)]*\))?\s+)*(public[\s(]|open\s)/) != nil
    }

    @Test("no library module outside the products declares anything public or open; every product ships a module here")
    func unshippedModulesArePackage() throws {
        let (shipped, executables, system) = try Self.package()
        #expect(shipped.isSuperset(of: ["FirebaseAuth", "FirebaseCore", "Firebase", "AuthsimTesting"]), "\(shipped.sorted())")
        let sources = Self.root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix(".") }
        for product in shipped { #expect(modules.contains(product), "a product ships \(product), which has no Sources/\(product)") }
        let reExported = try Self.reExported()
        for module in modules.sorted() where !shipped.contains(module) && !executables.contains(module) && !system.contains(module) {
            let allowed: Set<String>? = module == "FirebaseAuthCore" ? reExported : Self.handedOver[module].map { Set($0.keys) }
            let folder = sources.appendingPathComponent(module)
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let path as String in walker where path.hasSuffix(".swift") {
                let lines = try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8).components(separatedBy: "\n")
                for (number, line) in lines.enumerated() where Self.isPublicDeclaration(line) {
                    let place = "Sources/\(module)/\(path):\(number + 1)"
                    guard let allowed else {
                        Issue.record("\(place) is public, but no product ships \(module): make it package")
                        continue
                    }
                    // A member of a type handed over may be public; a new top-level type may not.
                    if let name = Self.topLevelName(line), !allowed.contains(name) {
                        Issue.record("\(place) makes \(name) public, which no product's public API hands a user: make it package (or list it in handedOver, with where)")
                    }
                }
            }
        }
        // The list holds what is there: a type no longer public leaves it.
        for (module, types) in Self.handedOver {
            let folder = sources.appendingPathComponent(module)
            let files = (FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
            let text = try files.map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
            for name in types.keys {
                #expect(text.contains("public struct \(name)") || text.contains("public enum \(name)") || text.contains("public final class \(name)"),
                        "handedOver lists \(module).\(name), which is not public there")
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
        #expect(Self.isPublicDeclaration("    @Int64Text public var limit: String?"), "an attribute with digits in its name")
        #expect(Self.topLevelName("public struct AppProfile: Sendable {") == "AppProfile")
        #expect(Self.topLevelName("    public var bundleID = \"\"") == nil, "a member")
    }
}
