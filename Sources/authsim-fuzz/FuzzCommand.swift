import Foundation
import FuzzTargets

#if FUZZING
// The libFuzzer build (Fuzz/run.sh: -D FUZZING -sanitize=fuzzer,address): libFuzzer's main drives
// this entry point; AUTHSIM_FUZZ_TARGET names the target.
private let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["AUTHSIM_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTargets.all[name] else {
        FileHandle.standardError.write(Data("AUTHSIM_FUZZ_TARGET must be one of \(FuzzTargets.all.keys.sorted().joined(separator: ", "))\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    switch fuzzTarget {
    case .bytes(let run):
        run(input)
    case .async(let run):
        // libFuzzer calls from its own thread, not one of Swift's pool: it may wait here.
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await run(input)
            done.signal()
        }
        done.wait()
    }
    return 0
}

/// SwiftPM links executables with `main` = `<module>_main`; this one hands the process to libFuzzer
/// (`LLVMFuzzerRunDriver`, kept and exported by the linker flags in Fuzz/run.sh).
@_cdecl("authsim_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    typealias Driver = @convention(c) (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                       @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32
    guard let symbol = dlsym(nil /* RTLD_DEFAULT */, "LLVMFuzzerRunDriver") else {
        FileHandle.standardError.write(Data("LLVMFuzzerRunDriver is not linked in: build with Fuzz/run.sh\n".utf8))
        return 2
    }
    var count = argc
    var vector = argv
    return unsafeBitCast(symbol, to: Driver.self)(&count, &vector) { data, size in fuzzOneInput(data, size) }
}
#else
/// `authsim-fuzz replay <target> <file|dir>…`: runs inputs through a fuzz target (seeds, past
/// crashes, an input to debug). The libFuzzer build of this program is Fuzz/run.sh's.
@main
struct FuzzCommand {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, arguments[1] == "replay", let target = FuzzTargets.all[arguments[2]] else {
            FileHandle.standardError.write(Data("usage: authsim-fuzz replay <target> <file|dir>… (targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", ")))\n".utf8))
            exit(2)
        }
        let count = await FuzzTargets.replay(target, paths: arguments.dropFirst(3).map { URL(fileURLWithPath: $0) })
        print("\(arguments[2]): \(count) inputs, no crash")
    }
}
#endif
