import APNsReceiver
import ArgumentParser
import CommandSupport
import Foundation
import PostgresStores

/// `push-receiver faults … --store URL`: the fault plan every receiver of a fleet applies.
struct Faults: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, set, add or clear the fault plan every receiver of a fleet applies (--store).",
        discussion: """
            A fleet's plan is kept in its PostgreSQL: every receiver applies it as soon as the change returns, and a rule's \
            count=N is N pushes of the whole fleet. A receiver without --store keeps its faults in its process: give them with \
            --fault at start, or change them on authsim serve's Faults page.
            """,
        subcommands: [List.self, Set.self, Add.self, Clear.self])

    /// The fleet's store, for the plan.
    struct StoreOptions: ParsableArguments {
        @Option(help: ArgumentHelp("The fleet's PostgreSQL (as push-receiver --store; also AUTHSIM_STORE).", valueName: "url")) var store: String?

        /// Runs `body` on the fleet's registry store, which keeps the plan, opened for it and closed after.
        func with<T>(_ body: (PostgresDeviceRegistry) async throws -> T) async throws -> T {
            guard let location = try fleetLocation(store, required: false) else {
                throw ValidationError("a fleet's fault plan is in its store: --store postgres://… (or AUTHSIM_STORE); a receiver without one keeps its faults in its process (--fault at start, or authsim serve's Faults page)")
            }
            let devices = PostgresDeviceRegistry(location: location, node: "push-receiver faults@\(PostgresLocation.defaultNodeName(port: 0))")
            do {
                try await devices.open()
                let result = try await body(devices)
                await devices.close()
                return result
            } catch {
                await devices.close()
                throw CommandFailure("the fault plan of the store \(location.address): \(error)")
            }
        }
    }

    /// Prints a plan, one rule a line in --fault syntax (a counted rule with the uses it has left).
    static func show(_ plan: FaultPlanRecord) {
        let rules = plan.rules.filter { $0.count != 0 }
        if rules.isEmpty { say("no faults: every receiver of the fleet answers as APNs would") }
        for rule in rules { say(rule.description) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the fleet's rules in --fault syntax, counted ones with the uses left.")
        @OptionGroup var options: StoreOptions
        func run() async throws { show(try await options.with { try await $0.faultPlan() }) }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put these rules in place of the fleet's, at once.")
        @Argument(help: "Rules in --fault syntax: delay=MS | drop | reject=REASON | goaway=REASON | refuse-stream, then optionally ,token=HEX ,environment=ENV ,count=N ,probability=P.")
        var rules: [String]
        @OptionGroup var options: StoreOptions
        func run() async throws {
            let parsed = try rules.map { try FaultRule(parsing: $0) }
            show(try await options.with { try await $0.write(.replace(parsed)) })
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Append one rule to the fleet's plan.")
        @Argument(help: "A rule in --fault syntax.") var rule: String
        @OptionGroup var options: StoreOptions
        func run() async throws {
            let parsed = try FaultRule(parsing: rule)
            show(try await options.with { try await $0.write(.add(parsed)) })
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every rule of the fleet's plan.")
        @OptionGroup var options: StoreOptions
        func run() async throws { show(try await options.with { try await $0.write(.clear) }) }
    }
}
