import Testing
@testable import CurlXHR

/// PAC's decisions without I/O: FindProxyForURL's answers read into routes, a PAC file's
/// freshness event by event, and the fallback from route to route in a send's hops.
@Suite(.ownThreads) struct PACAnswerTests {
    func routes(_ answer: String) -> [String]? {
        try? PACAnswer.parse(answer).get().map { route in
            route.proxy.map { "\($0.scheme.rawValue) \($0.host) \($0.port)" } ?? "direct"
        }
    }

    func refusal(_ answer: String) -> String {
        if case .failure(let problem) = PACAnswer.parse(answer) { return problem.message }
        return ""
    }

    @Test func answersAreReadInOrder() {
        #expect(routes("DIRECT") == ["direct"])
        #expect(routes("PROXY 127.0.0.1:3128; DIRECT") == ["http 127.0.0.1 3128", "direct"])
        #expect(routes("  proxy  a.example:8080 ;;  socks5 b:1080;https c:443 ; SOCKS d:1; SOCKS4 e:2; HTTP f:3;") ==
                ["http a.example 8080", "socks5 b 1080", "https c 443", "socks4 d 1", "socks4 e 2", "http f 3"])
        #expect(routes("PROXY [::1]:3128") == ["http ::1 3128"])
        #expect(routes("PROXY host\tDIRECT") == nil, "an entry is one keyword and one host")
        // Without a port: HTTP 80, HTTPS 443, SOCKS 1080.
        #expect(routes("PROXY a; HTTPS b; SOCKS c; SOCKS5 d") == ["http a 80", "https b 443", "socks4 c 1080", "socks5 d 1080"])
    }

    @Test func garbageIsRefusedWithAReason() {
        #expect(refusal("").contains("no proxy and no DIRECT"))
        #expect(refusal(" ; ;").contains("no proxy and no DIRECT"))
        #expect(refusal("undefined").contains("'undefined' is not DIRECT, PROXY"))
        #expect(refusal("FTP a:1").contains("is not DIRECT"))
        #expect(refusal("DIRECT a:1").contains("DIRECT takes no host"))
        #expect(refusal("PROXY").contains("takes one host:port"))
        #expect(refusal("PROXY a:1 b:2").contains("takes one host:port"))
        #expect(refusal("PROXY a:0").contains("is not host:port"))
        #expect(refusal("PROXY a:65536").contains("is not host:port"))
        #expect(refusal("PROXY a:x").contains("is not host:port"))
        #expect(refusal("PROXY ::1:80").contains("is not host:port"), "IPv6 needs brackets")
        #expect(refusal("PROXY a/b:1").contains("not a proxy host"))
        #expect(refusal("PROXY a:1\r\nDIRECT").contains("CR, LF or NUL"))
        #expect(refusal("PROXY a:1\0").contains("CR, LF or NUL"))
        #expect(refusal("PROXY a:1\nX").contains("\\n"), "quoted escaped")
    }

    @Test func hugeAnswersAreBounded() {
        let many = Array(repeating: "PROXY 127.0.0.1:1", count: 3000).joined(separator: "; ")
        #expect(routes(many)?.count == PACAnswer.maxRoutes, "only the first routes are kept")
        let huge = Array(repeating: "PROXY 127.0.0.1:1", count: 100_000).joined(separator: "; ")
        let text = refusal(huge)
        #expect(text.contains("longer than \(PACAnswer.maxLength) bytes") && text.count < 300, "\(text.prefix(300))")
    }
}

@Suite(.ownThreads) struct PACSourceTests {
    static let stamp = PACSource.FileStamp(modified: 100, modifiedNanoseconds: 0, size: 10, inode: 7)

    @Test func aFileIsReadAgainWhenItChanges() {
        var source = PACSource(.file(path: "/p.pac"))
        #expect(source.need(now: 0, stamp: Self.stamp) == .read)
        let first = source.read("one", stamp: Self.stamp, serial: 1)
        #expect(source.need(now: 1, stamp: Self.stamp) == .use(first))
        #expect(source.need(now: 10_000, stamp: Self.stamp) == .use(first), "a file has no age")
        var touched = Self.stamp
        touched.modifiedNanoseconds = 5
        #expect(source.need(now: 2, stamp: touched) == .read)
        var replaced = Self.stamp
        replaced.inode = 8
        #expect(source.need(now: 2, stamp: replaced) == .read, "renamed over: another file")
        let second = source.read("two", stamp: touched, serial: 2)
        #expect(source.need(now: 3, stamp: touched) == .use(second) && second.text == "two")
    }

