import DeviceOS
import Foundation
import Synchronization

/// The simulated app's process, as FirebaseCore sees it: the app around Firebase (its device,
/// delegate and files), its main bundle's folder, where its Firebase requests go, and the
/// `FirebaseApp`s configured in it (`FirebaseApp.configure()` makes the default one).
///
/// On a phone there is one per process. Here several simulated apps live in one test process,
/// each test with its own: a process is bound to a task (``run(_:)``; every task and completion
/// the SDK's calls start inherits it), or installed for the whole process (``install()``, for
/// code that hops threads by itself). `FirebaseApp.app()` asks the bound one, then the installed
/// one.
package final class AppProcess: Sendable {
    /// Where a process's Firebase requests go: authsim's backend, which the app's `Auth` reaches
    /// as `useEmulator(withHost:port:)` does, with app verification left on.
    package struct Backend: Sendable, Hashable {
        package let host: String
        package let port: Int
        /// The app's delegate calls `useEmulator(withHost:port:)` itself, which turns app
        /// verification off (a test host for a suite written against the Auth Emulator).
        package let delegateUsesEmulator: Bool
        package init(host: String, port: Int, delegateUsesEmulator: Bool = false) {
            self.host = host
            self.port = port
            self.delegateUsesEmulator = delegateUsesEmulator
        }
    }

    package let host: AppHost
    /// The app's folder (`Info.plist`, `GoogleService-Info.plist`): its main bundle. Nil: `Bundle.main`.
    package let bundle: URL?
    package let backend: Backend?
    /// The configured apps by name.
    let apps = Mutex<[String: FirebaseApp]>([:])

    package init(host: AppHost, bundle: URL? = nil, backend: Backend? = nil) {
        self.host = host
        self.bundle = bundle
        self.backend = backend
    }

    @TaskLocal static var bound: AppProcess?
    private static let installed = Mutex<AppProcess?>(nil)

    /// The process this task runs in: the bound one, else the installed one, else the test host
    /// the environment names (``TestHost``), launched on first use.
    package static var current: AppProcess? { bound ?? installed.withLock { $0 } ?? TestHost.launched }

    /// Runs `body` in this process: `FirebaseApp.configure()`, `FirebaseApp.app()` and
    /// `Auth.auth()` in it (and in every task it starts) mean this process's.
    package func run<T>(_ body: () async throws -> T) async rethrows -> T {
        try await Self.$bound.withValue(self, operation: body)
    }

    /// Makes this the process of every task not bound to one; the one installed before is returned.
    @discardableResult
    package func install() -> AppProcess? { Self.installed.withLock { old in defer { old = self }; return old } }

    /// The default app configured in this process, if any.
    package var defaultApp: FirebaseApp? { apps.withLock { $0[FirebaseApp.defaultName] } }

    /// Every configured app, deleted (the process ends).
    package func deleteAllApps() { apps.withLock { $0.removeAll() } }
}

/// The main bundle: the simulated app's folder, or `Bundle.main`.
struct MainBundle {
    let process: AppProcess?

    static var current: MainBundle { MainBundle(process: AppProcess.current) }

    /// `GoogleService-Info.plist` in the main bundle, as `FIRBundleUtil` finds it.
    var googleServiceInfo: URL? {
        if let folder = process?.bundle {
            let file = folder.appendingPathComponent("GoogleService-Info.plist")
            return FileManager.default.fileExists(atPath: file.path) ? file : nil
        }
        if let file = Bundle.main.url(forResource: "GoogleService-Info", withExtension: "plist") { return file }
        let beside = Bundle.main.bundleURL.appendingPathComponent("GoogleService-Info.plist")
        return FileManager.default.fileExists(atPath: beside.path) ? beside : nil
    }

    /// What the configure error names as the place it looked.
    var searched: String {
        if let folder = process?.bundle { return "the simulated app's bundle, \(folder.path)" }
        return "Bundle.main (\(Bundle.main.bundleURL.path))"
    }
}
