import APNsReceiver
import APNsWire
import DeviceOS
import Foundation
import HTTPTransport
import NIOHTTPTransport
import Lifecycle
import Synchronization

/// A Firebase app on a simulated device, as the OS sees it: its pushes go to the app delegate.
package struct HostedApp: SimulatedApp {
    package let host: AppHost
    /// Told of each push the device hands the app's delegate, and whether Auth took it.
    package let onPush: @Sendable (DeviceToken, Bool) -> Void
    package var bundleID: String { host.bundleID }
    package func processEnded() { host.terminate() }
    package func isSameProcess(as other: any SimulatedApp) -> Bool { (other as? HostedApp)?.host === host }
    package init(host: AppHost, onPush: @escaping @Sendable (DeviceToken, Bool) -> Void = { _, _ in }) {
        self.host = host
        self.onPush = onPush
    }

    /// Returns once the app delegate has the push (after any answer the app was reading: see
    /// `AppHost.readingAnswerBeforePush`).
    package func didReceiveRemoteNotification(_ payload: [UInt8], push: AcceptedPush) async {
        await withCheckedContinuation { (handed: CheckedContinuation<Void, Never>) in
            hand(payload, on: push.deviceToken) { handed.resume() }
        }
    }

    /// The device hands the app delegate the push's payload (JSON bytes) as `userInfo`, in the
    /// order pushes reached the device, never while the app reads an answer a push may follow;
    /// `onPush` hears whether Auth took it, then `done` runs.
    func hand(_ payload: [UInt8], on token: DeviceToken, done: @escaping @Sendable () -> Void = {}) {
        let onPush = onPush
        host.deliverRemoteNotification(payload, taken: { onPush(token, $0) }, done: done)
    }
}

/// How simulated devices get their tokens and their pushes: from a receiver in this process, or
/// through the device gateway of a push-receiver in another one. As a part of a world's group, it
/// stops first: the devices leave, their apps' processes end.
package protocol DeviceNetwork: RunningPart {
    /// Registers a new device for `host`'s app in `environment` and routes its pushes to the app
    /// delegate. Returns the token APNs issued.
    func installDevice(for host: AppHost, environment: APNsEnvironment,
                       onPush: @escaping @Sendable (DeviceToken, Bool) -> Void) async throws -> DeviceToken
    /// The app started again on the device that has `token`: its pushes go to `host` from now on
    /// (the process before it is gone).
    func relaunch(_ host: AppHost, on token: DeviceToken, environment: APNsEnvironment,
                  onPush: @escaping @Sendable (DeviceToken, Bool) -> Void) async throws
    /// The device that has `token` leaves the run (wiped, or put away for good): its apps get no
    /// more pushes and this network keeps nothing of it, so a run of many devices one after
    /// another holds only those still in use.
    func retire(_ token: DeviceToken, environment: APNsEnvironment) async throws
    func shutdown() async
}

/// Devices on a receiver in this process: APNs issues a token into its registry, and its hub
/// hands the token's pushes to the app.
package struct LocalDeviceNetwork: DeviceNetwork {
    package var description: String { "the devices" }
    package let registry: DeviceRegistry
    package let hub: DeviceHub
    package init(registry: DeviceRegistry, hub: DeviceHub) {
        self.registry = registry
        self.hub = hub
    }
    package func installDevice(for host: AppHost, environment: APNsEnvironment,
                              onPush: @escaping @Sendable (DeviceToken, Bool) -> Void) async throws -> DeviceToken {
        let token = DeviceToken.random()
        try registry.register(RegisteredDevice(token: token, environment: environment, bundleID: host.bundleID))
        await hub.install(HostedApp(host: host, onPush: onPush), token: token, environment: environment)
        return token
    }
    package func relaunch(_ host: AppHost, on token: DeviceToken, environment: APNsEnvironment,
                         onPush: @escaping @Sendable (DeviceToken, Bool) -> Void) async throws {
        await hub.install(HostedApp(host: host, onPush: onPush), token: token, environment: environment)
    }
    /// APNs forgets the token too (a push to it is then refused `BadDeviceToken`).
    package func retire(_ token: DeviceToken, environment: APNsEnvironment) async throws {
        await hub.remove(token: token, environment: environment)
        _ = try registry.remove(token, in: environment)
    }
    /// The devices leave with the world: their apps' processes end.
    package func shutdown() async { await hub.removeAll() }
}

