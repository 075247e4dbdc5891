import APNsReceiver
import APNsWire
import ArgumentParser
import CommandSupport
import Foundation
import PostgresStores

/// Where `devices` finds the registry: a --state folder's devices.json, or a fleet's store.
struct RegistryOptions: ParsableArguments {
    @OptionGroup var state: StateOptions
    @Option(help: ArgumentHelp("The fleet's PostgreSQL, whose registry every receiver of the fleet shares (as push-receiver --store; also AUTHSIM_STORE). Without it: devices.json in --state.",
                               valueName: "url")) var store: String?

    /// Where changes are said to be.
    var place: String { ((try? fleetLocation(store, required: false)) ?? nil).map { "the store \($0.address)" } ?? state.registryFile.path }

    /// Makes `change`: in the fleet's store; else through the push-receiver (or authsim serve) that
    /// runs on --state, so that it sees the change at once; else in devices.json itself.
    /// - Returns: whether the token was known (always true for `register`).
    func apply(_ change: DeviceChange) async throws -> Bool {
        if try fleetLocation(store, required: false) == nil {
            do {
                if let known = try await RegistryControl.send(change, registryFile: state.registryFile) { return known }
            } catch {
                throw CommandFailure(error.message)
            }
        }
        return try await with { try await $0.apply(change) }
    }

    /// Runs `body` on the registry, opened for it and closed after.
    func with<T>(_ body: (DeviceRegistry) async throws -> T) async throws -> T {
        guard let location = try fleetLocation(store, required: false) else {
            return try await body(try DeviceRegistry(file: state.registryFile))
        }
        let devices = PostgresDeviceRegistry(location: location, node: "push-receiver devices@\(PostgresLocation.defaultNodeName(port: 0))")
        do {
            try await devices.open()
            let registry = try await DeviceRegistry(shared: devices, following: false)
            let result = try await body(registry)
            await devices.close()
            return result
        } catch let error as ValidationError {
            await devices.close()
            throw error
        } catch {
            await devices.close()
            throw CommandFailure("the device registry of the store \(location.address): \(error)")
        }
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, list, invalidate or remove device tokens in the registry (a running receiver sees changes at once; with --store, every receiver of the fleet).",
        subcommands: [Add.self, List.self, Invalidate.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a device token for an app in one environment.")
        @Option(help: "Device token (hex); omit to make a random 32-byte one.") var token: String?
        @Option(help: "The environment that issued the token (a debug build's token is sandbox).")
        var environment: APNsEnvironment
        @Option(help: "The app's bundle ID.") var bundle: String
        @Option(help: "A label for timelines.") var label: String?
        @Flag(help: "The device as one JSON object (token, environment, bundleID, state, label).") var json = false
        @OptionGroup var registry: RegistryOptions

        func run() async throws {
            let device = try parseToken(token) ?? DeviceToken.random()
            let registered = RegisteredDevice(token: device, environment: environment, bundleID: bundle, label: label)
            _ = try await registry.apply(.register(registered))
            say(json ? try jsonLine(registered) : "registered \(device.hex) in \(environment) for \(bundle)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered tokens.")
        @Flag(help: "One JSON object per device (token, environment, bundleID, state, invalidSince in ms, label).") var json = false
        @OptionGroup var registry: RegistryOptions
        func run() async throws {
            let devices = try await registry.with { $0.all }
            if json {
                for device in devices { say(try jsonLine(device)) }
                return
            }
            if devices.isEmpty { say("no devices in \(registry.place)") }
            for device in devices {
                let since = device.invalidSince.map { " since \($0) ms" } ?? ""
                say("\(device.environment.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(device.bundleID)  \(device.token.hex)  \(device.state.rawValue)\(since)\(device.label.map { "  (\($0))" } ?? "")")
            }
        }
    }

    struct Invalidate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a token answer 410 Unregistered or ExpiredToken from now on.")
        @Option(help: "Device token (hex).") var token: String
        @Option(help: "Its environment.") var environment: APNsEnvironment
        @Option(name: .customLong("as"), help: "unregistered or expired.") var newState: String = "unregistered"
        @OptionGroup var registry: RegistryOptions
        func run() async throws {
            guard let parsed = RegisteredDevice.State(rawValue: newState), parsed != .active else {
                throw ValidationError("--as must be unregistered or expired")
            }
            let device = try parseToken(token)!
            guard try await registry.apply(.invalidate(device, environment: environment, as: parsed, at: Date())) else {
                throw ValidationError("\(device.hex) is not registered in \(environment)")
            }
            say("\(device.hex) in \(environment) is now \(parsed.rawValue)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a token (it becomes BadDeviceToken).")
        @Option(help: "Device token (hex).") var token: String
        @Option(help: "Its environment.") var environment: APNsEnvironment
        @OptionGroup var registry: RegistryOptions
        func run() async throws {
            let device = try parseToken(token)!
            guard try await registry.apply(.remove(device, environment: environment)) else {
                throw ValidationError("\(device.hex) is not registered in \(environment)")
            }
            say("removed \(device.hex) from \(environment)")
        }
    }
}

/// A device as one line of JSON, keys sorted: the names the inspector's API uses.
func jsonLine(_ device: RegisteredDevice) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(device), as: UTF8.self)
}

