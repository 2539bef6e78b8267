/// Transfers waiting to be tried again (``RetryPolicy``), each until its moment. Engine
/// thread only; the handle stays with the transfer, out of libcurl, meanwhile.
struct RetryWaits {
    private var waiting: [(at: Int64, transfer: Transfer)] = []

    var isEmpty: Bool { waiting.isEmpty }

    mutating func add(_ transfer: Transfer, after seconds: Double) {
        waiting.append((MonotonicTime.milliseconds() + Int64((seconds * 1000).rounded(.up)), transfer))
    }

    /// Stops waiting for a transfer that ended (an abort during the wait).
    mutating func forget(_ transfer: Transfer) {
        guard !waiting.isEmpty else { return }
        waiting.removeAll { $0.transfer === transfer }
    }

    /// The transfers whose moment has come, taken out of the list.
    mutating func takeDue() -> [Transfer] {
        let now = MonotonicTime.milliseconds()
        let due = waiting.filter { $0.at <= now }.map(\.transfer)
        if !due.isEmpty { waiting.removeAll { $0.at <= now } }
        return due
    }

    /// Milliseconds until the next moment (at least 1), or nil when none waits.
    func millisecondsToNext() -> Int32? {
        waiting.map(\.at).min().map(MonotonicTime.millisecondsUntil)
    }
}
