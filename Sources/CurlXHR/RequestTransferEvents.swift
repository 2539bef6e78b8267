#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the engine tells a request of its transfer: the head, body bytes, the end.
extension HttpRequest {

    func transferReceivedHead(_ transfer: Transfer, _ head: RecordedHead) {
        let effects = withCore { core -> Effects in
            guard core.transfer === transfer else { return Effects() }
            core.keepResponse(head)
            return core.apply(core.machine.headersReceived())
        }
        perform(effects)
    }

    /// What became of body bytes handed to the request.
    enum BodyDisposition {
        case accepted
        /// Not taken: the consumer is behind; libcurl keeps them until `resume`.
        case paused
        /// The transfer is no longer this request's (aborted): stop it.
        case refused
    }

    /// Undrained bytes beyond which an asynchronous transfer waits for its LOADING callback.
    static let pauseThreshold = 1 << 20

    /// A first chunk from libcurl at least this large starts a receive buffer sized for what
    /// is still to come (after smaller ones the body is small or arrives slowly, and `Data`
    /// grows as it needs). Well under a full read: the first read of a response also carries
    /// its head.
    static let sizingChunk = 4 * 1024

    /// Receive buffers under this size are kept from response to response; larger ones are
    /// let go of, so an idle request holds no large buffer.
    static let keptBufferLimit = 16 * 1024

    /// The most a receive buffer is sized for ahead of the bytes it holds.
    static let maxReservation = 64 << 20

    /// The capacity for an empty receive buffer that takes a chunk of `chunk` bytes, with
    /// `toCome` more announced (nil: unknown; read only for a chunk of `sizingChunk` or more);
    /// nil to let `Data` grow by itself. Growing a `Data` chunk by chunk copies what it holds
    /// at every growth, which cost more than the copy from libcurl itself on fast downloads.
    /// An asynchronous request holds at most what arrives until its LOADING callback drains
    /// the buffer (`pauseThreshold`); a synchronous one the whole body, as announced.
    static func receiveBufferCapacity(chunk: Int, toCome: @autoclosure () -> Int?, async: Bool) -> Int? {
        guard chunk >= sizingChunk else { return nil }
        var more = toCome() ?? pauseThreshold
        if async { more = min(more, pauseThreshold) }
        return chunk + min(more, maxReservation)
    }

    func transferReceivedBody(_ transfer: Transfer, _ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        let outcome = withCore { core -> (BodyDisposition, Effects) in
            guard core.transfer === transfer else { return (.refused, Effects()) }
            // Backpressure: while a LOADING callback is pending or running and has not drained
            // the buffer, stop reading rather than buffer without bound. The end of that
            // callback resumes the transfer, so a consumer that only reads at DONE still
            // gets there.
            if core.message.isAsync, core.loadingReported, core.unreadCount >= Self.pauseThreshold {
                core.isPaused = true
                return (.paused, Effects())
            }
            if core.unreadCount == 0,
               let capacity = Self.receiveBufferCapacity(chunk: bytes.count, toCome: transfer.bodyBytesToCome(after: bytes.count),
                                                         async: core.message.isAsync) {
                core.received = Data(capacity: capacity)
            }
            core.appendReceived(bytes)
            return (.accepted, core.apply(core.machine.bodyReceived()))
        }
        perform(outcome.1)
        return outcome.0
    }

    func transferSent(_ transfer: Transfer, bytes: Int64) {
        sentBytes.store(bytes, ordering: .relaxed)
    }

    func transferFinished(_ transfer: Transfer, failure: TransferFailure?, fallbackStatus: Int = 0,
                          record: SendRecord = SendRecord()) {
        let effects = withCore { core -> Effects in
            guard core.transfer === transfer else { return Effects() }
            core.forgetTransfer()
            core.lastSend = record
            core.usedConnections.removeAll(keepingCapacity: true)
            transfer.forEachConnectionUsed { core.usedConnections.append($0) }
            core.isPaused = false
            if let failure {
                core.forgetResponse()
                core.failure = failure
                return core.apply(core.machine.failed())
            }
            if core.response == nil {
                core.response = ResponseHead(status: fallbackStatus, reason: ReasonPhrase.standard(for: fallbackStatus))
            }
            return core.apply(core.machine.finished())
        }
        perform(effects)
    }
}
