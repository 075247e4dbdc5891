import APNsReceiver
import APNsWire
import Foundation
import Synchronization
import Utilities

/// An app on a simulated device, as the OS sees it: a bundle ID and a way into its delegate.
package protocol SimulatedApp: Sendable {
    var bundleID: String { get }
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`: the app gets the
    /// payload as `userInfo` (JSON bytes here).
    func didReceiveRemoteNotification(_ payload: [UInt8], push: AcceptedPush) async
    /// The app's process ends: the device left the run, or a new process took its place.
    func processEnded()
    func isSameProcess(as other: any SimulatedApp) -> Bool
}

extension SimulatedApp {
    package func processEnded() {}
    /// Whether `other` is this very process (installed again), which must not end.
    package func isSameProcess(as other: any SimulatedApp) -> Bool { false }
}

/// The device side of APNs: routes accepted background pushes to the app on the device the
/// token belongs to, and tells its observer (the inspector) what became of each.
package actor DeviceHub: PushDeliveryHandler {
    private struct DeviceKey: Hashable {
        let environment: APNsEnvironment
        let token: String
    }
    private var apps: [DeviceKey: [String: any SimulatedApp]] = [:]
    private var remote: [DeviceKey: [Int: @Sendable (AcceptedPush) -> Void]] = [:]
    private var nextRemoteID = 0

    /// Nothing here can take a push: no device connected through the gateway, no app, no fleet,
    /// no observer, the network not losing pushes. A background push then reaches nothing and
    /// nobody hears of it, and the receiver hands it over as its delivery-log line (``takesLogLines``).
    private nonisolated let nothingTakesPushes: Atomic<Bool>

    package nonisolated var takesLogLines: Bool { nothingTakesPushes.load(ordering: .relaxed) }

    /// Says whether anything here can take a push now (after each change to what can).
    private func takersChanged() {
        nothingTakesPushes.store(observer == nil && !losesPushes && remote.isEmpty && apps.isEmpty && fleet == nil, ordering: .relaxed)
    }

    /// How long APNs takes to reach the device: real pushes take tens of milliseconds to seconds.
    /// A push never reaches an app before the app has read the answer that announced it, whatever
    /// this is (the device orders the two by event: `AppHost.readingAnswerBeforePush`).
    package let latency: Duration
    /// The clock the latency is waited on, when not the wall clock's (a scenario's
    /// `WaitingClock.passive`: the latency then counts from when the hub routes the push).
    private let latencyClock: (any Clock<Duration>)?

    /// APNs accepted the push but the device never gets it (offline, powered off, throttled by iOS).
    package private(set) var losesPushes = false

    /// Hears what became of each push the hub was given (the inspector's "what the device did").
    private let observer: (@Sendable (AcceptedPush, DeliveryNote) -> Void)?

    package init(latency: Duration = .zero, clock: (any Clock<Duration>)? = nil,
                observer: (@Sendable (AcceptedPush, DeliveryNote) -> Void)? = nil) {
        self.latency = latency
        self.latencyClock = clock
        self.observer = observer
        nothingTakesPushes = Atomic(observer == nil)
    }

    private var onLost: (@Sendable (AcceptedPush) -> Void)?

    /// A fleet's receiver: where the other receivers' gateways have their devices, and the pushes
    /// they hand this one. `nil` for a receiver alone.
    private var fleet: FleetDeviceLinks?

    /// The fleet this receiver's device side joined (``join(_:)``), if any.
    package var fleetLinks: FleetDeviceLinks? { fleet }

    /// Joins a fleet: a push that finds no device here goes to the receiver whose gateway its
    /// device is connected to, as APNs routes a push to the device's connection; and the pushes
    /// other receivers hand this one reach the devices connected here. Reads the links first.
    package func join(_ links: FleetDeviceLinks) async throws(ReceiverError) {
        fleet = links
        takersChanged()
        links.follow(into: self)
        try await links.catchUp()
    }

    /// Pushes on their way wait while the network is paused, and go on when it resumes.
    private var paused = false
    private var resumers: [CheckedContinuation<Void, Never>] = []

    /// Holds (or releases) every push on its way to the devices: for a story in which a push
    /// must arrive after something else happened (the app killed and started again).
    package func setPaused(_ pause: Bool) {
        paused = pause
        guard !pause else { return }
        let waiting = resumers
        resumers = []
        for resumer in waiting { resumer.resume() }
    }

    /// Makes the network lose (or stop losing) every push on its way to the device; `onLost` hears of each.
    package func setLosesPushes(_ loses: Bool, onLost: (@Sendable (AcceptedPush) -> Void)? = nil) {
        losesPushes = loses
        self.onLost = onLost
        takersChanged()
    }

    /// Installs `app` on the device whose token is `token` in `environment`.
    /// A process of the app already there has ended: this one takes its place.
    package func install(_ app: any SimulatedApp, token: DeviceToken, environment: APNsEnvironment) {
        let previous = apps[DeviceKey(environment: environment, token: token.hex), default: [:]].updateValue(app, forKey: app.bundleID)
        if let previous, !previous.isSameProcess(as: app) { previous.processEnded() }
        takersChanged()
    }

    /// The device whose token is `token` is gone: its apps get no more pushes (a push to it is
    /// reported to the observer, as one to a token no app holds).
    package func remove(token: DeviceToken, environment: APNsEnvironment) {
        guard let gone = apps.removeValue(forKey: DeviceKey(environment: environment, token: token.hex)) else { return }
        takersChanged()
        for app in gone.values { app.processEnded() }
    }

    /// Every device leaves: their apps' processes end (the world is shutting down).
    package func removeAll() {
        let gone = apps
        apps = [:]
        takersChanged()
        for app in gone.values.flatMap(\.values) { app.processEnded() }
    }

    /// A device in another process, connected through the device gateway: it gets every push to
    /// its token and routes it to its apps itself.
    /// - Returns: an ID for ``disconnect(_:)``.
    package func connect(token: DeviceToken, environment: APNsEnvironment, sink: @escaping @Sendable (AcceptedPush) -> Void) -> Int {
        nextRemoteID += 1
        remote[DeviceKey(environment: environment, token: token.hex), default: [:]][nextRemoteID] = sink
        takersChanged()
        return nextRemoteID
    }

    package func disconnect(_ id: Int) {
        for key in remote.keys {
            remote[key]?.removeValue(forKey: id)
            if remote[key]?.isEmpty == true { remote[key] = nil }
        }
        takersChanged()
        for watcher in countWatchers.ready(for: connectedDeviceCount) { watcher.resume() }
    }

    /// Devices in other processes connected through the gateway now.
    package var connectedDeviceCount: Int { remote.values.reduce(0) { $0 + $1.count } }

    /// Tasks in ``waitForConnectedDevices(atMost:)``, given the count.
    private var countWatchers = Waiters<Int>()

    /// Returns once no more than `count` devices are connected through the gateway: woken by each
    /// hang-up the gateway notices (for a caller that must know the hub stopped routing to a device).
    package func waitForConnectedDevices(atMost count: Int) async {
        await withCheckedContinuation { continuation in
            if !countWatchers.add({ $0 <= count }, continuation, now: connectedDeviceCount) { continuation.resume() }
        }
    }

    /// One push, handed over now: it reaches its device after ``latency``; an app here has
    /// taken it when this returns.
    package func deliver(_ push: AcceptedPush) async {
        guard push.isBackground else { return alert(push) }
        var waited = Waited(passed: .now)
        await reach(from: waited.passed, &waited)
        switch place(push) {
        case .placed: break
        case .elsewhere: await forward([push])
        case .app(let app): await Self.handOver(push, to: app, observer: observer)
        }
    }

    /// The receiver's pushes, oldest first: each reaches its device ``latency`` after the batch
    /// reached the hub (the batch waits once, not once per push), after a pause ends, unless the
    /// network loses it. A device connected through the gateway gets it at once; an app here gets
    /// it in a task of its own, so that a slow app delegate holds up no other device's pushes.
    package func deliver(batch: [AcceptedPush]) async {
        await deliver(handed: batch.map(HandedPush.push))
    }

    /// ``deliver(batch:)`` as the receiver hands pushes over. Lines (handed over while nothing
    /// here could take a push) wait their latency and are let go if nothing still can; when
    /// something can now (a device connected during the latency), each is read back into its
    /// push and placed.
    ///
    /// Only a push that must still wait suspends: the others are placed without an async call
    /// (a receiver hands over a batch per read, at its rate).
    package func deliver(handed batch: [HandedPush]) async {
        var waited = Waited(passed: .now)
        let arrived = waited.passed
        var elsewhere: [AcceptedPush] = []
        for handed in batch {
            switch handed {
            case .push(let push):
                guard push.isBackground else {
                    alert(push)
                    continue
                }
                if paused || mustWait(from: arrived, waited) { await reach(from: arrived, &waited) }
                placeBackground(push, elsewhere: &elsewhere)
            case .lines(let lines):
                if paused || mustWait(from: arrived, waited) { await reach(from: arrived, &waited) }
                // Nothing could take them, and nothing still can: they reach no device, and no
                // observer is there to hear it.
                guard !takesLogLines else { continue }
                for push in lines.pushes() { placeBackground(push, elsewhere: &elsewhere) }
            }
        }
        if !elsewhere.isEmpty { await forward(elsewhere) }
    }

    /// Places a background push that reached its device's side (``place(_:)``): an app here gets
    /// it in a task of its own; one for elsewhere in the fleet joins `elsewhere`.
    private func placeBackground(_ push: AcceptedPush, elsewhere: inout [AcceptedPush]) {
        switch place(push) {
        case .placed: break
        case .elsewhere: elsewhere.append(push)
        case .app(let app):
            let observer = observer
            Task { await Self.handOver(push, to: app, observer: observer) }
        }
    }

    /// An alert goes to the user, not to the app's delegate.
    private func alert(_ push: AcceptedPush) { observer?(push, .alert) }

    /// How much of the latency a batch has waited.
    private struct Waited {
        /// An instant known to be past (the wall clock is read again only for a later arrival).
        var passed: ContinuousClock.Instant
        /// The latency was waited on the hub's own clock (``latencyClock``).
        var onHubClock = false
    }

    /// Whether a push that set out at `start` has not reached its device yet.
    private func mustWait(from start: ContinuousClock.Instant, _ waited: Waited) -> Bool {
        guard latency > .zero else { return false }
        return latencyClock == nil ? start + latency > waited.passed : !waited.onHubClock
    }

    /// Waits until a push that set out at `start` reaches the device (``latency`` after it, or
    /// ``latency`` on the hub's own clock, once a batch), then while the network is paused.
    private func reach(from start: ContinuousClock.Instant, _ waited: inout Waited) async {
        if mustWait(from: start, waited) {
            if let latencyClock {
                try? await latencyClock.sleep(for: latency)
                waited.onHubClock = true
            } else {
                if start + latency > .now { try? await Task.sleep(until: start + latency, clock: .continuous) }
                waited.passed = .now
            }
        }
        while paused { await withCheckedContinuation { resumers.append($0) } }
    }

    /// Where a background push that reached the device side goes.
    private enum Placement {
        /// Delivered to a device connected through the gateway, or reported undelivered to the observer.
        case placed
        /// No device here has its token and the receiver is a fleet's: ``forward(_:)``.
        case elsewhere
        /// To this app's delegate.
        case app(any SimulatedApp)
    }

    /// Places a push that reached the device side: lost, handed to the gateway, to an app here,
    /// elsewhere in the fleet, or reported undelivered to the observer.
    private func place(_ push: AcceptedPush) -> Placement {
        if losesPushes {
            note(push, .lost)
            onLost?(push)
            return .placed
        }
        let key = DeviceKey(environment: push.environment, token: push.deviceToken.hex)
        if handToGateway(push, key: key, latency: latency) { return .placed }
        guard !apps.isEmpty, let device = apps[key] else {
            if fleet != nil { return .elsewhere }
            note(push, .noDevice)
            return .placed
        }
        guard let app = device[push.bundleID] else {
            note(push, .noApp)
            return .placed
        }
        return .app(app)
    }

    /// The app's delegate gets the push.
    private static func handOver(_ push: AcceptedPush, to app: any SimulatedApp,
                                 observer: (@Sendable (AcceptedPush, DeliveryNote) -> Void)?) async {
        await app.didReceiveRemoteNotification(push.payload, push: push)
        observer?(push, .handedToApp)
    }

    /// Pushes another receiver of the fleet accepted for devices connected here (the APNs latency
    /// was waited there): to their devices at once, or reported undelivered to the observer if they
    /// hung up meanwhile.
    func deliver(forwarded pushes: [AcceptedPush]) {
        for push in pushes where !handToGateway(push, key: DeviceKey(environment: push.environment, token: push.deviceToken.hex), latency: .zero) {
            note(push, .noDevice)
        }
    }

    /// Hands `push` to the devices connected through the gateway with its token, if any (`latency`:
    /// what the inspector's note says it waited).
    private func handToGateway(_ push: AcceptedPush, key: DeviceKey, latency: Duration) -> Bool {
        // (No lookup, and no hash of the token, while no device is connected: a receiver's load
        // to tokens without devices.)
        guard !remote.isEmpty, let sinks = remote[key], !sinks.isEmpty else { return false }
        for sink in sinks.values { sink(push) }
        observer?(push, .handedToGateway(latency: latency))
        return true
    }

    /// A fleet's pushes that found no device here: each to the receivers whose gateways its
    /// device is connected to. A push whose device this receiver's copy has connected nowhere is
    /// checked against the store first (one read for the batch), so a device that connected to
    /// another node a moment ago still gets it.
    private func forward(_ pushes: [AcceptedPush]) async {
        guard let fleet else { return pushes.forEach { note($0, .noDevice) } }
        if pushes.contains(where: { fleet.nodes(for: $0.deviceToken, in: $0.environment).isEmpty }) {
            do { try await fleet.catchUp() } catch {
                fleet.logger.warning("the fleet's device links cannot be read; pushes go where this receiver's copy says", metadata: ["error": "\(error)"])
            }
        }
        var byNode: [String: [AcceptedPush]] = [:]
        for push in pushes {
            let nodes = fleet.nodes(for: push.deviceToken, in: push.environment)
            if nodes.isEmpty { note(push, .noDevice) }
            for node in nodes { byNode[node, default: []].append(push) }
        }
        for (node, handed) in byNode {
            do {
                try await fleet.shared.forward(handed, to: node)
                for push in handed { observer?(push, .forwarded(node: node)) }
            } catch {
                fleet.logger.error("pushes not handed to the receiver their device is connected to", metadata: ["node": "\(node)", "error": "\(error)"])
                for push in handed { note(push, .notForwarded(node: node)) }
            }
        }
    }

    /// Tells the observer, if there is one, what became of a push that reached no device's app.
    private func note(_ push: AcceptedPush, _ why: DeliveryNote) {
        observer?(push, why)
    }
}

/// What the device side did with a push, as the hub saw it. A value, made at every push's rate;
/// its sentence (``text(for:)``) is written only when someone reads it.
package enum DeliveryNote: Sendable, Hashable {
    /// An alert: the user sees it; the app's delegate does not get it.
    case alert
    /// The network lost it (the device is offline).
    case lost
    /// Handed to a device connected through the device gateway, after the APNs latency.
    case handedToGateway(latency: Duration)
    /// No simulated device has the token in the push's environment.
    case noDevice
    /// The device has no app with the push's bundle ID.
    case noApp
    /// Handed to the app's delegate.
    case handedToApp
    /// A fleet's: handed to the receiver whose device gateway the device is connected to.
    case forwarded(node: String)
    /// A fleet's: the device is connected to this receiver's gateway, but the store did not take the push.
    case notForwarded(node: String)

    /// The sentence for `push`.
    package func text(for push: AcceptedPush) -> String {
        switch self {
        case .alert: "an alert: shown to the user; the app's delegate does not get it"
        case .lost: "lost on the way: the device is offline"
        case .handedToGateway(let latency): "handed to the device (connected through the device gateway) after \(latency) of APNs latency"
        case .noDevice: "no simulated device has token \(push.deviceToken.short) in \(push.environment)"
        case .noApp: "the device has no app \(push.bundleID)"
        case .handedToApp: "handed to \(push.bundleID)'s app delegate (application(_:didReceiveRemoteNotification:fetchCompletionHandler:))"
        case .forwarded(let node): "handed to receiver \(node), whose device gateway the device is connected to"
        case .notForwarded(let node): "not delivered: the device is connected to receiver \(node), and the fleet's store did not take the push for it"
        }
    }
}
