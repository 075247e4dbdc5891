import DeviceOS
import Foundation
import Synchronization

/// `FirebaseApp`, as FirebaseCore 12.19 names it (FirebaseCore/Sources/Public/FirebaseCore/FIRApp.h,
/// FIRApp.m): `configure()` reads the main bundle's `GoogleService-Info.plist`,
/// `configure(options:)` and `configure(name:options:)` take options, `app()` and `app(name:)`
/// find them.
///
/// The main bundle and the app around Firebase are the simulated app's process (``AppProcess``):
/// the one AuthsimTesting binds to the test's task, or installs. Where the SDK raises an
/// `NSException` (no plist, a second `configure()`, a bad name), this stops the program with the
/// SDK's message too, adding what to do on Linux: Swift cannot catch an `NSException` either, and
/// an app that carries on with no `FirebaseApp` only fails later, further from the cause.
///
/// `@unchecked Sendable`: `name` and `options` are constants (options a locked copy), and the
/// components and the data-collection flag live in `Mutex`es.
public final class FirebaseApp: @unchecked Sendable {
    /// The default app's name (`kFIRDefaultAppName`).
    static let defaultName = "__FIRAPP_DEFAULT"

    /// The app's name: `__FIRAPP_DEFAULT` for the default app.
    public let name: String
    private let lockedOptions: FirebaseOptions
    /// A copy of the options the app was configured with, locked against changes.
    public var options: FirebaseOptions { lockedOptions.copy() as! FirebaseOptions }
    /// The app around Firebase: its bundle, Info.plist, delegate, device.
    package let host: AppHost
    /// Where this app's Firebase requests go, when its process says (AuthsimTesting's backend).
    package let backend: AppProcess.Backend?

    /// The products' instances, each in a box: `Auth` is not Sendable (as in 12.19), and the app
    /// hands it out only to code of its own process.
    private let components = Mutex<[ObjectIdentifier: Component]>([:])
    private struct Component: @unchecked Sendable { let instance: AnyObject }
    private let dataCollection = Mutex<Bool?>(nil)

    /// An app of its own, in no process's list (one per simulated app in a scenario). Its host,
    /// the app's process, keeps it until the process ends or the app is deleted, as the SDK's
    /// registry keeps an app until `delete()`.
    package init(name: String, options: FirebaseOptions, host: AppHost, backend: AppProcess.Backend? = nil) {
        self.name = name
        self.lockedOptions = options.lockedCopy()
        self.host = host
        self.backend = backend
        host.keepWhileRunning(self)
    }

    /// `isDataCollectionDefaultEnabled`: true unless set false (kept per app, in memory).
    public var isDataCollectionDefaultEnabled: Bool {
        get { dataCollection.withLock { $0 } ?? true }
        set { dataCollection.withLock { $0 = newValue } }
    }

    /// This app's instance of a Firebase product (its `Auth`), made on first use and kept by the
    /// app, as the SDK's component container keeps them.
    package func component<T: AnyObject>(_ type: T.Type, make: (FirebaseApp) -> T) -> T {
        let component = components.withLock { components -> Component in
            if let made = components[ObjectIdentifier(type)] { return made }
            let made = Component(instance: make(self))
            components[ObjectIdentifier(type)] = made
            return made
        }
        return component.instance as! T
    }

    // MARK: Configuring

    /// `FirebaseApp.configure()`: the default app, from the main bundle's `GoogleService-Info.plist`.
    public static func configure() {
        guard let options = FirebaseOptions.defaultOptions() else {
            let bundle = MainBundle.current
            // FIRApp.m `+configure`, then where authsim looked and how to give it a plist.
            fatalError("""
                `FirebaseApp.configure()` could not find a valid GoogleService-Info.plist in your project. Please download \
                one from https://console.firebase.google.com/. (authsim looked in \(bundle.searched). On Linux, give the test \
                a simulated app with AuthsimTesting, whose bundle holds one, or call FirebaseApp.configure(options:).)
                """)
        }
        configure(options: options)
    }

