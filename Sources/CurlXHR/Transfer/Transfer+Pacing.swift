import CCurlShim

/// The rate limits of a send (``HttpRequest/setRateLimits(download:upload:)``) in libcurl's body
/// callbacks: ``RatePacer`` decides, the callback pauses the transfer when it says so, and the
/// engine resumes it when the moment comes (``TransferEngine/pace(_:until:)``). Engine thread.
///
/// A rate pause and a consumer's pause (``Progress/pausedByConsumer``) are separate: each
/// resume (the consumer's, or the pacer's moment) lets libcurl offer the bytes again, and the
/// callback asks the pacer first, so neither undoes the other; the engine resumes a body the
/// consumer paused only when the consumer asks. No byte is lost: a paused call's bytes come
/// again.
extension Transfer {
    /// Readies the pacers of a send that has limits.
    func startPacers(_ limits: RateLimits) {
        if limits.download > 0 { progress.downloadPacer = RatePacer(bytesPerSecond: limits.download) }
        if limits.upload > 0 { progress.uploadPacer = RatePacer(bytesPerSecond: limits.upload) }
    }

    /// Body bytes from libcurl under a download limit: on their way when they keep the rate,
    /// else paused until they do.
    func pacedBodyBytes(_ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        switch progress.downloadPacer!.ready(bytes.count, at: MonotonicTime.milliseconds()) {
        case .pause(let moment):
            pause(until: moment)
            return .paused
        case .proceed:
            let disposition = bodyBytes(bytes)
            // The consumer paused them: they come again, and count then.
            if disposition == .paused { progress.downloadPacer!.returned(bytes.count) }
            return disposition
        }
    }

    /// The next bytes of an upload under a limit: a piece of the body when it keeps the rate,
    /// else libcurl's pause (`CURL_READFUNC_PAUSE`) until it does.
    func pacedReadBody(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let left = bodyBytesLeft
        guard left > 0 else { return readBody(into: buffer, capacity: capacity) }  // the end
        let piece = min(progress.uploadPacer!.piece(capacity: capacity), left)
        switch progress.uploadPacer!.ready(piece, at: MonotonicTime.milliseconds()) {
        case .pause(let moment):
            pause(until: moment)
            return cxhr_read_pause
        case .proceed:
            let read = readBody(into: buffer, capacity: piece)
            if read >= 0, read < piece { progress.uploadPacer!.returned(piece - read) }
            return read
        }
    }

    private func pause(until moment: Int64) {
        progress.pacedUntil = moment
        TransferEngine.shared.pace(self, until: moment)
    }
}
