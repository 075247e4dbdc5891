import NIOCore

/// Where the receivers of a fleet keep the pushes they answered, so that one query finds every
/// push of the fleet (PostgreSQL, in `PostgresStores`). The delivery log file (``DeliveryLog``) and
/// the rejection log file (``RejectionLog``) are the embedded default and are not one of these.
///
/// A push is answered 200 only once ``keep(_:lines:registryVersion:done:)`` said it is kept. A push that cannot be
/// kept is answered 503 `ServiceUnavailable` (APNs's answer while it cannot take pushes, which
/// providers retry), as when the file cannot be written.
///
/// A refused push is answered once ``keep(refusals:done:)`` is done, kept or not: APNs refuses a
/// bad push whatever becomes of its records, so a refusal that cannot be kept is logged, and
/// answered as it would have been.
package protocol SharedDeliveryLog: Sendable {
    /// Keeps `pushes` (their delivery-log lines, newline-ended, in `lines`, in the same order), and
    /// then calls `done` with what became of all of them, on `loop` (the connection's, where this
    /// is called), and not before this returns.
    /// - Parameter registryVersion: the version of the fleet's device registry the pushes were
    ///   validated on (``DeviceRegistry/version``), when the registry is the fleet's: none is kept
    ///   if the registry or the fleet's fault plan changed since (``KeepOutcome/stale``), and the
    ///   receiver decides on them again.
    func keep(_ pushes: [AcceptedPush], lines: [UInt8], registryVersion: Int64?, on loop: any EventLoop,
              done: @escaping @Sendable (KeepOutcome) -> Void)
    /// Keeps the rejection-log entries of refused pushes, then calls `done` on `loop`, not before
    /// this returns: `nil` when all are kept, else why none is.
    func keep(refusals: [RejectionLog.Entry], on loop: any EventLoop, done: @escaping @Sendable (ReceiverError?) -> Void)
    /// Lets go of what the log holds on `group`'s event loops (a receiver's, which stop next).
    func release(_ group: any EventLoopGroup) async
}

/// What became of a batch of accepted pushes in a fleet's log.
package enum KeepOutcome: Sendable {
    /// All kept: answer 200.
    case kept
    /// None kept: the fleet's device registry or fault plan changed after the version they were
    /// validated on (a token invalidated or removed, a fault planned, on another node a moment
    /// ago). Catch up and decide again.
    case stale
    /// None kept, for this reason.
    case failed(ReceiverError)
}

/// A push another receiver of a fleet answered, as the fleet's logs keep it: what an inspector
/// shows of the fleet beside its own receiver's pushes.
package struct FleetPush: Sendable, Hashable {
    package enum Answer: Sendable, Hashable {
        /// Answered 200: its delivery-log line (the log keeps no payload).
        case delivered(DeliveryLog.Entry)
        /// Refused for a reason of the push's own: its rejection-log entry.
        case refused(RejectionLog.Entry)
    }
    /// The receiver that answered it (`--node-name`).
    package var node: String
    package var answer: Answer

    package init(node: String, answer: Answer) {
        self.node = node
        self.answer = answer
    }
}
