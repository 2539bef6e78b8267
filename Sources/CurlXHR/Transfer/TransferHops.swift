/// The decisions of one send across its hops (redirects) and attempts (retries), as a pure
/// value: at each response head (interim, held, final, a redirect to follow, an answer to try
/// again, a framing or size it refuses), for the body (dropped or delivered, within the size
/// limit) and at each attempt's end (the response, the next hop, a retry after a delay, a
/// failure).
///
/// ``Transfer`` feeds it events on the engine thread and carries out its actions on the easy
/// handle; no libcurl, clock or randomness in here (the time and the jitter come in with the
/// events), so it is tested event by event (TransferHopsTests), as ``RequestStateMachine`` is.
/// Its parts: ``RedirectStep`` (what a hop changes), ``RetryPolicy`` (when to try again) and
/// ``ProxyFallback`` (which route of a PAC file's answer a hop takes).
/// This is curl's `multi_runsingle` state for one easy handle, and OkHttp's
/// `RetryAndFollowUpInterceptor`.
///
/// | event \ state            | awaiting a head | holding a head | delivering | dropping (redirect / retry) |
/// |--------------------------|-----------------|----------------|------------|-----------------------------|
/// | head 1xx (not 101)       | ignore          | ignore         | –          | ignore                      |
/// | head: lengths disagree   | refuse          | refuse         | –          | refuse                      |
/// | head 429/503, retry due  | drop (retry)    | drop (retry)   | –          | drop (retry)                |
/// | head: redirect followed  | hold, drop body | hold, drop body| –          | hold, drop body             |
/// | head: over the limit     | refuse          | refuse         | –          | refuse                      |
/// | head 401/407 with credentials | hold       | hold           | –          | hold                        |
/// | head, any other          | report          | report         | –          | report                      |
/// | body                     | deliver         | report held, deliver | deliver | drop                     |
/// | attempt ended, refused   | end (refusal)   | end (refusal)  | end (refusal) | end (refusal)            |
/// | attempt failed: proxy unreachable, a PAC route left | next route | – | – | –             |
/// | attempt failed           | retry or end    | end            | end        | end                         |
/// | attempt completed        | end             | end, report held | end      | follow or retry (or end)    |
struct TransferHops: Sendable, Equatable {
    /// What the request's switches say for the whole send.
    struct Rules: Sendable, Equatable {
        var followLocation = true
        var retries = RetryPolicy()
        /// The most body bytes delivered (after decoding); 0: no limit.
        var maxResponseSize: Int64 = 0
        /// The whole send's limit in seconds (0: none): no retry is planned past it.
        var totalLimit = 0.0
        /// The method the first hop sends.
        var method = "GET"
        /// The most redirects followed (curl's `--max-redirs`); -1: no limit.
        var maxRedirects = RedirectStep.maxRedirects
    }

    /// What a head tells the machine.
    struct Head: Equatable {
        var status: Int
        /// A `Location` field is there.
        var hasLocation = false
        /// `Retry-After` in seconds (`.infinity` when unreadable), nil without one; read only
        /// for a 429 or 503 when retries are on.
        var retryAfter: Double? = nil
        /// A 401 or 407 that libcurl may answer with another round (credentials were given for it).
        var mayBeIntermediate = false
        /// Its `Content-Length` values disagree (no `Transfer-Encoding` overrides them).
        var lengthsDisagree = false
        /// The body length announced, when the body is delivered as it comes (not decoded).
        var plainLength: Int64? = nil
    }

    enum HeadAction: Equatable {
        /// An interim response (100-continue, 103): nothing changes.
        case ignore
        /// Kept back: reported when its body starts or the attempt ends with it (an
        /// authentication round libcurl may answer, a redirect without a target).
        case hold
        /// The final head: report it.
        case report
        /// An answer to try again: neither it nor its body is reported.
        case drop
        /// The response is refused (``refusal``): stop the transfer.
        case refuse
    }

