import CCurlShim

/// What the engine does for rate limits (``RatePacer``): a body callback paused a transfer
/// until a moment, and the engine resumes it then. Engine thread only.
extension TransferEngine {
    /// `transfer`'s body callback paused it for its rate limit until `moment`.
    func pace(_ transfer: Transfer, until moment: Int64) {
        paceWaits.add(transfer, at: moment)
    }

    /// Stops waiting to resume a transfer that ends or leaves libcurl.
    func stopPacing(_ transfer: Transfer) {
        guard transfer.progress.pacedUntil != nil else { return }
        transfer.progress.pacedUntil = nil
        paceWaits.forget(transfer)
    }

    /// Resumes the transfers whose moment came: libcurl offers their bytes again (at once,
    /// from `curl_easy_pause` or its next round), and the pacer lets them go. A body the
    /// consumer paused meanwhile stays paused until the consumer resumes it.
    func resumeDuePaced() {
        for transfer in paceWaits.takeDue() {
            transfer.progress.pacedUntil = nil
            guard !transfer.isFinished, transfer.isAdded, let handle = transfer.handle else { continue }
            curl_easy_pause(handle.easy, transfer.progress.pausedByConsumer ? cxhr_pause_receive_only : cxhr_pause_continue)
        }
    }
}
