import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One `async` response: the ``TransferOwner`` of its transfer, and what its consumer awaits.
///
/// The decisions (who gets the head, which bytes wait, pause and resume, the end) are
/// ``BodyStreamState``'s, taken under one lock; continuations are resumed outside it. The
/// transfer holds the stream while in flight; the consumer's ``HttpResponse/BodyReader``
/// holds it after, and letting go of it early stops the transfer.
final class ResponseStream: TransferOwner, QueueMember, @unchecked Sendable {
    /// Unsafe continuations: ``BodyStreamState`` hands each waiter out exactly once (its
    /// transcript tests check it), and a checked one costs an object a wait and, being of a
    /// resilient type, every copy in the state goes through the runtime's value witnesses.
    typealias HeadWaiter = UnsafeContinuation<HttpResponse, any Error>
    typealias BodyWaiter = UnsafeContinuation<Data?, any Error>

    private struct State {
        var decisions: BodyStreamState<HeadWaiter, BodyWaiter>
        var head: ResponseHead?
        /// The head came from the cache (``HttpResponse/isFromCache``).
        var fromCache = false
        /// The queue slot the send waits for (nil: it runs, or never waited).
        var waitingSlot: Int?
        /// The transfer went to the engine (once: a slot freed before ``response()`` looked
        /// starts it, and ``response()`` then does not).
        var launched = false
        /// Where the send's events go (``HttpRequest/onEvent``), nil without an observer.
        var observer: SendObserver?
        /// The buffer of the last head's field lines, for the next head to reuse.
        var headStorage: [UInt8] = []
        /// The last small chunk handed out: the next chunk of a stream with none kept is
        /// written into its buffer, in place once the consumer let go of it.
        var spareChunk: Data?

        /// As ``fresh()`` makes it, but keeping the buffers of the last
        /// response, which nothing else holds now (in place: a `State` is copied only through
        /// the runtime, `Data` being of a resilient type).
        mutating func startOver() {
            decisions.reset()
            head?.giveUpStorage(to: &headStorage)
            head = nil
            fromCache = false
            waitingSlot = nil
            launched = false
            observer = nil
        }

        /// A chunk of `bytes`, in the spare buffer when it may be used.
        mutating func chunk(_ bytes: UnsafeRawBufferPointer) -> Data {
            guard bytes.count <= MemorySink.keptBufferLimit else { return Data(bytes) }
            guard decisions.keptBytes == 0, var chunk = spareChunk.take() else {
                let chunk = Data(bytes)
                spareChunk = chunk
                return chunk
            }
            chunk.writeOver(with: bytes)
            spareChunk = chunk
            return chunk
        }
    }

    /// The bytes that may wait for a slow consumer before the transfer pauses.
    static let pauseThreshold = ReportScheduler.pauseThreshold

    private let state: Locked<State>
    private var transfer: Transfer!
    /// Where the send's progress goes (``HttpRequest/response(timeout:progress:)``): set
    /// before the transfer starts, read by the engine's callbacks only.
    private var progress: ProgressFeed?
    private let runner: (any TransferRunner)?

    /// Async only: no synchronous send sleeps on a bit.
    var completionBit: UInt32 { 0 }

    init(runner: (any TransferRunner)?) {
        self.runner = runner
        state = Locked(Self.fresh())
        transfer = Transfer(owner: self)
    }

    private static func fresh() -> State {
        State(decisions: BodyStreamState(pauseAt: pauseThreshold))
    }

    /// The stream, made ready for the next response of its request when nothing but the
    /// caller refers to it (its response was let go of) and the engine is done with its
    /// transfer, as a request reuses its transfer: no allocation a response. Else nil.
    static func reusing(_ stream: inout ResponseStream?) -> ResponseStream? {
        guard isKnownUniquelyReferenced(&stream), let reused = stream,
              reused.transfer.isComplete.load(ordering: .acquiring), isKnownUniquelyReferenced(&reused.transfer)
        else { return nil }
        reused.state.withLock { $0.startOver() }
        return reused
    }

    /// The transfer, to prepare before ``response()``.
    var preparedTransfer: Transfer { transfer }

    /// The length the head announced, once it came.
    var announcedLength: Int? { state.withLock { $0.head?.announcedLength } }

    // MARK: Starting

    /// Gives the send a progress feed, or none (before it starts).
    func reportProgress(to feed: ProgressFeed?) {
        progress = feed
    }

