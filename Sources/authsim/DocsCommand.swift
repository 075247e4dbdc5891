import ArgumentParser
import CommandSupport
import Foundation

/// `authsim docs`: where the documentation is installed, and its pages.
struct Docs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List authsim's documentation (the README and docs/, installed with the release), or print one page.",
        discussion: "`authsim docs` names every page and its file; `authsim docs fleet` prints docs/fleet.md (`| less` to read it).")

    @Argument(help: ArgumentHelp("A page to print: README, fleet, security, docs/inspector.md, …", valueName: "page")) var page: String?
    @Flag(help: "Print only the folder that holds README.md and docs/.") var path = false

    func run() throws {
        guard let documentation = Documentation.find() else {
            throw CommandFailure("no documentation beside this program or above it (README.md and docs/): reinstall the release, or run from a source checkout")
        }
        if path { return say(documentation.root.path) }
        guard let page else {
            say("authsim's documentation: \(documentation.root.path)")
            let pages = documentation.pages()
            let width = pages.map(\.name.count).max() ?? 0
            for page in pages {
                say("  \(page.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(page.title)")
            }
            say("`authsim docs <page>` prints one; the files are \(documentation.readme.path) and \(documentation.folder.path)/<page>.md")
            return
        }
        guard let found = documentation.page(named: page) else {
            throw ValidationError("no page \(page) in \(documentation.folder.path): `authsim docs` lists them")
        }
        let text = try String(contentsOf: found.file, encoding: .utf8)
        say(text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }
}