    enum BodyAction: Equatable {
        /// The body of a redirect followed or of an answer to be retried.
        case drop
        /// To the owner; first the held head, when `reportingHeld`.
        case deliver(reportingHeld: Bool)
    }

    /// How an attempt ended, as libcurl and the transfer saw it.
    enum Attempt: Equatable {
        case completed
        case failed(TransferFailure)
    }

    enum EndAction: Equatable {
        /// The send ends: with `failure`, or the response (its held head reported first, when
        /// `reportingHeld`).
        case end(failure: TransferFailure?, reportingHeld: Bool)
        /// The next hop of a redirect, as `step` says.
        case follow(RedirectStep)
        /// The same hop again after this many seconds (``retryBegins()`` when it starts).
        case retry(after: Double)
        /// The same hop at once by the next route of the PAC file's answer (``routeBegins()``
        /// when it starts): the proxy of the last could not be reached.
        case nextRoute(PACRoute)
    }

    let rules: Rules

    /// A head ended in this attempt (final or not): the response has begun.
    private(set) var sawHead = false
    /// Heads other than interim ones in this attempt (each starts the headers clock again).
    private(set) var headsSeen = 0
    /// The status of the last head other than an interim one; 0 before any.
    private(set) var lastStatus = 0
    /// A 401 or 407 head arrived: libcurl may keep authentication state in the handle.
    private(set) var sawChallenge = false
    /// The request was given a final head.
    private(set) var headReported = false
    /// The last head is held (``HeadAction/hold``).
    private(set) var holding = false
    /// The last head is a redirect to follow: its body is dropped.
    private(set) var followsRedirect = false
    /// The last head is to be retried after this many seconds: its body is dropped.
    private(set) var retryDelay: Double?
    /// Retries begun, and redirects followed, so far.
    private(set) var retries = 0
    private(set) var redirects = 0
    /// The method the current hop sends.
    private(set) var method: String
    /// Body bytes of the last head delivered.
    private(set) var delivered: Int64 = 0
    /// The routes of the PAC file's answer for the current hop, and which one it takes; nil
    /// without PAC.
    private(set) var fallback: ProxyFallback?
    /// Why the machine refused the response (its framing, its size): how the send ends,
    /// whatever libcurl says of the stop.
    private(set) var refusal: TransferFailure?

    init(rules: Rules = Rules()) {
        self.rules = rules
        method = rules.method
    }

    // MARK: Events

    /// A head ended, `elapsed` seconds after the send began; `jitter` in 0..<1 for a retry's delay.
    mutating func headEnded(_ head: Head, elapsed: Double, jitter: Double) -> HeadAction {
        sawHead = true
        if (100..<200).contains(head.status), head.status != 101 { return .ignore }
        lastStatus = head.status
        headsSeen += 1
        if head.status == 401 || head.status == 407 { sawChallenge = true }
        holding = false
        retryDelay = nil
        delivered = 0
        followsRedirect = rules.followLocation && RedirectStep.isRedirect(head.status) && head.hasLocation
        if head.lengthsDisagree {
            refusal = TransferFailure(kind: .response, text: "The response is malformed: its Content-Length fields disagree")
            return .refuse
        }
        if !followsRedirect, RetryPolicy.mayRetry(status: head.status),
           let delay = plannedDelay(.status(head.status, retryAfter: head.retryAfter), elapsed: elapsed, jitter: jitter) {
            retryDelay = delay
            return .drop
        }
        if !followsRedirect, rules.maxResponseSize > 0, let length = head.plainLength, length > rules.maxResponseSize {
            refusal = tooLarge
            return .refuse
        }
        if followsRedirect || head.mayBeIntermediate {
            holding = true
            return .hold
        }
        headReported = true
        return .report
    }

    /// Body bytes arrived from libcurl.
    mutating func bodyArrived() -> BodyAction {
        if followsRedirect || retryDelay != nil { return .drop }
        guard holding else { return .deliver(reportingHeld: false) }
        holding = false
        headReported = true
        return .deliver(reportingHeld: true)
    }

