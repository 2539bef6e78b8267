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
    /// - Parameters:
    ///   - body: the text to send, or `nil` for none.
    ///   - timeout: seconds for the whole request, 0 for no limit.
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
        sendFile(path, offset: 0, length: -1, timeout: timeout)
    }

    /// Streams `length` bytes of the file at `path` from byte `offset` on as the body, never
    /// reading them whole (mesibo's `uploadOffset` and `uploadEnd`), with `Content-Length:
    /// length`; otherwise as ``sendWithFile(_:timeout:)``. A redirect or retry that sends the
    /// body again sends the same bytes.
    /// - Parameters:
    ///   - path: the file; it must be a readable regular file.
    ///   - offset: the first byte to send, 0 or more.
    ///   - length: how many bytes; -1: to the end of the file.
    ///   - timeout: seconds for the whole request, 0 for no limit.
    /// - Returns: `false` with ``lastError`` when the file is missing, unreadable or not a
    ///   regular file, or the range is not inside it (a negative offset, a length below -1,
    ///   bytes past its end); the request then stays OPENED. Otherwise as
    ///   ``send(_:timeout:)``.
    @discardableResult
    public func sendWithFile(_ path: String, offset: Int64, length: Int64 = -1, timeout: Double = 0) -> Bool {
        sendFile(path, offset: offset, length: length, timeout: timeout)
    }

    /// Opens the file and sends bytes `offset` to `offset + length` of it (`length` -1: to its end).
    private func sendFile(_ path: String, offset: Int64, length: Int64, timeout: Double) -> Bool {
        switch ReadableFile.open(path) {
        case .failure(let problem):
            return refuse(.fileUnreadable, problem.message)
        case .success(let file):
            let size = file.size
            guard offset >= 0, offset <= size, length >= -1, length <= size - offset else {
                _ = Glibc.close(file.descriptor)
                let range = length == -1 ? "from byte \(offset) to the end" : "of \(length) bytes from byte \(offset)"
                return refuse(.invalidArgument, "the range \(range) is not inside '\(MessageValidation.escaped(path))' (\(size) bytes)")
            }
            if offset > 0, lseek(file.descriptor, off_t(offset), SEEK_SET) < 0 {
                _ = Glibc.close(file.descriptor)
                return refuse(.fileUnreadable, "cannot seek to byte \(offset) of '\(MessageValidation.escaped(path))'")
            }
            let sent = length == -1 ? size - offset : length
            return start(.file(path: path, offset: offset), timeout: timeout, fileDescriptor: file.descriptor, fileSize: sent)
        }
    }

    /// The sends' common step: checks, then hands the transfer to the engine, or to the
    /// request's queue (`into`, else ``queue``) to wait for a slot.
    func start(_ body: RequestBody, timeout: Double, fileDescriptor: Int32 = -1, fileSize: Int64 = 0,
               into chosenQueue: RequestQueue? = nil, atFront: Bool = false) -> Bool {
        var jar: JarCookies?
        while true {
            let outcome = withCore { core -> Result<(Transfer, Effects, waits: Bool, here: Bool), HttpRequestError> in
                var plan: SendPlan
                do throws(HttpRequestError) {
                    plan = try core.plan(body, timeout: timeout, fileDescriptor: fileDescriptor, fileSize: fileSize, jar: jar)
                } catch { return .failure(error) }
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
                transfer.prepare(plan, message: core.message, switches: core.switches, pipelining: core.enablePipelining, queueSlot: slot)
                core.observe(transfer, for: self, waits: waits)
                core.sentBody = CurlCommand.Body(body, fileSize: fileSize)
                core.switches.freshConnection = false
                core.transfer = transfer
                sentBytes.store(0, ordering: .relaxed)
                bytesToSend.store(Self.size(of: plan.body, fileSize: fileSize), ordering: .relaxed)
                core.lastError = nil
                var effects = Effects()
                if !waits { launch(transfer, core: &core, effects: &effects, here: true) }
                // Read now: once the engine has the transfer, only the engine may.
                return .success((transfer, effects, waits, !waits && answersHere(transfer)))
            }
            switch outcome {
            case .failure(let error) where error.code == .jarNeeded:
                jar = JarCookies(for: error.message)  // without the lock; then plan again
            case .failure(let error):
                if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
                withCore { $0.lastError = error }
                return false
            case .success(let (transfer, effects, waits, here)):
                // Tests force an abort into the window between the lock and the start command.
                startWindowHook?()
                perform(effects)
                if here {
                    answerFromCache(transfer)
                } else if effects.start == nil, !waits {
                    if transfer.message.isAsync {
                        DispatchQueue.global().async { self.prepareThenStart(transfer) }
                    } else {
                        prepareThenStart(transfer)
                    }
                }
                if !transfer.message.isAsync {
                    Wakeups.sleep(completionBit) { transfer.isComplete.load(ordering: .acquiring) }
                }
                return true
            }
        }
    }

    /// SENT: the engine starts `transfer` at once, unless Kerberos tickets or a PAC file's
    /// routes are to be obtained first (``prepareThenStart(_:)``, by the caller), or the cache answers a
    /// synchronous send on its own thread (`here`: the sending thread, ``answerFromCache(_:)``).
    private func launch(_ transfer: Transfer, core: inout Core, effects: inout Effects, here: Bool = false) {
        core.observer?.started(transfer.cache)
        if !transfer.needsPreparation, !(here && answersHere(transfer)) { effects.transferCommand = .start(transfer) }
        if core.message.isAsync { core.report(.sent, effects: &effects) }
    }

    /// A synchronous send the cache answers without the network: on the sending thread, no
    /// hop to the engine.
    private func answersHere(_ transfer: Transfer) -> Bool {
        !transfer.message.isAsync && transfer.answersFromCache
    }

    /// Plays the stored response to this request, on the sending thread, then completes the send.
    private func answerFromCache(_ transfer: Transfer) {
        guard let exchange = transfer.cache else { return }
        var failure: TransferFailure?
        while true {
            if case .finished(let end) = exchange.replayStep(transfer, budget: .max) {
                failure = end
                break
            }
        }
        exchange.replayEnded()
        transfer.finish(failure, record: exchange.record)
        _ = transfer.complete()  // no one else waits for this send: no wake-up
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
        if effects.start == nil { DispatchQueue.global().async { self.prepareThenStart(transfer) } }
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

    /// Reads (or fetches) and evaluates the PAC file, and turns the Negotiate user and
    /// password into tickets (I/O, so never on the engine thread), then hands the transfer to
    /// the engine; a failure ends it in DONE.
    func prepareThenStart(_ transfer: Transfer) {
        transfer.prepareThenStart(on: engine) { withCore { $0.transfer === transfer } }
    }
}

