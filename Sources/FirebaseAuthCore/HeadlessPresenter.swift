import DeviceOS
import Foundation
import HTTPTransport
import Utilities

/// How a presenter hands the page's redirect to the OS, which opens it in the app that owns the scheme.
package enum RedirectHandOff: Sendable {
    /// Straight to this app (`AppHost.open(url)`), as iOS does for the app that presented the page.
    case app
    /// Through a program that gets the URL as its last argument: `xdg-open` (the desktop's
    /// x-scheme-handler, e.g. a registered `redirect-interceptor`) or `redirect-interceptor open`.
    case command([String])
}

/// What a presenter did, for timelines.
package struct PresenterEvent: Sendable, CustomStringConvertible {
    package enum Kind: String, Sendable {
        /// The page is open (in a browser).
        case loaded
        /// The page did not load, or the hand-off command failed.
        case failed
        /// The page closed without a redirect (the user cancelled).
        case closed
        /// The user works on the challenge.
        case challenge
        /// The page redirected to the app's scheme, and the OS opened it in the app.
        case redirect
        /// The page redirects to the app's scheme, and the redirect goes to a command (xdg-open,
        /// gio open, redirect-interceptor).
        case handingOff
        /// The command took the redirect (it exited 0).
        case handedOff
        /// The app did not take the redirect.
        case refused
        /// Nothing came back in time.
        case timedOut
    }
    package let kind: Kind
    package let message: String
    /// For ``Kind/refused``: why the app did not take the redirect.
    package let refusal: URLRefusal.Code?
    package init(_ kind: Kind, _ message: String, refusal: URLRefusal.Code? = nil) {
        self.kind = kind
        self.message = message
        self.refusal = refusal
    }
    package var description: String { message }
}

