import Utilities
import APNsReceiver
import APNsWire
import AuthBackend
import DeviceOS
import FirebaseAuthCore
import Foundation
import Synchronization
import Scenarios
#if canImport(Glibc)
import Glibc
#endif

/// Whole phone sign-ins, many at once, through every part in this process: each flow installs an
/// app on a new simulated device (a registered APNs token), calls `verifyPhoneNumber` (verifyClient,
/// the silent push through apns-sender's client and push-receiver, or the reCAPTCHA page and the
/// redirect when pushes are lost), reads its code from the SMS outbox, and signs in.
package enum FlowBenchmark {
    package enum Path: String, Sendable, CaseIterable {
        /// verifyClient → silent push → sendVerificationCode → signIn.
        case silentPush = "silent-push"
        /// Pushes are lost: the SDK waits `suggestedTimeout`, then the reCAPTCHA page and its redirect.
        case recaptcha
    }

    package struct Report: Sendable {
        package var path: Path
        package var flows: Int
        package var failures: Int
        /// Flows that went through the reCAPTCHA page (on the silent-push path: their push came
        /// after `suggestedTimeout`; one never comes before verifyClient's answer, as on a device).
        package var reCAPTCHAs: Int
        package var firstFailure: String?
        package var wallSeconds: Double
        /// Per-flow latency, from install to signed in, in milliseconds.
        package var p50: Double
        package var p99: Double
        package var max: Double
        /// The process's peak resident memory (VmHWM), in megabytes, after the run.
        package var peakMegabytes: Double
        /// malloc's heap in use, in megabytes, when the last flow ended: what the backend,
        /// the receiver and the world keep, the finished devices gone (each is retired after its
        /// sign-in).
        package var heapMegabytes: Double = 0
        /// The same, once the backend's clock has moved past every lifetime (receipts' hour,
        /// and the retention after it) and it dropped what expired: what the sign-ins leave for good
        /// (their users).
        package var heapAfterExpiryMegabytes: Double = 0
        /// Users the backend keeps at the end.
        package var users: Int = 0
        /// Requests the backend answered, by endpoint (its last path component), per flow.
        package var requestsPerFlow: [String: Double] = [:]
        /// Pushes push-receiver answered 200, per flow.
        package var pushesPerFlow: Double = 0
        /// What APNs (push-receiver) said to the backend's silent pushes. Any not accepted means the
        /// run measured something else than it says (the flows fell back to reCAPTCHA).
        package var pushTally = SilentPushTally()
        package var flowsPerSecond: Double { wallSeconds > 0 ? Double(flows) / wallSeconds : 0 }
    }

    /// Runs `count` flows, at most `concurrency` at a time, in a world made in `folder`.
    /// - Parameter pushLatency: how long APNs takes to reach a device (a real push takes longer).
    /// - Parameter numbers: the flows' phone numbers cycle over this many (returning users), or
    ///   each flow has its own (a new user each).
    package static func run(path: Path, count: Int, concurrency: Int, folder: URL,
                           pushLatency: Duration = .milliseconds(100), suggestedTimeout: Int = 1, numbers: Int? = nil) async throws -> Report {
        var configuration = BackendConfiguration()
        configuration.suggestedTimeout = suggestedTimeout
        // The wall clock, until the run is over: then it jumps past every lifetime.
        let backendClock = AdjustableWallClock()
        let world = try await PhoneAuthWorld.start(certs: folder.appendingPathComponent("Certs"),
                                                   state: folder.appendingPathComponent("State"),
                                                   configuration: configuration, backendClock: backendClock, pushLatency: pushLatency)
        if path == .recaptcha { await world.channel?.hub.setLosesPushes(true) }
        let presented = Counter()
        let clock = ContinuousClock()
        let start = clock.now
        let turns = NumberTurns()
        var (latencies, failures, firstFailure) = await ConcurrentRun.run(count: count, concurrency: concurrency) { index in
            guard let numbers else { return try await flow(index, world: world, presented: presented) }
            // A returning user signs in again once their last sign-in is over, as one person
            // would: two at once would race for the number's latest code.
            let number = index % numbers
            await turns.take(number)
            do {
                try await flow(number, world: world, presented: presented)
                await turns.release(number)
            } catch {
                await turns.release(number)
                throw error
            }
        }
        let elapsed = clock.now - start
        let heap = heapInUseMegabytes()
        // Two hours on: every session, receipt, token and message has expired and been kept its
        // retention (BackendConfiguration.expiredRetention) past that.
        backendClock.advance(by: 2 * 3600)
        await world.toolkit?.purgeExpired()
        let heapAfterExpiry = heapInUseMegabytes()
        let users = await world.toolkit?.userCount ?? 0
        var requests: [String: Double] = [:]
        for (key, histogram) in world.toolkit?.requestMetrics.snapshot ?? [:] {
            requests[String(key.route.split(separator: "/").last ?? "unmatched"), default: 0] += Double(histogram.count) / Double(count)
        }
        let pushTally = await world.toolkit?.silentPushTally ?? SilentPushTally()
        var logged: Result<Int, ReceiverError> = .success(0)
        if let channel = world.channel {
            logged = Result { () throws(ReceiverError) in try DeliveryLog.count(in: channel.deliveryLogFile) }
        }
        await world.shutdown()
        let pushes = Double(try logged.get()) / Double(count)
        latencies.sort()
        return Report(path: path, flows: count, failures: failures, reCAPTCHAs: presented.value, firstFailure: firstFailure,
                      wallSeconds: elapsed.inSeconds,
                      p50: ConcurrentRun.percentile(0.5, of: latencies), p99: ConcurrentRun.percentile(0.99, of: latencies), max: latencies.last ?? 0, peakMegabytes: peakResidentMegabytes(),
                      heapMegabytes: heap, heapAfterExpiryMegabytes: heapAfterExpiry, users: users,
                      requestsPerFlow: requests, pushesPerFlow: pushes, pushTally: pushTally)
    }

    /// `AUTHSIM_BENCH_STAGES` set: every 100th flow prints how long install, verify and sign-in took
    /// (read once: building the environment dictionary per flow costs more than the check).
    static let printsStages = ProcessInfo.processInfo.environment["AUTHSIM_BENCH_STAGES"] != nil

    /// One sign-in, for the `index`th fictional number: the app's launch, the code sent, the sign-in.
    /// Its frame is kept small (each step's values live in the step's own frame): a task keeps the
    /// stack slabs of its deepest moment until it ends, and this frame is under every other of
    /// the sign-in's.
    static func flow(_ index: Int, world: PhoneAuthWorld, presented: Counter) async throws {
        let t0 = ContinuousClock.now
        let (auth, device) = try await launch(world)
        let t1 = ContinuousClock.now
        let verificationID = try await sendCode(index, auth: auth, presented: presented)
        let t2 = ContinuousClock.now
        try await signIn(index, auth: auth, verificationID: verificationID, world: world)
        if printsStages, index % 100 == 0 { printStages(index, t0, t1, t2, ContinuousClock.now) }
        // The device leaves the run: what stays in memory is the backend's and the receiver's
        // (and the devices still signing in), not every phone that ever signed in.
        try await world.devices.retire(device, environment: profile.build.environment)
    }

    /// `verifyPhoneNumber`: the app proves itself (silent push or reCAPTCHA) and the code is sent.
    @inline(never)
    static func sendCode(_ index: Int, auth: Auth, presented: Counter) async throws -> String {
        try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(number(index), uiDelegate: CountingPresenter(count: presented))
    }

    /// The code from the SMS outbox, and the sign-in with it.
    @inline(never)
    static func signIn(_ index: Int, auth: Auth, verificationID: String, world: PhoneAuthWorld) async throws {
        let code = try await code(index, verificationID: verificationID, world: world)
        _ = try await auth.signIn(with: PhoneAuthProvider.provider(auth: auth).credential(withVerificationID: verificationID, verificationCode: code))
    }

    /// The code the backend sent for `verificationID` (its SMS outbox).
    @inline(never)
    static func code(_ index: Int, verificationID: String, world: PhoneAuthWorld) async throws -> String {
        guard let code = try await world.toolkit?.code(forSession: verificationID) else {
            throw AuthError(.internalError, "no SMS for \(number(index))")
        }
        return code
    }

    /// Every flow's app: it declares `.sandbox` itself and carries no provisioning profile, so
    /// that no profile is signed and read per flow (what the flows measure is the channel).
    static let profile: AppProfile = {
        var app = AppProfile()
        app.declaredTokenType = .sandbox
        app.provisioningProfile = .none
        return app
    }()

    /// The app installed on a new device and launched (registered for pushes).
    @inline(never)
    static func launch(_ world: PhoneAuthWorld) async throws -> (Auth, DeviceToken) { try await world.install(profile) }

    /// The `index`th fictional number: +1 650 and seven digits.
    @inline(never)
    static func number(_ index: Int) -> String {
        let digits = String(index % 10_000_000)
        return "+1650" + String(repeating: "0", count: 7 - digits.count) + digits
    }

    @inline(never)
    static func printStages(_ index: Int, _ t0: ContinuousClock.Instant, _ t1: ContinuousClock.Instant,
                            _ t2: ContinuousClock.Instant, _ t3: ContinuousClock.Instant) {
        print("flow \(index): install \(t1 - t0), verify \(t2 - t1), sign-in \(t3 - t2)")
    }

    /// malloc's heap in use now, in megabytes (every arena's memory less its free chunks, plus
    /// mapped blocks, from `malloc_info`): unlike the resident size, it falls by exactly what is
    /// freed, whatever the arenas' fragmentation. (malloc.h is not in Swift's Glibc module: the
    /// call is looked up.) 0 when it cannot be read.
    package static func heapInUseMegabytes() -> Double {
        typealias Info = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return 0 }
        var buffer: UnsafeMutablePointer<CChar>?
        var length = 0
        guard let stream = open_memstream(&buffer, &length) else { return 0 }
        _ = unsafeBitCast(symbol, to: Info.self)(0, stream)
        fclose(stream)
        guard let buffer else { return 0 }
        defer { free(buffer) }
        // The totals after the last </heap>: fast and rest are free chunks, mmap the mapped blocks,
        // system current what the arenas hold.
        let xml = String(cString: buffer)
        guard let totals = xml.range(of: "</heap>", options: .backwards).map({ xml[$0.upperBound...] }) else { return 0 }
        func size(_ prefix: String) -> Double {
            guard let start = totals.range(of: prefix) else { return 0 }
            let rest = totals[start.upperBound...]
            guard let key = rest.range(of: "size=\"") else { return 0 }
            return Double(rest[key.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        let inUse = size("<system type=\"current\"") - size("<total type=\"fast\"") - size("<total type=\"rest\"") + size("<total type=\"mmap\"")
        return inUse / 1_048_576
    }

    /// VmHWM from /proc/self/status, in megabytes.
    package static func peakResidentMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) }) else { return 0 }
        return kilobytes / 1024
    }
}

/// One flow per number at a time: ``take(_:)`` waits while another flow has the number, and
/// ``release(_:)`` hands it to the next in line.
actor NumberTurns {
    private var busy: Set<Int> = []
    private var waiting: [Int: [CheckedContinuation<Void, Never>]] = [:]

    func take(_ number: Int) async {
        if busy.insert(number).inserted { return }
        await withCheckedContinuation { waiting[number, default: []].append($0) }
    }

    func release(_ number: Int) {
        guard var queue = waiting[number], !queue.isEmpty else {
            busy.remove(number)
            return
        }
        let next = queue.removeFirst()
        waiting[number] = queue.isEmpty ? nil : queue
        next.resume()  // the number stays taken: it passes to the next flow
    }
}

/// A thread-safe count.
final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// The SDK's default presenter, counted.
struct CountingPresenter: AuthUIDelegate {
    let count: Counter
    func present(_ url: URL, host: AppHost) async {
        count.add()
        await HeadlessPresenter().present(url, host: host)
    }
}
