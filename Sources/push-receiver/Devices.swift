import APNsReceiver
import APNsWire
import ArgumentParser
import Foundation

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, list, invalidate or remove device tokens in the registry (a running receiver sees changes at once).",
        subcommands: [Add.self, List.self, Invalidate.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a device token for an app in one environment.")
        @Option(help: "Device token (hex); omit to make a random 32-byte one.") var token: String?
        @Option(help: "The environment that issued the token (a debug build's token is sandbox).")
        var environment: APNsEnvironment
        @Option(help: "The app's bundle ID.") var bundle: String
        @Option(help: "A label for timelines.") var label: String?
        @OptionGroup var state: StateOptions

        func run() throws {
            let device = try parseToken(token) ?? DeviceToken.random()
            let registry = try DeviceRegistry(file: state.registryFile)
            try registry.register(RegisteredDevice(token: device, environment: environment, bundleID: bundle, label: label))
            print("registered \(device.hex) in \(environment) for \(bundle)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered tokens.")
        @OptionGroup var state: StateOptions
        func run() throws {
            let devices = try DeviceRegistry(file: state.registryFile).all
            if devices.isEmpty { print("no devices in \(state.registryFile.path)") }
            for device in devices {
                let since = device.invalidSince.map { " since \($0) ms" } ?? ""
                print("\(device.environment.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(device.bundleID)  \(device.token.hex)  \(device.state.rawValue)\(since)\(device.label.map { "  (\($0))" } ?? "")")
            }
        }
    }

    struct Invalidate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a token answer 410 Unregistered or ExpiredToken from now on.")
        @Option(help: "Device token (hex).") var token: String
        @Option(help: "Its environment.") var environment: APNsEnvironment
        @Option(name: .customLong("as"), help: "unregistered or expired.") var newState: String = "unregistered"
        @OptionGroup var state: StateOptions
        func run() throws {
            guard let parsed = RegisteredDevice.State(rawValue: newState), parsed != .active else {
                throw ValidationError("--as must be unregistered or expired")
            }
            let device = try parseToken(token)!
            guard try DeviceRegistry(file: state.registryFile).invalidate(device, in: environment, as: parsed, at: Date()) else {
                throw ValidationError("\(device.hex) is not registered in \(environment)")
            }
            print("\(device.hex) in \(environment) is now \(parsed.rawValue)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a token (it becomes BadDeviceToken).")
        @Option(help: "Device token (hex).") var token: String
        @Option(help: "Its environment.") var environment: APNsEnvironment
        @OptionGroup var state: StateOptions
        func run() throws {
            let device = try parseToken(token)!
            guard try DeviceRegistry(file: state.registryFile).remove(device, in: environment) else {
                throw ValidationError("\(device.hex) is not registered in \(environment)")
            }
            print("removed \(device.hex) from \(environment)")
        }
    }
}

func parseToken(_ text: String?) throws -> DeviceToken? {
    guard let text else { return nil }
    guard let token = DeviceToken(hex: text) else {
        throw ValidationError("\"\(text)\" is not a device token: an even number of hex digits")
    }
    return token
}
