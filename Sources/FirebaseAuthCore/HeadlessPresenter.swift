import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default reCAPTCHA presenter: loads the page like a browser would, follows its redirect
/// link after the page's delay (on the app's clock), and hands the URL to the OS, which opens it
/// in the app that owns the scheme. A page without a redirect is a user who closed it.
public struct HeadlessPresenter: AuthUIDelegate {
    public init() {}

    public func present(_ url: URL, host: AppHost) async {
        guard let (data, _) = try? await URLSession.shared.data(from: url) else { return }
        let html = String(decoding: data, as: UTF8.self)
        guard let marker = html.range(of: "id=\"authsim-redirect\""),
              let hrefStart = html.range(of: "href=\"", range: marker.upperBound..<html.endIndex),
              let hrefEnd = html.range(of: "\"", range: hrefStart.upperBound..<html.endIndex),
              let redirect = URL(string: String(html[hrefStart.upperBound..<hrefEnd.lowerBound])
                  .replacingOccurrences(of: "&amp;", with: "&"))
        else { return }
        var delay = 0.0
        if let delayStart = html.range(of: "data-delay=\""),
           let delayEnd = html.range(of: "\"", range: delayStart.upperBound..<html.endIndex) {
            delay = Double(html[delayStart.upperBound..<delayEnd.lowerBound]) ?? 0
        }
        if delay > 0 { try? await host.clock.sleep(for: .milliseconds(Int(delay * 1000))) }
        host.open(redirect)
    }
}