/// `push-receiver reset`: empties the delivery and rejection logs (and with --devices the registry),
/// for a clean run without deleting files by hand. Stop the receiver first: a running one keeps
/// appending to the files it opened.
struct Reset: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Empty the delivery and rejection logs (and with --devices the registry) of a --state folder, or with --store of the fleet.",
        discussion: """
            A receiver running on the folder goes on, appending after the emptied logs' first line; pushes it \
            accepted less than its delivery latency ago, with no device connected, are not delivered to one \
            that connects afterwards. Stop it first for a clean run.
            """)
    @Flag(help: "Forget the registered devices too.") var devices = false
    @OptionGroup var registry: RegistryOptions
    func run() async throws {
        if let location = try fleetLocation(registry.store, required: false) {
            let log = PostgresDeliveryLog(location: location, node: "push-receiver reset@\(PostgresLocation.defaultNodeName(port: 0))")
            do {
                try await log.open()
                try await log.empty()
                await log.close()
            } catch {
                await log.close()
                throw CommandFailure("cannot empty the fleet's logs in \(location.address): \(error)")
            }
            var emptied = ["the delivery and rejection logs"]
            if devices {
                // Each removal through the registry, so that every receiver's copy hears of it.
                let removed = try await registry.with { registry in
                    let all = registry.all
                    for device in all { try await registry.apply(.remove(device.token, environment: device.environment)) }
                    return all.count
                }
                emptied.append("the device registry (\(removed) device(s) removed)")
            }
            say("emptied \(emptied.joined(separator: " and ")) of the store \(location.address)")
            return
        }
        let state = registry.state
        var emptied: [String] = []
        let logs: [(URL, (URL) throws(ReceiverError) -> Void)] = [(state.logFile, DeliveryLog.empty), (state.rejectionsFile, RejectionLog.empty)]
        for (file, empty) in logs {
            guard FileManager.default.fileExists(atPath: file.path) else { continue }
            do { try empty(file) } catch { throw ValidationError(error.message) }
            emptied.append(file.lastPathComponent)
        }
        if devices, FileManager.default.fileExists(atPath: state.registryFile.path) {
            // Each removal through a running receiver, if one runs on --state, so that it sees them.
            for device in try DeviceRegistry(file: state.registryFile).all {
                _ = try await registry.apply(.remove(device.token, environment: device.environment))
            }
            emptied.append(state.registryFile.lastPathComponent)
        }
        say(emptied.isEmpty ? "nothing to empty in \(state.state)" : "emptied \(emptied.joined(separator: ", ")) in \(state.state)")
    }
}

func parseToken(_ text: String?) throws -> DeviceToken? {
    guard let text else { return nil }
    guard let token = DeviceToken(hex: text) else {
        throw ValidationError("\"\(text)\" is not a device token: an even number of hex digits")
    }
    return token
}
