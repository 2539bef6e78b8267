import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// Trying a send again (when: ``TransferHops`` and its ``RetryPolicy``), and the total limit
/// across its attempts and hops. Engine thread.
extension Transfer {
    /// A 429 or 503 head's `Retry-After` in seconds from now (`.infinity` when unreadable:
    /// longer than any wait honoured), nil without one.
    func retryAfter(_ head: RecordedHead) -> Double? {
        head.fieldValue("Retry-After").map { value in
            RetryPolicy.retryAfterSeconds(value, now: Double(time(nil))) { date in
                let seconds = curl_getdate(date, nil)
                return seconds < 0 ? nil : Double(seconds)
            } ?? .infinity
        }
    }

    /// Sets the handle up for the next attempt (the current hop's URL, method and body again).
    /// Returns a failure when it cannot be.
    func prepareRetry(_ handle: EasyHandle) -> TransferFailure? {
        hops.retryBegins()  // the new attempt's clock counts its own heads
        if let route = hops.fallback?.current, route.proxy != switches.proxy, let failure = applyRoute(route, handle) { return failure }
        return prepareAttempt(handle)
    }

    /// Sets the handle up for the current hop by `route` (the PAC file's next route, its last
    /// proxy unreachable) at once. Returns a failure when it cannot be.
    func prepareRoute(_ route: PACRoute, _ handle: EasyHandle) -> TransferFailure? {
        hops.routeBegins()
        if let failure = applyRoute(route, handle) { return failure }
        return prepareAttempt(handle)
    }

    /// Makes `route` the proxy of the handle's next attempt. Returns a failure when it cannot be.
    func applyRoute(_ route: PACRoute, _ handle: EasyHandle) -> TransferFailure? {
        takeRoute(route)
        var options = EasyOptions(handle.easy)
        options.setProxyRoute(route.proxy, switches: switches, environmentProxy: false, handle: handle)
        handle.profile = nil  // set up afresh for its next transfer
        return options.failure.map { TransferFailure(kind: .other, text: $0) }
    }

    /// The handle ready for another attempt at the current hop (its body from the start).
    private func prepareAttempt(_ handle: EasyHandle) -> TransferFailure? {
        progress.pendingHead = nil
        progress.bodyOffset = 0
        progress.earlier.offset = (MonotonicTime.milliseconds() - progress.startedAt) * 1000
        if fileDescriptor >= 0, lseek(fileDescriptor, off_t(fileStart), SEEK_SET) < 0 {
            return TransferFailure(kind: .other, text: "cannot rewind the file to send it again")
        }
        handle.headParser.reset()
        handle.errorBuffer[0] = 0
        return limitToRemainingTotal(handle)
    }

    /// Gives libcurl, which times each hop and attempt from its own start, what is left of the
    /// total limit. Returns the timeout when nothing is left.
    func limitToRemainingTotal(_ handle: EasyHandle) -> TransferFailure? {
        guard timeout > 0 else { return nil }
        let left = Int64(Timeouts.milliseconds(timeout)) - (MonotonicTime.milliseconds() - progress.startedAt)
        guard left > 0 else { return TransferFailure(kind: .timeout, text: Timeouts.text(.total, after: timeout)) }
        var options = EasyOptions(handle.easy)
        options.set(CURLOPT_TIMEOUT_MS, Int(left))
        handle.profile = nil  // set up afresh for its next transfer
        return options.failure.map { TransferFailure(kind: .other, text: $0) }
    }
}
