import CCurlShim
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One send of one request: everything libcurl needs, and what comes back, until DONE.
///
/// Prepared by `HttpRequest.send…`, then owned by the engine thread, which alone touches
/// the easy handle and the engine-side fields below. libcurl's callbacks only record: the
/// header callback (in C) copies lines until a head is complete, which is then read once;
/// bytes and heads go to the transfer's ``TransferOwner``.
///
/// A request keeps its last transfer and prepares it again for its next send, once the
/// engine is done with it (``isComplete``) and nothing else refers to it: no allocation a
/// send.
final class Transfer: @unchecked Sendable {
    /// Counts the sends the transfer carried (``prepare(message:body:switches:timeout:pipelining:fileDescriptor:fileSize:)``):
    /// an abort names the one it stops.
    @exclusivity(unchecked) private(set) var sends = 0

    /// The owner the transfer carries sends for (a request), for its whole life. Not a
    /// counted reference: the owner keeps its finished transfer for the next send, and a
    /// counted one back would make a cycle. While the transfer is in flight, `ownerInFlight`
    /// holds the owner.
    private let owner: OwnerReference

    /// Calls into the owner without taking a reference to it: only while the transfer is in
    /// flight (``ownerInFlight`` holds it), as for every head, body chunk and end.
    @inline(__always)
    func withOwner<Result>(_ body: (any TransferOwner) -> Result) -> Result {
        owner.call(body)
    }
    /// The owner, from ``prepare(message:body:switches:timeout:pipelining:fileDescriptor:fileSize:)``
    /// until ``complete()``, so a request the application let go still gets its transfer's end.
    @exclusivity(unchecked) private var ownerInFlight: AnyObject?

    // Set by `prepare`, before the transfer goes to the engine (which a lock orders after
    // it); no run-time exclusivity checks on these either.
    @exclusivity(unchecked) private(set) var message = RequestMessage()
    @exclusivity(unchecked) private(set) var body = RequestBody.none
    @exclusivity(unchecked) private(set) var switches = TransferSwitches()
    @exclusivity(unchecked) private(set) var timeout = 0.0
    @exclusivity(unchecked) private(set) var pipelining = true
    /// An open descriptor of the file `sendWithFile` streams, or -1.
    @exclusivity(unchecked) private(set) var fileDescriptor: Int32 = -1
    @exclusivity(unchecked) private(set) var fileSize: Int64 = 0
    /// The PAC file the send follows and the routes it gave (set by `prepare` and the start).
    @exclusivity(unchecked) var pac: PACPlan?
    /// Where the send's events and trace go (``SendObserver``), or nil: set after `prepare`
    /// when the request has an observer, dropped by ``complete()``.
    @exclusivity(unchecked) var observer: SendObserver?
    /// What libcurl measured of the last hop beyond the times the engine reads (``SendRecord``),
    /// written by the engine as the send ends and read through the request's lock after it:
    /// the request keeps its finished transfer until its next `open`.
    @exclusivity(unchecked) var facts = cxhr_send_facts()
    /// When the send began to wait for its queue's slot (``MonotonicTime``), or nil.
    @exclusivity(unchecked) var queuedAt: Int64?
    /// The cache's part in the send, or nil (set by `prepare`, dropped by ``complete()``).
    @exclusivity(unchecked) var cache: CacheExchange?
    /// The send has a response file (``responseFile``): read for every chunk, so the file's
    /// lock is taken only when there is one.
    @exclusivity(unchecked) private(set) var hasResponseFile = false
    /// Where `setResponseFile` sends the body (`Transfer+BodyPath.swift`). Locked (a pthread
    /// mutex, which ThreadSanitizer sees): the engine writes it, and an owner that lets go of
    /// the send (``abandonOutput()``) closes it from its own thread, so that no byte reaches
    /// the `.part` after an abort returned.
    let responseFile = Locked<FileSink?>(nil)
    /// The owner was handed a head of this send (a real one, or one the cache replays).
    @exclusivity(unchecked) var headDelivered = false
    /// The slot of a ``RequestQueue`` the send holds or waits for, given back by ``complete()``.
    @exclusivity(unchecked) var queueSlot: QueueSlot?
    /// The engine is done with the transfer, whatever the reason: a synchronous send waits
    /// for it, and the request may prepare the transfer again.
    let isComplete = Atomic<Bool>(false)

