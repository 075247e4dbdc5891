import APNsReceiver
import APNsWire
import Logging
import Synchronization
import Utilities

/// A receiver's view of where a fleet's devices are connected: a copy in memory of the other
/// nodes' links (every push that finds no device here reads it), kept current as the store
/// announces changes, and the pushes other receivers hand this one, taken as they are announced.
///
/// A push that finds its device connected nowhere, on the copy, is checked against the store
/// first (``catchUp()``), so a device that connected to another node a moment ago still gets it.
package final class FleetDeviceLinks: Sendable {
    private struct Key: Hashable {
        let environment: APNsEnvironment
        let token: String
    }
    package let shared: any SharedDeviceLinks
    private let others = Mutex<[Key: Set<String>]>([:])
    private let reads = CoalescedReads<ReceiverError>()
    private let takes = CoalescedReads<ReceiverError>()

    /// Where forwarding failures are told.
    let logger: Logger

    package init(shared: any SharedDeviceLinks, logger: Logger = Logger(label: "authsim.device-links", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.shared = shared
        self.logger = logger
    }

    /// The other nodes whose gateways the device holds a stream open on, as this copy has them.
    func nodes(for token: DeviceToken, in environment: APNsEnvironment) -> Set<String> {
        others.withLock { $0[Key(environment: environment, token: token.hex)] ?? [] }
    }

    /// Reads the other nodes' links from the store; callers that arrive together share a read.
    package func catchUp() async throws(ReceiverError) {
        try await reads.run { [self] () throws(ReceiverError) in
            var copy: [Key: Set<String>] = [:]
            for link in try await shared.links() { copy[Key(environment: link.environment, token: link.token.hex), default: []].insert(link.node) }
            others.withLock { $0 = copy }
        }
    }

    /// Follows the store until `shared` closes: links as they change, and the pushes handed to
    /// this node, given to `hub`'s devices.
    func follow(into hub: DeviceHub) {
        shared.follow(linksChanged: { [weak self] in
            guard let self else { return }
            Task { try? await self.catchUp() }
        }, forwarded: { [weak self, weak hub] in
            guard let self, let hub else { return }
            Task { try? await self.take(into: hub) }
        })
    }

    /// Takes the pushes handed to this node and gives them to `hub`'s devices.
    func take(into hub: DeviceHub) async throws(ReceiverError) {
        try await takes.run { [self] () throws(ReceiverError) in
            let pushes = try await shared.takeForwarded()
            if !pushes.isEmpty { await hub.deliver(forwarded: pushes) }
        }
    }
}