/// What a send carries, once its arguments and the request's settings were checked: the
/// same for ``HttpRequest``'s sends and its `async` responses.
/// The `Cookie` value the jar adds to a request to `url` (``CookieStore/cookieHeader(for:)``).
struct JarCookies {
    var url: String
    var cookies: String

    /// Read now: waits for the engine thread, so never under a request's lock.
    init(for url: String) {
        self.url = url
        cookies = CookieStore.shared.cookieHeader(for: url)
    }
}

struct SendPlan {
    var body: RequestBody
    /// Where the body of the response goes, when a response file is set.
    var file: FileSink?
    /// The limit for the whole send (0: none): the send's own, else the total of `setTimeouts`.
    var timeout: Double
    var fileDescriptor: Int32
    var fileSize: Int64
    /// The cache's part in the send (nil: none).
    var cache: CacheExchange?
}

extension HttpRequest.Core {
    /// Checks a send of `body` against the request's message and switches (not its state).
    /// Throws rather than returning a `Result`: a plan taken out of one was copied (and the
    /// `Result` released after). `jar`: the jar's `Cookie` value for the message's URL, if
    /// read; when the cache needs it first, throws ``HttpRequestError/jarNeeded(for:)`` (read
    /// it outside the lock, and plan again).
    func plan(_ body: RequestBody, timeout: Double, fileDescriptor: Int32, fileSize: Int64,
              jar: JarCookies? = nil) throws(HttpRequestError) -> SendPlan {
        guard timeout.isFinite, timeout >= 0 else {
            throw HttpRequestError(.invalidArgument, "the timeout must be 0 or more seconds")
        }
        var body = body
        if !message.formValues.isEmpty || !message.formFiles.isEmpty {
            guard case .none = body else {
                throw HttpRequestError(.invalidArgument, "a body cannot be sent together with form values")
            }
            if message.formFiles.isEmpty, !message.multipartForm {
                body = .bytes(Data(message.formBody), contentType: "application/x-www-form-urlencoded")
            } else {
                // The files must still be there: libcurl opens them as it sends.
                if let problem = message.formFiles.lazy.compactMap({ ReadableFile.problem($0.path) }).first {
                    throw HttpRequestError(.fileUnreadable, problem)
                }
                body = .multipart(values: message.formValues, files: message.formFiles)
            }
        }
        if message.method == "HEAD", case .bytes = body {
            throw HttpRequestError(.invalidArgument, "a HEAD request cannot carry a body")
        }
        // A response file (not for HEAD, which has no body), resumed where its .part ends.
        let file = responseFile.flatMap { message.method == "HEAD" ? nil : FileSink($0, decoding: switches.contentDecoding) }
        if switches.range != nil, Transfer.sendsBody(message.method, body) {
            // libcurl would turn the range into the body's Content-Range.
            throw HttpRequestError(.invalidArgument, "a range asks for part of a response: not for a request that sends a body")
        }
        if let file, file.resumeOffset > 0, switches.range != nil {
            throw HttpRequestError(.invalidArgument, "a range cannot be combined with resuming a response file")
        }
        // A resumed response file asks for a range of its own: the cache stays out of it.
        var cache: CacheExchange?
        if file?.resumeOffset ?? 0 == 0 {
            switch HttpCache.exchange(for: message, switches: switches, policy: cachePolicy,
                                      jar: jar.flatMap { $0.url == message.url ? $0.cookies : nil }) {
            case .none: break
            case .exchange(let exchange): cache = exchange
            case .needsJar: throw HttpRequestError.jarNeeded(for: message.url)
            }
        }
        // A send's own timeout replaces the total of `setTimeouts` for that send.
        return SendPlan(body: body, file: file, timeout: timeout > 0 ? timeout : switches.timeouts.total,
                        fileDescriptor: fileDescriptor, fileSize: fileSize, cache: cache)
    }
}

extension Transfer {
    /// Readies the transfer for the send `plan` describes, of `message` with `switches`,
    /// holding `queueSlot` (given back when it completes, whether it ran or not).
    func prepare(_ plan: SendPlan, message: RequestMessage, switches: TransferSwitches, pipelining: Bool, queueSlot: QueueSlot?) {
        prepare(message: message, body: plan.body, switches: switches, timeout: plan.timeout,
                pipelining: pipelining, fileDescriptor: plan.fileDescriptor, fileSize: plan.fileSize, responseFile: plan.file)
        if let file = plan.file, file.resumeOffset > 0, let validator = file.validator {
            askForTheRest(from: file.resumeOffset, validator: validator)
        }
        useCache(plan.cache)
        self.queueSlot = queueSlot
        TransferEngine.transfersInFlight.add(1, ordering: .relaxed)  // until `complete()`
    }
}
