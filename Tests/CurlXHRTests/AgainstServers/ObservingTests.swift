@testable import CurlXHR
import Foundation
import Testing

/// What `onEvent` and `onTrace` report against real servers: each event sequence in order,
/// once, `.done` last; the phase times and addresses of `Metrics`; no secret in the trace.
@Suite(.ownThreads) struct ObservingTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Events and trace entries as delivered; `waitForDone` returns once `.done` came, and
    /// then waits a moment more for anything (wrongly) after it.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var _events: [HttpRequest.Event] = []
        private var _trace: [HttpRequest.TraceEntry] = []
        private let done = DispatchSemaphore(value: 0)

        var events: [HttpRequest.Event] { lock.withLock { _events } }
        var trace: [HttpRequest.TraceEntry] { lock.withLock { _trace } }

        func attach(_ request: HttpRequest, trace: Bool = false) {
            request.onEvent = { _, event in
                self.lock.withLock { self._events.append(event) }
                if case .done = event { self.done.signal() }
            }
            if trace { request.onTrace = { _, entry in self.lock.withLock { self._trace.append(entry) } } }
        }

        func waitForDone(sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(done.wait(timeout: .now() + 20) == .success, "no .done event", sourceLocation: sourceLocation)
            Thread.sleep(forTimeInterval: 0.2)
        }

        /// As ``waitForDone(sourceLocation:)``, without blocking a thread of the pool.
        func waitForDoneAsync(sourceLocation: SourceLocation = #_sourceLocation) async {
            for _ in 0..<2000 where !events.contains(where: { if case .done = $0 { true } else { false } }) {
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            #expect(names.last == "done", "no .done event", sourceLocation: sourceLocation)
            try? await Task.sleep(nanoseconds: 200_000_000)
        }

        /// The events without their details: what a test compares as a sequence.
        var names: [String] {
            events.map { event in
                switch event {
                case .queued: "queued"
                case .started: "started"
                case .connected(_, _, let reused): reused ? "connected(reused)" : "connected"
                case .tlsEstablished: "tls"
                case .requestSent: "sent"
                case .interimResponse(let status): "interim(\(status))"
                case .authenticationRound(let status, let scheme): "auth(\(status) \(scheme))"
                case .redirect(let status, _): "redirect(\(status))"
                case .retry(let attempt, _, _): "retry(\(attempt))"
                case .cache(let outcome): "cache(\(outcome.rawValue))"
                case .done: "done"
                }
            }
        }

        var metrics: HttpRequest.Metrics? {
            if case .done(let metrics)? = events.last { metrics } else { nil }
        }

        /// All trace bytes of `kinds` as one text.
        func traced(_ kinds: Set<HttpRequest.TraceEntry.Kind>) -> String {
            trace.filter { kinds.contains($0.kind) }.map { String(decoding: $0.bytes, as: UTF8.self) }.joined()
        }
    }

    @Test(arguments: [false, true])
    func digestRoundsInOrder(async: Bool) throws {
        let log = Log()
        let url = try env["TESTENV_DIGEST_URL"]
        let password = try env["TESTENV_PASSWORD"]
        let request = HttpRequest()
        #expect(request.open("GET", url: url, async: async, user: try env["TESTENV_USER"], password: password, auth: "digest"))
        log.attach(request, trace: true)
        request.close()  // a connection of its own
        let recorder = Recorder()
        if async { request.delegate = recorder }
        #expect(request.send())
        if async { #expect(recorder.waitForDone()) }
        log.waitForDone()
        #expect(request.getStatus() == 200)
        // The answer goes on the same connection or, with close()'s fresh connections, a new one.
        #expect(log.names.map { $0 == "connected(reused)" ? "connected" : $0 }
                == ["started", "connected", "sent", "auth(401 Digest)", "connected", "sent", "done"], "\(log.names)")
        let port = Int(try #require(URL(string: url)?.port))
        #expect(log.events[1] == .connected(address: "127.0.0.1", port: port, reused: false))
        let metrics = try #require(log.metrics)
        #expect(metrics == request.getMetrics(), "the event's metrics are getMetrics()'s")
        #expect(metrics.remoteAddress == "127.0.0.1" && metrics.remotePort == port)
        #expect(metrics.localAddress == "127.0.0.1" && (metrics.localPort ?? 0) > 0)
        #expect(metrics.reusedConnection == false, "the last hop's connection was made by this send")
        // In curl's order; an authentication round's second request may look the name up
        // again after the first connection's connect time (libcurl's own figures).
        let times = [metrics.connectTime, metrics.preTransferTime, metrics.startTransferTime, metrics.totalTime].map { $0 ?? -1 }
        #expect(times.allSatisfy { $0 >= 0 } && times == times.sorted(), "phase times in order: \(times)")
        #expect((metrics.nameLookupTime ?? -1) >= 0 && metrics.nameLookupTime! <= metrics.preTransferTime!)
        #expect(metrics.tlsTime == 0 && metrics.redirectTime == 0 && metrics.queueTime == 0 && metrics.retryCount == 0)
        #expect((metrics.headerBytes ?? 0) > 100 && (metrics.bytesReceived ?? 0) > 0 && metrics.bytesSent == 0)
        // The trace: both requests' Authorization redacted, the password nowhere.
        let out = log.traced([.headerOut])
        #expect(out.contains("GET /digest/echo HTTP/1.1"))
        #expect(out.components(separatedBy: "Authorization: [redacted]\r\n").count == 2, "\(out)")
        #expect(!out.contains("Digest username"))
        for entry in log.trace {
            #expect(entry.bytes.firstRange(of: Array(password.utf8)) == nil, "\(entry.kind): the password")
        }
        #expect(log.traced([.headerIn]).contains("WWW-Authenticate: Digest"), "a challenge is no secret")
        #expect(log.traced([.info]).contains("Connected to"))
    }

    @Test func tlsIsReportedForANewConnectionOnly() throws {
        let log = Log()
        let request = HttpRequest()
        #expect(request.setCACertificateFile(try env.caFile))
        for round in 0..<2 {
            #expect(request.open("GET", url: try env.httpsURL + "/"))
            log.attach(request)
            // A connection of its own first (one another suite left may be dead: libcurl then
            // reports it, and the new one it opens instead).
            if round == 0 { request.close() }
            #expect(request.send())
            log.waitForDone()
            if round == 0 {
                #expect(log.names == ["started", "connected", "tls", "sent", "done"])
                #expect(log.events.contains(.tlsEstablished(version: "TLSv1.3")))
                #expect((log.metrics?.tlsTime ?? 0) > 0)
            }
        }
        // The last send's events: each connection libcurl took from its pool (one found dead on
        // a loaded machine is followed by the next), no TLS handshake, then sent and done.
        let last = log.names.suffix(from: log.names.lastIndex(of: "started") ?? 0).dropFirst()
        #expect(last.suffix(2) == ["sent", "done"] && !last.dropLast(2).isEmpty
                && last.dropLast(2).allSatisfy { $0 == "connected(reused)" }, "\(log.names)")
        #expect(log.metrics?.reusedConnection == true)
    }

    @Test func redirectsAndInterimResponses() throws {
        let log = Log()
        let (request, _) = fetchSync("GET", try env.faultURL + "/redirect/chain?n=2") {
            log.attach($0)
            $0.close()
        }
        log.waitForDone()
        #expect(request.getStatus() == 200)
        // close(): every hop of the next send opens a connection of its own.
        #expect(log.names == ["started", "connected", "sent", "redirect(302)", "connected", "sent",
                              "redirect(302)", "connected", "sent", "done"])
        #expect(log.events.contains(.redirect(status: 302, location: try env.faultURL + "/redirect/chain?n=0")))
        let metrics = try #require(log.metrics)
        #expect(metrics.redirectCount == 2 && (metrics.redirectTime ?? 0) > 0 && metrics.redirectTime! < metrics.totalTime!)

        let upload = Log()
        let (posted, _) = fetchSync("POST", try env.faultURL + "/continue", body: Data(count: 2 << 20)) {
            upload.attach($0)
            $0.close()
            _ = $0.setRequestHeader("Expect", value: "100-continue")
        }
        upload.waitForDone()
        #expect(posted.getStatus() == 200)
        #expect(upload.names == ["started", "connected", "interim(100)", "sent", "done"], "\(upload.names)")
        #expect(upload.metrics?.bytesSent == 2 << 20)
    }

    @Test func retriesCountFromOne() throws {
        let log = Log()
        let key = UUID().uuidString
        let (request, _) = fetchSync("GET", try env.faultURL + "/retry?key=\(key)&fail=2&code=503") {
            $0.setRetries(3, backoff: 0.05)
            log.attach($0)
        }
        log.waitForDone()
        #expect(request.getStatus() == 200)
        let retries = log.events.compactMap { event -> (Int, Double, String)? in
            if case .retry(let attempt, let delay, let reason) = event { (attempt, delay, reason) } else { nil }
        }
        #expect(retries.map(\.0) == [1, 2])
        #expect(retries.allSatisfy { $0.1 > 0 && $0.2.contains("503") })
        #expect(log.metrics?.retryCount == 2)
        #expect(log.names.first == "started" && log.names.last == "done")
    }

    @Test func aQueuedSendReportsItsWait() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let first = HttpRequest(), second = HttpRequest()
        let log = Log()
        #expect(first.open("GET", url: try env.faultURL + "/delay?ms=300", async: true))
        #expect(second.open("GET", url: try env.faultURL + "/delay?ms=1", async: true))
        first.queue = queue
        second.queue = queue
        log.attach(second)
        #expect(first.send())
        #expect(second.send())
        log.waitForDone()
        #expect(Array(log.names.prefix(2)) == ["queued", "started"], "\(log.names)")
        #expect((log.metrics?.queueTime ?? 0) > 0.1)
    }

    @Test func anAbortEndsTheEventsWithDone() throws {
        let log = Log()
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=3000", async: true))
        log.attach(request, trace: true)
        #expect(request.send())
        Thread.sleep(forTimeInterval: 0.3)
        request.abort()
        log.waitForDone()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(log.names.last == "done")
        #expect(log.names.filter { $0 == "done" }.count == 1)
    }

    @Test func cookiesAndBearerTokensAreRedacted() throws {
        let log = Log()
        let secret = "s3cret-\(UUID().uuidString)"
        let url = try env.faultURL + "/respond?header=" + "Set-Cookie:session=\(secret); Path=/".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let (request, _) = fetchSync("GET", url) {
            log.attach($0, trace: true)
            _ = $0.setRequestHeader("Authorization", value: "Bearer \(secret)")
            _ = $0.setRequestHeader("Cookie", value: "other=\(secret)")
        }
        log.waitForDone()
        #expect(request.getStatus() == 200)
        for entry in log.trace {
            #expect(entry.bytes.firstRange(of: Array(secret.utf8)) == nil, "\(entry.kind): \(String(decoding: entry.bytes, as: UTF8.self))")
        }
        #expect(log.traced([.headerIn]).contains("Set-Cookie: [redacted]"))
        #expect(log.traced([.headerOut]).contains("Cookie: [redacted]"))
        #expect(log.traced([.info]).contains("Added cookie session=\"[redacted]\""), "\(log.traced([.info]))")
    }

    @Test func theCachesPartIsReported() throws {
        CacheFixture.on()
        let key = "observe-\(UUID().uuidString)"
        let fresh = try CacheFixture.url(key, "\(CacheFixture.h("Cache-Control", "max-age=600"))&size=100")
        func events(_ url: String) -> [String] {
            let log = Log()
            _ = fetchSync("GET", url) { log.attach($0) }
            log.waitForDone()
            return log.names.filter { !$0.hasPrefix("connected") && $0 != "sent" }
        }
        #expect(events(fresh) == ["started", "cache(miss)", "cache(stored)", "done"])
        #expect(events(fresh) == ["started", "cache(hit)", "done"], "no network")
        let stale = try CacheFixture.url(key + "-v", "\(CacheFixture.h("Cache-Control", "max-age=0"))&etag=%22v1%22&size=100")
        #expect(events(stale) == ["started", "cache(miss)", "cache(stored)", "done"])
        #expect(events(stale) == ["started", "cache(validated)", "done"])

    }

    @Test func awaitedResponsesReportTheirEvents() async throws {
        CacheFixture.on()
        let hit = Log()
        let fresh = try CacheFixture.url("observe-await-\(UUID().uuidString)", "\(CacheFixture.h("Cache-Control", "max-age=600"))&size=100")
        for round in 0..<2 {
            let request = HttpRequest()
            #expect(request.open("GET", url: fresh))
            if round == 1 { hit.attach(request) }
            let response = try await request.response()
            _ = try await response.body.collect(upTo: 1 << 20)
        }
        await hit.waitForDoneAsync()
        #expect(hit.names == ["started", "cache(hit)", "done"])

        let log = Log()
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/redirect/chain?n=1"))
        log.attach(request)
        request.close()  // connections of its own (one kept from another test may be dead)
        let response = try await request.response()
        _ = try await response.body.collect(upTo: 1 << 20)
        await log.waitForDoneAsync()
        #expect(log.names.map { $0 == "connected(reused)" ? "connected" : $0 }
                == ["started", "connected", "sent", "redirect(302)", "connected", "sent", "done"], "\(log.names)")
        #expect(log.metrics?.redirectCount == 1)

        // A cancelled task: .done once, nothing after.
        let cancelled = Log()
        let slow = HttpRequest()
        #expect(slow.open("GET", url: try env.faultURL + "/delay?ms=3000"))
        cancelled.attach(slow)
        let task = Task { _ = try await slow.response() }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        await cancelled.waitForDoneAsync()
        #expect(cancelled.names.first == "started" && cancelled.names.last == "done", "\(cancelled.names)")
        #expect(cancelled.names.filter { $0 == "done" }.count == 1)
    }

    /// A proxy's credentials and a URL's password: nowhere in the trace; the proxy's
    /// challenge is an authentication round.
    @Test func proxyAndURLPasswordsAreRedacted() throws {
        let proxyPassword = try env["TESTENV_PROXY_PASSWORD"]
        let log = Log()
        let (request, _) = fetchSync("GET", try env.faultURL + "/respond?body=hi") {
            log.attach($0, trace: true)
            #expect($0.setProxy("127.0.0.1:" + (try! env["TESTENV_PROXY_BASIC_PORT"]), user: try! env["TESTENV_PROXY_USER"],
                                password: proxyPassword, auth: "basic"))
        }
        log.waitForDone()
        #expect(request.getStatus() == 200)
        #expect(log.traced([.headerOut]).contains("Proxy-Authorization: [redacted]\r\n"))
        for entry in log.trace {
            #expect(entry.bytes.firstRange(of: Array(proxyPassword.utf8)) == nil, "\(entry.kind): the proxy's password")
        }

        let userLog = Log()
        let secret = "url-pw-\(UUID().uuidString.prefix(8))"
        let url = try env.faultURL.replacingOccurrences(of: "http://", with: "http://someone:\(secret)@") + "/respond?body=hi"
        _ = fetchSync("GET", url) { userLog.attach($0, trace: true) }
        userLog.waitForDone()
        #expect(!userLog.trace.isEmpty)
        for entry in userLog.trace {
            #expect(entry.bytes.firstRange(of: Array(secret.utf8)) == nil, "\(entry.kind): the URL's password")
        }
        #expect(userLog.traced([.headerOut]).contains("Authorization: [redacted]"))
    }
}
