import ArgumentParser

/// Parses the command line for `Root` (or one of its subcommands) and runs it, as
/// `AsyncParsableCommand.main()` does, except that an error a subcommand's `run()` throws names
/// that subcommand: ArgumentParser prints a `ValidationError` thrown after parsing with the root's
/// usage (`Usage: authsim <subcommand>`); here it gets the subcommand's usage and help hint
/// (`Usage: authsim serve [--host <host>] …`, `See 'authsim serve --help'`), and exit status 64 as
/// ArgumentParser gives validation errors. Every other error is ArgumentParser's `Error: …`.
package func runCommand<Root: AsyncParsableCommand>(_ root: Root.Type) async {
    let command: any ParsableCommand
    do { command = try root.parseAsRoot() } catch { root.exit(withError: error) }
    do {
        if var asynchronous = command as? any AsyncParsableCommand {
            try await asynchronous.run()
        } else {
            var synchronous = command
            try synchronous.run()
        }
    } catch let error as ValidationError {
        let subcommand = type(of: command)
        let usage = subcommand == root ? root.usageString() : root.usageString(for: subcommand)
        let path = usage.split(separator: " ").prefix { !$0.hasPrefix("[") && !$0.hasPrefix("<") && !$0.hasPrefix("-") }.joined(separator: " ")
        sayError("Error: \(error.message)\nUsage: \(usage)\n  See '\(path) --help' for more information.")
        root.exit(withError: ExitCode.validationFailure)
    } catch {
        root.exit(withError: error)
    }
}
