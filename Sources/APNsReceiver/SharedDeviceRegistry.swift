import APNsWire
import Foundation

/// One change to a device registry: what `push-receiver devices`, the device gateway and the
/// inspector ask of it.
public enum DeviceChange: Sendable, Hashable {
    /// Adds or replaces a device.
    case register(RegisteredDevice)
    /// Marks a token unregistered (410 `Unregistered`) or expired (410 `ExpiredToken`) from a time.
    case invalidate(DeviceToken, environment: APNsEnvironment, as: RegisteredDevice.State, at: Date)
    /// Forgets a token (it becomes `BadDeviceToken`).
    case remove(DeviceToken, environment: APNsEnvironment)
}

/// A token's state in a fleet's registry as of one version: the device, or `nil` once removed.
public struct DeviceRecord: Sendable, Hashable {
    public var environment: APNsEnvironment
    public var token: DeviceToken
    public var device: RegisteredDevice?
    /// The registry's version when the token last changed: versions grow with each change, in the
    /// order the changes were committed.
    public var version: Int64

    public init(environment: APNsEnvironment, token: DeviceToken, device: RegisteredDevice?, version: Int64) {
        self.environment = environment
        self.token = token
        self.device = device
        self.version = version
    }
}

/// The device registry a fleet of receivers shares (PostgreSQL, in `PostgresStores`). Each
/// receiver keeps a copy in memory (``DeviceRegistry/init(shared:)``), since every push reads it;
/// the store tells the copies when something changed, and they read the records after their version.
public protocol SharedDeviceRegistry: Sendable {
    /// Where it is, for messages (no password).
    var address: String { get }
    /// The tokens that changed after `version`, each as it is now, by version.
    func records(after version: Int64) async throws(ReceiverError) -> [DeviceRecord]
    /// Makes `change`, committed before this returns: the token's new record, or `nil` when an
    /// invalidation or removal found no such token.
    func write(_ change: DeviceChange) async throws(ReceiverError) -> DeviceRecord?
    /// Calls `changed` whenever another writer may have changed the registry, and after a lost
    /// connection is back (changes may have been missed meanwhile), until ``close()``.
    func follow(_ changed: @escaping @Sendable () -> Void)
    func close() async
}