    @Test func aURLIsFetchedOnceThenRevalidatedWhenStale() throws {
        var source = PACSource(.url("http://h/p.pac"))
        #expect(source.need(now: 0, stamp: nil) == .fetch(ifNoneMatch: nil, ifModifiedSince: nil))
        let first = try source.fetched(.init(status: 200, text: "one", etag: "\"e1\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT"),
                                       now: 0, serial: 1).get()
        #expect(source.need(now: 299, stamp: nil) == .use(first), "five minutes without max-age")
        #expect(source.need(now: 300, stamp: nil) == .fetch(ifNoneMatch: "\"e1\"", ifModifiedSince: "Mon, 01 Jan 2024 00:00:00 GMT"))
        // A 304 keeps the script, fresh for its max-age.
        let kept = try source.fetched(.init(status: 304, maxAge: 60), now: 300, serial: 2).get()
        #expect(kept === first && source.need(now: 359, stamp: nil) == .use(first))
        #expect(source.need(now: 360, stamp: nil) == .fetch(ifNoneMatch: "\"e1\"", ifModifiedSince: "Mon, 01 Jan 2024 00:00:00 GMT"))
        // A 200 replaces it, with its validators.
        let second = try source.fetched(.init(status: 200, text: "two", maxAge: 10, etag: "\"e2\""), now: 360, serial: 3).get()
        #expect(second.text == "two" && source.need(now: 369, stamp: nil) == .use(second))
        #expect(source.need(now: 370, stamp: nil) == .fetch(ifNoneMatch: "\"e2\"", ifModifiedSince: nil))
        // max-age 0 (no-cache): revalidated for every send.
        _ = try source.fetched(.init(status: 304, maxAge: 0), now: 400, serial: 4).get()
        #expect(source.need(now: 400, stamp: nil) == .fetch(ifNoneMatch: "\"e2\"", ifModifiedSince: nil))
    }

    @Test func aFailedFetchChangesNothing() throws {
        var source = PACSource(.url("http://h/p.pac"))
        #expect(throws: ReadableFile.Problem.self) { try source.fetched(.init(status: 304), now: 0, serial: 1).get() }
        #expect(throws: ReadableFile.Problem.self) { try source.fetched(.init(status: 404, text: "gone"), now: 0, serial: 1).get() }
        #expect(source.script == nil && source.need(now: 0, stamp: nil) == .fetch(ifNoneMatch: nil, ifModifiedSince: nil))
        let first = try source.fetched(.init(status: 200, text: "one", maxAge: 10, etag: "\"e\""), now: 0, serial: 2).get()
        #expect(throws: ReadableFile.Problem.self) { try source.fetched(.init(status: 500), now: 20, serial: 3).get() }
        #expect(source.script === first && source.need(now: 20, stamp: nil) == .fetch(ifNoneMatch: "\"e\"", ifModifiedSince: nil))
    }

    @Test func locationsAreCheckedAtTheCall() throws {
        func problem(_ text: String) -> String {
            if case .failure(let problem) = PACLocation.parse(text) { return problem.message }
            return ""
        }
        #expect(problem("").contains("empty"))
        #expect(problem("http://h/p.pac\r\nX: y").contains("CR, LF or NUL"))
        #expect(problem("/tmp/p\0.pac").contains("CR, LF or NUL"))
        #expect(problem("ftp://h/p.pac").contains("use a path"))
        #expect(problem("/no/such/file.pac").contains("cannot open"))
        #expect(problem("/tmp").contains("not a regular file"))
        #expect(problem("file://host/p.pac").contains("on this machine"))
        #expect(try PACLocation.parse("http://h/p.pac").get() == .url("http://h/p.pac"))
        #expect(try PACLocation.parse("HTTPS://h/p.pac").get() == .url("HTTPS://h/p.pac"))
        #expect(try PACLocation.parse("file:///etc/hostname").get() == .file(path: "/etc/hostname"))
        #expect(try PACLocation.parse("file:///etc/host%6Eame").get() == .file(path: "/etc/hostname"))
        #expect(try PACLocation.parse("/etc/hostname").get() == .file(path: "/etc/hostname"))
    }
}

/// The fallback as the hops decide it: the next route after a proxy that cannot be reached,
/// the last failure when none is left; a redirect's hop takes the routes of its own URL.
@Suite(.ownThreads) struct ProxyFallbackTests {
    static let a = ProxySetting(host: "a", port: 1), b = ProxySetting(scheme: .socks5, host: "b", port: 2)
    static let unreachable = TransferFailure(kind: .proxy, text: "Proxy a:1 failed: Connection refused", beforeResponse: true)

