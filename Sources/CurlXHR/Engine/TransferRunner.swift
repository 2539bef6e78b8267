/// What a request asks of the engine that runs its transfers. ``TransferEngine`` runs them
/// over libcurl; tests put a scripted runner in its place to drive a request event by event.
///
/// Every call posts and returns: the runner reports back through the transfer's
/// ``TransferOwner`` and ends each send with ``Transfer/complete()``.
protocol TransferRunner: AnyObject, Sendable {
    /// Runs the transfer's send.
    func start(_ transfer: Transfer)
    /// Stops the transfer's send numbered `send` (``Transfer/sends`` when it was aborted),
    /// whether it started yet or not.
    func cancel(_ transfer: Transfer, send: Int)
    /// Lets a transfer whose body was paused (its consumer was behind) deliver again.
    func resume(_ transfer: Transfer)
    /// Stops `transfer`'s send (if any), then closes `connections` and the one the transfer
    /// used, as soon as no other transfer runs on them.
    func close(_ transfer: (Transfer, send: Int)?, connections: [ConnectionID])
}
