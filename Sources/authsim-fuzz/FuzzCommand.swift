import Foundation
import FuzzTargets

#if FUZZING
// The libFuzzer build (Fuzz/run.sh: -D FUZZING -sanitize=fuzzer,address): libFuzzer's main drives
// this entry point; AUTHSIM_FUZZ_TARGET names the target.
private let fuzzTarget: @Sendable ([UInt8]) -> Void = {
    let name = ProcessInfo.processInfo.environment["AUTHSIM_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTargets.all[name] else {
        FileHandle.standardError.write(Data("AUTHSIM_FUZZ_TARGET must be one of \(FuzzTargets.all.keys.sorted().joined(separator: ", "))\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzTarget(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
/// `authsim-fuzz replay <target> <file|dir>…`: runs inputs through a fuzz target (seeds, past
/// crashes, an input to debug). The libFuzzer build of this program is Fuzz/run.sh's.
@main
struct FuzzCommand {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, arguments[1] == "replay", let target = FuzzTargets.all[arguments[2]] else {
            FileHandle.standardError.write(Data("usage: authsim-fuzz replay <target> <file|dir>… (targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", ")))\n".utf8))
            exit(2)
        }
        let count = FuzzTargets.replay(target, paths: arguments.dropFirst(3).map { URL(fileURLWithPath: $0) })
        print("\(arguments[2]): \(count) inputs, no crash")
    }
}
#endif
