/// When a request's ready states are reported: the reports waiting for the callback queue,
/// which `open` each belongs to, LOADING coalescing, and the pause of a transfer whose
/// LOADING callback is behind. A pure value: the request's locked core feeds it events and
/// acts on what it answers; it touches no thread, queue or transfer.
///
/// - `open` starts a new generation; reports carry the one they belong to.
/// - A LOADING report joins one already queued or running: a slow callback never queues
///   thousands, and a fast download costs few hops.
/// - An abort drops its own `open`'s waiting reports (its DONE supersedes them); those of
///   earlier opens stay, to be delivered as stale callbacks. A batch already taken for
///   delivery of the same `open` is stale from then on (``discards``).
/// - While a LOADING callback is queued or running and has not drained
///   ``pauseThreshold`` bytes, an asynchronous transfer pauses; that callback's end resumes it.
/// - Progress (`onProgress`) is reported the same way as LOADING: a report joins one queued or
///   running; and one more goes just before DONE, unless one is still queued (it reads the
///   final counts when it runs), so the last progress callback sees the final counts.
struct ReportScheduler: Sendable {
    typealias State = HttpRequest.State

    /// Undrained bytes beyond which an asynchronous transfer waits for its LOADING callback.
    static let pauseThreshold = 1 << 20

    /// Counts `open` calls: reports carry the one they belong to.
    private(set) var generation = 0
    /// A delivery run is queued or running on the callback queue.
    private(set) var isDelivering = false
    /// A LOADING report is queued or running: newer data joins it.
    private(set) var loadingReported = false
    /// The transfer's body is paused until the running LOADING callback ends.
    private(set) var isPaused = false
    /// A progress report is queued or running: newer progress joins it.
    private(set) var progressReported = false
    private var queue = ReportQueue()

    /// How many times an abort dropped the reports of the `open` whose reports were taken
    /// last (``ReportQueue/discards``).
    var discards: UInt64 { queue.discards }

    /// Reports wait for delivery.
    var hasReports: Bool { !queue.isEmpty }

    /// `open`: later reports belong to a new generation. A LOADING callback of an earlier
    /// open may not have ended yet; newer data does not join it.
    mutating func opened() {
        generation += 1
        loadingReported = false
        progressReported = false
    }

    /// Queues `state` for the current `open`; true when a delivery run must be started (none
    /// is queued or running). A LOADING while one is queued or running joins it: false.
    mutating func report(_ state: State) -> Bool {
        if state == .loading {
            guard !loadingReported else { return false }
            loadingReported = true
        }
        return enqueue(.state(state))
    }

    /// Queues a progress report for the current `open` (see ``report(_:)``); one queued or
    /// running takes it in. `final`: the transfer ended, DONE comes next: queued unless a
    /// progress report is still waiting in the queue.
    mutating func reportProgress(final: Bool = false) -> Bool {
        if final {
            guard !queue.endsWithProgress(generation: generation) else { return false }
        } else {
            guard !progressReported else { return false }
        }
        progressReported = true
        return enqueue(.progress)
    }

    private mutating func enqueue(_ report: ReportKind) -> Bool {
        queue.append(report, generation: generation)
        guard !isDelivering else { return false }
        isDelivering = true
        return true
    }

    /// The current `open`'s transfer was stopped (abort, close, a re-open): its waiting reports
    /// go (the caller reports DONE next), and nothing stays paused.
    mutating func aborted() {
        queue.discard(generation: generation)
        loadingReported = false
        progressReported = false
        isPaused = false
    }

    /// The transfer ended by itself: nothing stays paused.
    mutating func transferEnded() {
        isPaused = false
    }

    /// Body bytes arrived for an asynchronous request with `unread` bytes not yet taken by
    /// the consumer: whether the transfer pauses (a LOADING callback that has not drained them
    /// is queued or running). The end of that callback resumes it.
    mutating func pauses(unread: Int) -> Bool {
        guard loadingReported, unread >= Self.pauseThreshold else { return false }
        isPaused = true
        return true
    }

    /// A LOADING callback of the `open` numbered `generation` returned: newer data starts a
    /// new LOADING report; true when the transfer it paused is to resume. (A later `open`
    /// started afresh: false.)
    mutating func loadingDelivered(generation: Int) -> Bool {
        guard generation == self.generation else { return false }
        loadingReported = false
        guard isPaused else { return false }
        isPaused = false
        return true
    }

