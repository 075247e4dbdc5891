import Foundation
import Testing
import TestSupport
import Utilities

/// The XCTest classes of this target, run as a team runs its existing suite: `authsim exec
/// --import Project -- <the test binary> <its XCTest classes>`, with nothing in the tests but the
/// tests. Every test must run and pass: a skipped one (no test host) is a failure here.
@Suite struct XCTestHostRun {
    /// The XCTest classes of this target, and how many test methods they have.
    static let classes = ["EmailPasswordHostedTests", "PhoneHostedTests", "ListenerHostedTests", "SilentPushHostedTests"]
    static let expected = 10

    @Test(.enabled(if: ProcessInfo.processInfo.environment["AUTHSIM_TEST_HOST"] == nil, "the run inside authsim exec"))
    func theSuiteRunsUnchangedUnderAuthsimExec() async throws {
        try await Self.run(Self.classes, expecting: Self.expected)
    }

    @Test("with the push dropped by APNs, reCAPTCHA proves the test host's app",
          .enabled(if: ProcessInfo.processInfo.environment["AUTHSIM_TEST_HOST"] == nil, "the run inside authsim exec"))
    func recaptchaFallbackUnderAuthsimExec() async throws {
        try await Self.run(["RecaptchaFallbackHostedTests"], expecting: 1, ["--fault", "drop", "--suggested-timeout", "1"])
    }

    /// `authsim exec --import Project [options] -- <this test binary> <classes>`: every test of
    /// the classes ran and passed.
    static func run(_ classes: [String], expecting count: Int, _ options: [String] = ["--suggested-timeout", "60"]) async throws {
        let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Project")
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        // --suggested-timeout 60: the app's wait for the silent push ends when it comes; 60 s only bounds a busy machine.
        let run = try ChildProcess([try executable("authsim"), "exec", "--backend-port", "0", "--import", project.path] + options
                                   + ["--", binary, classes.map { "XCTestHostTests.\($0)" }.joined(separator: ",")], output: .pipe, errors: .pipe)
        let output = String(decoding: await run.readOutput(), as: UTF8.self)
        let status = await run.wait()
        #expect(status == 0, "\(output)")
        #expect(output.contains("Executed \(count) \(count == 1 ? "test" : "tests"), with 0 failures (0 unexpected)"), "\(output)")
        #expect(output.contains("authsim exec: the test command exited with status 0"))
    }
}
