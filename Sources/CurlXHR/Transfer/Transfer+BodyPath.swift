/// A response's path through its transfer, declared once, in order:
///
/// 1. the bytes libcurl received (chunked framing undone) — ``bodyBytes(_:)``;
/// 2. decoding, when the library undoes the body's codings (``ContentDecoder``);
/// 3. the size limit (`setMaxResponseSize`, counted on decoded bytes);
/// 4. the owner's destination — the response file (`setResponseFile`, ``FileSink``) for a
///    2xx body, else the owner itself (its receive buffer, an `async` body's chunks) —
///    ``deliverBody(_:)``;
/// 5. the cache's copy, of the bytes the destination took (a paused chunk comes again).
///
/// The cache replays a stored response into step 4 (``deliverHead(_:)``, ``deliverBody(_:)``,
/// ``deliverReading(_:)``): it was decoded, limited and stored on its way in. Every end goes
/// through ``finish(_:fallbackStatus:record:)``, which completes the response file first.
/// An owner sees only its own: the final head, the bytes that are not the file's, how many
/// went to the file, and the end.
extension Transfer {
    // MARK: From the network (engine thread)

    /// Body bytes from libcurl, as they came over the wire (chunked framing undone).
    func bodyBytes(_ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        switch hops.bodyArrived() {
        case .drop: return .accepted  // a redirect followed, an answer to be retried
        case .deliver(let reportingHeld): if reportingHeld { reportHeldHead() }
        }
        guard let decoder = progress.decoder else { return take(bytes) }
        // A call the consumer paused comes again with the same bytes: those already taken
        // are decoded and delivered (or held: the output the consumer did not take yet).
        var network = UnsafeRawBufferPointer(rebasing: bytes[min(decoder.takenOfPausedCall, bytes.count)...])
        while true {
            let decoded: UnsafeRawBufferPointer
            do throws(ContentDecoder.Failure) {
                decoded = try decoder.next(from: &network)
            } catch {
                hops.refuse(TransferFailure(kind: .response, text: error.text, code: 61))  // CURLE_BAD_CONTENT_ENCODING
                return .refused
            }
            if decoded.isEmpty { break }
            switch take(decoded) {
            case .accepted:
                decoder.taken()
            case .paused:
                decoder.takenOfPausedCall = bytes.count - network.count
                return .paused
            case .refused:
                return .refused
            }
        }
        decoder.takenOfPausedCall = 0
        return .accepted
    }

    /// Decoded bytes: within the size limit, to the destination, then to the cache.
    private func take(_ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        guard hops.mayDeliver(bytes.count) else { return .refused }
        let disposition = deliverBody(bytes)
        progress.pausedByConsumer = disposition == .paused
        if disposition == .accepted {
            hops.delivered(bytes.count)
            if let cache { cache.bodyTaken(bytes) }
        }
        return disposition
    }

    // MARK: The destination (the network's path and the cache's replay)

    /// The final head: the response file learns whether the body is its own, then the owner
    /// gets the head.
    func deliverHead(_ head: RecordedHead) {
        if hasResponseFile { responseFile.withLock { $0?.begin(head) } }
        headDelivered = true
        withOwner { $0.transferReceivedHead(self, head) }
    }

    /// Body bytes of the final head: into the response file when the body is the file's (the
    /// owner told how many), else to the owner.
    func deliverBody(_ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        if hasResponseFile {
            switch responseFile.withLock({ $0?.write(bytes) ?? .abandoned }) {
            case .notTheFiles: break
            case .written: return withOwner { $0.transferWroteBody(self, count: bytes.count) }
            case .failed, .abandoned: return .refused
            }
        }
        return withOwner { $0.transferReceivedBody(self, bytes) }
    }

    /// Body bytes the owner reads into a buffer of its own (``TransferOwner/transferReadsBody(_:reading:)``);
    /// nil when they go through ``deliverBody(_:)`` (the response file's, or an owner that
    /// takes bytes only so).
    func deliverReading(_ read: (UnsafeMutableRawBufferPointer) -> Int) -> (BodyDisposition, Int)? {
        if hasResponseFile, responseFile.withLock({ $0?.takesBody ?? true }) { return nil }
        return withOwner { $0.transferReadsBody(self, reading: read) }
    }

    // MARK: The end

    /// The send ended with `failure` or not: the response file is completed (the `.part`
    /// renamed over the file; a failure keeps it for a resume), then the owner is told, with
    /// `fallbackStatus` for a response whose head it never got.
    func finish(_ failure: TransferFailure?, fallbackStatus: Int = 0, record: SendRecord = SendRecord()) {
        var failure = failure
        if hasResponseFile {
            failure = responseFile.withLock { file in
                guard var taken = file.take() else { return failure }
                return taken.finish(failure)
            }
        }
        withOwner { $0.transferFinished(self, failure: failure, fallbackStatus: fallbackStatus, record: record) }
        // After the owner took the record: a `.done` callback reads getMetrics() as the event's.
        observer?.close(with: HttpRequest.Metrics(record, facts: facts, url: message.url, method: sentMethod))
    }

    /// The owner let go of the send (an abort, a new `open`, a cancelled task): nothing more
    /// reaches the response file, which is closed now; its `.part` stays for a resume.
    func abandonOutput() {
        responseFile.withLock { file in
            file?.discard()
            file = nil
        }
    }

    /// Takes the first hop's routes from the send's PAC file (read or fetched when due) and
    /// obtains the Kerberos tickets the send's Negotiate credentials need (a KDC exchange):
    /// on the caller's thread (an asynchronous send's: a pool thread), never the engine's.
    /// Then hands the send to `runner` if the owner `stillWants` it. A failure ends the send;
    /// either way a send the engine never had is completed here.
    func prepareThenStart(on runner: any TransferRunner, stillWants: () -> Bool) {
        var failure: TransferFailure?
        if let location = pac?.location {
            switch ProxyAutoConfig.routes(location, for: message.url) {
            case .failure(let refused): failure = refused
            case .success(let (script, routes)):
                pac?.script = script
                pac?.routes = routes
                takeRoute(routes[0])
            }
        }
        if failure == nil, let credentials = ticketCredentials {
            failure = KerberosCredentials.obtainTickets(principal: credentials.user, password: credentials.password)
                .map { TransferFailure(kind: .authentication, text: $0) }
        }
        if failure == nil, stillWants() {
            runner.start(self)
            return
        }
        if let failure { finish(failure) }
        Wakeups.wake(complete())  // the engine never had it
    }

    /// Something is to be done before the engine may start the send, off the engine thread:
    /// Kerberos tickets to obtain, or a PAC file to read and evaluate.
    var needsPreparation: Bool { ticketCredentials != nil || (pac != nil && !answersFromCache) }
}
