import DeviceOS
import Foundation
import RedirectInterceptor

extension SchemeListener {
    /// The app claims its `Info.plist` URL schemes while it runs: a URL that `redirect-interceptor`
    /// hands to one of them is opened in the app (`AppHost.handleOpen`), where the delegate passes
    /// it to `Auth.canHandle(url)`, and the answer says what Auth did with it.
    package static func claim(for host: AppHost, directory: SchemeDirectory = .standard(),
                             onURL: @escaping @Sendable (URL, URLHandling) -> Void = { _, _ in }) async throws(InterceptorError) -> SchemeListener {
        try await start(schemes: host.urlSchemes, bundleID: host.bundleID, directory: directory) { url in
            let handling = host.handleOpen(url)
            onURL(url, handling)
            switch handling {
            case .handled(let what):
                return InterceptorAnswer(handled: true, bundleID: host.bundleID, detail: "Auth.canHandle(url) took \(what)")
            case .refused(let refusal):
                return InterceptorAnswer(handled: false, bundleID: host.bundleID, detail: refusal.message, reason: refusal.code.rawValue)
            }
        }
    }
}
