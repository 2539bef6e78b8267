import Dispatch

extension HttpRequest {
    /// What a decision taken under the lock asks to be done outside it.
    struct Effects {
        /// What becomes of a transfer: one a decision at most, in one field (an `Effects` is
        /// made and dropped several times a request).
        enum TransferCommand {
            /// The engine is to start it.
            case start(Transfer)
            /// The engine is to stop it.
            case cancel(Transfer)
            /// The engine never had it (its request waited in a queue): complete it here.
            case completeUnstarted(Transfer)
        }

        var transferCommand: TransferCommand?
        /// From `close()`: the connections to close, after cancelling the transfer.
        var closeConnections: [ConnectionID]?
        var deliverOn: DispatchQueue?

        /// The transfer to start, if that is the command.
        var start: Transfer? {
            if case .start(let transfer)? = transferCommand { transfer } else { nil }
        }
    }

    /// The request's mutable state, kept behind one lock.
    struct Core {
        var machine = RequestStateMachine()
        var receivers = ReportReceivers.none
        var callbackQueue = HttpRequest.defaultCallbackQueue
        var enablePipelining = true
        /// How the next send uses the process's cache (``HttpRequest/setCachePolicy(_:)``).
        var cachePolicy = HttpRequest.CachePolicy.default
        /// The response was answered from the cache (``HttpRequest/isResponseFromCache()``).
        var responseFromCache = false
        /// Where and in which order the next send waits for its turn (nil: it starts at once).
        var queue: RequestQueue?
        var priority = HttpRequest.Priority.normal
        var lastError: HttpRequestError?
        var switches = TransferSwitches()
        var message = RequestMessage()
        /// The body of the last send since `open`, for ``HttpRequest/curlCommand()``.
        var sentBody = CurlCommand.Body.none
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
        /// Body bytes until ``HttpRequest/getReceiveBuffer()`` takes them.
        var sink = MemorySink()
        /// Body bytes of the current response so far (``HttpRequest/getProgress()``).
        var received: Int64 = 0
        /// Where `setResponseFile` sends bodies (nil: the receive buffer); each send's
        /// transfer writes its own file.
        var responseFile: FileSink.Setting?
        var transfer: Transfer?
        /// The last transfer, kept for the next send once the engine is done with it.
        var finishedTransfer: Transfer?
        /// When states are reported (and transfers paused for a LOADING callback).
        var scheduler = ReportScheduler()
        /// The stream of the last `async` response, for the next one to reuse.
        var lastStream: ResponseStream?
        /// ``HttpRequest/onEvent`` and ``HttpRequest/onTrace``, and where the current send's
        /// events go (nil without them).
        var observers = Observers()
        var observer: SendObserver?

        /// Gives the send `transfer` carries for `request` an observer, when the request has
        /// one; `.queued` when it `waits` for its queue.
        @inline(__always)
        mutating func observe(_ transfer: Transfer, for request: HttpRequest, waits: Bool) {
            if waits { transfer.queuedAt = MonotonicTime.milliseconds() }
            guard !observers.isEmpty || observer != nil else { return }
            observer = nil
            guard let made = makeObserver(for: request) else { return }
            transfer.observer = made
            observer = made
            if waits { made.post(.queued) }
        }

        /// An observer for the next send of `request`, or nil without `onEvent` and `onTrace`.
        func makeObserver(for request: HttpRequest) -> SendObserver? {
            guard !observers.isEmpty else { return nil }
            let secrets = TraceRedaction.secrets(url: message.url, credentials: message.credentials,
                                                 proxyPassword: switches.proxy?.credentials?.password)
            return SendObserver(request: request, observers: observers, queue: callbackQueue, secrets: secrets)
        }

        static let staleFailure = TransferFailure(kind: .aborted, text: "Request aborted by open()")

        /// Opens: aborts what is in flight, forgets the last response, and makes the message
        /// that of the arguments of `open` (changed in place: `RequestMessage.reopen`).
        mutating func open(method: String, url: ParsedURL, text: String, async: Bool, credentials: Credentials?) -> Effects {
            var effects = Effects()
            let action = machine.open()
            if action == .abortThenOpen || action == .leaveQueueThenOpen {
                stopTransfer(reason: "Request aborted by open()", leavesQueue: action == .leaveQueueThenOpen, effects: &effects)
            }
            scheduler.opened()
            sink.reservationLimit = async ? ReportScheduler.pauseThreshold : MemorySink.maxReservation
            message.reopen(method: method, url: text, parsedURL: url, isAsync: async, credentials: credentials)
            sentBody = .none
            forgetResponse()
            failure = nil
            responseFromCache = false
            lastSend = SendRecord()
            received = 0
            sink.discard()
            lastError = nil
            if async, action != .reopen { report(.opened, effects: &effects) }
            return effects
        }

        /// Keeps `head` as the response (its lines copied into the buffer of the last one).
        mutating func keepResponse(_ head: RecordedHead) {
            forgetResponse()
            response = ResponseHead(head, reusing: &spareHeadStorage)
            sink.responseStarted()
            received = 0
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

        /// Forgets the transfer in flight after the machine moved to DONE by abort or close:
        /// the engine is to cancel it, or, when it `leavesQueue` (the engine never had it),
        /// it is completed here.
        mutating func stopTransfer(reason: String, leavesQueue: Bool = false, effects: inout Effects) {
            if let transfer {
                transfer.abandonOutput()
                effects.transferCommand = leavesQueue ? .completeUnstarted(transfer) : .cancel(transfer)
            }
            forgetTransfer()
            forgetResponse()
            observer.take()?.close(with: Metrics(effectiveURL: message.url))
            failure = TransferFailure(kind: .aborted, text: reason)
            sink.discard()
            scheduler.aborted()
            if message.isAsync { report(.done, effects: &effects) }
        }

        /// The transfer to resume when a LOADING callback of the `open` numbered `generation`
        /// returned and its end unpauses it.
        mutating func loadingDelivered(generation: Int) -> Transfer? {
            scheduler.loadingDelivered(generation: generation) ? transfer : nil
        }

        mutating func report(_ state: State, effects: inout Effects) {
            if scheduler.report(state) { effects.deliverOn = callbackQueue }
        }

        /// Body bytes of the final response were taken: LOADING, and progress.
        mutating func bodyAccepted(_ count: Int) -> Effects {
            received += Int64(count)
            var effects = apply(machine.bodyReceived())
            reportProgress(effects: &effects)
            return effects
        }

        /// Progress for ``HttpRequest/onProgress`` (asynchronous requests that set it);
        /// `final` just before DONE.
        mutating func reportProgress(final: Bool = false, effects: inout Effects) {
            guard message.isAsync, receivers.progress != nil else { return }
            if scheduler.reportProgress(final: final) { effects.deliverOn = callbackQueue }
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
