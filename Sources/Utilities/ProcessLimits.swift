#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Raises this process's soft limit on open files to its hard limit (as servers do), so thousands
/// of connections fit. Returns the limit now in force (0 if it cannot be read).
package func raiseOpenFileLimit() -> UInt64 {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    return UInt64(limit.rlim_cur)
}

/// Hands the memory the allocator holds free back to the system (glibc's `malloc_trim(0)`, found
/// at run time; elsewhere nothing): glibc keeps what a burst freed in its per-thread arenas, so a
/// process's resident size stays at its busiest. The backend calls it when it drops what has
/// expired. Returns whether memory was released.
@discardableResult
package func releaseFreeMemory() -> Bool {
    mallocTrim.map { $0(0) == 1 } ?? false
}

/// glibc's `malloc_trim`, which Swift's Glibc module does not declare; looked up once.
private let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0) /* RTLD_DEFAULT */, "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
}()
