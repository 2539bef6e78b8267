import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The size limit's failure (``HttpRequest/setMaxResponseSize(_:)``): its text begins with
/// ``failurePrefix`` (xhr tells it apart by that, for curl's exit code 63).
package enum ResponseLimit {
    package static let failurePrefix = "The response body exceeds the limit of "
}

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
    /// The cache's part in the send, or nil (set by `prepare`, dropped by ``complete()``).
    @exclusivity(unchecked) var cache: CacheExchange?
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
    /// The headers and idle clocks, while the engine watches them (``PhaseWatch``).
    @exclusivity(unchecked) var clock: PhaseClock?
    /// The multipart form libcurl sends (`CURLOPT_MIMEPOST`), until the engine ends the send.
    @exclusivity(unchecked) var mime: OpaquePointer?

    /// What the engine learns of a send as it goes.
    struct Progress {
        /// How far libcurl has read an in-memory body it streams (`BodyShape.streamed`).
        var bodyOffset = 0
        /// A head that may be an intermediate one (redirect, auth round): reported only when
        /// its body starts or the transfer ends.
        var pendingHead: ResponseHead?
        /// A complete response head arrived (final or not).
        var sawHead = false
        /// Heads other than interim (1xx) ones so far, and whether the request was given one.
        var headsSeen = 0
        var headReported = false
        /// The body waits for the consumer (the owner answered `.paused`) until it resumes:
        /// for the idle limit, not a stall.
        var pausedByConsumer = false
        /// When the engine began the send (``MonotonicTime``), for the total limit across
        /// redirects and retries.
        var startedAt: Int64 = 0
        /// Retries done, and the seconds to wait before the next one when this attempt's head
        /// (a 429 or 503) is to be retried: its body is dropped.
        var retries = 0
        var retryDelay: Double?
        /// The status of the last head other than an interim (1xx) one; 0 before any.
        var lastStatus = 0
        /// A 401 or 407 head arrived: libcurl may keep authentication state in the handle.
        var sawChallenge = false
        /// The last head is a redirect the transfer follows: its body is dropped.
        var followsRedirect = false
        /// Undoes the codings of the last head's body, when it is delivered decoded.
        var decoder: ContentDecoder?
        /// Body bytes of the last head delivered (after decoding), for the size limit.
        var bodyBytesDelivered: Int64 = 0
        /// Redirects followed so far.
        var redirectCount = 0
        /// Where the redirects led, and the method and body the request has there (nil: as
        /// `open` gave them).
        var hopURL: String?
        var hopMethod: String?
        var hopDropsBody = false
        /// The current hop's header list lacks fields of the request's own (``RedirectStep/sends(_:)``),
        /// and it goes to another origin than `open`'s (without credentials).
        var hopListReduced = false
        var hopCrossOrigin = false
        /// Microseconds the hops before the current one took.
        var hopOffset: Int64 = 0
        /// The protocol of the last head.
        var httpVersion: String?
        /// The transfer stopped itself, refusing the response (its framing, its size): how it
        /// ended, whatever libcurl says of the stop.
        var refusal: TransferFailure?
        /// The trailer fields after the last head's body, if it had any.
        var trailers: ResponseHead?
        /// The connection of the last hop, and those of the hops before it (redirects).
        var lastConnection: ConnectionID?
        var hopConnections: [ConnectionID] = []
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
                 pipelining: Bool, fileDescriptor: Int32 = -1, fileSize: Int64 = 0) {
        closeFile()
        sends += 1
        ownerInFlight = owner.counted
        self.message = message
        self.body = body
        self.switches = switches
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
        clock = nil
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
        let owner = ownerInFlight.take()  // released after the flag is set
        let slot = queueSlot.take()
        let exchange = cache.take()  // released after the flag is set (it may remove a body file)
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
        progress.sawChallenge || (switches.proxy != nil && handle?.heardChallenge == true)
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
    /// Returns false to stop the transfer: the head is refused (``Progress/refusal``).
    func headEnded(_ head: RecordedHead?) -> Bool {
        guard let head else { return true }
        progress.sawHead = true
        switch head.status {
        case 100..<200 where head.status != 101:
            return true  // 100-continue and other interim responses
        default:
            if head.lengthsDisagree {
                progress.refusal = TransferFailure(kind: .response, text: "The response is malformed: its Content-Length fields disagree (\(MessageValidation.escaped(ResponseHead(head).value(of: "Content-Length") ?? "")))")
                return false
            }
            progress.lastStatus = head.status
            progress.headsSeen += 1
            progress.httpVersion = head.httpVersion
            progress.trailers = nil
            if head.status == 401 || head.status == 407 { progress.sawChallenge = true }
            progress.followsRedirect = switches.followLocation && RedirectStep.isRedirect(head.status) && head.hasField("Location")
            progress.decoder = nil
            progress.bodyBytesDelivered = 0
            if !progress.followsRedirect, switches.retries.count > 0, RetryPolicy.mayRetry(status: head.status),
               let delay = retryDelay(forStatus: head) {
                // Tried again after the delay: neither this head nor its body is reported.
                progress.retryDelay = delay
                progress.pendingHead = nil
                return true
            }
            if !progress.followsRedirect {
                // A body to deliver: decoded here (libcurl decodes nothing), within the limit.
                if switches.contentDecoding { progress.decoder = ContentDecoder(head) }
                if switches.maxResponseSize > 0, progress.decoder == nil, let length = ResponseHead.decimal(head.fieldValue("Content-Length")),
                   !head.hasField("Transfer-Encoding"), Int64(length) > switches.maxResponseSize {
                    progress.refusal = tooLarge()
                    return false
                }
            }
            if progress.followsRedirect || mayBeIntermediate(head) {
                // An authentication round or a redirect: reported only if it turns out final.
                progress.pendingHead = ResponseHead(head)
            } else {
                progress.pendingHead = nil
                progress.headReported = true
                reportFinalHead(head)
            }
        }
        return true
    }

    /// Body bytes from libcurl, as they came over the wire (chunked framing undone).
    func bodyBytes(_ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        // The body of a redirect followed or of an answer to be retried: dropped.
        if progress.followsRedirect || progress.retryDelay != nil { return .accepted }
        guard let decoder = progress.decoder else { return deliver(bytes) }
        // A call the consumer paused comes again with the same bytes: those already taken
        // are decoded and delivered (or held: the output the consumer did not take yet).
        var network = UnsafeRawBufferPointer(rebasing: bytes[min(decoder.takenOfPausedCall, bytes.count)...])
        while true {
            let decoded: UnsafeRawBufferPointer
            do throws(ContentDecoder.Failure) {
                decoded = try decoder.next(from: &network)
            } catch {
                progress.refusal = TransferFailure(kind: .response, text: error.text)
                return .refused
            }
            if decoded.isEmpty { break }
            switch deliver(decoded) {
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

    /// Hands body bytes (decoded) to the owner and the cache, within the size limit.
    private func deliver(_ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        if switches.maxResponseSize > 0, progress.bodyBytesDelivered + Int64(bytes.count) > switches.maxResponseSize {
            progress.refusal = tooLarge()
            return .refused
        }
        flushPendingHead()
        let disposition = withOwner { $0.transferReceivedBody(self, bytes) }
        progress.pausedByConsumer = disposition == .paused
        if disposition == .accepted {
            progress.bodyBytesDelivered += Int64(bytes.count)
            if let cache { cache.bodyTaken(bytes) }
        }
        return disposition
    }

    /// A body past ``TransferSwitches/maxResponseSize``.
    private func tooLarge() -> TransferFailure {
        TransferFailure(kind: .response, text: ResponseLimit.failurePrefix + "\(switches.maxResponseSize) bytes (setMaxResponseSize)")
    }

    /// Hands the final head to the owner, unless the cache takes it (a 304 to its own
    /// validation: the stored response answers when the transfer ends).
    private func reportFinalHead(_ head: RecordedHead) {
        if let cache, !cache.headArrived(head, afterRedirect: progress.redirectCount > 0, afterChallenge: heardChallenge,
                                         decoded: progress.decoder != nil) { return }
        withOwner { $0.transferReceivedHead(self, head) }
    }

    /// Reports a head held back as possibly intermediate: it turned out to be the final one.
    func flushPendingHead() {
        if let head = progress.pendingHead {
            progress.pendingHead = nil
            progress.headReported = true
            head.withRecorded { recorded in reportFinalHead(recorded) }
        }
    }
}
