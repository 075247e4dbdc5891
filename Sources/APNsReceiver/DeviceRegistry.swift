import APNsWire
import Foundation
import Synchronization
import Utilities

/// A device token APNs knows: issued in one environment, for one app.
package struct RegisteredDevice: Codable, Sendable, Hashable {
    package enum State: String, Codable, Sendable {
        /// Pushes are accepted.
        case active
        /// The app was uninstalled or stopped accepting pushes: 410 `Unregistered`.
        case unregistered
        /// The token expired: 410 `ExpiredToken`.
        case expired
    }

    package var token: DeviceToken
    package var environment: APNsEnvironment
    /// The bundle ID of the app the token belongs to.
    package var bundleID: String
    package var state: State
    /// When the token stopped being valid, in milliseconds since the epoch (410's `timestamp`).
    package var invalidSince: Int64?
    /// A name for timelines ("iPhone 15, debug build").
    package var label: String?

    package init(token: DeviceToken, environment: APNsEnvironment, bundleID: String, state: State = .active,
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
///
/// A fleet's registry (``init(shared:)``) is a copy in memory of the one in the fleet's store,
/// kept current as the store announces changes; changes go to the store first
/// (``apply(_:)``), and a refusal that rests on the registry is checked against the store's latest
/// version before it is answered (``catchUp()``).
package final class DeviceRegistry: Sendable {
    private struct Key: Hashable {
        let environment: APNsEnvironment
        let token: String
    }
    private struct State {
        var devices: [Key: RegisteredDevice] = [:]
        var fileStamp: Date?
        /// A fleet's copy: the version of the store's records it holds.
        var version: Int64 = 0
    }
    /// The file: its ``FormatStamp``'s members (`authsim-format` and `written-by` absent in files
    /// written before stamps), then the devices.
    private struct FileFormat: Codable {
        var format: String?
        var version: Int
        var writtenBy: String?
        var devices: [RegisteredDevice]
        enum CodingKeys: String, CodingKey { case format = "authsim-format", version, writtenBy = "written-by", devices }

        /// The stamp's members alone.
        struct Header: Decodable {
            var format: String?
            var version: Int
            var writtenBy: String?
            enum CodingKeys: String, CodingKey { case format = "authsim-format", version, writtenBy = "written-by" }

            var stamp: FormatStamp? {
                guard let format else { return version == 1 ? nil : FormatStamp(format: FileFormat.format.kind, version: version, writtenBy: "an unknown authsim") }
                return FormatStamp(format: format, version: version, writtenBy: writtenBy ?? "an unknown authsim")
            }
        }

        static var format: StateFormat { DeviceRegistry.format }
    }

    /// The registry's format (its stamp's members were added without changing it: version 1
    /// readers skip them).
    package static let format = StateFormat(kind: "device registry", current: 1)

    /// The file the registry lives in; `nil` for an in-memory registry.
    package let file: URL?
    /// The fleet's registry this is a copy of; `nil` for a file or an in-memory registry.
    package let shared: (any SharedDeviceRegistry)?
    /// Whether ``shared`` is set: read for each push, where comparing the existential with nil
    /// copied it (a retain and a release).
    package let isFleets: Bool
    /// A fleet's copy: the fleet's fault plan, kept current with the devices (its changes share
    /// their versions). `nil` for a file or an in-memory registry.
    package let fleetFaults: FaultPlan?
    private let state: Mutex<State>
    /// A file's registry: one change at a time, from reading the file to writing it.
    private let writing = Mutex(())
    /// A fleet's copy: its reads of the store, shared by the callers that arrive together.
    private let catchUps = CoalescedReads<ReceiverError>()

    /// An in-memory registry.
    package init(devices: [RegisteredDevice] = []) {
        file = nil
        shared = nil
        isFleets = false
        fleetFaults = nil
        var initial = State()
        for device in devices { initial.devices[Key(environment: device.environment, token: device.token.hex)] = device }
        state = Mutex(initial)
    }

    /// A registry stored in `file` (created on first change).
    ///
    /// - Throws: ``ReceiverError`` when the file exists but is not a registry.
    package init(file: URL) throws(ReceiverError) {
        self.file = file
        shared = nil
        isFleets = false
        fleetFaults = nil
        state = Mutex(State())
        try reload(force: true)
    }

    /// A copy of a fleet's registry: read whole now, then kept current as `shared` announces
    /// changes (unless `following` is false: a command that reads or changes the registry once
    /// needs no announcements, nor the connection that hears them).
    package init(shared: any SharedDeviceRegistry, following: Bool = true) async throws(ReceiverError) {
        file = nil
        self.shared = shared
        isFleets = true
        fleetFaults = FaultPlan(shared: shared)
        state = Mutex(State())
        try await catchUp()
        guard following else { return }
        shared.follow { [weak self] in
            guard let self else { return }
            Task { try? await self.catchUp() }
        }
    }

    /// A fleet's copy reads the changes made since its version (a file or in-memory registry has
    /// nothing to catch up with). When this returns, the copy has every change committed before it
    /// was called.
    ///
    /// Callers that arrive while a read is under way share the next read, which starts after
    /// that one: a flood of refused pushes costs one query per round trip, not one each.
    package func catchUp() async throws(ReceiverError) {
        guard shared != nil else { return }
        try await catchUps.run { [self] () throws(ReceiverError) in try await readChanges() }
    }

    /// Applies the store's changes after this copy's version. Reads that overlap apply the same
    /// records: a token is applied only when its record is newer than the copy. The fault plan is
    /// put in place before the version moves, so whoever reads the version and then the plan has
    /// the plan of at least that version.
    private func readChanges() async throws(ReceiverError) {
        guard let shared else { return }
        let changes = try await shared.changes(after: state.withLock { $0.version })
        if let faults = changes.faults { fleetFaults?.install(faults) }
        state.withLock { state in
            for record in changes.devices where record.version > state.version { Self.apply(record, to: &state.devices) }
            state.version = max(state.version, changes.version)
        }
    }

    /// The fault plan a receiver on this registry applies, with `rules` (`--fault`) at start: its
    /// own plan of `rules`; for a fleet's copy, the fleet's plan, which `rules` replace when given
    /// (a node started without `--fault` leaves the fleet's plan as it is).
    package func faultPlan(starting rules: [FaultRule]) async throws(ReceiverError) -> FaultPlan {
        guard let fleetFaults else { return FaultPlan(rules) }
        if !rules.isEmpty { try await fleetFaults.change(.replace(rules)) }
        return fleetFaults
    }

    /// The version of the fleet's records this copy holds (0 for a file or in-memory registry).
    package var version: Int64 { state.withLock { $0.version } }

    /// Makes `change`: in a fleet's store first (this copy then has it at once; the others when
    /// the store tells them), else as the synchronous methods do.
    /// - Returns: whether an invalidated or removed token was known (always true for `register`).
    @discardableResult
    package func apply(_ change: DeviceChange) async throws(ReceiverError) -> Bool {
        guard let shared else {
            switch change {
            case .register(let device): try register(device); return true
            case .invalidate(let token, let environment, let newState, let time):
                return try invalidate(token, in: environment, as: newState, at: time)
            case .remove(let token, let environment): return try remove(token, in: environment)
            }
        }
        guard try await shared.write(change) != nil else { return false }
        // Read back with whatever else changed, so this copy has it when this returns. Should the
        // read fail, the store's announcement brings it later.
        try? await catchUp()
        return true
    }

    private static func apply(_ record: DeviceRecord, to devices: inout [Key: RegisteredDevice]) {
        let key = Key(environment: record.environment, token: record.token.hex)
        if let device = record.device { devices[key] = device } else { devices.removeValue(forKey: key) }
    }

    /// The device registered under `token` in `environment`, if any.
    package func lookup(_ token: DeviceToken, in environment: APNsEnvironment) -> RegisteredDevice? {
        let key = Key(environment: environment, token: token.hex)
        if let device = state.withLock({ $0.devices[key] }) { return device }
        guard file != nil, (try? reload(force: false)) == true else { return nil }
        return state.withLock { $0.devices[key] }
    }

    /// Every registered device, sorted by environment, bundle ID and token.
    package var all: [RegisteredDevice] {
        _ = try? reload(force: false)
        return state.withLock { Array($0.devices.values) }.sorted {
            ($0.environment.rawValue, $0.bundleID, $0.token.hex) < ($1.environment.rawValue, $1.bundleID, $1.token.hex)
        }
    }

    /// Adds or replaces a device.
    package func register(_ device: RegisteredDevice) throws(ReceiverError) {
        try mutate { $0[Key(environment: device.environment, token: device.token.hex)] = device }
    }

    /// Marks a token unregistered (410 `Unregistered`) or expired (410 `ExpiredToken`) from `time`.
    /// - Returns: whether the token was known.
    @discardableResult
    package func invalidate(_ token: DeviceToken, in environment: APNsEnvironment, as newState: RegisteredDevice.State,
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
    package func remove(_ token: DeviceToken, in environment: APNsEnvironment) throws(ReceiverError) -> Bool {
        var found = false
        try mutate { found = $0.removeValue(forKey: Key(environment: environment, token: token.hex)) != nil }
        return found
    }

    private func mutate(_ change: (inout [Key: RegisteredDevice]) -> Void) throws(ReceiverError) {
        if let shared {
            throw ReceiverError(.configuration, "the fleet's device registry (\(shared.address)) changes through apply(_:), which writes to the store first")
        }
        guard let file else {
            state.withLock { change(&$0.devices) }
            return
        }
        // The change is made to a copy and takes effect once the file has it: a registry that
        // cannot be written (a full disk, a read-only folder) stays as its file is.
        try writing.withLock { _ throws(ReceiverError) in
            try reload(force: false)
            var devices = state.withLock { $0.devices }
            change(&devices)
            let sorted = devices.values.sorted { ($0.environment.rawValue, $0.token.hex) < ($1.environment.rawValue, $1.token.hex) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            do {
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                let stamp = FileFormat.format.stamp
                try encoder.encode(FileFormat(format: stamp.format, version: stamp.version, writtenBy: stamp.writtenBy, devices: sorted))
                    .write(to: file, options: .atomic)
            } catch {
                throw ReceiverError(.storage, "cannot write the device registry \(file.path): \(error.localizedDescription)")
            }
            let stamp = Self.modificationDate(of: file)
            state.withLock { $0.devices = devices; $0.fileStamp = stamp }
        }
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
        do {
            let data = try Data(contentsOf: file)
            // The stamp first: a newer registry is refused by its version, not by what its devices hold.
            let header = try JSONDecoder().decode(FileFormat.Header.self, from: data)
            do { _ = try FileFormat.format.version(of: header.stamp, in: file.path) } catch { throw ReceiverError(.format, error.message) }
            decoded = try JSONDecoder().decode(FileFormat.self, from: data)
        } catch let error as ReceiverError {
            throw error
        } catch {
            throw ReceiverError(.storage, "\(file.path) is not a device registry: \(error)")
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
