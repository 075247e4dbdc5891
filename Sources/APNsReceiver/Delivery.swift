import APNsWire
import Foundation
import Utilities

/// The seam between the receiver (APNs) and the device OS: each accepted push that is not dropped
/// is handed here after it is in the delivery log. The simulated device (and through it the app's
/// delegate, which feeds the auth core's `canHandleNotification`) sits behind it.
///
/// Called off the connection's event loop; a slow handler never delays APNs answers.
public protocol PushDeliveryHandler: Sendable {
    func deliver(_ push: AcceptedPush) async
}

/// A delivery handler built from a closure.
public struct ClosureDeliveryHandler: PushDeliveryHandler {
    private let body: @Sendable (AcceptedPush) async -> Void
    public init(_ body: @escaping @Sendable (AcceptedPush) async -> Void) { self.body = body }
    public func deliver(_ push: AcceptedPush) async { await body(push) }
}
