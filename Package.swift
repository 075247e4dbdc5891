// swift-tools-version: 6.1
import PackageDescription

// One library per role; executables are thin. See README.md ("Layout") and ../shared/DESIGN.md.
// Targets are listed bottom-up: generic pieces, wire formats and contracts, the parts, then what
// runs them.

let nio = { (name: String) in Target.Dependency.product(name: name, package: "swift-nio") }
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
let hummingbirdCore = Target.Dependency.product(name: "HummingbirdCore", package: "hummingbird")

let package = Package(
    name: "authsim",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Utilities", targets: ["Utilities"]),
        .library(name: "APNsWire", targets: ["APNsWire"]),
        .library(name: "IdentityToolkitAPI", targets: ["IdentityToolkitAPI"]),
        .library(name: "HTTP2Wire", targets: ["HTTP2Wire"]),
        .library(name: "HTTPTransport", targets: ["HTTPTransport"]),
        .library(name: "HTTPServerSupport", targets: ["HTTPServerSupport"]),
        .library(name: "LocalPKI", targets: ["LocalPKI"]),
        .library(name: "APNsSender", targets: ["APNsSender"]),
        .library(name: "APNsReceiver", targets: ["APNsReceiver"]),
        .library(name: "AuthBackend", targets: ["AuthBackend"]),
        .library(name: "DeviceOS", targets: ["DeviceOS"]),
        .library(name: "FirebaseAuthCore", targets: ["FirebaseAuthCore"]),
        // The SDK's module names, for an app's own code on Linux (docs/app-code-on-linux.md).
        .library(name: "FirebaseCore", targets: ["FirebaseCore"]),
        .library(name: "FirebaseAuth", targets: ["FirebaseAuth"]),
        .library(name: "AuthsimTesting", targets: ["AuthsimTesting"]),
        .library(name: "RedirectInterceptor", targets: ["RedirectInterceptor"]),
        .library(name: "DeviceLink", targets: ["DeviceLink"]),
        .library(name: "Scenarios", targets: ["Scenarios"]),
        .library(name: "Causes", targets: ["Causes"]),
        .library(name: "Diagnostics", targets: ["Diagnostics"]),
        .library(name: "Inspector", targets: ["Inspector"]),
        .library(name: "PostgresStores", targets: ["PostgresStores"]),
        .executable(name: "apns-sender", targets: ["apns-sender"]),
        .executable(name: "push-receiver", targets: ["push-receiver"]),
        .executable(name: "redirect-interceptor", targets: ["redirect-interceptor"]),
        .executable(name: "authsim", targets: ["authsim"]),
        .executable(name: "authsim-fuzz", targets: ["authsim-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // The backend's and the device gateway's HTTP: router, middleware, errors that render
        // themselves, HummingbirdTesting. Traits off: no swift-configuration, FoundationEssentials
        // for its form coders. (HummingbirdTesting brings AsyncHTTPClient, for the tests only.)
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        // Named because the backend and HTTPServerSupport use their types directly; Hummingbird
        // depends on both already.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The inspector's API is served from its OpenAPI document (Sources/Inspector/openapi.json):
        // the generator's build plugin writes its types and server stubs at build time, the runtime
        // and the Hummingbird transport run them. Cost measured on 2 cores: about a minute of a
        // cold build (the generator and OpenAPIKit, Yams), nothing at run time beyond the runtime.
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4", traits: []),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        // A fleet's shared store (issue 28): PostgreSQL's wire protocol, a connection pool that
        // reconnects. Only PostgresStores links it; the embedded default does not.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // authsim doctor reads an .ipa (a zip archive). About 6 s of a cold debug build; zlib
        // (Debian's zlib1g-dev to build, zlib1g at run time) inflates.
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.20"),
    ],
    targets: [
        // MARK: Generic pieces

        // What every part uses and none owns, with no APNs or Firebase meaning: child processes,
        // append-only files, compact JSON, any-JSON values, base64url, hex, clocks, random IDs,
        // process limits, coded errors.
        .target(name: "Utilities"),
        // Started parts run as one swift-service-lifecycle ServiceGroup: a server command's (with
        // SIGINT and SIGTERM) or a world's; each part stops after the parts that depend on it.
        .target(name: "Lifecycle", dependencies: [logging, .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]),

        // MARK: Wire formats and contracts

        // Apple's wire rules shared by sender and receiver: reasons, headers, device tokens,
        // payload files and the ES256 provider token.
        .target(name: "APNsWire", dependencies: ["Utilities", crypto]),
        // The contract between the app and Firebase: Codable requests and responses of every
        // Identity Toolkit call the SDK and the Admin SDK make (named as the SDK's RPC types), the
        // server's error codes and envelope, the endpoints and their paths, ID-token claims.
        .target(name: "IdentityToolkitAPI", dependencies: ["Utilities"]),
        // One HTTP/2 connection core for both ends (stream states, flow control, HPACK decoding, GOAWAY,
        // errors, abuse limits), tested frame by frame; frames and HPACK primitives. NIOHPACK decodes.
        .target(name: "HTTP2Wire", dependencies: [nio("NIOCore"), .product(name: "NIOHPACK", package: "swift-nio-http2")]),

        // MARK: HTTP/1.1, both ends

        // The HTTP/1.1 client every part uses (the auth core's transport, remote devices): our own
        // on SwiftNIO (measured against AsyncHTTPClient: BENCHMARKS.md), kept-alive connections,
        // http and https, whole answers or streams of lines.
        .target(
            name: "HTTPTransport",
            dependencies: ["Utilities", nio("NIOCore"), nio("NIOPosix"), nio("NIOHTTP1"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl")]
        ),
        // A Hummingbird router served on a port it reports, stopped gracefully: what the backend
        // and the device gateway share.
        .target(
            name: "HTTPServerSupport",
            dependencies: ["Utilities", hummingbird, hummingbirdCore, logging, nio("NIOCore"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),

        // MARK: The parts

        // The local CA, the server certificate and the APNs auth key (.p8) in Certs/.
        .target(
            name: "LocalPKI",
            dependencies: ["APNsWire", "Utilities", crypto, .product(name: "X509", package: "swift-certificates"),
                           .product(name: "SwiftASN1", package: "swift-asn1")]
        ),
        // The provider: an HTTP/2 + TLS client with a provider-token cache.
        .target(
            name: "APNsSender",
            dependencies: ["APNsWire", "Utilities", "HTTP2Wire", nio("NIOCore"), nio("NIOPosix"), nio("NIOTLS"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "NIOHPACK", package: "swift-nio-http2"), logging]
        ),
        // APNs (sandbox and production): validation, registry, delivery log, faults; it hands each
        // accepted push to a delivery handler (the device's hub) and knows nothing of devices.
        .target(
            name: "APNsReceiver",
            dependencies: ["APNsWire", "Utilities", "HTTP2Wire", nio("NIOCore"), nio("NIOPosix"), nio("NIOTLS"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"), logging]
        ),
        // OpenSSL's libcrypto (Debian's libssl-dev), for RS256 signatures at its rate: OpenSSL 3
        // signs RSA-2048 with AVX-512 IFMA code that BoringSSL lacks (2.3× on this machine).
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // RS256 signatures over CLibCrypto: the backend's ID tokens; its random generator (SecureRandom).
        .target(name: "RS256", dependencies: ["CLibCrypto"]),
        // Firebase's side: Identity Toolkit over HTTP (Hummingbird), app credentials and the
        // silent push, SMS outbox, ID tokens, Apple's side of Sign in with Apple.
        .target(
            name: "AuthBackend",
            dependencies: ["APNsWire", "Utilities", "APNsSender", "IdentityToolkitAPI", "HTTPServerSupport", "RS256",
                           crypto, .product(name: "CryptoExtras", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates"),
                           nio("NIOCore"), hummingbird, hummingbirdCore, .product(name: "HTTPTypes", package: "swift-http-types"), logging]
        ),
        // The simulated phone, as the app sees it (UIKit's and Security's part): the app and its
        // delegate (AppHost), the keychain, UserDefaults, APNs registration, opened URLs, the
        // process being killed. Frameworks (Auth) hook in as app-delegate interceptors.
        .target(name: "DeviceOS", dependencies: ["Utilities", "HTTPTransport", logging]),
        // FirebaseCore's FirebaseApp and FirebaseOptions with the SDK's names, in the simulated app's
        // process (its main bundle, its device), and the app's files (Info.plist, GoogleService-Info.plist).
        .target(name: "FirebaseCore", dependencies: ["Utilities", "DeviceOS", "HTTPTransport", logging]),
        // FirebaseAuth's phone-auth app verification and Sign in with Apple, on Linux, with the SDK's names.
        .target(
            name: "FirebaseAuthCore",
            dependencies: ["Utilities", "DeviceOS", "FirebaseCore", "IdentityToolkitAPI", "HTTPTransport", crypto, logging]
        ),
        // The auth core under the SDK's module name, as an app's code imports it; authsim's own
        // hooks stay behind @_spi(Authsim).
        .target(name: "FirebaseAuth", dependencies: ["FirebaseAuthCore"]),
        // The OS's custom-scheme dispatch: apps claim their URL schemes on Unix sockets; the
        // interceptor (a desktop x-scheme-handler) hands each URL to the app that owns its scheme.
        .target(name: "RedirectInterceptor", dependencies: ["Utilities", nio("NIOCore"), nio("NIOPosix")]),
        // The simulated phone's links: to APNs (the hub that hands a token's pushes to its apps,
        // the device gateway and remote devices in other processes, installing and relaunching
        // an app on a device) and to the OS's URL dispatch (an app claiming its schemes).
        .target(
            name: "DeviceLink",
            dependencies: ["Utilities", "APNsWire", "APNsReceiver", "DeviceOS", "HTTPTransport", "HTTPServerSupport", "RedirectInterceptor",
                           hummingbird, hummingbirdCore, nio("NIOCore"), logging]
        ),

        // MARK: What runs the parts

        // Whole runs across the parts: scenario files, typed timelines, the demo.
        .target(
            name: "Scenarios",
            dependencies: ["FirebaseCore", "DeviceOS", "DeviceLink", "Lifecycle", "APNsWire", "Utilities", "LocalPKI", "APNsSender", "APNsReceiver", "AuthBackend", "FirebaseAuthCore",
                           "IdentityToolkitAPI", "HTTPTransport", "RedirectInterceptor", logging]
        ),
        // A test's device and channel in one call, for an app's own tests of its sign-in code
        // (`import FirebaseAuth`, `import FirebaseCore`): the world, the simulated app installed as
        // the process FirebaseApp.configure() sees, bound to the test's task.
        .target(
            name: "AuthsimTesting",
            dependencies: ["Scenarios", "FirebaseCore", "FirebaseAuthCore", "APNsWire", "AuthBackend", "DeviceOS", "DeviceLink", "IdentityToolkitAPI",
                           "LocalPKI", "Utilities"]
        ),
        // Why a run went wrong (explain) and what is wrong in an app's setup (doctor).
        // The causes and fixes that explain and the inspector both state: the backend's refusals,
        // what a receiver's state folder shows, and the Diagnosis they come as.
        .target(name: "Causes", dependencies: ["Utilities", "APNsWire", "APNsReceiver", "AuthBackend", "IdentityToolkitAPI"]),
        .target(
            name: "Diagnostics",
            dependencies: ["FirebaseCore", "Causes", "DeviceOS", "APNsWire", "APNsReceiver", "AuthBackend", "LocalPKI", "FirebaseAuthCore", "IdentityToolkitAPI", "Scenarios",
                           "Utilities", .product(name: "ZIPFoundation", package: "ZIPFoundation")]
        ),
        // The parts' stores on PostgreSQL, for a fleet of nodes sharing one database (docs/fleet.md):
        // the backend's records, the receivers' delivery log; versioned migrations the program runs itself.
        .target(
            name: "PostgresStores",
            dependencies: ["AuthBackend", "APNsReceiver", "Utilities", logging, .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl")]
        ),
        // Measurements for Benchmarks/run.sh: ES256 rates, whole sign-in flows at scale.
        // The inspector: the receiver's pushes, faults and devices and the backend's SMS and users,
        // live in a browser and as a JSON API, with metrics and health (authsim serve).
        .target(
            name: "Inspector",
            dependencies: ["DeviceLink", "APNsWire", "APNsReceiver", "AuthBackend", "Causes", "HTTPServerSupport", "IdentityToolkitAPI", "Utilities",
                           hummingbird, hummingbirdCore, nio("NIOCore"), .product(name: "HTTPTypes", package: "swift-http-types"), logging,
                           .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                           .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird")],
            resources: [.copy("Resources"), .copy("API/openapi.json")],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(
            name: "Benchmarking",
            dependencies: ["DeviceOS", "APNsWire", "APNsReceiver", "Utilities", "AuthBackend", "RS256", "FirebaseAuthCore", "Scenarios", "HTTPTransport",
                           "IdentityToolkitAPI", crypto,
                           .product(name: "CryptoExtras", package: "swift-crypto")]
        ),
        // What the command lines share: output, logging set-up, the Lifecycle their servers run in.
        .target(name: "CommandSupport", dependencies: ["Utilities", "APNsWire", "Lifecycle", argumentParser, logging]),
        // The parsers that take hostile input, as fuzz targets (Fuzz/run.sh drives libFuzzer).
        .target(
            name: "FuzzTargets",
            dependencies: ["FirebaseCore", "DeviceOS", "APNsWire", "APNsReceiver", "AuthBackend", "FirebaseAuthCore", "IdentityToolkitAPI", "Scenarios", crypto]
        ),

        // MARK: Executables (thin)

        // push-receiver's, apns-sender's and redirect-interceptor's command lines, which their own
        // executables and authsim (started under their names, as in the release bundle) run.
        .target(
            name: "ProgramCommands",
            dependencies: ["DeviceLink", "APNsWire", "Utilities", "LocalPKI", "APNsReceiver", "APNsSender", "RedirectInterceptor",
                           "CommandSupport", "Lifecycle", "PostgresStores", argumentParser, logging]
        ),
        .executableTarget(name: "apns-sender", dependencies: ["ProgramCommands"]),
        .executableTarget(name: "push-receiver", dependencies: ["ProgramCommands"]),
        .executableTarget(name: "redirect-interceptor", dependencies: ["ProgramCommands"]),
        .executableTarget(
            name: "authsim",
            dependencies: ["FirebaseCore", "DeviceLink", "Scenarios", "LocalPKI", "APNsWire", "Utilities", "APNsSender", "APNsReceiver", "AuthBackend",
                           "FirebaseAuthCore", "IdentityToolkitAPI", "RedirectInterceptor", "Diagnostics", "CommandSupport", "Lifecycle", "Benchmarking", "Inspector",
                           "ProgramCommands", "PostgresStores",
                           argumentParser, logging]
        ),
        .executableTarget(name: "authsim-fuzz", dependencies: ["FuzzTargets"]),

        // MARK: Tests

        // Helpers the test targets share: temporary folders, programs and server processes.
        .target(name: "TestSupport", dependencies: ["Utilities"], path: "Tests/TestSupport"),
        .testTarget(name: "UtilitiesTests", dependencies: ["Utilities", "Lifecycle"]),
        // docs/layout.md's import table against Sources' import lines: reads files, links nothing of ours.
        .testTarget(name: "LayoutTests"),
        .testTarget(name: "APNsWireTests", dependencies: ["APNsWire", "Utilities", crypto]),
        // The messages against Google's discovery documents (google-api-python-client ships them).
        .testTarget(name: "IdentityToolkitAPITests", dependencies: ["IdentityToolkitAPI", "TestSupport", "Utilities"]),
        // The HTTP/2 core, frame by frame, without sockets; header blocks by NIOHPACK's encoder.
        .testTarget(name: "HTTP2WireTests", dependencies: ["HTTP2Wire", nio("NIOCore"), .product(name: "NIOHPACK", package: "swift-nio-http2")]),
        .testTarget(
            name: "HTTPTransportTests",
            dependencies: ["HTTPTransport", "HTTPServerSupport", "LocalPKI", "TestSupport", hummingbird, nio("NIOCore"), nio("NIOPosix"),
                           nio("NIOHTTP1"), .product(name: "NIOSSL", package: "swift-nio-ssl")]
        ),
        .testTarget(name: "LocalPKITests", dependencies: ["LocalPKI", "TestSupport", crypto, .product(name: "X509", package: "swift-certificates")]),
        .testTarget(
            name: "BackendRouteTests",
            dependencies: ["AuthBackend", "IdentityToolkitAPI", "RS256", "TestSupport", "Utilities", crypto, .product(name: "CryptoExtras", package: "swift-crypto"),
                           hummingbird, .product(name: "HummingbirdTesting", package: "hummingbird")]
        ),
        .testTarget(
            name: "AuthFlowTests",
            dependencies: ["FirebaseCore", "DeviceOS", "APNsWire", "Utilities", "APNsSender", "APNsReceiver", "AuthBackend", "FirebaseAuthCore", "RedirectInterceptor",
                           "Scenarios", "TestSupport", "IdentityToolkitAPI", "HTTPTransport", "LocalPKI", crypto, .product(name: "CryptoExtras", package: "swift-crypto"), logging,
                           .product(name: "InMemoryLogging", package: "swift-log")]
        ),
        .testTarget(
            name: "ScenarioTests",
            dependencies: ["APNsWire", "LocalPKI", "FirebaseAuthCore", "Scenarios", "Diagnostics", "Causes", "TestSupport"]
        ),
        // The inspector: `authsim serve` from curl, Python and Chromium; its sign-ins in the
        // timelines' words and Causes' causes.
        .testTarget(name: "InspectorTests", dependencies: ["APNsWire", "AuthBackend", "Causes", "IdentityToolkitAPI", "Inspector", "Scenarios", "TestSupport"]),
        // The phone-auth, multi-factor and Apple sign-in guides' Swift, as developers paste it,
        // run against the real backend on the default app.
        .testTarget(
            name: "GuideCodeTests",
            dependencies: ["FirebaseCore", "FirebaseAuth", "IdentityToolkitAPI", "DeviceOS", "FirebaseAuthCore", "AuthBackend", "Scenarios", "TestSupport", "Utilities"]
        ),
        // Nodes sharing one PostgreSQL (a real server from Debian's package, started per test
        // process): split sign-ins, races for single-use codes, migrations, a lost database.
        .testTarget(
            name: "FleetTests",
            dependencies: ["AuthBackend", "APNsReceiver", "APNsSender", "APNsWire", "DeviceLink", "IdentityToolkitAPI", "Inspector", "PostgresStores", "Scenarios",
                           "TestSupport", "Utilities", crypto, logging, .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"]),
        // The auth core's rules as values (the app credential, the presentation): no I/O.
        .testTarget(name: "FirebaseAuthCoreTests", dependencies: ["FirebaseAuthCore", "DeviceOS"]),
        // The device on its own: the app and its interceptors, the keychain file, the gateway and remote devices.
        .testTarget(
            name: "DeviceTests",
            dependencies: ["DeviceOS", "DeviceLink", "APNsReceiver", "APNsWire", "HTTPTransport", "TestSupport", "Utilities"]
        ),
        // Examples/SignInFeature's code and tests, built and run here by `swift test`: its own package
        // builds authsim's whole graph a second time (7 minutes of CI), so CI checks that package's
        // manifest (`swift package describe`) and runs its sources here, unchanged.
        .target(name: "SignInFeature", dependencies: ["FirebaseAuth", "FirebaseCore"], path: "Examples/SignInFeature/Sources/SignInFeature"),
        .testTarget(name: "SignInFeatureTests", dependencies: ["SignInFeature", "FirebaseAuth", "FirebaseCore", "AuthsimTesting"],
                    path: "Examples/SignInFeature/Tests/SignInFeatureTests"),
        .testTarget(
            name: "APNsChannelTests",
            dependencies: ["DeviceLink", "APNsWire", "Utilities", "LocalPKI", "APNsSender", "APNsReceiver", "HTTPTransport", "HTTP2Wire", "Scenarios", "TestSupport",
                           "CommandSupport",
                           nio("NIOCore"), nio("NIOEmbedded"), .product(name: "NIOHPACK", package: "swift-nio-http2"), logging]
        ),
    ]
)