    // Engine thread only: one thread reads and writes these, so Swift's run-time exclusivity
    // checks (on every header line and body chunk) are left out. The request's thread never
    // touches them, not even to reset them for a new send (``beginSend()`` does): a stale
    // command of an earlier send may still read them while the request prepares the next.
    @exclusivity(unchecked) var handle: EasyHandle?
    /// The send (``sends``) the engine began last.
    @exclusivity(unchecked) private(set) var begunSend = 0
    /// The send (``sends``) an abort stopped before its start command reached the engine.
    @exclusivity(unchecked) var cancelledSend = 0
    @exclusivity(unchecked) var isAdded = false
    @exclusivity(unchecked) var isFinished = false
    @exclusivity(unchecked) var progress = Progress()
    /// The decisions across the send's hops and attempts.
    @exclusivity(unchecked) var hops = TransferHops()
    /// The headers and idle clocks, while the engine watches them (``PhaseWatch``).
    @exclusivity(unchecked) var clock: PhaseClock?
    /// The multipart form libcurl sends (`CURLOPT_MIMEPOST`), until the engine ends the send.
    @exclusivity(unchecked) var mime: OpaquePointer?

    /// What the engine learns of a send as it goes.
    struct Progress {
        /// How far libcurl has read a body it streams from memory (`BodyShape.streamed`) or a
        /// file (`BodyShape.file`, counted from the range's start).
        var bodyOffset = 0
        /// The head held (``TransferHops/HeadAction/hold``): reported when its body starts or
        /// the transfer ends with it.
        var pendingHead: ResponseHead?
        /// The body waits for the consumer (the owner answered `.paused`) until it resumes:
        /// for the idle limit, not a stall.
        var pausedByConsumer = false
        /// The pace of the body each way (``RatePacer``), nil without a limit: a request
        /// without limits pays one nil check a callback.
        var downloadPacer: RatePacer?
        var uploadPacer: RatePacer?
        /// The transfer is paused for its rate limit until this moment (``MonotonicTime``),
        /// when the engine resumes it: for the idle limit, not a stall.
        var pacedUntil: Int64?
        /// When the engine began the send (``MonotonicTime``), for the total limit across
        /// redirects and retries.
        var startedAt: Int64 = 0
        /// Undoes the codings of the last head's body, when it is delivered decoded.
        var decoder: ContentDecoder?
        /// Where the redirects led (nil: as `open` gave it), and whether the body stays behind.
        var hopURL: String?
        var hopDropsBody = false
        /// The current hop's header list lacks fields of the request's own (``RedirectStep/sends(_:)``),
        /// and it goes to another origin than `open`'s (without credentials).
        var hopListReduced = false
        var hopCrossOrigin = false
        /// What the hops before the current one measured (their time: where its times start).
        var earlier = EarlierHops()
        /// The protocol of the last head.
        var httpVersion: String?
        /// The trailer fields after the last head's body, if it had any.
        var trailers: ResponseHead?
        /// The connection of the last hop, and those of the hops before it (redirects).
        var lastConnection: ConnectionID?
        var hopConnections: [ConnectionID] = []
        /// Milliseconds the send waited for its queue's slot.
        var queueMilliseconds: Int64 = 0
        /// For the observer: libcurl's count of new connections and the local port at the last
        /// request made ready, and whether that request's `.requestSent` was reported.
        var readyConnects = 0
        var readyLocalPort = 0
        var requestSentReported = false
    }

    /// Notes the connection a hop ran on (nil: it never connected). Engine thread.
    func usedConnection(_ connection: ConnectionID?) {
        guard let connection, connection != progress.lastConnection else { return }
        if let last = progress.lastConnection { progress.hopConnections.append(last) }
        progress.lastConnection = connection
    }

    /// The connections the send ran on. Engine thread.
    func forEachConnectionUsed(_ body: (ConnectionID) -> Void) {
        progress.hopConnections.forEach(body)
        if let last = progress.lastConnection { body(last) }
    }

    init(owner: any TransferOwner) {
        self.owner = OwnerReference(owner)
    }

    deinit {
        closeFile()
    }

