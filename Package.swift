// swift-tools-version: 6.1
import PackageDescription

// One library per role; executables are thin. See README.md and ../shared/DESIGN.md.
let package = Package(
    name: "authsim",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Utilities", targets: ["Utilities"]),
        .library(name: "APNsWire", targets: ["APNsWire"]),
        .library(name: "IdentityToolkitAPI", targets: ["IdentityToolkitAPI"]),
        .library(name: "LocalPKI", targets: ["LocalPKI"]),
        .library(name: "HTTP2Wire", targets: ["HTTP2Wire"]),
        .library(name: "APNsSender", targets: ["APNsSender"]),
        .library(name: "APNsReceiver", targets: ["APNsReceiver"]),
        .library(name: "AuthBackend", targets: ["AuthBackend"]),
        .library(name: "FirebaseAuthCore", targets: ["FirebaseAuthCore"]),
        .library(name: "RedirectInterceptor", targets: ["RedirectInterceptor"]),
        .library(name: "Scenarios", targets: ["Scenarios"]),
        .library(name: "Diagnostics", targets: ["Diagnostics"]),
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
        // The backend's and the device gateway's HTTP (router, middleware, errors, testing helpers).
        // Traits off: no swift-configuration, FoundationEssentials for its form coders.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // What every part uses and none owns, with no APNs or Firebase meaning: child processes,
        // append-only files, compact JSON, base64url, hex, clocks, random IDs, coded errors.
        .target(name: "Utilities"),
        // Apple's wire rules shared by sender and receiver: reasons, headers, device tokens,
        // payload files and the ES256 provider token.
        .target(
            name: "APNsWire",
            dependencies: ["Utilities", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The contract between the app and Firebase: Codable requests and responses of every
        // Identity Toolkit call the SDK and the Admin SDK make (named as the SDK's RPC types), the
        // server's error codes and envelope, the endpoints and their paths, ID-token claims.
        .target(name: "IdentityToolkitAPI", dependencies: ["Utilities"]),
        // A Hummingbird router served on a port it reports, stopped gracefully: the backend's and
        // the device gateway's HTTP.
        .target(
            name: "HTTPServerSupport",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdCore", package: "hummingbird"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The HTTP/1.1 client every part uses (the auth core's transport, remote devices): our own
        // on SwiftNIO, kept-alive connections, http and https, whole answers or streams of lines.
        .target(
            name: "HTTPTransport",
            dependencies: ["Utilities", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl")]
        ),
        // The local CA, the server certificate and the APNs auth key (.p8) in Certs/.
        .target(
            name: "LocalPKI",
            dependencies: [
                "APNsWire", "Utilities",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // HTTP/2 frames and HPACK primitives, for the sender's and the receiver's own HTTP/2.
        .target(
            name: "HTTP2Wire",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        // The provider: an HTTP/2 + TLS client with a provider-token cache.
        .target(
            name: "APNsSender",
            dependencies: [
                "APNsWire", "Utilities",
                "HTTP2Wire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // APNs (sandbox and production) and the device OS: validation, registry, delivery log, faults.
        .target(
            name: "APNsReceiver",
            dependencies: [
                "APNsWire", "Utilities", "HTTPTransport", "HTTPServerSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                "HTTP2Wire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Firebase's side: Identity Toolkit over HTTP, app credentials and the silent push, SMS outbox, ID tokens.
        .target(
            name: "AuthBackend",
            dependencies: [
                "APNsWire", "Utilities", "APNsSender", "IdentityToolkitAPI", "HTTPServerSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // FirebaseAuth's phone-auth app verification, on Linux, with the SDK's names.
        .target(
            name: "FirebaseAuthCore",
            dependencies: ["Utilities", "IdentityToolkitAPI", "HTTPTransport", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The OS's custom-scheme dispatch: apps claim their URL schemes on Unix sockets; the
        // interceptor (a desktop x-scheme-handler) hands each URL to the app that owns its scheme.
        .target(
            name: "RedirectInterceptor",
            dependencies: ["Utilities", .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio")]
        ),
        // Whole runs across the parts (the demo for now; scenarios come with the auth core).
        .target(
            name: "Scenarios",
            dependencies: ["APNsWire", "Utilities", "LocalPKI", "APNsSender", "APNsReceiver", "AuthBackend", "FirebaseAuthCore",
                           "RedirectInterceptor", .product(name: "Logging", package: "swift-log")]
        ),
        // Why a run went wrong (explain) and what is wrong in an app's setup (doctor).
        .target(
            name: "Diagnostics",
            dependencies: ["APNsWire", "APNsReceiver", "LocalPKI", "FirebaseAuthCore", "Scenarios"]
        ),
        // Measurements for Benchmarks/run.sh: ES256 rates, whole sign-in flows at scale.
        .target(
            name: "Benchmarking",
            dependencies: ["APNsWire", "Utilities", "AuthBackend", "FirebaseAuthCore", "Scenarios", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // What the three command lines share: output and signal handling.
        .target(
            name: "CommandSupport",
            dependencies: ["APNsWire", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "apns-sender",
            dependencies: ["APNsWire", "Utilities", "LocalPKI", "APNsSender", "CommandSupport",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "push-receiver",
            dependencies: ["APNsWire", "Utilities", "LocalPKI", "APNsReceiver", "CommandSupport",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The parsers that take hostile input, as fuzz targets (Fuzz/run.sh drives libFuzzer).
        .target(
            name: "FuzzTargets",
            dependencies: ["APNsWire", "APNsReceiver", "AuthBackend", "FirebaseAuthCore", "Scenarios",
                           .product(name: "Crypto", package: "swift-crypto")]
        ),
        .executableTarget(name: "authsim-fuzz", dependencies: ["FuzzTargets"]),
        .executableTarget(
            name: "redirect-interceptor",
            dependencies: ["RedirectInterceptor", "CommandSupport",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "authsim",
            dependencies: ["Scenarios", "LocalPKI", "APNsWire", "Utilities", "APNsSender", "APNsReceiver", "AuthBackend", "FirebaseAuthCore",
                           "RedirectInterceptor", "Diagnostics", "CommandSupport", "Benchmarking",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // Helpers the test targets share: temporary folders, programs and server processes.
        .target(name: "TestSupport", dependencies: ["Utilities"], path: "Tests/TestSupport"),
        .testTarget(name: "UtilitiesTests", dependencies: ["Utilities"]),
        .testTarget(name: "IdentityToolkitAPITests", dependencies: ["IdentityToolkitAPI"]),
        .testTarget(
            name: "HTTPTransportTests",
            dependencies: ["HTTPTransport", "HTTPServerSupport", "LocalPKI", "Utilities", "TestSupport",
                           .product(name: "Hummingbird", package: "hummingbird"), .product(name: "NIOSSL", package: "swift-nio-ssl")]
        ),
        .testTarget(
            name: "BackendRouteTests",
            dependencies: ["AuthBackend", "IdentityToolkitAPI", .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdTesting", package: "hummingbird")]
        ),
        .testTarget(name: "APNsWireTests", dependencies: ["APNsWire", "Utilities"]),
        .testTarget(name: "LocalPKITests", dependencies: ["LocalPKI", "TestSupport"]),
        .testTarget(
            name: "AuthFlowTests",
            dependencies: ["APNsWire", "Utilities", "APNsSender", "APNsReceiver", "AuthBackend", "FirebaseAuthCore", "RedirectInterceptor",
                           "Scenarios", "TestSupport", "IdentityToolkitAPI", "HTTPTransport",
                           .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
                           .product(name: "InMemoryLogging", package: "swift-log")]
        ),
        .testTarget(
            name: "ScenarioTests",
            dependencies: ["APNsWire", "LocalPKI", "FirebaseAuthCore", "Scenarios", "Diagnostics", "TestSupport"]
        ),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"]),
        .testTarget(
            name: "APNsChannelTests",
            dependencies: ["APNsWire", "Utilities", "LocalPKI", "APNsSender", "APNsReceiver", "Scenarios", "TestSupport",
                           .product(name: "NIOHPACK", package: "swift-nio-http2")]
        ),
    ]
)
