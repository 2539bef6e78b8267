import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HttpRequest {
    /// What a decision taken under the lock asks to be done outside it.
    struct Effects {
        var start: Transfer?
        var cancel: Transfer?
        /// From `close()`: the connections to close, after cancelling `cancel`.
        var closeConnections: [ConnectionID]?
        var deliverOn: DispatchQueue?
    }

    /// The request's mutable state, kept behind one lock.
    struct Core {
        var machine = RequestStateMachine()
        var receivers = ReportReceivers.none
        var callbackQueue = HttpRequest.defaultCallbackQueue
        var enablePipelining = true
        var lastError: HttpRequestError?
        var switches = TransferSwitches()
        var message = RequestMessage()
        var response: ResponseHead?
        /// The field-line buffer of the last response forgotten, for the next one to fill.
        var spareHeadStorage: [UInt8] = []
        var failure: TransferFailure?
        /// What the last send measured (``HttpRequest/getMetrics()``).
        var lastSend = SendRecord()
        /// The connections the last send that completed ran on (one a hop), for `close()`.
        /// Only the last send's: a connection is named by its ports, which a later connection
        /// may reuse once it is gone, so names are not kept long.
        var usedConnections: [ConnectionID] = []
        /// Body bytes since the last ``HttpRequest/getReceiveBuffer()`` (none while
        /// `receivedTaken`).
        var received = Data()
        /// `received` went to the caller of `getReceiveBuffer()` and stays only for its
        /// buffer: the next body bytes replace it, in place once the caller let go of it.
        var receivedTaken = false
        var transfer: Transfer?
        /// The last transfer, kept for the next send once the engine is done with it.
        var finishedTransfer: Transfer?
        /// States waiting to be reported on the callback queue, in order.
        var isDelivering = false
        /// A LOADING report is queued or running: newer data joins it.
        var loadingReported = false
        /// The transfer's body is paused until the running LOADING callback ends.
        var isPaused = false
        /// Counts `open` calls: reports carry the one they belong to.
        var generation = 0
        /// Reports not yet delivered, with the generation each belongs to.
        var reports = ReportQueue()

        static let staleFailure = TransferFailure(kind: .aborted, text: "Request aborted by open()")

        /// Opens with `message`: aborts what is in flight, forgets the last response.
        mutating func open(_ message: consuming RequestMessage, async: Bool) -> Effects {
            var effects = Effects()
            let action = machine.open()
            if action == .abortThenOpen {
                effects.cancel = stopTransfer(reason: "Request aborted by open()", effects: &effects)
            }
            generation += 1
            // A LOADING callback of an earlier open may not have been counted as ended yet.
            loadingReported = false
            self.message = message
            forgetResponse()
            failure = nil
            lastSend = SendRecord()
            forgetReceived()
            lastError = nil
            if async, action != .reopen { report(.opened, effects: &effects) }
            return effects
        }

        /// The body bytes since the last call, for `getReceiveBuffer()`.
        mutating func takeReceived() -> Data {
            guard !receivedTaken else { return Data() }
            defer { forgetReceived() }
            return received
        }

        /// Done with the bytes received so far (handed out, or dropped by `open` or an abort).
        /// A small buffer is kept, shared with any caller, for the next bytes to reuse (no
        /// allocation a response once the caller has let go of it; a buffer of their own when
        /// not); a large one is let go of, so an idle request holds no large buffer.
        mutating func forgetReceived() {
            if received.count < HttpRequest.keptBufferLimit {
                receivedTaken = true
            } else {
                received = Data()
                receivedTaken = false
            }
        }

        /// Bytes received and not yet handed out.
        var unreadCount: Int { receivedTaken ? 0 : received.count }

        /// Appends body bytes, first emptying a buffer `takeReceived()` handed out.
        mutating func appendReceived(_ bytes: UnsafeRawBufferPointer) {
            guard receivedTaken else {
                received.append(bytes.assumingMemoryBound(to: UInt8.self))
                return
            }
            receivedTaken = false
            // Written over: in place when the caller let go of the buffer, else in a copy
            // Data makes first. (Emptying it would make it an inline `Data` and drop the
            // buffer; so does a count under 15 bytes.)
            if received.count != bytes.count { received.count = bytes.count }
            received.withUnsafeMutableBytes { $0.copyMemory(from: bytes) }
        }

        /// Keeps `head` as the response (its lines copied into the buffer of the last one).
        mutating func keepResponse(_ head: RecordedHead) {
            forgetResponse()
            response = ResponseHead(head, reusing: &spareHeadStorage)
        }

        mutating func forgetResponse() {
            response?.giveUpStorage(to: &spareHeadStorage)
            response = nil
        }

        /// The last transfer, when it can be prepared for the next send: the engine completed
        /// it and nothing but this request refers to it (no command, no callback).
        mutating func reusableTransfer() -> Transfer? {
            guard isKnownUniquelyReferenced(&finishedTransfer), finishedTransfer?.isComplete.load(ordering: .acquiring) == true
            else { return nil }
            return finishedTransfer.take()
        }

        /// Forgets the transfer in flight (kept for reuse once the engine is done with it).
        mutating func forgetTransfer() {
            if let forgotten = transfer.take() { finishedTransfer = forgotten }
        }

        /// Forgets the transfer in flight after the machine moved to DONE by abort or close.
        mutating func stopTransfer(reason: String, effects: inout Effects) -> Transfer? {
            let stopped = transfer
            forgetTransfer()
            forgetResponse()
            failure = TransferFailure(kind: .aborted, text: reason)
            forgetReceived()
            isPaused = false
            if message.isAsync {
                reports.discard(generation: generation)
                loadingReported = false
                report(.done, effects: &effects)
            }
            return stopped
        }

        /// A LOADING callback of the `open` numbered `generation` returned; returns the transfer
        /// to resume, if its end unpauses it. (A later `open` started afresh.)
        mutating func endLoadingDelivery(generation: Int) -> Transfer? {
            guard generation == self.generation else { return nil }
            loadingReported = false
            guard isPaused else { return nil }
            isPaused = false
            return transfer
        }

        mutating func report(_ state: State, effects: inout Effects) {
            if state == .loading {
                guard !loadingReported else { return }
                loadingReported = true
            }
            reports.append(state, generation: generation)
            if !isDelivering {
                isDelivering = true
                effects.deliverOn = callbackQueue
            }
        }

        mutating func apply(_ action: RequestStateMachine.ReportAction) -> Effects {
            var effects = Effects()
            guard message.isAsync else { return effects }
            switch action {
            case .ignore:
                break
            case .report(let state):
                report(state, effects: &effects)
            case .reportHeadersThen(let state):
                report(.headersReceived, effects: &effects)
                report(state, effects: &effects)
            }
            return effects
        }
    }
}
