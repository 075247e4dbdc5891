import APNsWire
import Foundation

/// One change to a device registry: what `push-receiver devices`, the device gateway and the
/// inspector ask of it.
package enum DeviceChange: Sendable, Hashable {
    /// Adds or replaces a device.
    case register(RegisteredDevice)
    /// Marks a token unregistered (410 `Unregistered`) or expired (410 `ExpiredToken`) from a time.
    case invalidate(DeviceToken, environment: APNsEnvironment, as: RegisteredDevice.State, at: Date)
    /// Forgets a token (it becomes `BadDeviceToken`).
    case remove(DeviceToken, environment: APNsEnvironment)
}

/// A token's state in a fleet's registry as of one version: the device, or `nil` once removed.
package struct DeviceRecord: Sendable, Hashable {
    package var environment: APNsEnvironment
    package var token: DeviceToken
    package var device: RegisteredDevice?
    /// The registry's version when the token last changed: versions grow with each change, in the
    /// order the changes were committed.
    package var version: Int64

    package init(environment: APNsEnvironment, token: DeviceToken, device: RegisteredDevice?, version: Int64) {
        self.environment = environment
        self.token = token
        self.device = device
        self.version = version
    }
}

/// What changed in a fleet's registry after a version: the tokens, each as it is now, by
/// version; and the fault plan, when it changed.
package struct RegistryChanges: Sendable, Hashable {
    package var devices: [DeviceRecord]
    package var faults: FaultPlanRecord?
    /// The latest version these hold (0 when nothing changed).
    package var version: Int64 { max(devices.last?.version ?? 0, faults?.version ?? 0) }

    package init(devices: [DeviceRecord], faults: FaultPlanRecord? = nil) {
        self.devices = devices
        self.faults = faults
    }
}

/// The device registry a fleet of receivers shares (PostgreSQL, in `PostgresStores`), and the
/// fleet's fault plan, whose changes are numbered with the registry's. Each receiver keeps a copy
/// of both in memory (``DeviceRegistry/init(shared:)``, ``DeviceRegistry/fleetFaults``), since
/// every push reads them; the store tells the copies when something changed, and they read the
/// changes after their version.
package protocol SharedDeviceRegistry: Sendable {
    /// Where it is, for messages (no password).
    var address: String { get }
    /// The changes after `version`, read in one snapshot: a copy that applies them has every
    /// change up to their ``RegistryChanges/version``.
    func changes(after version: Int64) async throws(ReceiverError) -> RegistryChanges
    /// Makes `change`, committed before this returns: the token's new record, or `nil` when an
    /// invalidation or removal found no such token.
    func write(_ change: DeviceChange) async throws(ReceiverError) -> DeviceRecord?
    /// Changes the fleet's fault plan, committed before this returns: the plan as it is now.
    func write(_ change: FaultPlanChange) async throws(ReceiverError) -> FaultPlanRecord
    /// The fleet's fault plan as it is now, with each counted rule's uses left.
    func faultPlan() async throws(ReceiverError) -> FaultPlanRecord
    /// Takes one use of a counted rule: the uses left after it, or `nil` when none was left or
    /// the plan is no longer the one claimed of.
    func claim(_ claim: FaultClaim) async throws(ReceiverError) -> Int?
    /// Calls `changed` whenever another writer may have changed the registry, and after a lost
    /// connection is back (changes may have been missed meanwhile), until ``close()``.
    func follow(_ changed: @escaping @Sendable () -> Void)
    func close() async
}
