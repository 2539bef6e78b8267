@testable import CurlXHR
import Foundation
import Testing

/// `close()` closes the connections its request used, at once (GDHttpRequest: "Calling this
/// function immediately after the transaction completes will ensure that connections are
/// closed"), and only those.
@Suite(.ownThreads) struct CloseTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// What the fault server saw of the client connection from `port`: "open" or "closed".
    func connectionState(_ port: Int) throws -> String {
        let (_, body) = fetchSync("GET", try env.faultURL + "/connection?port=\(port)") { $0.disableCookieHandling() }
        return try #require(try JSONSerialization.jsonObject(with: body) as? [String: String])["state"] ?? ""
    }

    /// Polls until the connection from `port` is in `state`, for up to `seconds`.
    func waitFor(_ port: Int, _ state: String, seconds: Double = 1) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if try connectionState(port) == state { return true }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return false
    }

    func clientPort(_ body: Data) throws -> Int {
        try #require(try Echo(body).json["client_port"] as? Int)
    }

    /// The fault server under a name no other test uses (one test only), so that no other
    /// test's request takes this test's idle connections from the process-wide cache (and
    /// closes them with its own, as it should).
    var ownFaultURL: String {
        get throws { "http://[::ffff:127.0.0.1]:\(try env["TESTENV_FAULT_PORT"])" }
    }

    @Test func closeEndsTheRequestsConnectionAndLeavesAnothersOpen() throws {
        // The first request holds its connection while the second one connects: two connections.
        let first = HttpRequest()
        let recorder = Recorder()
        first.delegate = recorder
        #expect(first.open("GET", url: try ownFaultURL + "/record?delay_ms=400", async: true))
        #expect(first.send())
        Thread.sleep(forTimeInterval: 0.1)
        // Without PIPEWAIT, libcurl would wait to learn whether the first connection multiplexes.
        let (second, secondBody) = fetchSync("GET", try ownFaultURL + "/record?second=1") { $0.enablePipelining = false }
        #expect(recorder.waitForDone())
        let firstPort = try clientPort(recorder.result.body)
        let secondPort = try clientPort(secondBody)
        #expect(firstPort != secondPort)
        #expect(try connectionState(firstPort) == "open", "kept for reuse after DONE")

        #expect(first.close())
        #expect(try waitFor(firstPort, "closed", seconds: 0.5), "the server sees the connection end right after close()")
        #expect(try connectionState(secondPort) == "open", "another request's connection stays open")
        #expect(second.open("GET", url: try ownFaultURL + "/record?again=1"))
        #expect(second.send())
        #expect(second.getStatus() == 200)
        #expect(try connectionState(secondPort) == "open")

        // The closed request sends again on a new connection.
        #expect(first.open("GET", url: try ownFaultURL + "/record?after=1"))
        #expect(first.send())
        let newPort = try clientPort(first.getReceiveBuffer())
        #expect(newPort != firstPort)
        #expect(first.close())
        #expect(try waitFor(newPort, "closed", seconds: 0.5))
    }

    @Test func requestsRightAfterACloseFindNoDeadConnection() throws {
        // The next request to the same origin, sent right after close(), must not be handed
        // the connection close() shut down.
        let url = try env.faultURL + "/status?code=200&after-close"
        for round in 0..<20 {
            let closing = fetchSync("GET", url).0
            #expect(closing.close())
            let (next, _) = fetchSync("GET", url)
            #expect(next.getStatus() == 200, "round \(round): \(next.getStatusText() ?? "")")
            let (asyncNext, seen) = fetchAsync("GET", url)
            #expect(asyncNext.getStatus() == 200, "round \(round): \(asyncNext.getStatusText() ?? "")")
            #expect(seen.states == [.opened, .sent, .headersReceived, .loading, .done])
        }
    }

    @Test func closeEndsEveryConnectionOfARedirectAcrossHosts() throws {
        let port = try env["TESTENV_FAULT_PORT"]
        let marker = UUID().uuidString
        let target = "http://localhost:\(port)/record?hop=2".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let request = HttpRequest()
        // One send, so both hops are this request's connections (between two sends another
        // test could take the first one from the process-wide cache).
        #expect(request.open("GET", url: "http://127.0.0.1:\(port)/redirect/to?record=\(marker)&url=\(target)"))
        #expect(request.send())
        let hopPort = try clientPort(request.getReceiveBuffer())
        let (_, recorded) = fetchSync("GET", try env.faultURL + "/recorded")
        let entries = try #require(try JSONSerialization.jsonObject(with: recorded) as? [[String: Any]])
        let startPort = try #require(entries.first { ($0["path"] as? String)?.contains(marker) == true }?["client_port"] as? Int)
        #expect(hopPort != startPort, "127.0.0.1 and localhost are two connections")
        #expect(request.close())
        // At once when idle; a connection another test's transfer took in the meantime closes
        // when that transfer ends. Left alone, libcurl would keep both open for minutes.
        #expect(try waitFor(startPort, "closed", seconds: 10))
        #expect(try waitFor(hopPort, "closed", seconds: 10))
    }

    @Test func closeInFlightAbortsWithOneDoneAndNothingAfter() throws {
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=50&size=100&interval_ms=100", async: true))
        #expect(request.send())
        Thread.sleep(forTimeInterval: 0.3)
        #expect(request.close())
        #expect(request.getState() == .done)
        #expect(request.getStatus() == 0)
        #expect(recorder.waitForDone())
        Thread.sleep(forTimeInterval: 0.2)
        #expect(recorder.result.states.filter { $0 == .done }.count == 1)
        #expect(recorder.result.callbacksAfterDone == 0)
    }

    @Test func closeEndsTheTunnelThroughTheProxy() throws {
        let proxyPort = try #require(Int(try env["TESTENV_PROXY_PORT"]))
        let originPort = try env["TESTENV_HTTPS_SELFSIGNED_PORT"]
        let logPath = try env["TESTENV_SQUID_ACCESS_LOG"]
        // squid logs a CONNECT when its tunnel ends.
        func tunnelsLogged() -> Int {
            ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").components(separatedBy: "CONNECT localhost:\(originPort)").count - 1
        }
        let before = tunnelsLogged()
        let request = HttpRequest()
        #expect(request.open("GET", url: "https://localhost:\(originPort)/echo"))
        #expect(request.enableHttpProxy(host: "127.0.0.1", port: proxyPort))
        #expect(request.disablePeerVerification())
        #expect(request.send())
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(tunnelsLogged() == before, "the tunnel stays open after DONE")
        #expect(request.close())
        let deadline = Date().addingTimeInterval(1)
        while tunnelsLogged() == before, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(tunnelsLogged() == before + 1, "squid sees the tunnel end right after close()")
    }
}

