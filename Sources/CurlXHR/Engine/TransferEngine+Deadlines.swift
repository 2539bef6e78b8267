import CCurlShim

/// What the engine does at its deadlines: ends a transfer whose headers or idle limit ran out
/// (``PhaseWatch``), and sets a failed or refused attempt aside to try it again later
/// (``RetryWaits``, ``RetryPolicy``). Engine thread only.
extension TransferEngine {
    /// Ends the transfers whose headers or idle timeout ran out (or waits to try them again).
    func endExpired() {
        for (transfer, phase) in phaseWatch.expired() {
            let limit = phase == .idle ? transfer.switches.timeouts.idle : transfer.switches.timeouts.headers
            let failure = TransferFailure(kind: .timeout, text: Timeouts.text(phase, after: limit),
                                          beforeResponse: !transfer.progress.sawHead)
            if !retryLater(transfer, after: failure) { end(transfer, failure: failure) }
        }
    }

    /// Takes a failed attempt out of libcurl to try it again later, if its policy says so.
    func retryLater(_ transfer: Transfer, after failure: TransferFailure) -> Bool {
        guard transfer.switches.retries.count > 0, let handle = transfer.handle,
              let delay = transfer.retryDelay(after: failure) else { return false }
        remove(transfer, handle)
        transfer.usedConnection(ConnectionID(handle.easy))
        waitToRetry(transfer, delay)
        return true
    }

    func waitToRetry(_ transfer: Transfer, _ delay: Double) {
        phaseWatch.forget(transfer)
        retryWaits.add(transfer, after: delay)
    }

    /// Hands libcurl again the transfers whose wait before a retry is over.
    func startDueRetries() {
        for transfer in retryWaits.takeDue() {
            guard let handle = transfer.handle else { continue }
            if let failure = transfer.prepareRetry(handle) {
                end(transfer, failure: failure)
            } else {
                handToLibcurl(transfer, handle)
            }
        }
    }
}