    /// Gives the send an observer (before it starts): `.queued` now when it waits for a slot,
    /// `.started` as it starts.
    func observe(_ observer: SendObserver) {
        transfer.observer = observer
        state.withLock { state in
            state.observer = observer
            if state.waitingSlot != nil { observer.post(.queued) }
        }
    }

    /// Takes the stream into `queue`: its slot, which it runs in or waits for. Under the
    /// stream's lock, so that the slot cannot be handed on before the stream knows it waits.
    func admit(to queue: RequestQueue, priority: HttpRequest.Priority) -> Result<QueueSlot, HttpRequestError> {
        state.withLock { state in
            queue.admit(self, priority: priority, atFront: false, mayWait: true).map { slot, waits in
                if waits { state.waitingSlot = slot.number }
                return slot
            }
        }
    }

    /// Starts the transfer (unless it waits for a queue slot), then waits for the head.
    /// Cancelling the task stops the transfer.
    func response() async throws -> HttpResponse {
        let launches = state.withLock { state in
            guard state.waitingSlot == nil, !state.launched else { return false }
            state.launched = true
            state.observer?.started(transfer.cache)
            return true
        }
        if launches { launch() }
        let response = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: HeadWaiter) in
                let taken = state.withLock { state in (state.decisions.awaitHead(waiter), state.head, state.fromCache) }
                switch taken {
                case (.wait, _, _): break
                case (.head, let head?, let fromCache): waiter.resume(returning: HttpResponse(head: head, fromCache: fromCache, stream: self))
                case (.head, nil, _): waiter.resume(throwing: HttpRequestError(TransferFailure(kind: .other, text: "no response head")))
                case (.end(let end), _, _): waiter.resume(throwing: Self.error(end))
                }
            }
        } onCancel: {
            cancel()
        }
        state.withLock { _ in }  // after the engine made the response under it (wakeWaiters)
        return response
    }

    /// To the engine, once Kerberos tickets and the PAC file's routes (when any are needed) are there.
    private func launch() {
        guard transfer.needsPreparation else { return command { $0.start(transfer) } }
        DispatchQueue.global().async { [self] in
            transfer.prepareThenStart(on: runner ?? TransferEngine.shared) { state.withLock { $0.decisions.end == nil } }
        }
    }

    private func command(_ body: (any TransferRunner) -> Void) {
        body(runner ?? TransferEngine.shared)
    }

    func slotFreed(_ number: Int) {
        let starts = state.withLock { state in
            guard state.waitingSlot == number else { return false }
            state.waitingSlot = nil
            state.launched = true
            state.observer?.started(transfer.cache)
            return true
        }
        if starts { launch() }
    }

    func stopWaiting(forSlot number: Int) {
        let stops = state.withLock { state in state.waitingSlot == number }
        if stops { end(TransferFailure(kind: .aborted, text: "Request aborted")) }
    }

    // MARK: Reading

    /// A kept chunk (`.some(chunk)`) or the end (`.some(nil)`) without waiting; nil when
    /// nothing came yet (then ``waitForChunk()``).
    func readyChunk() throws -> Data?? {
        switch state.withLock({ $0.decisions.next(nil) }) {
        case .chunk(let chunk, let resume):
            if resume { command { $0.resume(transfer) } }
            return .some(chunk)
        case .end(let end):
            if end.isComplete { return .some(nil) }
            throw Self.error(end)
        case .wait:
            return nil
        }
    }

    /// The next chunk, nil at the end, once it comes (or at once, when it came after
    /// ``readyChunk()`` looked).
    func waitForChunk() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: BodyWaiter) in
                switch state.withLock({ $0.decisions.next(waiter) }) {
                case .wait:
                    break
                case .chunk(let chunk, let resume):
                    if resume { command { $0.resume(transfer) } }
                    waiter.resume(returning: chunk)
                case .end(let end):
                    if end.isComplete { waiter.resume(returning: nil) } else { waiter.resume(throwing: Self.error(end)) }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Stops the transfer (a task cancelled, a body let go of, a body too large); a stream
    /// that ended stays as it ended.
    func cancel() {
        let taken = state.withLock { state -> (head: HeadWaiter?, body: BodyWaiter?, slot: Int?)? in
            // Ended (as when a body read to its end is let go of): nothing to stop.
            guard state.decisions.end == nil else { return nil }
            state.observer.take()?.close(with: HttpRequest.Metrics())
            let taken = state.decisions.cancel()
            return (taken.head, taken.body, state.waitingSlot.take())
        }
        guard let (head, body, slot) = taken else { return }
        transfer.abandonOutput()
        if slot != nil {
            _ = transfer.complete()  // the engine never had it: out of its queue
        } else {
            command { $0.cancel(transfer, send: transfer.sends) }
        }
        head?.resume(throwing: CancellationError())
        body?.resume(throwing: CancellationError())
    }

    /// Ends the stream with `failure` where no transfer callback will (a queue abort).
    private func end(_ failure: TransferFailure) {
        let slot = state.withLock { state in
            _ = state.decisions.transferEnds(.failed(failure))
            state.observer.take()?.close(with: HttpRequest.Metrics())
            return state.waitingSlot.take()
        }
        if slot != nil { _ = transfer.complete() }
        wakeWaiters()
    }

    private static func error(_ end: BodyStreamState<HeadWaiter, BodyWaiter>.End) -> any Error {
        switch end {
        case .complete, .cancelled: CancellationError()
        case .failed(let failure): HttpRequestError(failure)
        }
    }

    // MARK: Waking the consumer

    /// News for a parked consumer: woken when the engine's round ends (``TransferEngine/wakeLater(_:)``),
    /// together with whatever else the round brings; at once on any other thread.
    private func scheduleWake() {
        if runner == nil, TransferEngine.isCurrentThread {
            TransferEngine.shared.wakeLater(self)
        } else {
            wakeWaiters()
        }
    }

    /// Resumes the parked waiters that can go on.
    func wakeWaiters() {
        // Each part moved out, not copied (a copy of what holds a `Data` goes through the runtime).
        // The response is made under the lock, which ``response()`` takes once more after its
        // wait: its hand-over is ordered by a lock every tool sees (ThreadSanitizer does not
        // see every path of a continuation's resume).
        let (headWake, bodyWake, response) = state.withLock { state in
            let woken = state.decisions.wake()
            var response: HttpResponse?
            if case .head = woken.head?.1, let head = state.head {
                response = HttpResponse(head: head, fromCache: state.fromCache, stream: self)
            }
            return (woken.head, woken.body, response)
        }
        if let (waiter, take) = consume headWake {
            switch take {
            case .head:
                if let response { waiter.resume(returning: response) }
                else { waiter.resume(throwing: HttpRequestError(TransferFailure(kind: .other, text: "no response head"))) }
            case .end(let end): waiter.resume(throwing: Self.error(end))
            case .wait: break
            }
        }
        if let (waiter, take) = consume bodyWake {
            switch take {
            case .chunk(let chunk, let resume):
                if resume { command { $0.resume(transfer) } }
                waiter.resume(returning: chunk)
            case .end(.complete): waiter.resume(returning: nil)
            case .end(let end): waiter.resume(throwing: Self.error(end))
            case .wait: break
            }
        }
    }

    // MARK: TransferOwner (the engine thread)

    func transferReceivedHead(_ transfer: Transfer, _ head: RecordedHead) {
        let (wakes, announced) = state.withLock { state in
            state.head = ResponseHead(head, reusing: &state.headStorage)
            state.fromCache = transfer.answersFromCache
            return (state.decisions.headArrives(), progress.flatMap { state.head?.expectedBodyLength(decoded: $0.decodesBody) })
        }
        progress?.headArrived(announcing: announced)
        if wakes { scheduleWake() }
    }

    func transferReceivedBody(_ transfer: Transfer, _ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        let (disposition, wakes) = state.withLock { state -> (BodyDisposition, Bool) in
            switch state.decisions.bodyArrives(count: bytes.count) {
            case .keep: return (.accepted, state.decisions.keep(state.chunk(bytes)))
            case .pause: return (.paused, false)
            case .refuse: return (.refused, false)
            }
        }
        if wakes { scheduleWake() }
        if disposition == .accepted { progress?.received(bytes.count) }
        return disposition
    }

    func transferWroteBody(_ transfer: Transfer, count: Int) -> BodyDisposition {
        state.withLock { $0.decisions.end == nil } ? .accepted : .refused
    }

    func transferSent(_ transfer: Transfer, bytes: Int64, of total: Int64) {
        progress?.sent(bytes, of: total)
    }

    func transferFinished(_ transfer: Transfer, failure: TransferFailure?, fallbackStatus: Int, record: SendRecord) {
        let wakes = state.withLock { state in
            if failure == nil, state.head == nil {
                state.head = ResponseHead(status: fallbackStatus, reason: ReasonPhrase.standard(for: fallbackStatus))
            }
            state.observer = nil  // the transfer closes it with the record
            return state.decisions.transferEnds(failure.map { .failed($0) } ?? .complete)
        }
        if wakes { scheduleWake() }
    }
}
