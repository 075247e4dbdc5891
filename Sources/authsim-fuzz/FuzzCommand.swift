import Foundation
import FuzzTargets

/// `authsim-fuzz replay <target> <file|dir>…` runs inputs through a target (any build).
/// `authsim-fuzz fuzz <target> [libFuzzer options] [corpus dirs]` runs libFuzzer on it: only in
/// the build Fuzz/run.sh makes (coverage-instrumented, ASan, linked with libFuzzer's no-main
/// runtime, whose `LLVMFuzzerRunDriver` this calls).
@main
struct FuzzCommand {
    nonisolated(unsafe) static var target: (@Sendable ([UInt8]) -> Void)?

    static func main() {
        var arguments = CommandLine.arguments
        let usage = "usage: authsim-fuzz replay|fuzz <target> … (targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", ")))"
        guard arguments.count >= 3, let target = FuzzTargets.all[arguments[2]] else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
        switch arguments[1] {
        case "replay":
            let count = FuzzTargets.replay(target, paths: arguments.dropFirst(3).map { URL(fileURLWithPath: $0) })
            print("\(arguments[2]): \(count) inputs, no crash")
        case "fuzz":
            typealias Driver = @convention(c) (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                               @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: -2) /* RTLD_DEFAULT */, "LLVMFuzzerRunDriver") else {
                FileHandle.standardError.write(Data("this build has no libFuzzer: build and run with Fuzz/run.sh\n".utf8))
                exit(2)
            }
            Self.target = target
            // libFuzzer sees: program name, then everything after the target name.
            arguments = [arguments[0]] + arguments.dropFirst(3)
            var argc = Int32(arguments.count)
            var cStrings: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            let status = cStrings.withUnsafeMutableBufferPointer { buffer -> Int32 in
                var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
                return unsafeBitCast(symbol, to: Driver.self)(&argc, &argv) { data, size in
                    FuzzCommand.target?(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                    return 0
                }
            }
            exit(status)
        default:
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
    }
}
