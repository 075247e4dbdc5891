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
        let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Project")
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let run = try ChildProcess([try executable("authsim"), "exec", "--backend-port", "0", "--import", project.path,
                                    // The app's wait for the silent push ends when it comes; 60 s only bounds a busy machine.
                                    "--suggested-timeout", "60",
                                    "--", binary, Self.classes.map { "XCTestHostTests.\($0)" }.joined(separator: ",")], output: .pipe, errors: .pipe)
        let output = String(decoding: await run.readOutput(), as: UTF8.self)
        let status = await run.wait()
        #expect(status == 0, "\(output)")
        #expect(output.contains("Executed \(Self.expected) tests, with 0 failures (0 unexpected)"), "\(output)")
        #expect(output.contains("authsim exec: the test command exited with status 0"))
    }
}