    /// Readies the transfer for a send (a new one, or one the engine completed and nothing
    /// else refers to). The request's thread, under its lock, before the engine sees it.
    func prepare(message: RequestMessage, body: RequestBody, switches: TransferSwitches, timeout: Double,
                 pipelining: Bool, fileDescriptor: Int32 = -1, fileSize: Int64 = 0, responseFile: FileSink? = nil) {
        closeFile()
        // The lock holds nil unless the last send had a file (finishing or abandoning it
        // takes it): nothing to write then (an optional file sink is copied through its
        // type's value witnesses, about a hundred instructions).
        let hadResponseFile = hasResponseFile
        hasResponseFile = responseFile != nil
        headDelivered = false
        if hadResponseFile || hasResponseFile { self.responseFile.withLock { $0 = responseFile } }
        sends += 1
        queuedAt = nil
        facts = cxhr_send_facts()
        ownerInFlight = owner.counted
        self.message = message
        self.body = body
        self.switches = switches
        pac = switches.effectiveProxyAutoConfig.map { PACPlan(location: $0) }
        self.timeout = timeout
        self.pipelining = pipelining
        self.fileDescriptor = fileDescriptor
        self.fileSize = fileSize
        isComplete.store(false, ordering: .relaxed)
    }

    /// Makes the send just prepared continue a response file: only the bytes from `offset`,
    /// and only if the file is still the one `validator` names (`Range` with `If-Range`).
    func askForTheRest(from offset: Int64, validator: String) {
        message.setHeader("If-Range", value: validator)
        switches.range = ByteRange(start: offset)
        // A range counts bytes of the body as sent: ask for it unencoded, as the .part holds it.
        switches.contentDecoding = false
    }

    /// The cache answers the send with a stored response (fresh, or offline), not the network.
    var answersFromCache: Bool { cache?.answersAtOnce == true }

    /// Gives the send just prepared its part in the cache: a validation sends the cache's
    /// conditions.
    func useCache(_ exchange: CacheExchange?) {
        cache = exchange
        for condition in exchange?.conditions ?? [] { message.setHeader(condition.name, value: condition.value) }
    }

    /// The engine takes up the send ``prepare(message:body:switches:timeout:pipelining:fileDescriptor:fileSize:)``
    /// readied (its start command, which a lock orders after it). Engine thread.
    func beginSend() {
        begunSend = sends
        handle = nil
        isAdded = false
        isFinished = false
        progress = Progress()
        progress.startedAt = MonotonicTime.milliseconds()
        if let queuedAt { progress.queueMilliseconds = progress.startedAt - queuedAt }
        if switches.hasReach { startPacers(switches.rateLimits) }
        hops = TransferHops(rules: TransferHops.Rules(followLocation: switches.followLocation, retries: switches.retries,
                                                      maxResponseSize: switches.maxResponseSize, totalLimit: timeout,
                                                      method: sentMethod, maxRedirects: switches.maxRedirects))
        clock = nil
        if let routes = pac?.routes, !routes.isEmpty { hops.useRoutes(routes) }
    }

    /// The hop goes by `route` of the PAC file's answer (its proxy, or direct).
    func takeRoute(_ route: PACRoute) {
        switches.proxy = route.proxy
    }

    /// Where in the file the body starts (`sendWithFile(_:offset:length:timeout:)`; 0 for a
    /// whole file).
    var fileStart: Int64 {
        if case .file(_, let offset) = body { offset } else { 0 }
    }

    private func closeFile() {
        if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
        fileDescriptor = -1
    }

    /// Marks the transfer complete; returns the bit to wake (``Wakeups/wake(_:)``) for the
    /// synchronous send that may wait for it, or 0 for an asynchronous one. The last touch of
    /// whoever ends the transfer (the engine; the request when the engine never had it): from
    /// here on the request may prepare the transfer again, once no one else refers to it.
    func complete() -> UInt32 {
        let bit = message.isAsync ? 0 : withOwner { $0.completionBit }
        // A kept transfer holds neither the caller's body nor an open file until its next send.
        body = .none
        closeFile()
        if hasResponseFile { abandonOutput() }
        let owner = ownerInFlight.take()  // released after the flag is set
        let slot = queueSlot.take()
        let exchange = cache.take()  // released after the flag is set (it may remove a body file)
        observer = nil
        TransferEngine.transfersInFlight.subtract(1, ordering: .relaxed)
        isComplete.store(true, ordering: .releasing)
        _ = consume owner
        _ = consume exchange
        slot?.giveBack()  // the next waiting request of the queue starts
        return bit
    }

