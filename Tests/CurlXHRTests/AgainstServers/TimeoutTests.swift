@testable import CurlXHR
import Foundation
import Testing

/// `setTimeouts`: each phase's limit against a server that stalls in that phase. A limit
/// ends the request within 250 ms of its setting, in DONE with status 0, failure kind
/// `.timeout` and a text naming the phase; a request whose phases stay within their limits
/// completes.
@Suite(.ownThreads) struct TimeoutTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Sends `url` with `timeouts` (sync or async); returns the request and the seconds it took.
    func timed(_ url: String, async: Bool, method: String = "GET", body: Data? = nil,
               _ configure: @escaping (HttpRequest) -> Void) -> (HttpRequest, Double) {
        let started = Date()
        let request = async ? fetchAsync(method, url, body: body, configure: configure).0
                            : fetchSync(method, url, body: body, configure: configure).0
        return (request, Date().timeIntervalSince(started))
    }

    func expectTimeout(_ request: HttpRequest, after seconds: Double, limit: Double, phase: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request.getState() == .done, sourceLocation: sourceLocation)
        #expect(request.getStatus() == 0, sourceLocation: sourceLocation)
        #expect(request.getFailureKind() == .timeout, "\(request.getStatusText() ?? "")", sourceLocation: sourceLocation)
        let text = request.getStatusText() ?? ""
        #expect(text.hasPrefix("\(phase) timeout"), "status text: \(text)", sourceLocation: sourceLocation)
        #expect(abs(seconds - limit) <= 0.25, "fired after \(seconds) s, limit \(limit) s: \(text)", sourceLocation: sourceLocation)
    }

    /// `setTimeouts(_:)` with an `HttpRequest.Timeouts` value: the switch its parts name.
    @Test func aTimeoutsValueIsTheSwitchItsPartsName() throws {
        let (request, seconds) = timed(try env.faultURL + "/stall?n=100&head_ms=3000", async: true) {
            #expect($0.setTimeouts(HttpRequest.Timeouts(headers: 0.8)))
        }
        expectTimeout(request, after: seconds, limit: 0.8, phase: "header")
        let refusing = HttpRequest()
        #expect(!refusing.setTimeouts(HttpRequest.Timeouts(connect: -1)))
        #expect(!refusing.setTimeouts(HttpRequest.Timeouts(total: .nan)))
        #expect(refusing.lastError?.code == .invalidArgument)
    }

    @Test(arguments: [false, true])
    func aServerSilentBeforeItsHeadMeetsTheHeadersTimeout(async: Bool) throws {
        let url = try env.faultURL + "/stall?n=100&head_ms=3000"
        let (request, seconds) = timed(url, async: async) { $0.setTimeouts(headers: 0.8) }
        expectTimeout(request, after: seconds, limit: 0.8, phase: "header")
        // The same server within the limit.
        let (fine, body) = fetchSync("GET", try env.faultURL + "/stall?n=100&head_ms=200") { $0.setTimeouts(headers: 2) }
        #expect(fine.getStatus() == 200)
        #expect(body.count == 100)
    }

    @Test func theHeadersClockStartsWhenTheBodyIsSent() throws {
        // A 2 MiB upload: libcurl first waits up to a second for a `100 Continue` the server
        // never sends, then sends the body; the headers clock starts after its last byte, so
        // the limit runs out no sooner than 0.7 s after the start, with the whole body sent.
        let body = Data(count: 2 << 20)
        let (slow, seconds) = timed(try env.faultURL + "/stall?n=10&head_ms=4000", async: true, method: "POST", body: body) {
            $0.setTimeouts(headers: 0.7)
        }
        #expect(slow.getFailureKind() == .timeout)
        #expect(slow.getStatusText()?.hasPrefix("header timeout") == true, "\(slow.getStatusText() ?? "")")
        #expect(slow.getBytesSent() == Int64(body.count), "the clock started once the body was out")
        #expect(seconds >= 0.7 && seconds < 2.2, "\(seconds) s")
        let small = timed(try env.faultURL + "/stall?n=10&head_ms=3000", async: false, method: "POST", body: Data("x=1".utf8)) {
            $0.setTimeouts(headers: 0.6)
        }
        expectTimeout(small.0, after: small.1, limit: 0.6, phase: "header")
    }

    @Test(arguments: [false, true])
    func aStallAfterTheHeadMeetsTheIdleTimeoutAndNotTheHeadersOne(async: Bool) throws {
        let url = try env.faultURL + "/stall?n=1000&after_head_ms=3000"
        let (request, seconds) = timed(url, async: async) { $0.setTimeouts(headers: 0.5, idle: 1) }
        expectTimeout(request, after: seconds, limit: 1, phase: "idle")
    }

    @Test(arguments: [false, true])
    func aStallMidBodyMeetsTheIdleTimeoutAndKeepsNoHalfBodyAsWhole(async: Bool) throws {
        let url = try env.faultURL + "/stall?n=20000&mid_ms=3000"
        let started = Date()
        let request = HttpRequest()
        let recorder = Recorder()
        if async { request.delegate = recorder }
        #expect(request.open("GET", url: url, async: async))
        #expect(request.setTimeouts(idle: 0.9))
        #expect(request.send())
        if async { #expect(recorder.waitForDone()) }
        expectTimeout(request, after: Date().timeIntervalSince(started), limit: 0.9, phase: "idle")
        if async { #expect(recorder.result.statusAtHeaders == 200, "the head came in time") }
    }

    @Test func bytesThatKeepComingKeepTheIdleClockFromRunningOut() throws {
        // 10 chunks 300 ms apart: 3 s in all, never 600 ms without a byte.
        let (request, body) = fetchSync("GET", try env.faultURL + "/drip?chunks=10&size=100&interval_ms=300") {
            $0.setTimeouts(idle: 0.6)
        }
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(body.count == 1000)
    }

    @Test func aConnectionThatNeverComesUpMeetsTheConnectTimeout() throws {
        // One after the other: a second request to the same origin would wait for the first
        // one's connection (libcurl's CURLOPT_PIPEWAIT) before it tries its own.
        let port = try blackholePort()
        for async in [false, true] {
            let (request, seconds) = timed("http://127.0.0.1:\(port)/", async: async) { $0.setTimeouts(connect: 0.7, total: 5) }
            expectTimeout(request, after: seconds, limit: 0.7, phase: "connect")
        }
    }

    @Test func theTotalTimeoutCountsEveryPhase() throws {
        let url = try env.faultURL + "/drip?chunks=20&size=10&interval_ms=200"
        let (request, seconds) = timed(url, async: true) { $0.setTimeouts(connect: 5, headers: 5, idle: 5, total: 1.2) }
        expectTimeout(request, after: seconds, limit: 1.2, phase: "total")
        // A send's own timeout replaces the total for that send.
        let started = Date()
        let replaced = HttpRequest()
        #expect(replaced.open("GET", url: url))
        #expect(replaced.setTimeouts(total: 30))
        #expect(replaced.send(timeout: 0.6))
        expectTimeout(replaced, after: Date().timeIntervalSince(started), limit: 0.6, phase: "total")
    }

    @Test func timeoutsAreSwitchesThatSurviveOpenAndRefuseBadValues() throws {
        let request = HttpRequest()
        #expect(request.setTimeouts(headers: 0.5), "UNSENT accepts switches")
        for bad in [-1.0, .nan, .infinity] {
            #expect(!request.setTimeouts(idle: bad))
            #expect(request.lastError?.message.contains("idle timeout") == true)
        }
        #expect(request.open("GET", url: try env.faultURL + "/stall?n=10&head_ms=3000"))
        let started = Date()
        #expect(request.send())
        expectTimeout(request, after: Date().timeIntervalSince(started), limit: 0.5, phase: "header")
        // DONE: a new limit for the next send.
        #expect(request.setTimeouts())
        #expect(request.open("GET", url: try env.faultURL + "/stall?n=10&head_ms=300"))
        #expect(request.send())
        #expect(request.getStatus() == 200)
    }

    @Test func manyWatchedRequestsAtOnceEachMeetTheirOwnLimit() throws {
        // 20 in flight: half stall (and time out), half are answered; none waits for another.
        let started = Date()
        var requests: [(HttpRequest, Recorder)] = []
        for index in 0..<20 {
            let request = HttpRequest()
            let recorder = Recorder()
            request.delegate = recorder
            let stall = index % 2 == 0 ? 4000 : 100
            #expect(request.open("GET", url: try env.faultURL + "/stall?n=50&head_ms=\(stall)", async: true))
            #expect(request.setTimeouts(headers: 1))
            #expect(request.send())
            requests.append((request, recorder))
        }
        for (index, (request, recorder)) in requests.enumerated() {
            #expect(recorder.waitForDone())
            #expect(request.getStatus() == (index % 2 == 0 ? 0 : 200), "request \(index): \(request.getStatusText() ?? "")")
        }
        #expect(Date().timeIntervalSince(started) < 2.5, "the stalled ones ended at their limit, not the server's 4 s")
    }

    /// A port whose connections never come up (the fault server's full accept queue).
    func blackholePort() throws -> Int {
        let answer = fetchSync("GET", try env.faultURL + "/blackhole").1
        let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any]
        return try #require(object?["port"] as? Int)
    }

    @Test func aTransferPausedForASlowCallbackIsNotIdle() throws {
        // The first LOADING callback takes 1.5 s: the library pauses the body (over 1 MiB
        // undrained) for longer than the idle limit, and the request still completes.
        let slowOnce = Locked(true)
        let recorder = Recorder { _, state in
            guard state == .loading else { return }
            let first = slowOnce.withLock { first -> Bool in
                let was = first
                first = false
                return was
            }
            if first { Thread.sleep(forTimeInterval: 1.5) }
        }
        let request = HttpRequest()
        request.delegate = recorder
        // A queue of its own: the slow callback holds up no other test's callbacks.
        request.callbackQueue = DispatchQueue(label: "slow-consumer")
        #expect(request.open("GET", url: try env.faultURL + "/bytes?n=8000000", async: true))
        #expect(request.setTimeouts(idle: 0.5))
        #expect(request.send())
        #expect(recorder.waitForDone())
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(recorder.result.body.count == 8_000_000)
    }
}
