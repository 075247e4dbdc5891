/// authsim's version: what every executable's `--version` prints, what the release tarball and the
/// Python wheel are named with (`Scripts/release.sh` reads it from this file). The one place it is
/// written.
package enum AuthsimVersion {
    /// Semantic versioning; also a valid PEP 440 version (the wheel's).
    package static let current = "0.1.0"
}
