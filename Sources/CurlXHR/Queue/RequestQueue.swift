import Synchronization

/// Limits how many requests run at once, and decides which waiting one goes next: mesibo's
/// `HttpQueue`.
///
/// ```swift
/// let queue = RequestQueue(maxSimultaneous: 4)
/// for url in urls {
///     let request = HttpRequest()
///     request.open("GET", url: url, async: true)
///     request.queue = queue
///     request.send()          // starts now, or waits OPENED for one of the 4 slots
/// }
/// ```
///
/// A request sent into a queue whose slots are all taken stays OPENED, with no callback,
/// until a running request of the queue ends (DONE, however it ended); then it is SENT and
/// the rest follows as usual. A synchronous `send` blocks meanwhile. The next to start is the
/// waiting request with the highest ``HttpRequest/priority``, then the one that came first;
/// ``enqueue(_:atFront:)`` with `atFront` puts a request before the others of its priority.
/// `abort()`, `open` and `close()` of a waiting request take it out of the queue (`abort` and
/// `close` end it in DONE with status 0; asynchronous requests get one DONE and no SENT;
/// `open` reports DONE, then OPENED, as for a request in flight), leaving the other requests
/// as they were. The time a request waits does not count towards its timeouts.
///
/// A synchronous send that would wait is refused (`lastError.code == .invalidState`) inside
/// a callback on ``HttpRequest/defaultCallbackQueue``: the requests holding the slots may
/// need callbacks queued behind it. Do not block a callback of your own serial queue on a
/// queued send either.
///
/// Any number of queues may exist (one for the process, or one per server); a request waits
/// in one at a time. The queue keeps its waiting requests alive; a queue the program lets go
/// lives on until its last request ends.
public final class RequestQueue: Sendable {
    /// At most this many requests of the queue run at once.
    public let maxSimultaneous: Int
    /// At most this many requests wait (0: no limit); a send beyond it says `false`.
    public let maxPending: Int

    private let state: Locked<State>

    private struct State {
        var book: QueueBook<QueueSlot>
        /// Closed for good (its C handle was destroyed): refuses every send.
        var isClosed = false
    }

    /// Numbers slots across all queues: a request recognises the slot it waits for by its
    /// number alone, whichever queue hands it out.
    private static let slotNumbers = Atomic<Int>(0)

    /// - Parameters:
    ///   - maxSimultaneous: how many requests may run at once; below 1 counts as 1.
    ///   - maxPending: how many may wait for a slot; 0 (or less) for no limit. A request sent
    ///     into a queue that has this many waiting gets `false` from `send`, and
    ///     ``HttpRequest/lastError`` with the code ``HttpRequestError/Code/queueFull``.
    public init(maxSimultaneous: Int, maxPending: Int = 0) {
        let decisions = QueueBook<QueueSlot>(maxSimultaneous: maxSimultaneous, maxPending: maxPending)
        self.maxSimultaneous = decisions.maxSimultaneous
        self.maxPending = decisions.maxPending
        state = Locked(State(book: decisions))
    }

    /// Sends an OPENED request into this queue, as its `send()` does (with no body, or its
    /// form values and files), whatever its ``HttpRequest/queue`` says: it starts at once if
    /// a slot is free, else it waits, at the back of the requests of its priority, or with
    /// `atFront` before them.
    /// - Returns: `false` with the request's ``HttpRequest/lastError`` when it is not OPENED,
    ///   already waits, or the queue is full, and whatever else `send()` refuses.
    @discardableResult
    public func enqueue(_ request: HttpRequest, atFront: Bool = false) -> Bool {
        request.start(.none, timeout: 0, into: self, atFront: atFront)
    }

    /// Requests of the queue running now.
    public var runningCount: Int { state.withLock { $0.book.running.count } }

    /// Requests waiting for a slot.
    public var waitingCount: Int { state.withLock { $0.book.waitingCount } }

    /// Aborts every waiting request (each ends in DONE, status 0, as by its `abort()`); the
    /// running ones go on, and the queue takes new requests.
    public func abortWaiting() {
        stopWaiting(state.withLock { $0.book.removeWaiting() })
    }

    /// Aborts the waiting requests and refuses every send from now on (`cxhr_queue_destroy`).
    package func close() {
        stopWaiting(state.withLock { state in
            state.isClosed = true
            return state.book.removeWaiting()
        })
    }

    /// Ends the sends that waited for `slots` (not a later send of the same request).
    private func stopWaiting(_ slots: [QueueSlot]) {
        for slot in slots { slot.request.stopWaiting(forSlot: slot.number) }
    }

    // MARK: For the requests

    /// Takes `request` in: its slot, and whether it waits; refused when the queue is full, or
    /// when it would wait and `mayWait` is false.
    func admit(_ request: any QueueMember, priority: HttpRequest.Priority, atFront: Bool,
               mayWait: Bool) -> Result<(QueueSlot, waits: Bool), HttpRequestError> {
        state.withLock { state in
            guard !state.isClosed else { return .failure(HttpRequestError(.invalidState, "the request's queue was destroyed")) }
            if !mayWait, state.book.running.count >= maxSimultaneous {
                return .failure(HttpRequestError(.invalidState, "a synchronous send cannot wait for a queue slot inside a callback "
                                                 + "on the default callback queue: the requests holding the slots may need callbacks queued behind it"))
            }
            let number = Self.slotNumbers.wrappingAdd(1, ordering: .relaxed).newValue
            let slot = QueueSlot(queue: self, request: request, number: number)
            switch state.book.admit(slot, priority: priority, atFront: atFront) {
            case .start: return .success((slot, false))
            case .wait: return .success((slot, true))
            case .full:
                let text = "the queue already holds \(maxPending) waiting request\(maxPending == 1 ? "" : "s") (maxPending)"
                return .failure(HttpRequestError(.queueFull, text))
            }
        }
    }

    /// A request's send ended, or it stopped waiting: the requests that now have a slot start.
    func leave(_ slot: QueueSlot) {
        for next in state.withLock({ $0.book.leave(slot) }) { next.request.slotFreed(next.number) }
    }
}

/// A request's place in a ``RequestQueue`` for one send: running or waiting, until the send's
/// transfer completes (``Transfer/complete()`` gives it back).
struct QueueSlot: Equatable, Sendable {
    let queue: RequestQueue
    let request: any QueueMember
    /// Unique in the process.
    let number: Int

    static func == (lhs: QueueSlot, rhs: QueueSlot) -> Bool { lhs.number == rhs.number }

    func giveBack() { queue.leave(self) }
}

/// What waits in a ``RequestQueue``: a request's send, or an `async` response's.
protocol QueueMember: AnyObject, Sendable {
    /// The queue gave the member the slot numbered `number`: the send waiting for it starts,
    /// unless it stopped waiting meanwhile.
    func slotFreed(_ number: Int)
    /// The queue ends the send that waits for the slot numbered `number` (an abort).
    func stopWaiting(forSlot number: Int)
}

extension HttpRequest: QueueMember {}