    /// `FirebaseApp.configure(options:)`: the default app.
    public static func configure(options: FirebaseOptions) {
        configure(name: defaultName, options: options)
    }

    /// `FirebaseApp.configure(name:options:)`. Names hold letters, digits, `-` and `_`.
    public static func configure(name: String, options: FirebaseOptions) {
        if name.isEmpty { fatalError("Name cannot be empty.") }
        if name != defaultName,
           !name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" }) {
            fatalError("App name can only contain alphanumeric, hyphen (-), and underscore (_) characters")
        }
        let process = processForConfiguring()
        let app = FirebaseApp(name: name, options: options, host: process.host, backend: process.backend)
        let added = process.apps.withLock { apps in
            if apps[name] != nil { return false }
            apps[name] = app
            return true
        }
        if !added {
            fatalError(name == defaultName ? "Default app has already been configured." : "App named \(name) has already been configured.")
        }
    }

    /// Configures the default app of a new process around `host`, installed for the whole program:
    /// what the guides' tests do, one at a time.
    package static func configure(options: FirebaseOptions, host: AppHost, backend: AppProcess.Backend? = nil) {
        let process = AppProcess(host: host, backend: backend)
        process.install()
        configure(options: options)
    }

    /// The process `configure` adds to: the current one, else one for `Bundle.main` (a program that
    /// carries its own `GoogleService-Info.plist` and no simulated app).
    private static func processForConfiguring() -> AppProcess {
        if let process = AppProcess.current { return process }
        let schemes = (Bundle.main.object(forInfoDictionaryKey: "CFBundleURLTypes") as? [[String: Any]] ?? [])
            .flatMap { $0["CFBundleURLSchemes"] as? [String] ?? [] }
        let process = AppProcess(host: AppHost(AppHost.Configuration(bundleID: Bundle.main.bundleIdentifier ?? "", urlSchemes: schemes)))
        process.install()
        return AppProcess.current ?? process
    }

    // MARK: Finding

    /// `FirebaseApp.app()`: the default app, or nil (logged, as the SDK does, with what to do).
    public static func app() -> FirebaseApp? {
        if let app = AppProcess.current?.apps.withLock({ $0[defaultName] }) { return app }
        log("I-COR000003", """
            The default Firebase app has not yet been configured. Add `FirebaseApp.configure()` to your application \
            initialization. (authsim: \(AppProcess.current == nil ? "no simulated app is bound to this task or installed" : "this task's simulated app has no default FirebaseApp").)
            """)
        return nil
    }

    /// `FirebaseApp.app(name:)`: the app of that name, or nil.
    public static func app(name: String) -> FirebaseApp? {
        if let app = AppProcess.current?.apps.withLock({ $0[name] }) { return app }
        log("I-COR000004", "App with name \(name) does not exist.")
        return nil
    }

    /// `FirebaseApp.allApps`: nil until an app is configured.
    public static var allApps: [String: FirebaseApp]? {
        let apps = AppProcess.current?.apps.withLock { $0 } ?? [:]
        if apps.isEmpty {
            log("I-COR000005", "No app has been configured yet.")
            return nil
        }
        return apps
    }

    /// `delete(_:)`: removes the app (and its `Auth`) from its process; false if it is not there.
    public func delete(_ completion: @escaping @Sendable (Bool) -> Void) {
        let removed = AppProcess.current?.apps.withLock { apps -> Bool in
            guard apps[name] === self else { return false }
            apps[name] = nil
            return true
        } ?? false
        if removed {
            components.withLock { $0.removeAll() }
            host.stopKeeping(self)
        }
        completion(removed)
    }

    /// `delete()`, async.
    public func delete() async -> Bool {
        await withCheckedContinuation { continuation in delete { continuation.resume(returning: $0) } }
    }

    /// FirebaseCore's log line: `[FirebaseCore][I-COR…] message`, on standard error.
    private static func log(_ code: String, _ message: String) {
        FileHandle.standardError.write(Data("[FirebaseCore][\(code)] \(message)\n".utf8))
    }
}
