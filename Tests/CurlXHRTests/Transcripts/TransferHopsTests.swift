import Testing
@testable import CurlXHR

/// A send's hops and attempts as ``TransferHops`` decides them, event by event, without I/O:
/// each transcript is the heads, bodies and attempt ends a server and libcurl would produce,
/// and the actions the transfer must carry out.
@Suite(.ownThreads) struct TransferHopsTests {
    typealias Hops = TransferHops
    typealias Head = TransferHops.Head

    static func hops(follow: Bool = true, retries: Int = 0, limit: Int64 = 0, total: Double = 0, method: String = "GET",
                     maxRedirects: Int = RedirectStep.maxRedirects) -> Hops {
        Hops(rules: .init(followLocation: follow, retries: RetryPolicy(count: retries, backoff: 1), maxResponseSize: limit,
                          totalLimit: total, method: method, maxRedirects: maxRedirects))
    }

    /// One event of a transcript and the action it must give.
    enum Step {
        case head(Head, Hops.HeadAction)
        case body(Hops.BodyAction)
        case ended(Hops.Attempt, crossOrigin: Bool?, Hops.EndAction)
    }

    func run(_ hops: inout Hops, _ steps: [Step], elapsed: Double = 0, sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, step) in steps.enumerated() {
            switch step {
            case .head(let head, let expected):
                #expect(hops.headEnded(head, elapsed: elapsed, jitter: 0.5) == expected, "step \(index)", sourceLocation: sourceLocation)
            case .body(let expected):
                #expect(hops.bodyArrived() == expected, "step \(index)", sourceLocation: sourceLocation)
            case .ended(let attempt, let crossOrigin, let expected):
                #expect(hops.attemptEnded(attempt, crossOrigin: crossOrigin, elapsed: elapsed, jitter: 0.5) == expected,
                        "step \(index)", sourceLocation: sourceLocation)
            }
        }
    }

    static let noResponse = TransferFailure(kind: .connection, text: "Connection refused", beforeResponse: true)
    static let reset = TransferFailure(kind: .connection, text: "Connection reset", beforeResponse: false)

    @Test func aPlainResponseIsReportedAndDelivered() {
        var hops = Self.hops()
        run(&hops, [.head(Head(status: 200), .report), .body(.deliver(reportingHeld: false)), .body(.deliver(reportingHeld: false)),
                    .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: false))])
        #expect(hops.lastStatus == 200 && hops.headsSeen == 1 && hops.headReported && hops.redirects == 0)
    }

    @Test func interimResponsesChangeNothing() {
        var hops = Self.hops()
        run(&hops, [.head(Head(status: 100), .ignore), .head(Head(status: 103), .ignore), .head(Head(status: 200), .report)])
        #expect(hops.headsSeen == 1 && hops.lastStatus == 200)
        var switching = Self.hops()
        run(&switching, [.head(Head(status: 101), .report)])  // a protocol switch is final
    }

    @Test func aRedirectIsHeldItsBodyDroppedAndTheNextHopFollowed() {
        var hops = Self.hops(method: "POST")
        run(&hops, [.head(Head(status: 302, hasLocation: true), .hold), .body(.drop),
                    .ended(.completed, crossOrigin: false, .follow(RedirectStep(status: 302, method: "POST", crossOrigin: false)))])
        #expect(hops.method == "GET" && hops.redirects == 1 && hops.lastStatus == 0)
        run(&hops, [.head(Head(status: 307, hasLocation: true), .hold),
                    .ended(.completed, crossOrigin: true, .follow(RedirectStep(status: 307, method: "GET", crossOrigin: true))),
                    .head(Head(status: 200), .report), .body(.deliver(reportingHeld: false)),
                    .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: false))])
        #expect(hops.redirects == 2 && hops.method == "GET")
    }

    @Test func aRedirectWithoutATargetOrNotFollowedIsTheResponse() {
        var noTarget = Self.hops()
        run(&noTarget, [.head(Head(status: 301, hasLocation: true), .hold), .body(.drop),
                        .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: true))])
        #expect(noTarget.headReported)
        var notFollowed = Self.hops(follow: false)
        run(&notFollowed, [.head(Head(status: 301, hasLocation: true), .report), .body(.deliver(reportingHeld: false)),
                           .ended(.completed, crossOrigin: false, .end(failure: nil, reportingHeld: false))])
        var noLocation = Self.hops()
        run(&noLocation, [.head(Head(status: 302), .report)])
        var notARedirect = Self.hops()
        run(&notARedirect, [.head(Head(status: 304, hasLocation: true), .report)])
    }

    @Test func redirectsEndAfterTwenty() {
        var hops = Self.hops()
        for _ in 0..<RedirectStep.maxRedirects {
            run(&hops, [.head(Head(status: 302, hasLocation: true), .hold),
                        .ended(.completed, crossOrigin: false, .follow(RedirectStep(status: 302, method: "GET", crossOrigin: false)))])
        }
        run(&hops, [.head(Head(status: 302, hasLocation: true), .hold)])
        guard case .end(let failure?, false) = hops.attemptEnded(.completed, crossOrigin: false, elapsed: 0, jitter: 0) else {
            Issue.record("the 21st redirect is not followed")
            return
        }
        #expect(failure.kind == .redirects)
    }

    /// `--max-redirs N`: N hops are followed, the next redirect ends the send with curl's 47
    /// and its words; 0 fails at the first; -1 never ends a chain.
    @Test func theRedirectLimitIsTheRequestsOwn() {
        let follow = Step.ended(.completed, crossOrigin: false, .follow(RedirectStep(status: 302, method: "GET", crossOrigin: false)))
        let redirect = Step.head(Head(status: 302, hasLocation: true), .hold)
        func tooMany(_ limit: Int) -> Hops.EndAction {
            .end(failure: TransferFailure(kind: .redirects, text: "Maximum (\(limit)) redirects followed", code: 47), reportingHeld: false)
        }
        var two = Self.hops(maxRedirects: 2)
        run(&two, [redirect, .body(.drop), follow, redirect, follow, redirect, .body(.drop), .ended(.completed, crossOrigin: false, tooMany(2))])
        #expect(two.redirects == 2 && !two.headReported)
        var twoThenAnswer = Self.hops(maxRedirects: 2)
        run(&twoThenAnswer, [redirect, follow, redirect, follow, .head(Head(status: 200), .report), .body(.deliver(reportingHeld: false)),
                             .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: false))])
        var none = Self.hops(maxRedirects: 0)
        run(&none, [redirect, .ended(.completed, crossOrigin: true, tooMany(0))])
        #expect(none.redirects == 0)
        var unlimited = Self.hops(maxRedirects: -1)
        for _ in 0..<500 { run(&unlimited, [redirect, follow]) }
        run(&unlimited, [.head(Head(status: 200), .report), .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: false))])
        #expect(unlimited.redirects == 500)
        // Not following redirects: the limit says nothing, the 302 is the response.
        var kept = Self.hops(follow: false, maxRedirects: 0)
        run(&kept, [.head(Head(status: 302, hasLocation: true), .report), .ended(.completed, crossOrigin: false, .end(failure: nil, reportingHeld: false))])
        // A redirect without a target (libcurl found none) is the response under any limit.
        var noTarget = Self.hops(maxRedirects: 0)
        run(&noTarget, [redirect, .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: true))])
    }

    @Test func anAuthenticationRoundIsHeldUntilItTurnsOutFinal() {
        // libcurl answers the 401 and the next head comes in the same attempt.
        var answered = Self.hops()
        run(&answered, [.head(Head(status: 401, mayBeIntermediate: true), .hold), .body(.deliver(reportingHeld: true))])
        #expect(answered.headReported && answered.sawChallenge)
        var round = Self.hops()
        run(&round, [.head(Head(status: 401, mayBeIntermediate: true), .hold), .head(Head(status: 200), .report),
                     .body(.deliver(reportingHeld: false)), .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: false))])
        // The server refuses the credentials: the last 401 is the response.
        var refused = Self.hops()
        run(&refused, [.head(Head(status: 401, mayBeIntermediate: true), .hold), .head(Head(status: 401, mayBeIntermediate: true), .hold),
                       .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: true))])
        #expect(refused.lastStatus == 401 && refused.headsSeen == 2)
    }

    @Test func aRetriedAnswerIsDroppedThenTriedAgainAfterItsDelay() {
        var hops = Self.hops(retries: 2)
        run(&hops, [.head(Head(status: 503, retryAfter: 3), .drop), .body(.drop),
                    .ended(.completed, crossOrigin: nil, .retry(after: 3))])
        hops.retryBegins()
        #expect(hops.retries == 1 && !hops.sawHead && hops.headsSeen == 0 && hops.lastStatus == 0)
        // Without Retry-After: the backoff doubled (times the jitter, 1.0 here).
        run(&hops, [.head(Head(status: 429), .drop), .ended(.completed, crossOrigin: nil, .retry(after: 2))])
        hops.retryBegins()
        // Retries used up: the answer stands.
        run(&hops, [.head(Head(status: 503), .report), .body(.deliver(reportingHeld: false)),
                    .ended(.completed, crossOrigin: nil, .end(failure: nil, reportingHeld: false))])
    }

    @Test func whatIsNeverRetried() {
        var post = Self.hops(retries: 3, method: "POST")
        run(&post, [.head(Head(status: 503), .report)])
        var tooLong = Self.hops(retries: 3)
        run(&tooLong, [.head(Head(status: 503, retryAfter: 3600), .report)])
        var pastTheTotal = Self.hops(retries: 3, total: 2)
        run(&pastTheTotal, [.head(Head(status: 503, retryAfter: 1), .report)], elapsed: 1.5)
        var off = Self.hops()
        run(&off, [.head(Head(status: 503), .report)])
        var other = Self.hops(retries: 3)
        run(&other, [.head(Head(status: 500), .report)])
    }

    @Test func aFailureBeforeAnyResponseIsRetriedOneAfterItIsNot() {
        var hops = Self.hops(retries: 1)
        run(&hops, [.ended(.failed(Self.noResponse), crossOrigin: nil, .retry(after: 1))])
        hops.retryBegins()
        run(&hops, [.ended(.failed(Self.noResponse), crossOrigin: nil, .end(failure: Self.noResponse, reportingHeld: false))])
        var midBody = Self.hops(retries: 3)
        run(&midBody, [.head(Head(status: 200), .report), .body(.deliver(reportingHeld: false)),
                       .ended(.failed(Self.reset), crossOrigin: nil, .end(failure: Self.reset, reportingHeld: false))])
        // A held head was seen: the failure stands (an authentication round cut off).
        var held = Self.hops(retries: 3)
        run(&held, [.head(Head(status: 401, mayBeIntermediate: true), .hold),
                    .ended(.failed(Self.noResponse), crossOrigin: nil, .end(failure: Self.noResponse, reportingHeld: false))])
    }

    @Test func disagreeingLengthsAreRefusedWhateverFollows() {
        var hops = Self.hops(retries: 3)
        run(&hops, [.head(Head(status: 200, lengthsDisagree: true), .refuse)])
        #expect(hops.refusal?.kind == .response && hops.refusal?.text.contains("Content-Length") == true)
        guard case .end(let failure?, false) = hops.attemptEnded(.failed(Self.reset), crossOrigin: nil, elapsed: 0, jitter: 0) else {
            Issue.record("a refused response must end the send")
            return
        }
        #expect(failure == hops.refusal)
    }

    @Test func theSizeLimitCountsDeliveredBytesAndAnnouncedLengths() {
        var announced = Self.hops(limit: 1000)
        run(&announced, [.head(Head(status: 200, plainLength: 1001), .refuse)])
        #expect(announced.refusal?.code == 63 && announced.refusal?.text.contains("1000 bytes") == true)
        var exact = Self.hops(limit: 1000)
        run(&exact, [.head(Head(status: 200, plainLength: 1000), .report)])
        let first = exact.mayDeliver(600)
        exact.delivered(600)
        let last = exact.mayDeliver(400)
        exact.delivered(400)
        let past = exact.mayDeliver(1)
        #expect(first && last && !past && exact.refusal != nil)
        // A redirect's body is dropped, whatever its length.
        var redirect = Self.hops(limit: 10)
        run(&redirect, [.head(Head(status: 302, hasLocation: true, plainLength: 5000), .hold)])
        // Each hop counts its own body.
        var hops = Self.hops(limit: 100)
        run(&hops, [.head(Head(status: 401, mayBeIntermediate: true), .hold)])
        hops.delivered(90)
        run(&hops, [.head(Head(status: 200), .report)])
        let whole = hops.mayDeliver(100)
        #expect(whole)
    }
}
