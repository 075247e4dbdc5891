import ArgumentParser
import Utilities
import CommandSupport
import Foundation
import RedirectInterceptor

struct RedirectInterceptorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redirect-interceptor",
        abstract: "The OS's custom-URL-scheme handler: hands app-1-…:// redirects to the running app that owns the scheme.",
        discussion: """
            A simulated app (authsim phone) claims its Info.plist URL schemes while it runs. `open` hands it a URL, \
            where Auth.canHandle(url) decides, and prints whether the URL was handled and, if not, exactly why. \
            `register` makes this program the desktop's x-scheme-handler for a scheme, so that xdg-open and browsers \
            start it with the URL, as iOS opens an app from its CFBundleURLTypes.
            """,
        version: AuthsimVersion.current,
        subcommands: [Open.self, Register.self, Unregister.self, Status.self],
        defaultSubcommand: Open.self)
}

struct RuntimeOption: ParsableArguments {
    @Option(help: "Where running apps claim their schemes (default: $AUTHSIM_RUNTIME_DIR, else $XDG_RUNTIME_DIR/authsim, else /tmp/authsim-<uid>).")
    var runtimeDir: String?

    var directory: SchemeDirectory {
        runtimeDir.map { SchemeDirectory(url: URL(fileURLWithPath: $0).standardizedFileURL) } ?? .standard()
    }
}

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hand URLs to the apps that own their schemes.",
        discussion: """
            URLs come as arguments, or one per line on standard input when there are none (or the argument is -). \
            Each outcome is also appended to interceptor.log in the runtime directory (a desktop-started interceptor has no terminal). \
            Exit status: 0 every URL was handled; 1 an app refused a URL (the reason is printed); \
            2 a URL could not be delivered (not a URL, no running app owns its scheme, the app did not answer).
            """)

    @OptionGroup var runtime: RuntimeOption
    @Flag(help: "One JSON object per URL instead of text.") var json = false
    @Option(help: ArgumentHelp("Seconds the app that owns a scheme has to answer (a busy machine, an app paused in a debugger).", valueName: "seconds"))
    var answerTimeout = 10.0
    @Argument(help: "The URLs (none or - : read standard input).") var urls: [String] = []

    func validate() throws {
        guard answerTimeout > 0, answerTimeout <= 3600 else { throw ValidationError("--answer-timeout is seconds, more than 0 and at most 3600, not \(answerTimeout)") }
    }

    func run() async throws {
        var inputs = urls.filter { $0 != "-" }
        if urls.isEmpty || urls.contains("-") {
            while let line = readLine() {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { inputs.append(line) }
            }
        }
        guard !inputs.isEmpty else { throw ValidationError("no URL given (as an argument or on standard input)") }
        let directory = runtime.directory
        var status: Int32 = 0
        for input in inputs {
            let record: [String: String]
            do {
                let answer = try await RedirectDispatcher.dispatch(input, directory: directory,
                                                                   answerTimeout: .milliseconds(Int64(answerTimeout * 1000)))
                record = ["url": input, "outcome": answer.handled ? "handled" : "refused", "app": answer.bundleID,
                          "detail": answer.detail, "reason": answer.reason ?? ""]
                if !answer.handled { status = max(status, 1) }
            } catch {
                record = ["url": input, "outcome": "undelivered", "app": "", "detail": error.message, "reason": error.code.rawValue]
                status = 2
            }
            report(record)
            log(record, in: directory)
        }
        if status != 0 { throw ExitCode(status) }
    }

    private func report(_ record: [String: String]) {
        if json {
            let data = (try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])) ?? Data()
            say(String(decoding: data, as: UTF8.self))
            return
        }
        let url = record["url"] ?? ""
        switch record["outcome"] {
        case "handled": say("handled by \(record["app"] ?? ""): \(record["detail"] ?? "")\n  \(url)")
        case "refused": say("not handled by \(record["app"] ?? "") (\(record["reason"] ?? "")): \(record["detail"] ?? "")\n  \(url)")
        default: say("not delivered (\(record["reason"] ?? "")): \(record["detail"] ?? "")\n  \(url)")
        }
    }

    private func log(_ record: [String: String], in directory: SchemeDirectory) {
        var entry = record
        entry["time"] = ISO8601DateFormatter().string(from: Date())
        guard var data = try? JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys]) else { return }
        data.append(UInt8(ascii: "\n"))
        try? FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        // O_APPEND: interceptors started at once by the desktop append whole lines.
        let descriptor = open(directory.url.appendingPathComponent("interceptor.log").path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { return }
        _ = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
}

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make this program the desktop's handler for URL schemes (x-scheme-handler/<scheme>).",
        discussion: """
            Writes $XDG_DATA_HOME/applications/authsim-redirect-<scheme>.desktop and sets it as the default in \
            $XDG_CONFIG_HOME/mimeapps.list. Check with: xdg-mime query default x-scheme-handler/<scheme>
            """)

    @OptionGroup var runtime: RuntimeOption
    @Option(help: "The program the desktop entry runs (default: this one).") var executable: String?
    @Argument(help: "The schemes, e.g. app-1-123456789012-ios-a1b2c3d4e5f60718.") var schemes: [String]

    /// This program's path: the running binary, unless that is `authsim` started under this
    /// program's name (the release bundle's link, the wheel's launcher). Then the path of that name,
    /// so that the desktop entry runs redirect-interceptor, not authsim.
    static func thisProgram() -> String {
        let binary = runningExecutable()
        let invoked = CommandLine.arguments[0]
        guard URL(fileURLWithPath: binary).lastPathComponent != "redirect-interceptor" else { return binary }
        if invoked.contains("/") { return URL(fileURLWithPath: invoked).standardizedFileURL.path }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(folder)/\(invoked)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return binary
    }

    func run() async throws {
        let program = executable ?? Self.thisProgram()
        let registration = DesktopRegistration.standard()
        for scheme in schemes {
            do {
                let files = try registration.register(scheme: scheme, executable: program, runtimeDirectory: runtime.directory)
                say("registered \(scheme): \(files.map(\.path).joined(separator: ", "))")
                if let warning = DesktopRegistration.xdgOpenWarning(for: scheme) { say("warning: \(warning)") }
            } catch {
                say("cannot register \(scheme): \(error.message)")
                throw ExitCode(2)
            }
        }
        say("gio open / xdg-open <scheme>://… now run \(program) open --runtime-dir \(runtime.directory.url.path) <url>")
    }
}

struct Unregister: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove the desktop handler entries for URL schemes.")
    @Argument(help: "The schemes.") var schemes: [String]

    func run() async throws {
        let registration = DesktopRegistration.standard()
        for scheme in schemes {
            do { try registration.unregister(scheme: scheme) } catch {
                say("cannot unregister \(scheme): \(error.message)")
                throw ExitCode(2)
            }
            say("unregistered \(scheme)")
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List running apps and their schemes, and the schemes registered with the desktop.")
    @OptionGroup var runtime: RuntimeOption

    func run() async throws {
        let directory = runtime.directory
        say("runtime directory: \(directory.url.path)")
        let claims = directory.claims()
        if claims.isEmpty { say("  no app claims a scheme") }
        for claim in claims {
            var alive = false
            if let socket = try? directory.socket(for: claim.scheme) { alive = await RedirectDispatcher.isAlive(socket: socket) }
            say("  \(claim.scheme)  \(claim.bundleID)  pid \(claim.pid)  \(alive ? "running" : "stale (not answering)")")
        }
        let registration = DesktopRegistration.standard()
        let registered = registration.registeredSchemes()
        say("desktop handlers in \(registration.applications.path): \(registered.isEmpty ? "none" : registered.joined(separator: ", "))")
    }
}
