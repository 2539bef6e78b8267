/// How fast one direction of a transfer may move its body (``HttpRequest/setRateLimits(download:upload:)``):
/// bytes that are ready to move at a moment either go on, or wait until the moment they keep
/// the rate. A pure value: times are milliseconds of a monotonic clock, given by the caller;
/// the engine carries out the answers (a pause of the transfer, a resume when its time comes).
///
/// libcurl 7.88's own limits (`CURLOPT_MAX_RECV_SPEED_LARGE`) let a loopback download run
/// many times faster than asked; so the library paces in its body callbacks, where it can
/// hold the bytes back. The rule is a virtual clock (GCRA, a token bucket in one number):
/// each byte moved pushes the clock on by 1/rate seconds, and bytes may move only when the
/// clock, pushed on by them, is not ahead of now. So from the first bytes on, no more than
/// rate × elapsed bytes have moved at any moment, whatever the size of the pieces libcurl
/// hands over (a 16 KiB buffer at 1 KiB/s waits 16 s, then goes: the average holds). A
/// transfer that fell behind (the server stalled) may catch up by at most ``credit``
/// milliseconds' worth of bytes at once (or one piece), never more than the average allows.
struct RatePacer: Sendable, Equatable {
    /// The most a transfer that fell behind may catch up at once, in milliseconds of its rate.
    static let credit: Int64 = 1000

    /// The rate, in bytes per second (more than 0).
    let bytesPerSecond: Int64
    /// When the bytes moved so far would have finished moving at the rate, in microseconds;
    /// nil before the first bytes.
    private var clock: Int64?

    /// What to do with bytes that are ready to move.
    enum Decision: Equatable {
        /// Move them now.
        case proceed
        /// Hold them (pause the transfer) until this moment, then offer them again.
        case pause(until: Int64)
    }

    init(bytesPerSecond: Int64) {
        precondition(bytesPerSecond > 0, "a pacer needs a rate")
        self.bytesPerSecond = bytesPerSecond
    }

    /// `count` bytes are ready to move at `now`: they go on when moving them keeps the rate,
    /// and count as moved; else they wait until the moment they keep it.
    mutating func ready(_ count: Int, at now: Int64) -> Decision {
        let nowMicroseconds = now * 1000
        let duration = duration(of: count)
        // Saved-up time counts up to the credit, or the time these bytes take themselves (a
        // piece larger than the credit goes once it waited for its own time).
        let start = max(clock ?? nowMicroseconds, nowMicroseconds - max(Self.credit * 1000, duration))
        let due = start + duration
        guard due > nowMicroseconds else {
            clock = due
            return .proceed
        }
        if clock == nil { clock = nowMicroseconds }  // the first bytes start the clock
        return .pause(until: (due + 999) / 1000)
    }

    /// Bytes that went on came back untaken (their consumer paused them): they are offered
    /// again later, and count then.
    mutating func returned(_ count: Int) {
        if let clock { self.clock = clock - duration(of: count) }
    }

    /// How many bytes an upload offers at once when libcurl has room for `capacity`: an
    /// eighth of a second's worth (at least one byte), so that a slow rate sends small pieces
    /// often rather than a whole buffer after a long wait.
    func piece(capacity: Int) -> Int {
        Int(clamping: max(1, min(bytesPerSecond / 8, Int64(capacity))))
    }

    /// Microseconds `count` bytes take at the rate.
    private func duration(of count: Int) -> Int64 {
        let (product, overflow) = Int64(count).multipliedReportingOverflow(by: 1_000_000)
        return overflow ? Int64(count) / bytesPerSecond * 1_000_000 : product / bytesPerSecond
    }
}

/// A request's transfer rate limits (``HttpRequest/setRateLimits(download:upload:)``), bytes per
/// second; 0: none.
struct RateLimits: Sendable, Equatable {
    var download: Int64 = 0
    var upload: Int64 = 0

    /// libcurl's receive buffer for a download limit below its default 16 KiB: the rate, at
    /// least libcurl's smallest 1 KiB (as the curl tool does), so that a slow download moves
    /// in pieces of about a second rather than 16 s apart; nil to keep the default.
    var receiveBufferSize: Int? {
        guard download > 0, download < 16 * 1024 else { return nil }
        return Int(max(1024, download))
    }
}
