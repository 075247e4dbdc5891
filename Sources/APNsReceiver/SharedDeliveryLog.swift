/// Where the receivers of a fleet keep the pushes they answered 200, so that one query finds every
/// push of the fleet (PostgreSQL, in `PostgresStores`). The delivery log file (``DeliveryLog``) is
/// the embedded default and is not one of these.
///
/// A push is answered 200 only once ``keep(_:lines:done:)`` said it is kept. A push that cannot be
/// kept is answered 503 `ServiceUnavailable` when the error's code is `unavailable` (the database
/// cannot be reached: APNs's answer while it is down, which providers retry), else 500
/// `InternalServerError`, as when the file cannot be written.
public protocol SharedDeliveryLog: Sendable {
    /// Keeps `pushes` (their delivery-log lines, newline-ended, in `lines`, in the same order), and
    /// then calls `done`, on any thread: `nil` when all are kept, else why none is.
    func keep(_ pushes: [AcceptedPush], lines: [UInt8], done: @escaping @Sendable (ReceiverError?) -> Void)
}
