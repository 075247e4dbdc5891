import Foundation
import Testing
import TestSupport

/// Every recipe in the README, run as written (issue 19): the blocks marked
/// `<!-- recipe: NAME expects: A | B -->` are extracted from README.md and run with bash from the
/// repository's root, so the README and what works cannot drift apart. The one liberty: `swift run
/// [-q] PRODUCT` runs the product this test run built (a `swift` on PATH that execs it), instead of
/// building the package again inside its own test.
@Suite("The README's recipes, as written", .serialized)
struct RecipeTests {
    static var root: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized }

    struct Recipe: CustomStringConvertible {
        let name: String
        let expects: [String]
        let script: String
        var description: String { name }
    }

    static let recipes: [Recipe] = {
        guard let readme = try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8) else { return [] }
        let pattern = try! NSRegularExpression(pattern: #"<!-- recipe: (\S+) expects: (.*?) -->\n```sh\n(.*?)```"#, options: [.dotMatchesLineSeparators])
        let text = readme as NSString
        return pattern.matches(in: readme, range: NSRange(location: 0, length: text.length)).map { match in
            Recipe(name: text.substring(with: match.range(at: 1)),
                   expects: text.substring(with: match.range(at: 2)).components(separatedBy: " | ").map { $0.trimmingCharacters(in: .whitespaces) },
                   script: text.substring(with: match.range(at: 3)))
        }
    }()

    @Test("the README has its five recipes")
    func found() {
        #expect(Self.recipes.map(\.name) == ["recaptcha-every-time", "invalid-token", "local-apns", "fallback", "auth-emulator"])
    }

    @Test("each recipe's commands work as pasted", arguments: recipes)
    func run(_ recipe: Recipe) async throws {
        if recipe.name == "auth-emulator" {
            guard await toolAvailable(["python3", "-c", "import firebase_admin"]) else { return }
        }
        let folder = temporaryDirectory("recipe-\(recipe.name)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // `swift run [-q] PRODUCT ARGS…` → the built PRODUCT; anything else → the real swift.
        let bin = URL(fileURLWithPath: try executable("authsim")).deletingLastPathComponent().path
        let shim = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: shim, withIntermediateDirectories: true)
        let realSwift = (try? await runProgram(["sh", "-c", "command -v swift"]).output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? "swift"
        try """
            #!/bin/sh
            if [ "$1" = run ]; then
              shift
              while [ "${1#-}" != "$1" ]; do shift; done
              product="$1"; shift
              exec "\(bin)/$product" "$@"
            fi
            exec "\(realSwift)" "$@"
            """.write(to: shim.appendingPathComponent("swift"), atomically: true, encoding: .utf8)
        _ = try await runProgram(["chmod", "+x", shim.appendingPathComponent("swift").path])
        // A fresh start: the folders the recipe makes (mkdir -p, --output) are removed first.
        let paths = try NSRegularExpression(pattern: #"(?:mkdir -p|--output) (/tmp/\S+)"#)
        let script = recipe.script as NSString
        for match in paths.matches(in: recipe.script, range: NSRange(location: 0, length: script.length)) {
            try? FileManager.default.removeItem(atPath: script.substring(with: match.range(at: 1)))
        }
        let file = folder.appendingPathComponent("recipe.sh")
        try ("exec 2>&1\ncd \"\(Self.root.path)\"\n" + recipe.script).write(to: file, atomically: true, encoding: .utf8)
        let run = try await runProgram(["PATH=\(shim.path):\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")",
                                        "timeout", "180", "bash", file.path])
        for expected in recipe.expects {
            #expect(run.output.contains(expected), "\(recipe.name): no \"\(expected)\" in\n\(run.output)")
        }
        #expect(!run.output.contains("Fatal error") && !run.output.contains("command not found"), "\(run.output)")
        #expect(run.status != 124, "\(recipe.name) timed out")
    }
}