/// The default reCAPTCHA presenter: loads the page like a browser without scripts would, follows
/// its redirect link after the page's delay (on the app's clock), and hands the URL to the OS. A
/// page without a redirect is a user who closed it.
package struct HeadlessPresenter: AuthUIDelegate {
    package let handOff: RedirectHandOff
    /// What the presenter did, for timelines.
    package let onEvent: @Sendable (PresenterEvent) -> Void

    /// How long the page waits, after a successful hand-off to a command, for the URL to reach Auth.
    package let handOffTimeout: Duration

    package init(handOff: RedirectHandOff = .app, handOffTimeout: Duration = .seconds(10),
                onEvent: @escaping @Sendable (PresenterEvent) -> Void = { _ in }) {
        self.handOff = handOff
        self.handOffTimeout = handOffTimeout
        self.onEvent = onEvent
    }

    package func present(_ url: URL, host: AppHost) async {
        let answer: TransportResponse
        do { answer = try await host.transport.send(TransportRequest(method: "GET", url: url)) } catch {
            onEvent(.init(.failed, "the page did not load: \(error)"))
            return
        }
        let html = String(decoding: answer.body, as: UTF8.self)
        if answer.status != 200 {
            let status = answer.status
            let detail = html.firstMatch(of: /id="authsim-error">([^<]*)</).map { String($0.1) } ?? html.prefix(200).description
            onEvent(.init(.failed, "the page answered HTTP \(status): \(detail)"))
            return
        }
        guard let redirect = Self.redirect(in: html) else {
            onEvent(.init(.closed, "the page has no redirect: the user closed it"))
            return
        }
        let delay = Self.delay(in: html)
        if delay > .zero {
            onEvent(.init(.challenge, "the challenge takes \(delay)"))
            do { try await host.clock.sleep(for: delay) } catch { return }
        }
        switch handOff {
        case .app:
            onEvent(.init(.redirect, "the page redirects to \(redirect.scheme ?? "?")://…; the OS opens it in the app"))
            if case .refused(let refusal) = host.handleOpen(redirect) {
                onEvent(.init(.refused, "the app did not take the redirect (\(refusal.code.rawValue)): \(refusal.message)", refusal: refusal.code))
            }
        case .command(let command):
            onEvent(.init(.handingOff, "the page redirects to \(redirect.scheme ?? "?")://…; handed to \(command.joined(separator: " "))"))
            let result = await ExternalProgram.run(command + [redirect.absoluteString])
            let firstLine = result.output.split(separator: "\n").first.map(String.init) ?? ""
            onEvent(.init(result.status == 0 ? .handedOff : .failed, "\(command.first ?? "") exited \(result.status)\(firstLine.isEmpty ? "" : ": " + firstLine)"))
            // Like a web view after its redirect, the page stays until Auth takes the URL (which
            // ends the presentation) — `gio open` returns before the handler it starts is done.
            guard result.status == 0, !Task.isCancelled else { return }
            do { try await host.clock.sleep(for: handOffTimeout) } catch { return }
            onEvent(.init(.timedOut, "no redirect reached Auth within \(handOffTimeout) of the hand-off"))
        }
    }

    /// The page at `url` loaded as this presenter loads it, and its redirect link; nil when it does
    /// not load or has none (for presenters that do something else with the redirect).
    package static func loadRedirect(_ url: URL, host: AppHost) async -> URL? {
        guard let answer = try? await host.transport.send(TransportRequest(method: "GET", url: url)), answer.status == 200 else { return nil }
        return redirect(in: String(decoding: answer.body, as: UTF8.self))
    }

    /// The page's redirect link (`<a id="authsim-redirect" href="…">`), its `&amp;`s unescaped.
    package static func redirect(in html: String) -> URL? {
        // Searched as bytes: the standard library's generic firstRange(of:) and
        // replacing(_:with:) (_StringProcessing) were 3 % of the reCAPTCHA path's CPU, and
        // Foundation's range(of:) a tenth of the page's handling before them.
        var html = html
        let href: [UInt8]? = html.withUTF8 { page in
            guard let marker = end(of: "id=\"authsim-redirect\"", in: page, from: 0),
                  let start = end(of: "href=\"", in: page, from: marker),
                  let stop = page[start...].firstIndex(of: UInt8(ascii: "\""))
            else { return nil }
            return unescapingAmpersands(page[start..<stop])
        }
        return href.flatMap { URL(string: String(decoding: $0, as: UTF8.self)) }
    }

    /// How long the page's challenge takes (`data-delay` seconds).
    static func delay(in html: String) -> Duration {
        var html = html
        let seconds: Double? = html.withUTF8 { page in
            guard let start = end(of: "data-delay=\"", in: page, from: 0),
                  let stop = page[start...].firstIndex(of: UInt8(ascii: "\""))
            else { return nil }
            return Double(String(decoding: page[start..<stop], as: UTF8.self))
        }
        guard let seconds, seconds > 0 else { return .zero }
        return .milliseconds(Int(seconds * 1000))
    }

    /// The index just past the first `needle` in `page` at or after `from`.
    static func end(of needle: StaticString, in page: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        let count = needle.utf8CodeUnitCount
        guard let base = page.baseAddress, count > 0, from >= 0 else { return nil }
        let first = needle.utf8Start.pointee
        var index = from
        while index + count <= page.count {
            if page[index] == first, memcmp(base + index, needle.utf8Start, count) == 0 { return index + count }
            index += 1
        }
        return nil
    }

    /// `bytes` with every `&amp;` as `&`.
    static func unescapingAmpersands(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8] {
        let escaped = Array("&amp;".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "&"), bytes.endIndex - index >= escaped.count, bytes[index..<index + escaped.count].elementsEqual(escaped) {
                out.append(UInt8(ascii: "&"))
                index += escaped.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }
}

/// Presents the page in a real browser: runs `command` with the URL (`xdg-open`, `chromium`, …)
/// and waits, as a web view stays open, until the redirect comes back through the app's scheme
/// (`redirect-interceptor` registered as the desktop's handler) or `timeout` passes on the app's
/// clock (the user gave up: 17058).
package struct BrowserPresenter: AuthUIDelegate {
    package let command: [String]
    package let timeout: Duration
    package let onEvent: @Sendable (PresenterEvent) -> Void

    package init(command: [String] = ["xdg-open"], timeout: Duration = .seconds(300),
                onEvent: @escaping @Sendable (PresenterEvent) -> Void = { _ in }) {
        self.command = command
        self.timeout = timeout
        self.onEvent = onEvent
    }

    package func present(_ url: URL, host: AppHost) async {
        onEvent(.init(.loaded, "opens the page with \(command.joined(separator: " ")); waiting up to \(timeout) for the redirect"))
        let browser = Task { await ExternalProgram.run(command + [url.absoluteString]) }
        try? await host.clock.sleep(for: timeout)
        if !Task.isCancelled { onEvent(.init(.timedOut, "no redirect within \(timeout)")) }
        _ = browser
    }
}

/// Runs a program without blocking a thread: the caller is resumed by the termination handler.
enum ExternalProgram {
    struct Result: Sendable {
        let status: Int32
        let output: String
    }

    /// Output goes to a file, not a pipe: a program that leaves a child running (a browser
    /// started by xdg-open) would keep a pipe open and its reader waiting.
    static func run(_ arguments: [String]) async -> Result {
        guard let first = arguments.first else { return Result(status: -1, output: "no command") }
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let child: ChildProcess
        do { child = try ChildProcess(arguments, output: .file(outputFile.path), errors: .file(outputFile.path)) } catch {
            return Result(status: -1, output: "cannot run \(first): \(error.localizedDescription)")
        }
        let status = await child.wait()
        return Result(status: status, output: (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "")
    }
}
