import Foundation

/// authsim's documentation where it is installed: the README and `docs/` beside the release's
/// `bin/` (the tarball, and the wheel's bundle), or at the root of the source checkout a build
/// folder's program runs from. `authsim docs` lists and prints its pages.
package struct Documentation: Sendable {
    /// The folder holding `README.md` and `docs/`.
    package let root: URL

    package var readme: URL { root.appendingPathComponent("README.md") }
    package var folder: URL { root.appendingPathComponent("docs") }

    /// The documentation of the program at `executable` (default: this process's): beside its
    /// `bin/`, else in the first folder above it with `Package.swift`, `README.md` and `docs/` (a
    /// source checkout's `.build/<triple>/debug/authsim`). `nil` when neither has it.
    package static func find(executable: String? = nil) -> Documentation? {
        let exe = executable ?? runningExecutable()
        var folder = URL(fileURLWithPath: exe).resolvingSymlinksInPath().deletingLastPathComponent()
        let release = folder.deletingLastPathComponent()
        if Self.holdsDocumentation(release) { return Documentation(root: release) }
        while folder.path != "/" && !folder.path.isEmpty {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path), holdsDocumentation(folder) {
                return Documentation(root: folder)
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    static func holdsDocumentation(_ folder: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder.appendingPathComponent("README.md").path)
            && FileManager.default.fileExists(atPath: folder.appendingPathComponent("docs").path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// A page: its name (`fleet`, `README`), file and title (its first `# ` line).
    package struct Page: Sendable, Equatable {
        package let name: String
        package let file: URL
        package let title: String
    }

    /// The README, then every page of `docs/` by name.
    package func pages() -> [Page] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let docs = files.filter { $0.hasSuffix(".md") }.sorted().map { folder.appendingPathComponent($0) }
        return ([readme] + docs).map { file in
            let name = file == readme ? "README" : String(file.lastPathComponent.dropLast(3))
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            let title = text.split(separator: "\n").first { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) } ?? ""
            return Page(name: name, file: file, title: title)
        }
    }

    /// The page a user names: `fleet`, `fleet.md`, `docs/fleet.md`, `README`; any case.
    package func page(named given: String) -> Page? {
        var name = given
        if name.hasPrefix("docs/") { name.removeFirst(5) }
        if name.lowercased().hasSuffix(".md") { name.removeLast(3) }
        return pages().first { $0.name.lowercased() == name.lowercased() }
    }
}

/// This process's binary: `/proc/self/exe`'s target (the real file behind a link such as the
/// release's `bin/push-receiver`), else `argv[0]`.
package func runningExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
}
