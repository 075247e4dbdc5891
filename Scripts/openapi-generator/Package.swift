// swift-tools-version: 6.1
// swift-openapi-generator, built only to regenerate the inspector's API code (Scripts/generate-openapi.sh):
// authsim's own build does not build the generator (OpenAPIKit, Yams: about two minutes of every cold
// build on 2 cores), it compiles the generated files committed in Sources/Inspector/API/Generated.
import PackageDescription

let package = Package(
    name: "openapi-generator",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3")]
)