    /// Whether `count` more body bytes may go to the owner; false (and ``refusal``) past the
    /// size limit.
    mutating func mayDeliver(_ count: Int) -> Bool {
        guard rules.maxResponseSize > 0, delivered + Int64(count) > rules.maxResponseSize else { return true }
        refusal = tooLarge
        return false
    }

    /// The owner took `count` body bytes.
    mutating func delivered(_ count: Int) {
        delivered += Int64(count)
    }

    /// An attempt ended. `crossOrigin`: for a redirect the machine follows, whether its target
    /// (as libcurl resolved it) is of another origin than `open`'s; nil when libcurl found no
    /// target.
    mutating func attemptEnded(_ attempt: Attempt, crossOrigin: Bool?, elapsed: Double, jitter: Double) -> EndAction {
        if let refusal { return .end(failure: refusal, reportingHeld: false) }
        if case .failed(let failure) = attempt {
            if failure.kind == .proxy || failure.atProxyHandshake, !sawHead, let next = fallback?.unreachable() {
                return .nextRoute(next)
            }
            if failure.beforeResponse, !holding, let delay = plannedDelay(.noResponse, elapsed: elapsed, jitter: jitter) {
                return .retry(after: delay)
            }
            return .end(failure: failure, reportingHeld: false)
        }
        if let retryDelay { return .retry(after: retryDelay) }
        guard followsRedirect, let crossOrigin else {
            followsRedirect = false
            return finish()
        }
        guard rules.maxRedirects < 0 || redirects < rules.maxRedirects else {
            // curl's CURLE_TOO_MANY_REDIRECTS, in curl's words.
            return .end(failure: TransferFailure(kind: .redirects, text: "Maximum (\(rules.maxRedirects)) redirects followed", code: 47),
                        reportingHeld: false)
        }
        let step = RedirectStep(status: lastStatus, method: method, crossOrigin: crossOrigin)
        redirects += 1
        method = step.method
        followsRedirect = false
        holding = false
        lastStatus = 0
        return .follow(step)
    }

    /// A stage of the transfer (the decoding) refused the response.
    mutating func refuse(_ failure: TransferFailure) {
        refusal = failure
    }

    /// The hop goes by the PAC file's answer `routes` (the first of them first): the send's
    /// first hop, and each redirect's.
    mutating func useRoutes(_ routes: [PACRoute]) {
        fallback = ProxyFallback(routes)
    }

    /// A retry ``attemptEnded(_:crossOrigin:elapsed:jitter:)`` planned begins: the attempt
    /// starts with nothing of its response seen.
    mutating func retryBegins() {
        retries += 1
        fallback?.restart()  // a retry tries the answer's routes from the first again
        routeBegins()
    }

    /// The next route ``attemptEnded(_:crossOrigin:elapsed:jitter:)`` chose begins: the
    /// attempt starts with nothing of its response seen.
    mutating func routeBegins() {
        retryDelay = nil
        holding = false
        sawHead = false
        lastStatus = 0
        headsSeen = 0
        followsRedirect = false
    }

    // MARK: Parts

    private mutating func finish() -> EndAction {
        let held = holding
        if held {
            holding = false
            headReported = true
        }
        return .end(failure: nil, reportingHeld: held)
    }

    /// Seconds before the next attempt after `cause`, or nil when the outcome stands: within
    /// the policy, before the request was given a head, and not beyond the total limit.
    private func plannedDelay(_ cause: RetryPolicy.Cause, elapsed: Double, jitter: Double) -> Double? {
        guard !headReported, let delay = rules.retries.delay(before: retries + 1, after: cause, method: method, jitter: jitter)
        else { return nil }
        if rules.totalLimit > 0, elapsed + delay >= rules.totalLimit { return nil }
        return delay
    }

    private var tooLarge: TransferFailure {
        // curl's CURLE_FILESIZE_EXCEEDED.
        TransferFailure(kind: .response, text: "The response body exceeds the limit of \(rules.maxResponseSize) bytes (setMaxResponseSize)",
                        code: 63)
    }
}
