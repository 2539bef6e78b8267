#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The decisions of one response streamed to an `async` consumer, as a pure value type: when
/// the head goes to the task that awaits it, which body bytes are kept, when the transfer
/// pauses because the consumer is behind and when it resumes, and how the stream ends.
///
/// No lock, no thread, no continuation in here: ``ResponseStream`` keeps one behind its lock
/// and does what the answers say outside it. `HeadWaiter` and `BodyWaiter` are whatever waits
/// (continuations there, numbers in the transcript tests).
///
/// What the transfer brings (head, bytes, end) is kept, and a parked consumer is woken by
/// ``wake()``, once for all the news that came together: the engine wakes its streams when
/// its round ends, so a small response (head, body and end in one round) wakes its task once.
///
/// | event | awaiting head | streaming | ended |
/// |-------|---------------|-----------|-------|
/// | head arrives | kept; wake | – | ignored |
/// | body bytes | – | kept (wake); paused at ``pauseAt`` kept | refused |
/// | consumer takes | – | a kept chunk (resume at ``resumeAt``), else parks | kept chunks, then the end |
/// | transfer ends | wake: the head, or the failure | wake: the end after the kept chunks | – |
/// | cancel | waiters get `cancelled`; stop the transfer | the same; kept chunks dropped | – |
struct BodyStreamState<HeadWaiter, BodyWaiter> {
    /// How a stream ended.
    enum End: Equatable {
        /// The whole body arrived.
        case complete
        /// The transfer failed (the head may have come before).
        case failed(TransferFailure)
        /// The consumer cancelled (its task, or it let go of the body).
        case cancelled

        var isComplete: Bool { if case .complete = self { true } else { false } }
        var isCancelled: Bool { if case .cancelled = self { true } else { false } }
    }

    /// What becomes of body bytes that arrive.
    enum Intake {
        /// Kept (``keep(_:)``) until the consumer asks.
        case keep
        /// Not taken: the consumer is ``pauseAt`` bytes behind; the transfer pauses.
        case pause
        /// The stream ended (cancelled): the transfer is to stop.
        case refuse
    }

    /// What the consumer's request for the next chunk gets.
    enum Take {
        /// A kept chunk; `resume`: the transfer paused and may go on now.
        case chunk(Data, resume: Bool)
        /// The stream ended, and nothing is kept.
        case end(End)
        /// Nothing yet: the waiter was parked.
        case wait
    }

    /// What awaiting the head gets.
    enum HeadTake: Equatable {
        case head
        case end(End)
        case wait
    }

    /// The transfer pauses when this many bytes wait for the consumer.
    let pauseAt: Int
    /// A paused transfer resumes when the consumer has taken all but this many.
    let resumeAt: Int

    private(set) var headArrived = false
    private(set) var end: End?
    /// Bytes kept for the consumer, oldest first (from `first` on).
    private var chunks: [Data] = []
    private var first = 0
    private(set) var keptBytes = 0
    private(set) var isPaused = false
    private var headWaiter: HeadWaiter?
    private var bodyWaiter: BodyWaiter?
    /// A ``wake()`` is due (asked for and not yet done).
    private(set) var wakeIsDue = false

    init(pauseAt: Int, resumeAt: Int? = nil) {
        self.pauseAt = max(1, pauseAt)
        self.resumeAt = min(resumeAt ?? self.pauseAt / 2, self.pauseAt - 1)
    }

    /// Ready for the next response, as new, but keeping the buffer of the chunk list (a
    /// stream reused from response to response allocates none).
    mutating func reset() {
        chunks.removeAllKeepingBuffer()
        self = BodyStreamState(pauseAt: pauseAt, resumeAt: resumeAt, chunks: chunks)
    }

    private init(pauseAt: Int, resumeAt: Int, chunks: [Data]) {
        self.pauseAt = pauseAt
        self.resumeAt = resumeAt
        self.chunks = chunks
    }

