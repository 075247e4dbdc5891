import Foundation

/// Registers `redirect-interceptor` as the Linux desktop's handler for a URL scheme, as an app's
/// `CFBundleURLTypes` does on iOS: a desktop entry declaring `MimeType=x-scheme-handler/<scheme>`
/// in `$XDG_DATA_HOME/applications`, made the default in `$XDG_CONFIG_HOME/mimeapps.list`.
/// `xdg-open <scheme>://…` (and browsers, which call it) then start the interceptor with the URL.
package struct DesktopRegistration: Sendable {
    /// `$XDG_DATA_HOME` (default `~/.local/share`).
    package let dataHome: URL
    /// `$XDG_CONFIG_HOME` (default `~/.config`).
    package let configHome: URL

    package init(dataHome: URL, configHome: URL) {
        self.dataHome = dataHome
        self.configHome = configHome
    }

    /// The XDG directories from the environment.
    package static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> DesktopRegistration {
        let home = URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory())
        func directory(_ key: String, _ fallback: String) -> URL {
            if let value = environment[key], value.hasPrefix("/") { return URL(fileURLWithPath: value) }
            return home.appendingPathComponent(fallback)
        }
        return DesktopRegistration(dataHome: directory("XDG_DATA_HOME", ".local/share"),
                                   configHome: directory("XDG_CONFIG_HOME", ".config"))
    }

    package var applications: URL { dataHome.appendingPathComponent("applications") }
    package var mimeappsList: URL { configHome.appendingPathComponent("mimeapps.list") }

    /// The desktop file ID for `scheme`.
    package static func desktopID(for scheme: String) -> String { "authsim-redirect-\(scheme.lowercased()).desktop" }

    /// The entry's text: `Exec` runs `executable open --runtime-dir <dir> %u`.
    package static func desktopEntry(scheme: String, executable: String, runtimeDirectory: SchemeDirectory) -> String {
        """
        [Desktop Entry]
        Type=Application
        Version=1.5
        Name=authsim redirect interceptor (\(scheme))
        Comment=Hands \(scheme):// URLs to the simulated app that owns the scheme
        Exec=\(executable) open --runtime-dir \(runtimeDirectory.url.path) %u
        Terminal=false
        NoDisplay=true
        MimeType=x-scheme-handler/\(scheme.lowercased());

        """
    }

    /// Writes the entry and makes it the scheme's default handler. Returns the files written.
    @discardableResult
    package func register(scheme: String, executable: String, runtimeDirectory: SchemeDirectory) throws(InterceptorError) -> [URL] {
        try URLSchemeSyntax.validate(scheme)
        // xdg-open splits Exec on spaces without honouring quotes: refuse paths it would break.
        for (what, path) in [("the executable", executable), ("the runtime directory", runtimeDirectory.url.path)]
        where path.contains(where: \.isWhitespace) || path.contains("\"") || path.contains("%") {
            throw InterceptorError(.fileError, "\(what) path \(path) contains a space, quote or %: xdg-open cannot run it from a desktop entry")
        }
        guard executable.hasPrefix("/") else {
            throw InterceptorError(.fileError, "the executable must be an absolute path, not \(executable)")
        }
        let entry = applications.appendingPathComponent(Self.desktopID(for: scheme))
        do {
            try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
            try Self.desktopEntry(scheme: scheme, executable: executable, runtimeDirectory: runtimeDirectory)
                .write(to: entry, atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(at: configHome, withIntermediateDirectories: true)
            let existing = (try? String(contentsOf: mimeappsList, encoding: .utf8)) ?? ""
            let key = "x-scheme-handler/\(scheme.lowercased())"
            var text = Self.setting(key, to: Self.desktopID(for: scheme), in: "Default Applications", of: existing)
            text = Self.setting(key, to: Self.desktopID(for: scheme) + ";", in: "Added Associations", of: text)
            try text.write(to: mimeappsList, atomically: true, encoding: .utf8)
        } catch {
            throw InterceptorError(.fileError, "cannot register \(scheme): \(error.localizedDescription)")
        }
        return [entry, mimeappsList]
    }

    /// Removes the entry and its lines in `mimeapps.list`.
    package func unregister(scheme: String) throws(InterceptorError) {
        try URLSchemeSyntax.validate(scheme)
        try? FileManager.default.removeItem(at: applications.appendingPathComponent(Self.desktopID(for: scheme)))
        guard let existing = try? String(contentsOf: mimeappsList, encoding: .utf8) else { return }
        let key = "x-scheme-handler/\(scheme.lowercased())"
        let kept = existing.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix(key + "=") }
        do { try kept.joined(separator: "\n").write(to: mimeappsList, atomically: true, encoding: .utf8) } catch {
            throw InterceptorError(.fileError, "cannot rewrite \(mimeappsList.path): \(error.localizedDescription)")
        }
    }

    /// xdg-utils before 1.2 (Debian 12 ships 1.1.3) takes a URL whose scheme has a digit for a file
    /// path (freedesktop bug 104973): `xdg-open app-1-…://…` fails with "file … does not exist",
    /// and so do browsers that hand external URLs to xdg-open. Firebase's schemes always have digits.
    /// Returns a warning when the `xdg-open` on `PATH` has that bug and `scheme` has a digit.
    package static func xdgOpenWarning(for scheme: String, path: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") -> String? {
        guard scheme.contains(where: \.isNumber) else { return nil }
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/xdg-open"
            guard let script = try? String(contentsOfFile: candidate, encoding: .utf8) else { continue }
            guard script.contains("egrep -q '^[[:alpha:]+\\.\\-]+:'") else { return nil }
            return """
                \(candidate) treats URL schemes with digits as file paths (xdg-utils < 1.2, freedesktop bug 104973): \
                `xdg-open \(scheme)://…` fails with "file … does not exist", and so do browsers that call xdg-open. \
                `gio open <url>` (Debian: libglib2.0-bin) uses this registration correctly.
                """
        }
        return nil
    }

    /// The schemes this tool has registered (from its desktop entries).
    package func registeredSchemes() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: applications.path)) ?? []
        return files.filter { $0.hasPrefix("authsim-redirect-") && $0.hasSuffix(".desktop") }
            .map { String($0.dropFirst("authsim-redirect-".count).dropLast(".desktop".count)) }.sorted()
    }

    /// `key=value` in `[section]` of an INI-style text: replaced if present, added otherwise;
    /// every other line is kept as it was.
    static func setting(_ key: String, to value: String, in section: String, of text: String) -> String {
        var lines = text.isEmpty ? [] : text.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        let header = "[\(section)]"
        guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == header }) else {
            if !lines.isEmpty && lines.last != "" { lines.append("") }
            return (lines + [header, "\(key)=\(value)"]).joined(separator: "\n") + "\n"
        }
        var end = start + 1
        while end < lines.count, !lines[end].trimmingCharacters(in: .whitespaces).hasPrefix("[") { end += 1 }
        if let existing = (start + 1..<end).first(where: { lines[$0].trimmingCharacters(in: .whitespaces).hasPrefix(key + "=") }) {
            lines[existing] = "\(key)=\(value)"
        } else {
            var insert = end
            while insert > start + 1, lines[insert - 1].trimmingCharacters(in: .whitespaces).isEmpty { insert -= 1 }
            lines.insert("\(key)=\(value)", at: insert)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