    /// A progress callback of the `open` numbered `generation` returned: newer progress
    /// starts a new report.
    mutating func progressDelivered(generation: Int) {
        if generation == self.generation { progressReported = false }
    }

    /// The next reports for the delivery run, at least one and at most `limit`; an empty batch
    /// ends the run (the next report starts another).
    mutating func nextBatch(upTo limit: Int) -> ReportBatch {
        if queue.isEmpty {
            isDelivering = false
            return ReportBatch()
        }
        return queue.take(upTo: max(limit, 1))
    }
}

/// What a delivery run calls back: a ready state, or the progress callback.
enum ReportKind: Equatable, Sendable, CustomStringConvertible {
    case state(HttpRequest.State)
    case progress

    static let opened = ReportKind.state(.opened)
    static let sent = ReportKind.state(.sent)
    static let headersReceived = ReportKind.state(.headersReceived)
    static let loading = ReportKind.state(.loading)
    static let done = ReportKind.state(.done)

    var description: String {
        switch self {
        case .state(let state): state.description
        case .progress: "PROGRESS"
        }
    }

    /// Four bits: a state's raw value (0 to 4), or 15 for progress.
    var code: UInt32 {
        switch self {
        case .state(let state): UInt32(truncatingIfNeeded: state.rawValue)
        case .progress: 15
        }
    }

    init(code: UInt32) {
        self = code == 15 ? .progress : .state(HttpRequest.State(rawValue: Int32(code))!)
    }
}

/// Reports of one `open` taken from the queue together, oldest first: up to eight, four bits
/// each.
struct ReportBatch {
    static let capacity = 8
    private var states: UInt32 = 0
    private(set) var count = 0
    /// The `open` the reports belong to.
    private(set) var generation = 0

    init(generation: Int = 0) {
        self.generation = generation
    }

    subscript(index: Int) -> ReportKind {
        ReportKind(code: states >> UInt32(4 * index) & 0xF)
    }

    mutating func append(_ report: ReportKind) {
        states |= report.code << UInt32(4 * count)
        count += 1
    }
}

/// Reports waiting for the callback queue, oldest first: `items[next..<count]`. Taken by
/// index, so taking some moves none of the others; emptied by resetting the indices, so the
/// slots are written over by the next reports.
struct ReportQueue: Sendable {
    /// A report, and the `open` it belongs to.
    typealias Report = (kind: ReportKind, generation: Int)

    private var items: [Report] = []
    private var next = 0
    private var count = 0
    /// How many times ``discard(generation:)`` dropped the reports of the `open` whose
    /// reports were taken last: those taken before it are stale.
    private(set) var discards: UInt64 = 0
    /// The `open` of the reports taken last.
    private var takenGeneration = -1

    var isEmpty: Bool { next == count }

    mutating func append(_ report: ReportKind, generation: Int) {
        if count < items.count {
            items[count] = (report, generation)
        } else {
            items.append((report, generation))
        }
        count += 1
    }

    /// Whether the last report waiting is a progress report of the `open` numbered `generation`.
    func endsWithProgress(generation: Int) -> Bool {
        count > next && items[count - 1].kind == .progress && items[count - 1].generation == generation
    }

    /// Takes the oldest reports of one `open`, up to `limit` and as many as a batch holds.
    mutating func take(upTo limit: Int = ReportBatch.capacity) -> ReportBatch {
        guard next < count else { return ReportBatch() }
        var batch = ReportBatch(generation: items[next].generation)
        let most = min(limit, ReportBatch.capacity)
        while next < count, batch.count < most, items[next].generation == batch.generation {
            batch.append(items[next].kind)
            next += 1
        }
        takenGeneration = batch.generation
        if next == count { rewind() }
        return batch
    }

    /// Drops the waiting reports of the `open` numbered `generation`, the latest (an abort:
    /// its DONE supersedes them). Those of earlier opens stay, to be delivered as stale
    /// callbacks; they come first, as the queue is in `open` order.
    mutating func discard(generation: Int) {
        while count > next, items[count - 1].generation == generation { count -= 1 }
        if next == count { rewind() }
        if takenGeneration == generation { discards &+= 1 }
    }

    private mutating func rewind() {
        next = 0
        count = 0
    }
}
