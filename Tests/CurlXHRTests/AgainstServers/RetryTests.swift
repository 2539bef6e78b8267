@testable import CurlXHR
import Foundation
import Testing

/// `setRetries` against the fault server's `/retry` (which counts the requests of each key):
/// the expected number of requests, invisible to the ready states, a POST tried once.
@Suite(.ownThreads) struct RetryTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func count(_ key: String) throws -> Int {
        let body = fetchSync("GET", try env.faultURL + "/retry-count?key=\(key)").1
        return try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["count"] as? Int)
    }

    @Test(arguments: [503, 429])
    func refusalsThenSuccessAreOneResponse(code: Int) throws {
        let key = UUID().uuidString
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/retry?key=\(key)&fail=2&code=\(code)") {
            $0.setRetries(3, backoff: 0.05)
        }
        #expect(request.getStatus() == 200)
        #expect(String(decoding: seen.body, as: UTF8.self) == "ok", "the refusals' bodies are dropped")
        #expect(seen.states == [.opened, .sent, .headersReceived, .loading, .done], "the retries are invisible")
        #expect(seen.statusAtHeaders == 200)
        #expect(try count(key) == 3)
    }

    @Test func retryAfterIsHonoured() throws {
        let key = UUID().uuidString
        let started = Date()
        let (request, body) = fetchSync("GET", try env.faultURL + "/retry?key=\(key)&fail=1&code=429&after=1") {
            $0.setRetries(1, backoff: 0.01)
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(request.getStatus() == 200)
        #expect(body == Data("ok".utf8))
        #expect(seconds >= 0.95 && seconds < 2, "\(seconds) s: the server's second, not the 10 ms backoff")
        #expect(try count(key) == 2)
    }

    @Test func aPostIsTriedOnce() throws {
        let key = UUID().uuidString
        let (request, seen) = fetchAsync("POST", try env.faultURL + "/retry?key=\(key)&fail=1&code=503", body: Data("x=1".utf8)) {
            $0.setRetries(3, backoff: 0.01)
        }
        #expect(request.getStatus() == 503)
        #expect(String(decoding: seen.body, as: UTF8.self) == "retry later")
        #expect(try count(key) == 1)
        // A reset on a new connection: a POST fails rather than risk sending it twice. (On a
        // reused keep-alive connection libcurl itself sends any request once more on a new
        // one, as a stale connection looks the same.)
        let resetKey = UUID().uuidString
        let reset = fetchSync("POST", try env.faultURL + "/retry?key=\(resetKey)&fail=1&mode=reset", body: Data("x=1".utf8)) {
            $0.setRetries(3, backoff: 0.01)
            $0.close()
        }.0
        #expect(reset.getStatus() == 0)
        #expect(try count(resetKey) == 1)
    }

    @Test func aBrokenConnectionIsRetriedForAPut() throws {
        let key = UUID().uuidString
        let (request, body) = fetchSync("PUT", try env.faultURL + "/retry?key=\(key)&fail=2&mode=reset", body: Data(count: 200_000)) {
            $0.setRetries(2, backoff: 0.01)
        }
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(body == Data("ok".utf8))
        #expect(try count(key) == 3)
        #expect(request.getBytesSent() == 200_000)
    }

    @Test func whenTheRetriesRunOutTheLastAnswerIsTheResponse() throws {
        let key = UUID().uuidString
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/retry?key=\(key)&fail=5&code=503") {
            $0.setRetries(2, backoff: 0.01)
        }
        #expect(request.getStatus() == 503)
        #expect(String(decoding: seen.body, as: UTF8.self) == "retry later")
        #expect(seen.states == [.opened, .sent, .headersReceived, .loading, .done])
        #expect(try count(key) == 3)
    }

    @Test func aRetryAfterBeyondAMinuteIsNotWaitedFor() throws {
        let key = UUID().uuidString
        let started = Date()
        let request = fetchSync("GET", try env.faultURL + "/retry?key=\(key)&fail=1&code=503&after=120") {
            $0.setRetries(2, backoff: 0.01)
        }.0
        #expect(request.getStatus() == 503)
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(try count(key) == 1)
    }

    @Test func noRetryGoesBeyondTheTotalLimit() throws {
        let key = UUID().uuidString
        let started = Date()
        let request = fetchSync("GET", try env.faultURL + "/retry?key=\(key)&fail=1&code=503&after=3") {
            $0.setRetries(2, backoff: 0.01)
            $0.setTimeouts(total: 1)
        }.0
        #expect(request.getStatus() == 503, "the wait would pass the total limit: the 503 stands")
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(try count(key) == 1)
    }

    @Test func anAbortDuringTheWaitEndsAtOnceAndSendsNothingMore() throws {
        let key = UUID().uuidString
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/retry?key=\(key)&fail=1&code=503", async: true))
        #expect(request.setRetries(1, backoff: 2))
        #expect(request.send())
        Thread.sleep(forTimeInterval: 0.4)
        #expect(request.getState() == .sent, "waiting, with nothing reported")
        #expect(request.abort())
        #expect(recorder.waitForDone())
        #expect(request.getStatus() == 0)
        #expect(recorder.result.states == [.opened, .sent, .done])
        Thread.sleep(forTimeInterval: 2.2)
        #expect(try count(key) == 1, "no attempt after the abort")
    }

    @Test func aHeadersTimeoutBeforeTheHeadIsRetried() throws {
        let started = Date()
        let request = fetchSync("GET", try env.faultURL + "/stall?n=10&head_ms=3000") {
            $0.setTimeouts(headers: 0.4)
            $0.setRetries(1, backoff: 0.1)
        }.0
        let seconds = Date().timeIntervalSince(started)
        #expect(request.getFailureKind() == .timeout)
        #expect(request.getStatusText()?.hasPrefix("header timeout") == true)
        #expect(seconds >= 0.8 && seconds < 1.5, "two attempts of 0.4 s and a wait: \(seconds) s")
    }

    @Test func badRetrySettingsAreRefused() {
        let request = HttpRequest()
        #expect(!request.setRetries(-1))
        #expect(!request.setRetries(1, backoff: -1))
        #expect(request.lastError?.message.contains("backoff") == true)
        #expect(request.setRetries(0))
    }
}
