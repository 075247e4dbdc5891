// swift-tools-version: 6.1
// An iOS team's sign-in feature as its own package: the code imports FirebaseAuth and FirebaseCore
// only. On Apple platforms it builds against the real SDK; on Linux against authsim's modules of
// the same names, and its tests run the whole channel through AuthsimTesting.
// See docs/app-code-on-linux.md in authsim for the arrangement.
import Foundation
import PackageDescription

#if os(Linux)
// authsim, by path here (your package names its URL: `.package(url: "…/authsim.git", from: "0.1.0")`,
// identity "authsim"). A path dependency's identity is its folder's name, whatever the clone is called.
let authsimFolder = URL(fileURLWithPath: Context.packageDirectory).appendingPathComponent("../..").standardized
let firebase = Package.Dependency.package(path: authsimFolder.path)
let firebasePackage = authsimFolder.lastPathComponent.lowercased()
let testHarness: [Target.Dependency] = [.product(name: "AuthsimTesting", package: firebasePackage)]
#else
let firebase = Package.Dependency.package(url: "https://github.com/firebase/firebase-ios-sdk.git", exact: "12.19.0")
let firebasePackage = "firebase-ios-sdk"
let testHarness: [Target.Dependency] = []
#endif

let package = Package(
    name: "SignInFeature",
    platforms: [.iOS(.v15), .macOS(.v15)],
    products: [.library(name: "SignInFeature", targets: ["SignInFeature"])],
    dependencies: [firebase],
    targets: [
        .target(
            name: "SignInFeature",
            dependencies: [.product(name: "FirebaseAuth", package: firebasePackage),
                           .product(name: "FirebaseCore", package: firebasePackage)]
        ),
        .testTarget(
            name: "SignInFeatureTests",
            dependencies: ["SignInFeature", .product(name: "FirebaseAuth", package: firebasePackage),
                           .product(name: "FirebaseCore", package: firebasePackage)] + testHarness
        ),
    ]
)
