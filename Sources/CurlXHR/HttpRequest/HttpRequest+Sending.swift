import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension HttpRequest {
    // MARK: Sending (OPENED only)

    /// Sends the request with no body (or the form values). See ``send(_:timeout:)``.
    @discardableResult
    public func send(timeout: Double = 0) -> Bool {
        start(.none, timeout: timeout)
    }

    /// Sends the request with `body` as UTF-8 text (`Content-Type: text/plain;charset=UTF-8`
    /// unless set). `nil` sends no body.
    ///
    /// - Parameter timeout: seconds for the whole request, 0 for no limit.
    /// - Returns: `false` with ``lastError`` when the request is not OPENED, the timeout is
    ///   negative, or a body is given together with form values. Network failures do not
    ///   make it `false`: they end in DONE with status 0 and a text.
    @discardableResult
    public func send(_ body: String?, timeout: Double = 0) -> Bool {
        guard let body else { return start(.none, timeout: timeout) }
        return start(.bytes(Data(body.utf8), contentType: "text/plain;charset=UTF-8"), timeout: timeout)
    }

    /// Sends `body` byte for byte (no `Content-Type` unless set). `nil` sends no body.
    ///
    /// Bodies up to 64 KiB are copied into libcurl once; larger ones are read from `body`
    /// itself as libcurl sends them (the request keeps it until DONE), never copied whole.
    @discardableResult
    public func sendData(_ body: Data?, timeout: Double = 0) -> Bool {
        guard let body else { return start(.none, timeout: timeout) }
        return start(.bytes(body, contentType: nil), timeout: timeout)
    }

    /// Streams the file at `path` as the body, never reading it whole. The method becomes PUT
    /// unless `open` was given a method other than GET, HEAD, POST and PUT.
    /// - Returns: `false` when the file is missing, unreadable or not a regular file.
    @discardableResult
    public func sendWithFile(_ path: String, timeout: Double = 0) -> Bool {
        switch ReadableFile.open(path) {
        case .failure(let problem):
            return refuse(.fileUnreadable, problem.message)
        case .success(let file):
            return start(.file(path: path), timeout: timeout, fileDescriptor: file.descriptor, fileSize: file.size)
        }
    }

    /// The sends' common step: checks, then hands the transfer to the engine, or to the
    /// request's queue (`into`, else ``queue``) to wait for a slot.
    func start(_ body: RequestBody, timeout: Double, fileDescriptor: Int32 = -1, fileSize: Int64 = 0,
               into chosenQueue: RequestQueue? = nil, atFront: Bool = false) -> Bool {
        let outcome = withCore { core -> Result<(Transfer, Effects, waits: Bool), HttpRequestError> in
            guard timeout.isFinite, timeout >= 0 else {
                return .failure(HttpRequestError(.invalidArgument, "the timeout must be 0 or more seconds"))
            }
            var body = body
            if !core.message.formValues.isEmpty || !core.message.formFiles.isEmpty {
                guard case .none = body else {
                    return .failure(HttpRequestError(.invalidArgument, "a body cannot be sent together with form values"))
                }
                if core.message.formFiles.isEmpty, !core.message.multipartForm {
                    body = .bytes(Data(core.message.formBody), contentType: "application/x-www-form-urlencoded")
                } else {
                    // The files must still be there: libcurl opens them as it sends.
                    if let problem = core.message.formFiles.lazy.compactMap({ ReadableFile.problem($0.path) }).first {
                        return .failure(HttpRequestError(.fileUnreadable, problem))
                    }
                    body = .multipart(values: core.message.formValues, files: core.message.formFiles)
                }
            }
            if core.message.method == "HEAD", case .bytes = body {
                return .failure(HttpRequestError(.invalidArgument, "a HEAD request cannot carry a body"))
            }
            // A response file (not for HEAD, which has no body), resumed where its .part ends.
            let file = core.responseFile.flatMap { core.message.method == "HEAD" ? nil : FileSink($0) }
            if core.switches.range != nil, Transfer.sendsBody(core.message.method, body) {
                // libcurl would turn the range into the body's Content-Range.
                return .failure(HttpRequestError(.invalidArgument, "a range asks for part of a response: not for a request that sends a body"))
            }
            if let file, file.resumeOffset > 0, core.switches.range != nil {
                return .failure(HttpRequestError(.invalidArgument, "a range cannot be combined with resuming a response file"))
            }
            guard core.machine.mayStart else { return .failure(HttpRequestError(core.machine.rejection(.send))) }
            // The queue's answer last: once admitted, the send goes ahead.
            var slot: QueueSlot?
            var waits = false
            if let queue = chosenQueue ?? core.queue {
                // A synchronous send inside a callback on the default queue would block the
                // callbacks the requests holding the slots may wait for.
                let mayWait = core.message.isAsync || DispatchQueue.getSpecific(key: Self.defaultQueueKey) == nil
                switch queue.admit(self, priority: core.priority, atFront: atFront, mayWait: mayWait) {
                case .failure(let refusal): return .failure(refusal)
                case .success(let admitted): (slot, waits) = admitted
                }
            }
            _ = core.machine.send(waitingFor: waits ? slot?.number : nil)
            let transfer = core.reusableTransfer() ?? Transfer(owner: self)
            // A send's own timeout replaces the total of `setTimeouts` for that send.
            transfer.prepare(message: core.message, body: body, switches: core.switches,
                             timeout: timeout > 0 ? timeout : core.switches.timeouts.total,
                             pipelining: core.enablePipelining, fileDescriptor: fileDescriptor, fileSize: fileSize)
            if let file, file.resumeOffset > 0, let validator = file.validator {
                transfer.askForTheRest(from: file.resumeOffset, validator: validator)
            }
            // Given back when the transfer completes, whether it ran or not.
            transfer.queueSlot = slot
            core.fileSink = file
            TransferEngine.transfersInFlight.add(1, ordering: .relaxed)  // until `complete()`
            core.switches.freshConnection = false
            core.transfer = transfer
            sentBytes.store(0, ordering: .relaxed)
            bytesToSend.store(Self.size(of: body, fileSize: fileSize), ordering: .relaxed)
            core.lastError = nil
            var effects = Effects()
            if !waits { launch(transfer, core: &core, effects: &effects) }
            return .success((transfer, effects, waits))
        }
        switch outcome {
        case .failure(let error):
            if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
            withCore { $0.lastError = error }
            return false
        case .success(let (transfer, effects, waits)):
            // Tests force an abort into the window between the lock and the start command.
            startWindowHook?()
            perform(effects)
            if effects.start == nil, !waits {
                if transfer.message.isAsync {
                    DispatchQueue.global().async { self.obtainTicketsThenStart(transfer) }
                } else {
                    obtainTicketsThenStart(transfer)
                }
            }
            if !transfer.message.isAsync {
                Wakeups.sleep(completionBit) { transfer.isComplete.load(ordering: .acquiring) }
            }
            return true
        }
    }

    /// SENT: the engine starts `transfer` at once, unless Kerberos tickets are to be
    /// obtained first (``obtainTicketsThenStart(_:)``, by the caller).
    private func launch(_ transfer: Transfer, core: inout Core, effects: inout Effects) {
        if transfer.ticketCredentials == nil { effects.transferCommand = .start(transfer) }
        if core.message.isAsync { core.report(.sent, effects: &effects) }
    }

    /// The request's queue gave it the slot numbered `number`: SENT, unless the send that
    /// waited for it stopped waiting meanwhile.
    func slotFreed(_ number: Int) {
        let started = withCore { core -> (Transfer, Effects)? in
            guard core.machine.slotFreed(number) == .start, let transfer = core.transfer else { return nil }
            var effects = Effects()
            launch(transfer, core: &core, effects: &effects)
            return (transfer, effects)
        }
        guard let (transfer, effects) = started else { return }
        perform(effects)
        if effects.start == nil { DispatchQueue.global().async { self.obtainTicketsThenStart(transfer) } }
    }

    /// Ends the send that waits for the queue slot numbered `number`, as `abort()` does; a
    /// later send of the request (its slot has another number) is left alone.
    func stopWaiting(forSlot number: Int) {
        let effects = withCore { core -> Effects? in
            guard core.machine.waitingSlot == number else { return nil }
            _ = core.machine.abort()
            var effects = Effects()
            core.stopTransfer(reason: "Request aborted", leavesQueue: true, effects: &effects)
            core.lastError = nil
            return effects
        }
        guard let effects else { return }
        if runsCallback { callbackChangedState(to: .done, generation: callbackGeneration.load(ordering: .relaxed)) }
        perform(effects)
    }

    /// Turns the Negotiate user and password into tickets (a KDC exchange, so never on the
    /// engine thread), then hands the transfer to the engine; a refusal ends it in DONE.
    func obtainTicketsThenStart(_ transfer: Transfer) {
        guard let credentials = transfer.ticketCredentials else { return }
        let failure = KerberosCredentials.obtainTickets(principal: credentials.user, password: credentials.password)
        let stillWanted = withCore { $0.transfer === transfer }
        if stillWanted, failure == nil {
            engine.start(transfer)
            return
        }
        if let failure { transferFinished(transfer, failure: TransferFailure(kind: .authentication, text: failure)) }
        Wakeups.wake(transfer.complete())  // the engine never had it
    }
}