    /// Whether the transfer met an authentication challenge, whose state libcurl keeps in
    /// the handle. A proxy's 407 to `CONNECT` never reaches the header callback
    /// (`CURLOPT_SUPPRESS_CONNECT_HEADERS`), so through a proxy libcurl is asked.
    var heardChallenge: Bool {
        hops.sawChallenge || (switches.proxy != nil && handle?.heardChallenge == true)
    }

    /// Whether a head may be followed by another one within this transfer (an
    /// authentication round libcurl may answer).
    private func mayBeIntermediate(_ head: RecordedHead) -> Bool {
        switch head.status {
        case 401: message.credentials != nil || message.usesNegotiate
        case 407: switches.proxy?.credentials != nil
        default: false
        }
    }

    /// A head (or a block that is none) ended; `head` is what the parser made of it.
    /// Returns false to stop the transfer: the head is refused (``TransferHops/refusal``).
    func headEnded(_ head: RecordedHead?) -> Bool {
        guard let head else { return true }
        if observer != nil { observeHead(head, answered: mayBeIntermediate(head)) }
        let interim = (100..<200).contains(head.status) && head.status != 101
        if !interim {
            progress.httpVersion = head.httpVersion
            progress.trailers = nil
            progress.pendingHead = nil
            // A body to deliver: decoded here (libcurl decodes nothing).
            let followed = switches.followLocation && RedirectStep.isRedirect(head.status) && head.hasField("Location")
            progress.decoder = switches.contentDecoding && !followed ? ContentDecoder.forBody(of: head) : nil
        }
        let retrying = switches.retries.count > 0
        let action = hops.headEnded(interim ? TransferHops.Head(status: head.status) : facts(of: head),
                                    elapsed: retrying ? secondsSinceStart : 0, jitter: retrying ? Double.random(in: 0..<1) : 0)
        switch action {
        case .ignore, .drop: break
        case .refuse: return false
        case .hold: progress.pendingHead = ResponseHead(head)
        case .report: reportFinalHead(head)
        }
        return true
    }

    /// What ``TransferHops`` needs of a head that is not an interim one.
    private func facts(of head: RecordedHead) -> TransferHops.Head {
        var facts = TransferHops.Head(status: head.status, hasLocation: RedirectStep.isRedirect(head.status) && head.hasField("Location"),
                                      mayBeIntermediate: mayBeIntermediate(head))
        if RetryPolicy.mayRetry(status: head.status), switches.retries.count > 0 { facts.retryAfter = retryAfter(head) }
        facts.lengthsDisagree = head.lengthsDisagree
        if switches.maxResponseSize > 0, progress.decoder == nil, !head.hasField("Transfer-Encoding") {
            facts.plainLength = ResponseHead.decimal(head.fieldValue("Content-Length")).map(Int64.init)
        }
        return facts
    }

    /// Seconds since the engine began the send.
    var secondsSinceStart: Double {
        Double(MonotonicTime.milliseconds() - progress.startedAt) / 1000
    }

    /// Reports the head held back (``TransferHops/HeadAction/hold``): it turned out final.
    func reportHeldHead() {
        if let head = progress.pendingHead.take() {
            head.withRecorded { recorded in reportFinalHead(recorded) }
        }
    }

    /// The final head, to the cache first: it keeps a 304 to its own validation (the
    /// stored response answers when the transfer ends); else to the response's path.
    private func reportFinalHead(_ head: RecordedHead) {
        if let cache {
            let goesOn = cache.headArrived(head, afterRedirect: hops.redirects > 0, afterChallenge: heardChallenge,
                                           decoded: progress.decoder != nil)
            // A validation's answer: a 304 the stored response answers after, or a new response.
            if let observer, cache.conditions != nil { observer.post(.cache(goesOn ? .miss : .validated)) }
            if !goesOn { return }
        }
        deliverHead(head)
    }
}
