import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// Trying a send again (``RetryPolicy``), and the total limit across its attempts and hops.
/// Engine thread.
extension Transfer {
    /// At a 429 or 503 head: seconds to wait before trying again, or nil when it is the answer.
    func retryDelay(forStatus head: RecordedHead) -> Double? {
        let retryAfter = head.fieldValue("Retry-After").map { value in
            RetryPolicy.retryAfterSeconds(value, now: Double(time(nil))) { date in
                let seconds = curl_getdate(date, nil)
                return seconds < 0 ? nil : Double(seconds)
            } ?? .infinity  // unreadable: longer than any wait honoured
        }
        return plannedDelay(.status(head.status, retryAfter: retryAfter))
    }

    /// After a failed attempt: seconds to wait before trying again, or nil when the failure
    /// stands.
    func retryDelay(after failure: TransferFailure) -> Double? {
        guard failure.beforeResponse, progress.pendingHead == nil else { return nil }
        return plannedDelay(.noResponse)
    }

    private func plannedDelay(_ cause: RetryPolicy.Cause) -> Double? {
        guard !progress.headReported,
              let delay = switches.retries.delay(before: progress.retries + 1, after: cause, method: progress.hopMethod ?? sentMethod,
                                                 jitter: Double.random(in: 0..<1))
        else { return nil }
        // Not beyond the total limit: the last attempt's outcome is the answer then.
        if timeout > 0, Double(MonotonicTime.milliseconds() - progress.startedAt) / 1000 + delay >= timeout { return nil }
        return delay
    }

    /// Sets the handle up for the next attempt (the current hop's URL, method and body again).
    /// Returns a failure when it cannot be.
    func prepareRetry(_ handle: EasyHandle) -> TransferFailure? {
        progress.retries += 1
        progress.retryDelay = nil
        progress.pendingHead = nil
        progress.sawHead = false
        progress.lastStatus = 0
        progress.headsSeen = 0  // the new attempt's clock counts its own heads
        progress.followsRedirect = false
        progress.bodyOffset = 0
        progress.hopOffset = (MonotonicTime.milliseconds() - progress.startedAt) * 1000
        if fileDescriptor >= 0, lseek(fileDescriptor, 0, SEEK_SET) < 0 {
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
