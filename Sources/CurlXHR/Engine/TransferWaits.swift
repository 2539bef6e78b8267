/// Transfers waiting for a moment, each listed once: to be tried again (``RetryPolicy``; the
/// handle stays with the transfer, out of libcurl, meanwhile), or to go on after a pause for
/// their rate limit (``RatePacer``; the handle stays in libcurl, paused). Engine thread only.
struct TransferWaits {
    private var waiting: [(at: Int64, transfer: Transfer)] = []

    var isEmpty: Bool { waiting.isEmpty }

    mutating func add(_ transfer: Transfer, after seconds: Double) {
        add(transfer, at: MonotonicTime.milliseconds() + Int64((seconds * 1000).rounded(.up)))
    }

    /// Waits for `moment` (``MonotonicTime``); a transfer already waiting waits for it instead.
    mutating func add(_ transfer: Transfer, at moment: Int64) {
        if let index = waiting.firstIndex(where: { $0.transfer === transfer }) {
            waiting[index].at = moment
        } else {
            waiting.append((moment, transfer))
        }
    }

    /// Stops waiting for a transfer that ended (an abort during the wait) or left libcurl.
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