/// Devices linked to a push-receiver in another process through its device gateway.
package final class RemoteDeviceNetwork: DeviceNetwork {
    package var description: String { "the devices (through a device gateway)" }
    package let host: String
    package let port: Int
    private let adminToken: String?
    private let devices = Mutex<[RemoteDevice]>([])
    /// The app processes running on each device, by token.
    private let hosts = Mutex<[DeviceToken: AppHost]>([:])
    /// One HTTP client for every device of this network.
    private let transport = NIOHTTP1Transport()

    /// - Parameter adminToken: the deployment's admin token, for a gateway beyond loopback.
    package init(host: String, port: Int, adminToken: String? = nil) {
        self.host = host
        self.port = port
        self.adminToken = adminToken
    }

    package func installDevice(for app: AppHost, environment: APNsEnvironment,
                              onPush: @escaping @Sendable (DeviceToken, Bool) -> Void) async throws -> DeviceToken {
        let token = try await RemoteDevice.register(gatewayHost: host, gatewayPort: port, environment: environment, bundleID: app.bundleID,
                                                    adminToken: adminToken, transport: transport)
        try await relaunch(app, on: token, environment: environment, onPush: onPush)
        return token
    }

    package func relaunch(_ app: AppHost, on token: DeviceToken, environment: APNsEnvironment,
                         onPush: @escaping @Sendable (DeviceToken, Bool) -> Void) async throws {
        // The process before this one is gone: its connection for the token goes with it.
        await disconnect(token)
        let process = hosts.withLock { $0.updateValue(app, forKey: token) }
        if let process, process !== app { process.terminate() }
        let hosted = HostedApp(host: app, onPush: onPush)
        let device = try await RemoteDevice.connect(gatewayHost: host, gatewayPort: port, token: token, environment: environment,
                                                    adminToken: adminToken, transport: transport) { push in
            guard push.bundleID == app.bundleID else { return }
            hosted.hand(push.payload, on: token)
        }
        devices.withLock { $0.append(device) }
    }

    /// Its connection to the gateway closes; the gateway's receiver keeps the token registered.
    package func retire(_ token: DeviceToken, environment: APNsEnvironment) async throws {
        await disconnect(token)
        hosts.withLock { $0.removeValue(forKey: token) }?.terminate()
    }

    /// Closes the device's connections to the gateway.
    private func disconnect(_ token: DeviceToken) async {
        let leaving = devices.withLock { devices in
            defer { devices.removeAll { $0.token == token } }
            return devices.filter { $0.token == token }
        }
        for device in leaving { await device.disconnect() }
    }

    package func shutdown() async {
        for device in devices.withLock({ $0 }) { await device.disconnect() }
        for host in hosts.withLock({ $0.values }) { host.terminate() }
        transport.shutdown()
    }
}

/// How the OS on a device answers an app's `registerForRemoteNotifications()`.
public enum APNsRegistrationOutcome: String, Sendable, CaseIterable {
    /// APNs issues the device's token; the app delegate gets it
    /// (`didRegisterForRemoteNotificationsWithDeviceToken`).
    case token
    /// `didFailToRegisterForRemoteNotificationsWithError`: the build has no `aps-environment`
    /// entitlement.
    case fails
    /// Nothing, ever (the device cannot reach APNs).
    case neverAnswers

    /// iOS's error for a build signed without the Push Notifications capability.
    package static let noEntitlementError = "no valid \u{201C}aps-environment\u{201D} entitlement string found for application"
}

extension AppHost {
    /// The device that holds `token` answers this app's registrations for remote notifications as
    /// `outcome` says, from now on.
    package func answerRegistrations(on token: DeviceToken, with outcome: APNsRegistrationOutcome) {
        setRegistrar {
            switch outcome {
            case .token: .token(Data(token.bytes))
            case .fails: .failed(APNsRegistrationOutcome.noEntitlementError)
            case .neverAnswers: nil
            }
        }
    }
}