/// `abort()` and `open()` inside a callback change what the rest of that callback sees.
@Suite(.ownThreads) struct CallbackStateChangeTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    @Test func abortInAHeadersReceivedCallbackIsDoneThere() throws {
        let request = HttpRequest()
        let inside = Locked<[String]>([])
        let recorder = Recorder { request, state in
            guard state == .headersReceived else { return }
            #expect(request.getStatus() == 200)
            #expect(request.abort())
            inside.withLock {
                $0 = ["\(request.getState())", "\(request.getStatus())", "\(request.getReceiveBuffer().count)",
                      "\(request.getFailureKind().map { "\($0)" } ?? "nil")"]
            }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=20&size=1000&interval_ms=100", async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        Thread.sleep(forTimeInterval: 0.3)
        #expect(inside.withLock { $0 } == ["DONE", "0", "0", "aborted"])
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .done], "one DONE follows, nothing after: \(recorder.result.textAtDone ?? "")")
        #expect(recorder.result.callbacksAfterDone == 0)
        #expect(request.getState() == .done)
    }

    @Test func abortInAHeadersReceivedCallbackOfAFinishedTransfer() throws {
        // The whole response is in before the HEADERS_RECEIVED callback runs: the abort still
        // holds for what the callback sees, and its DONE has status 0.
        let queue = DispatchQueue(label: "held")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let request = HttpRequest()
        request.callbackQueue = queue
        let inside = Locked<String?>(nil)
        let recorder = Recorder { request, state in
            if state == .headersReceived {
                #expect(request.abort())
                inside.withLock { $0 = "\(request.getState()) \(request.getStatus())" }
            }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/status?code=200", async: true))
        #expect(request.send())
        Thread.sleep(forTimeInterval: 0.3)
        gate.signal()
        #expect(recorder.waitForDone())
        Thread.sleep(forTimeInterval: 0.2)
        #expect(inside.withLock { $0 } == "DONE 0")
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .done])
        #expect(recorder.result.statusAtDone == 0)
    }

    @Test func openInADoneCallbackIsOpenedThere() throws {
        let request = HttpRequest()
        let inside = Locked<[String]>([])
        let reopened = Locked(false)
        let url = try env.faultURL + "/status?code=204"
        let recorder = Recorder { request, state in
            guard state == .done, !reopened.withLock({ $0 }) else { return }
            reopened.withLock { $0 = true }
            #expect(request.getStatus() == 204)
            #expect(request.open("GET", url: url, async: true))
            inside.withLock { $0 = ["\(request.getState())", "\(request.getStatus())"] }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: url, async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        Thread.sleep(forTimeInterval: 0.3)
        #expect(inside.withLock { $0 } == ["OPENED", "0"])
        #expect(request.getState() == .opened)
        #expect(recorder.result.states.suffix(2) == [.done, .opened], "the new open's OPENED follows")
    }
}
