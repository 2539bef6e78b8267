import Dispatch

/// The progress of one `async` send (``HttpRequest/response(timeout:progress:)``): the counts
/// as the engine reports them, handed to the caller's handler on a serial queue of the
/// send's own (targeting the request's ``HttpRequest/callbackQueue``), one report at a time.
/// A report waiting to run takes in the newer counts, so a fast transfer costs few hops; the
/// counts a handler sees never go down, and the last report, once the transfer ended, shows
/// the final ones.
final class ProgressFeed: Sendable {
    private struct State {
        var counts: HttpRequest.Progress
        /// What the handler was last given.
        var delivered: HttpRequest.Progress?
        /// A report is queued and has not yet taken the counts.
        var pending = false
    }

    private let handler: HttpRequest.ProgressHandler
    private let queue: DispatchQueue
    private let state: Locked<State>
    /// The body is decoded as it comes (the counts are of decoded bytes).
    let decodesBody: Bool

    /// A feed for a send of `toSend` body bytes (-1 while not known: a multipart form), whose
    /// response body is decoded as it comes when `decodesBody`.
    init(_ handler: @escaping HttpRequest.ProgressHandler, on target: DispatchQueue, toSend: Int64, decodesBody: Bool) {
        self.handler = handler
        self.decodesBody = decodesBody
        queue = DispatchQueue(label: "CurlXHR.progress", target: target)
        state = Locked(State(counts: HttpRequest.Progress(bytesToSend: toSend)))
        update { _ in }  // the first report: nothing sent or received yet
    }

    /// libcurl sent `bytes` of the body, of `total` (0 while libcurl does not know it).
    func sent(_ bytes: Int64, of total: Int64) {
        update { counts in
            counts.bytesSent = max(counts.bytesSent, bytes)
            if total > 0 { counts.bytesToSend = total }
        }
    }

    /// The final response's head came, announcing `length` body bytes (nil: not known).
    func headArrived(announcing length: Int?) {
        update { counts in counts.bytesToReceive = length.map(Int64.init) ?? -1 }
    }

    /// `count` body bytes of the response arrived.
    func received(_ count: Int) {
        update { counts in counts.bytesReceived += Int64(count) }
    }

    /// Applies `change`, and queues a report unless one is waiting (it takes the new counts)
    /// or nothing changed.
    private func update(_ change: (inout HttpRequest.Progress) -> Void) {
        let schedules = state.withLock { state -> Bool in
            change(&state.counts)
            guard !state.pending, state.counts != state.delivered else { return false }
            state.pending = true
            return true
        }
        if schedules { queue.async { self.deliver() } }
    }

    private func deliver() {
        let counts = state.withLock { state -> HttpRequest.Progress? in
            state.pending = false
            guard state.counts != state.delivered else { return nil }
            state.delivered = state.counts
            return state.counts
        }
        if let counts { handler(counts) }
    }
}
