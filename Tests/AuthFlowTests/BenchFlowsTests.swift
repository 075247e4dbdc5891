import Foundation
import TestSupport
import Testing

/// `authsim bench flows`, the sign-ins `Benchmarks/run.sh flows` and `growth` measure: what a run
/// leaves once every lifetime has passed is its users, and the devices are gone.
@Suite("authsim bench flows")
struct BenchFlowsTests {
    @Test("returning users: every flow signs in, the users are the numbers, and the heap falls once lifetimes pass")
    func returningUsers() async throws {
        let run = try await runProgram([try executable("authsim"), "bench", "flows", "--count", "300", "--numbers", "30",
                                        "--concurrency", "30", "--push-latency", "0", "--json"])
        #expect(run.status == 0, "\(run.output)")
        let line = try #require(run.output.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(report["flows"] as? Int == 300 && report["failures"] as? Int == 0, "\(report["firstFailure"] ?? "")")
        #expect(report["users"] as? Int == 30)
        let heap = try #require(report["heapMB"] as? Double), after = try #require(report["heapAfterExpiryMB"] as? Double)
        #expect(heap > 0 && after > 0 && after < heap, "heap \(heap) MB, after expiry \(after) MB")
    }

    @Test("more flows at once than numbers is refused: one number would sign in twice at once")
    func concurrencyBeyondNumbers() async throws {
        // The error goes to standard error, which runProgram does not read: the shell joins it.
        let run = try await runProgram(["/bin/sh", "-c", "\"$0\" bench flows --count 10 --numbers 5 --concurrency 6 2>&1", try executable("authsim")])
        #expect(run.status != 0)
        #expect(run.output.contains("--concurrency 6 is more than --numbers 5"), "\(run.output)")
    }
}
