import APNsWire
import Foundation
import Synchronization

/// A device token APNs knows: issued in one environment, for one app.
public struct RegisteredDevice: Codable, Sendable, Hashable {
    public enum State: String, Codable, Sendable {
        /// Pushes are accepted.
        case active
        /// The app was uninstalled or stopped accepting pushes: 410 `Unregistered`.
        case unregistered
        /// The token expired: 410 `ExpiredToken`.
        case expired
    }

    public var token: DeviceToken
    public var environment: APNsEnvironment
    /// The bundle ID of the app the token belongs to.
    public var bundleID: String
    public var state: State
    /// When the token stopped being valid, in milliseconds since the epoch (410's `timestamp`).
    public var invalidSince: Int64?
    /// A name for timelines ("iPhone 15, debug build").
    public var label: String?

    public init(token: DeviceToken, environment: APNsEnvironment, bundleID: String, state: State = .active,
                invalidSince: Int64? = nil, label: String? = nil) {
        self.token = token
        self.environment = environment
        self.bundleID = bundleID
        self.state = state
        self.invalidSince = invalidSince
        self.label = label
    }
}

/// The device tokens APNs knows, per environment, persisted as JSON.
///
/// Simulated devices and the `push-receiver devices` command add to it. The same token may be
/// registered in both environments (real tokens differ, but a test may want it); a token known only
/// in sandbox is unknown to production, which answers `BadDeviceToken`, as Apple does.
///
/// When backed by a file, a lookup that misses re-reads the file if another process (the CLI)
/// changed it since, so devices added while a receiver runs are seen at once.
public final class DeviceRegistry: Sendable {
    private struct Key: Hashable {
        let environment: APNsEnvironment
        let token: String
    }
    private struct State {
        var devices: [Key: RegisteredDevice] = [:]
        var fileStamp: Date?
    }
    private struct FileFormat: Codable {
        var version: Int
        var devices: [RegisteredDevice]
    }

    /// The file the registry lives in; `nil` for an in-memory registry.
    public let file: URL?
    private let state: Mutex<State>

    /// An in-memory registry.
    public init(devices: [RegisteredDevice] = []) {
        file = nil
        var initial = State()
        for device in devices { initial.devices[Key(environment: device.environment, token: device.token.hex)] = device }
        state = Mutex(initial)
    }

    /// A registry stored in `file` (created on first change).
    ///
    /// - Throws: ``ReceiverError`` when the file exists but is not a registry.
    public init(file: URL) throws(ReceiverError) {
        self.file = file
        state = Mutex(State())
        try reload(force: true)
    }

    /// The device registered under `token` in `environment`, if any.
    public func lookup(_ token: DeviceToken, in environment: APNsEnvironment) -> RegisteredDevice? {
        let key = Key(environment: environment, token: token.hex)
        if let device = state.withLock({ $0.devices[key] }) { return device }
        guard file != nil, (try? reload(force: false)) == true else { return nil }
        return state.withLock { $0.devices[key] }
    }

    /// Every registered device, sorted by environment, bundle ID and token.
    public var all: [RegisteredDevice] {
        _ = try? reload(force: false)
        return state.withLock { Array($0.devices.values) }.sorted {
            ($0.environment.rawValue, $0.bundleID, $0.token.hex) < ($1.environment.rawValue, $1.bundleID, $1.token.hex)
        }
    }

    /// Adds or replaces a device.
    public func register(_ device: RegisteredDevice) throws(ReceiverError) {
        try mutate { $0[Key(environment: device.environment, token: device.token.hex)] = device }
    }

    /// Marks a token unregistered (410 `Unregistered`) or expired (410 `ExpiredToken`) from `time`.
    /// - Returns: whether the token was known.
    @discardableResult
    public func invalidate(_ token: DeviceToken, in environment: APNsEnvironment, as newState: RegisteredDevice.State,
                           at time: Date) throws(ReceiverError) -> Bool {
        var found = false
        try mutate { devices in
            let key = Key(environment: environment, token: token.hex)
            guard var device = devices[key] else { return }
            found = true
            device.state = newState
            device.invalidSince = newState == .active ? nil : Int64(time.timeIntervalSince1970 * 1000)
            devices[key] = device
        }
        return found
    }

    /// Forgets a token entirely (it becomes `BadDeviceToken`).
    @discardableResult
    public func remove(_ token: DeviceToken, in environment: APNsEnvironment) throws(ReceiverError) -> Bool {
        var found = false
        try mutate { found = $0.removeValue(forKey: Key(environment: environment, token: token.hex)) != nil }
        return found
    }

    private func mutate(_ change: (inout [Key: RegisteredDevice]) -> Void) throws(ReceiverError) {
        guard let file else {
            state.withLock { change(&$0.devices) }
            return
        }
        try reload(force: false)
        let snapshot = state.withLock { state -> [RegisteredDevice] in
            change(&state.devices)
            return Array(state.devices.values)
        }
        let sorted = snapshot.sorted { ($0.environment.rawValue, $0.token.hex) < ($1.environment.rawValue, $1.token.hex) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(FileFormat(version: 1, devices: sorted)).write(to: file, options: .atomic)
        } catch {
            throw ReceiverError(.storage, "cannot write the device registry \(file.path): \(error.localizedDescription)")
        }
        let stamp = Self.modificationDate(of: file)
        state.withLock { $0.fileStamp = stamp }
    }

    /// Re-reads the file when it changed since the last read. Returns whether it read it.
    @discardableResult
    private func reload(force: Bool) throws(ReceiverError) -> Bool {
        guard let file else { return false }
        let stamp = Self.modificationDate(of: file)
        if !force, stamp == state.withLock({ $0.fileStamp }) { return false }
        guard let stamp else {
            state.withLock { $0 = State() }
            return true
        }
        let decoded: FileFormat
        do { decoded = try JSONDecoder().decode(FileFormat.self, from: Data(contentsOf: file)) } catch {
            throw ReceiverError(.storage, "\(file.path) is not a device registry: \(error)")
        }
        guard decoded.version == 1 else {
            throw ReceiverError(.storage, "\(file.path) has registry version \(decoded.version); this build reads version 1")
        }
        var devices: [Key: RegisteredDevice] = [:]
        for device in decoded.devices { devices[Key(environment: device.environment, token: device.token.hex)] = device }
        state.withLock { $0 = State(devices: devices, fileStamp: stamp) }
        return true
    }

    private static func modificationDate(of file: URL) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date
    }
}
