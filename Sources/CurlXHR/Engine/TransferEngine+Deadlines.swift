import CCurlShim

/// What the engine does at its deadlines: ends a transfer whose headers or idle limit ran out
/// (``PhaseWatch``), and sets a failed or refused attempt aside to try it again later
/// (``TransferWaits``, ``RetryPolicy``). Engine thread only.
extension TransferEngine {
    /// Ends the transfers whose headers or idle timeout ran out (or waits to try them again).
    func endExpired() {
        for (transfer, phase) in phaseWatch.expired() {
            let limit = phase == .idle ? transfer.switches.timeouts.idle : transfer.switches.timeouts.headers
            let failure = TransferFailure(kind: .timeout, text: Timeouts.text(phase, after: limit),
                                          beforeResponse: !transfer.hops.sawHead)
            attemptEnded(transfer, failure: failure)
        }
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