    @Test func theNextRouteFollowsAnUnreachableProxy() {
        var hops = TransferHops()
        hops.useRoutes([.proxy(Self.a), .proxy(Self.b), .direct])
        #expect(hops.fallback?.current == .proxy(Self.a))
        #expect(hops.attemptEnded(.failed(Self.unreachable), crossOrigin: nil, elapsed: 0, jitter: 0) == .nextRoute(.proxy(Self.b)))
        hops.routeBegins()
        #expect(hops.attemptEnded(.failed(Self.unreachable), crossOrigin: nil, elapsed: 0, jitter: 0) == .nextRoute(.direct))
        hops.routeBegins()
        // DIRECT failing is the origin's failure: it stands.
        let refused = TransferFailure(kind: .connection, text: "Connection refused", beforeResponse: true)
        #expect(hops.attemptEnded(.failed(refused), crossOrigin: nil, elapsed: 0, jitter: 0) == .end(failure: refused, reportingHeld: false))
    }

    @Test func aRetryStartsFromTheFirstRouteAgain() {
        var hops = TransferHops(rules: .init(retries: RetryPolicy(count: 1, backoff: 1)))
        hops.useRoutes([.proxy(Self.a), .proxy(Self.b)])
        #expect(hops.attemptEnded(.failed(Self.unreachable), crossOrigin: nil, elapsed: 0, jitter: 0) == .nextRoute(.proxy(Self.b)))
        hops.routeBegins()
        guard case .retry = hops.attemptEnded(.failed(Self.unreachable), crossOrigin: nil, elapsed: 0, jitter: 0) else {
            Issue.record("the policy retries once the routes are used up")
            return
        }
        hops.retryBegins()
        #expect(hops.fallback?.current == .proxy(Self.a) && hops.retries == 1)
    }

    @Test func theLastFailureStandsWhenNoRouteIsLeft() {
        var hops = TransferHops()
        hops.useRoutes([.proxy(Self.a), .proxy(Self.b)])
        #expect(hops.attemptEnded(.failed(Self.unreachable), crossOrigin: nil, elapsed: 0, jitter: 0) == .nextRoute(.proxy(Self.b)))
        hops.routeBegins()
        let last = TransferFailure(kind: .proxy, text: "Proxy socks5://b:2 failed: Connection refused", beforeResponse: true)
        #expect(hops.attemptEnded(.failed(last), crossOrigin: nil, elapsed: 0, jitter: 0) == .end(failure: last, reportingHeld: false))
    }

    @Test func onlyAProxyFailureBeforeAResponseFallsBack() {
        var hops = TransferHops()
        hops.useRoutes([.proxy(Self.a), .direct])
        #expect(hops.headEnded(.init(status: 200), elapsed: 0, jitter: 0) == .report)
        let cut = TransferFailure(kind: .proxy, text: "Proxy a:1 failed: reset", beforeResponse: false)
        #expect(hops.attemptEnded(.failed(cut), crossOrigin: nil, elapsed: 0, jitter: 0) == .end(failure: cut, reportingHeld: false))
        var other = TransferHops()
        other.useRoutes([.proxy(Self.a), .direct])
        let tls = TransferFailure(kind: .tls, text: "SSL error")
        #expect(other.attemptEnded(.failed(tls), crossOrigin: nil, elapsed: 0, jitter: 0) == .end(failure: tls, reportingHeld: false))
    }

    @Test func anHTTPSProxysFailedHandshakeFallsBack() {
        var hops = TransferHops()
        hops.useRoutes([.proxy(ProxySetting(scheme: .https, host: "a", port: 1)), .direct])
        let handshake = TransferFailure(kind: .tls, text: "SSL certificate problem", atProxyHandshake: true)
        #expect(hops.attemptEnded(.failed(handshake), crossOrigin: nil, elapsed: 0, jitter: 0) == .nextRoute(.direct))
    }

    @Test func aRedirectHopTakesItsOwnRoutes() {
        var hops = TransferHops()
        hops.useRoutes([.proxy(Self.a), .direct])
        #expect(hops.headEnded(.init(status: 302, hasLocation: true), elapsed: 0, jitter: 0) == .hold)
        #expect(hops.attemptEnded(.completed, crossOrigin: true, elapsed: 0, jitter: 0) == .follow(RedirectStep(status: 302, method: "GET", crossOrigin: true)))
        hops.useRoutes([.proxy(Self.b)])
        #expect(hops.fallback?.current == .proxy(Self.b))
        let failed = TransferFailure(kind: .proxy, text: "Proxy socks5://b:2 failed", beforeResponse: true)
        #expect(hops.attemptEnded(.failed(failed), crossOrigin: nil, elapsed: 0, jitter: 0) == .end(failure: failed, reportingHeld: false))
    }

    @Test func aSendWithoutPACHasNoFallback() {
        var hops = TransferHops()
        #expect(hops.fallback == nil)
        #expect(hops.attemptEnded(.failed(Self.unreachable), crossOrigin: nil, elapsed: 0, jitter: 0) == .end(failure: Self.unreachable, reportingHeld: false))
    }
}
