/// The headers and idle timeouts of one transfer, decided from what the engine observes at
/// the end of each of its rounds. libcurl has neither limit (its low-speed limit counts whole
/// seconds), so the engine keeps one clock per transfer that has them and waits in
/// `curl_multi_poll` no longer than the nearest deadline. A pure value: times are
/// milliseconds of a monotonic clock, given by the caller.
///
/// - idle: every round that finds the transfer's byte count moved (either direction), or its
///   body paused for a consumer that is behind, starts the clock again; the transfer's start
///   counts as a byte.
/// - headers: from the round that finds the request sent (its head and its whole body) to the
///   round that finds the response head the request reports. An intermediate head (an
///   authentication round libcurl answers, a redirect the engine follows) starts the clock
///   again: the next request goes out at once.
struct PhaseClock: Sendable, Equatable {
    let headersLimit: Int64
    let idleLimit: Int64
    private(set) var lastActivity: Int64
    private var bytesMoved: Int64 = 0
    /// Since when a head is awaited (the request went out, or an intermediate head came).
    private(set) var awaitingHeadSince: Int64?
    private var headsSeen = 0
    private var headReported = false

    /// What the engine sees of a transfer in one round.
    struct Observation: Equatable {
        /// Bytes sent and received so far, heads included (any change is activity).
        var bytesMoved: Int64
        /// The request head and its whole body went out.
        var requestSent: Bool
        /// Response heads that were not interim (1xx) so far.
        var headsSeen: Int
        /// The request has its response head (the final one).
        var headReported: Bool
        /// The body waits for its consumer (a LOADING callback behind): not idle.
        var paused = false
    }

    init(headers: Int64, idle: Int64, startedAt now: Int64) {
        headersLimit = headers
        idleLimit = idle
        lastActivity = now
    }

    /// Takes in a round's observation; returns the phase whose limit ran out, if any.
    mutating func observe(_ seen: Observation, at now: Int64) -> Timeouts.Phase? {
        if seen.bytesMoved != bytesMoved || seen.paused {
            bytesMoved = seen.bytesMoved
            lastActivity = now
        }
        if seen.headReported {
            headReported = true
            awaitingHeadSince = nil
        } else if !headReported {
            if seen.headsSeen != headsSeen {
                headsSeen = seen.headsSeen
                awaitingHeadSince = now
            } else if awaitingHeadSince == nil, seen.requestSent {
                awaitingHeadSince = now
            }
        }
        if idleLimit > 0, now - lastActivity >= idleLimit { return .idle }
        if headersLimit > 0, let since = awaitingHeadSince, now - since >= headersLimit { return .header }
        return nil
    }

    /// When the next limit runs out unless something moves first, or nil.
    var deadline: Int64? {
        let idle: Int64? = idleLimit > 0 ? lastActivity + idleLimit : nil
        let head: Int64? = headersLimit > 0 ? awaitingHeadSince.map { $0 + headersLimit } : nil
        switch (idle, head) {
        case let (idle?, head?): return min(idle, head)
        case let (idle?, nil): return idle
        case let (nil, head?): return head
        case (nil, nil): return nil
        }
    }
}
