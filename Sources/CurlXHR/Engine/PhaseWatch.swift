import CCurlShim

/// The transfers whose headers or idle timeouts the engine keeps (``PhaseClock``), and what
/// it reads of each at the end of a round. Engine thread only; a transfer without those
/// timeouts is never listed, so a round without any costs one `isEmpty`.
struct PhaseWatch {
    private var transfers: [Transfer] = []

    var isEmpty: Bool { transfers.isEmpty }

    /// Starts the clocks of a transfer libcurl has just been given.
    mutating func watch(_ transfer: Transfer, timeouts: Timeouts) {
        transfer.clock = PhaseClock(headers: Int64(Timeouts.milliseconds(timeouts.headers)),
                                    idle: Int64(Timeouts.milliseconds(timeouts.idle)), startedAt: MonotonicTime.milliseconds())
        transfers.append(transfer)
    }

    /// Stops watching a transfer that ended.
    mutating func forget(_ transfer: Transfer) {
        guard transfer.clock != nil else { return }
        transfer.clock = nil
        if let index = transfers.firstIndex(where: { $0 === transfer }) { transfers.remove(at: index) }
    }

    /// Observes every watched transfer; returns those whose limit ran out, with the phase.
    mutating func expired() -> [(Transfer, Timeouts.Phase)] {
        let now = MonotonicTime.milliseconds()
        var expired: [(Transfer, Timeouts.Phase)] = []
        for transfer in transfers {
            guard let handle = transfer.handle, var clock = transfer.clock else { continue }
            if let phase = clock.observe(Self.observation(of: transfer, handle), at: now) { expired.append((transfer, phase)) }
            transfer.clock = clock
        }
        return expired
    }

    /// Milliseconds until the nearest deadline (at least 1), or nil when none.
    func millisecondsToDeadline() -> Int32? {
        transfers.compactMap { $0.clock?.deadline }.min().map(MonotonicTime.millisecondsUntil)
    }

    private static func observation(of transfer: Transfer, _ handle: EasyHandle) -> PhaseClock.Observation {
        let easy = handle.easy
        var received: curl_off_t = 0, sent: curl_off_t = 0, toSend: curl_off_t = -1
        var headBytes = 0, requestBytes = 0
        _ = cxhr_easy_get_offset(easy, CURLINFO_SIZE_DOWNLOAD_T, &received)
        _ = cxhr_easy_get_offset(easy, CURLINFO_SIZE_UPLOAD_T, &sent)
        _ = cxhr_easy_get_offset(easy, CURLINFO_CONTENT_LENGTH_UPLOAD_T, &toSend)
        _ = cxhr_easy_get_long(easy, CURLINFO_HEADER_SIZE, &headBytes)
        _ = cxhr_easy_get_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
        return PhaseClock.Observation(
            bytesMoved: Int64(received) + Int64(sent) + Int64(headBytes) + Int64(requestBytes),
            requestSent: requestBytes > 0 && (toSend <= 0 || sent >= toSend),
            headsSeen: transfer.hops.headsSeen,
            headReported: transfer.hops.headReported,
            paused: transfer.progress.pausedByConsumer || transfer.progress.pacedUntil != nil)
    }
}