    // MARK: From the transfer

    /// The final head arrived. Returns whether a ``wake()`` is to be asked for (a consumer
    /// waits, and none is due yet).
    mutating func headArrives() -> Bool {
        guard end == nil, !headArrived else { return false }
        headArrived = true
        return wakeNeeded(headWaiter != nil)
    }

    /// `count` body bytes arrive.
    mutating func bodyArrives(count: Int) -> Intake {
        guard end == nil else { return .refuse }
        if keptBytes >= pauseAt {
            isPaused = true
            return .pause
        }
        return .keep
    }

    /// Keeps bytes `bodyArrives` said to keep. Returns whether a ``wake()`` is to be asked for.
    mutating func keep(_ chunk: Data) -> Bool {
        chunks.append(chunk)
        keptBytes += chunk.count
        return wakeNeeded(bodyWaiter != nil)
    }

    /// The transfer ended (a stream that ended already, cancelled, stays as it ended).
    /// Returns whether a ``wake()`` is to be asked for.
    mutating func transferEnds(_ how: End) -> Bool {
        guard end == nil else { return false }
        end = how
        if how.isComplete { headArrived = true }
        isPaused = false
        return wakeNeeded(headWaiter != nil || bodyWaiter != nil)
    }

    private mutating func wakeNeeded(_ someoneWaits: Bool) -> Bool {
        guard someoneWaits, !wakeIsDue else { return false }
        wakeIsDue = true
        return true
    }

    /// The parked waiters that can go on, with what they get: the head waiter once the head
    /// or the end came, the body waiter once a chunk or the end did.
    mutating func wake() -> (head: (HeadWaiter, HeadTake)?, body: (BodyWaiter, Take)?) {
        wakeIsDue = false
        var head: (HeadWaiter, HeadTake)?
        if let waiter = headWaiter {
            let take = awaitHead(waiter)
            if take != .wait {
                headWaiter = nil
                head = (waiter, take)
            }
        }
        var body: (BodyWaiter, Take)?
        if let waiter = bodyWaiter.take() {
            let take = next(nil)
            if case .wait = take { bodyWaiter = waiter } else { body = (waiter, take) }
        }
        return (head, body)
    }

    /// The consumer cancels: whether the transfer is to stop (it had not ended), and the
    /// waiters to tell. Kept bytes are dropped.
    mutating func cancel() -> (stopsTransfer: Bool, head: HeadWaiter?, body: BodyWaiter?) {
        guard end == nil else { return (false, nil, nil) }
        end = .cancelled
        chunks = []
        first = 0
        keptBytes = 0
        isPaused = false
        return (true, headWaiter.take(), bodyWaiter.take())
    }

    // MARK: From the consumer

    /// The head, the end, or `waiter` parked until either comes.
    mutating func awaitHead(_ waiter: @autoclosure () -> HeadWaiter?) -> HeadTake {
        if let end, !headArrived || end.isCancelled { return .end(end) }
        if headArrived { return .head }
        if let parked = waiter() { headWaiter = parked }
        return .wait
    }

    /// The next kept chunk, or the end once every kept chunk was taken; else `waiter` is
    /// parked until bytes or the end come (nil: only look, park nothing).
    mutating func next(_ waiter: @autoclosure () -> BodyWaiter?) -> Take {
        if first < chunks.count {
            let chunk = chunks[first]
            first += 1
            keptBytes -= chunk.count
            if first == chunks.count {
                chunks.removeAllKeepingBuffer()
                first = 0
            } else if first >= 64, first * 2 >= chunks.count {
                chunks.removeFirst(first)
                first = 0
            }
            var resume = false
            if isPaused, keptBytes <= resumeAt {
                isPaused = false
                resume = true
            }
            return .chunk(chunk, resume: resume)
        }
        if let end { return .end(end) }
        if let parked = waiter() { bodyWaiter = parked }
        return .wait
    }
}
