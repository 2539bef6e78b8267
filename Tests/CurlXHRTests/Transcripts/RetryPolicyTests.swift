@testable import CurlXHR
import Testing

/// When a send is tried again, decision by decision.
@Suite(.ownThreads) struct RetryPolicyTests {
    let policy = RetryPolicy(count: 3, backoff: 0.5)

    @Test func aRetryWaitsTheBackoffDoubledEachTimeWithJitter() {
        #expect(policy.delay(before: 1, after: .noResponse, method: "GET", jitter: 0.5) == 0.5)
        #expect(policy.delay(before: 2, after: .noResponse, method: "GET", jitter: 0.5) == 1.0)
        #expect(policy.delay(before: 3, after: .noResponse, method: "GET", jitter: 0.5) == 2.0)
        #expect(policy.delay(before: 1, after: .noResponse, method: "GET", jitter: 0) == 0.25, "jitter at its lowest: half")
        #expect(policy.delay(before: 1, after: .noResponse, method: "GET", jitter: 0.999)! < 0.75)
        #expect(policy.delay(before: 4, after: .noResponse, method: "GET", jitter: 0.5) == nil, "three retries, then the outcome stands")
        #expect(policy.delay(before: 0, after: .noResponse, method: "GET", jitter: 0.5) == nil)
    }

    @Test(arguments: ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])
    func idempotentMethodsAreRetried(method: String) {
        #expect(policy.delay(before: 1, after: .status(503, retryAfter: nil), method: method, jitter: 0.5) == 0.5)
    }

    @Test(arguments: ["POST", "PATCH", "get", "CONNECT"])
    func otherMethodsAreSentOnce(method: String) {
        #expect(policy.delay(before: 1, after: .noResponse, method: method, jitter: 0.5) == nil)
        #expect(policy.delay(before: 1, after: .status(503, retryAfter: 1), method: method, jitter: 0.5) == nil)
    }

    @Test func only429And503AreRetriedAndRetryAfterWinsUpToAMinute() {
        #expect(policy.delay(before: 1, after: .status(429, retryAfter: 3), method: "GET", jitter: 0.5) == 3)
        #expect(policy.delay(before: 1, after: .status(503, retryAfter: 0), method: "GET", jitter: 0.5) == 0)
        #expect(policy.delay(before: 1, after: .status(503, retryAfter: 60), method: "GET", jitter: 0.5) == 60)
        #expect(policy.delay(before: 1, after: .status(503, retryAfter: 61), method: "GET", jitter: 0.5) == nil, "the 503 is the answer")
        for status in [200, 404, 500, 502, 504] {
            #expect(policy.delay(before: 1, after: .status(status, retryAfter: nil), method: "GET", jitter: 0.5) == nil)
        }
        #expect(RetryPolicy().delay(before: 1, after: .noResponse, method: "GET", jitter: 0.5) == nil, "off by default")
    }

    @Test func retryAfterIsSecondsOrADate() {
        let dates: (String) -> Double? = { $0 == "Wed, 21 Oct 2026 07:28:00 GMT" ? 1_792_567_680 : nil }
        #expect(RetryPolicy.retryAfterSeconds("120", now: 0, parseDate: dates) == 120)
        #expect(RetryPolicy.retryAfterSeconds("  7 ", now: 0, parseDate: dates) == 7)
        #expect(RetryPolicy.retryAfterSeconds("Wed, 21 Oct 2026 07:28:00 GMT", now: 1_792_567_670, parseDate: dates) == 10)
        #expect(RetryPolicy.retryAfterSeconds("Wed, 21 Oct 2026 07:28:00 GMT", now: 1_792_567_690, parseDate: dates) == 0, "past: at once")
        #expect(RetryPolicy.retryAfterSeconds("soon", now: 0, parseDate: dates) == nil)
        #expect(RetryPolicy.retryAfterSeconds("-5", now: 0, parseDate: dates) == nil)
        #expect(RetryPolicy.retryAfterSeconds("99999999999999999999999", now: 0, parseDate: dates)! > RetryPolicy.maxRetryAfter)
    }

    @Test func badSettingsAreRefused() {
        #expect(RetryPolicy.problem(count: 0, backoff: 0) == nil)
        #expect(RetryPolicy.problem(count: -1, backoff: 0.5) != nil)
        #expect(RetryPolicy.problem(count: 1, backoff: -0.1) != nil)
        #expect(RetryPolicy.problem(count: 1, backoff: .nan) != nil)
    }
}
