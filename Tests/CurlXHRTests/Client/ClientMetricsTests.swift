#if Metrics
import CurlXHR
import CurlXHRClient
import Foundation
import Metrics
import MetricsTestKit
import Testing

/// The `Metrics` trait: each call counted by status class, timed, and in flight while it runs
/// — against the fault server, recorded by swift-metrics' `TestMetrics` (a factory of the
/// client's own, so that other suites' calls do not count).
@Suite(.ownThreads) struct ClientMetricsTests {
    let env: TestEnvironment
    var client: HttpClient
    let metrics = TestMetrics()

    init() throws {
        (env, client) = try faultServerClient()
        client.metricsFactory = metrics
    }

    static func dimensions(_ method: String, _ server: String = "127.0.0.1") -> [(String, String)] {
        [("method", method), ("server_address", server)]
    }

    @Test func callsAreCountedByStatusClassTimedAndInFlightWhileTheyRun() async throws {
        try await client.invoke("GET", path: "echo")
        try await client.invoke("GET", path: "echo")
        _ = await clientError { try await client.invoke("GET", path: "respond", arguments: [("status", 404)]) }
        _ = await clientError { try await client.invoke("POST", path: "respond", arguments: [("status", 503)], encoding: .query) }

        let ok = try metrics.expectCounter("curlxhr_client_requests_total", Self.dimensions("GET") + [("status_class", "2xx")])
        #expect(ok.totalValue == 2)
        let missing = try metrics.expectCounter("curlxhr_client_requests_total", Self.dimensions("GET") + [("status_class", "4xx")])
        #expect(missing.totalValue == 1)
        let unavailable = try metrics.expectCounter("curlxhr_client_requests_total", Self.dimensions("POST") + [("status_class", "5xx")])
        #expect(unavailable.totalValue == 1)

        let durations = try metrics.expectTimer("curlxhr_client_request_duration_seconds", Self.dimensions("GET"))
        #expect(durations.values.count == 3)
        // Wall time from the call's start: under ThreadSanitizer a task may wait minutes for a
        // thread of the pool, so only its sign is checked.
        #expect(durations.values.allSatisfy { $0 > 0 }, "\(durations.values)")
        #expect(try metrics.expectTimer("curlxhr_client_request_duration_seconds", Self.dimensions("POST")).values.count == 1)

        let inFlight = try metrics.expectMeter("curlxhr_client_requests_in_flight", Self.dimensions("GET"))
        #expect(inFlight.values == [1, 0, 1, 0, 1, 0])
        #expect(inFlight.lastValue == 0)
    }

    @Test func aCallUnderWayIsInFlight() async throws {
        let slow = Task { try await client.invoke("GET", path: "delay", arguments: [("ms", 1500)]) }
        var seen = false
        for _ in 0..<100 where !seen {
            try await Task.sleep(for: .milliseconds(20))
            seen = (try? metrics.expectMeter("curlxhr_client_requests_in_flight", Self.dimensions("GET")))?.lastValue == 1
        }
        #expect(seen)
        _ = try await slow.value
        #expect(try metrics.expectMeter("curlxhr_client_requests_in_flight", Self.dimensions("GET")).lastValue == 0)
    }

    @Test func aCallWithoutAResponseCountsAsAnError() async throws {
        var client = HttpClient(baseURL: "http://127.0.0.1:1")
        client.metricsFactory = metrics
        _ = await clientError { try await client.invoke("PATCH", path: "x") }
        _ = await clientError { try await client.invoke("BREW", path: "pot") }
        #expect(try metrics.expectCounter("curlxhr_client_requests_total", Self.dimensions("PATCH") + [("status_class", "error")]).totalValue == 1)
        // A method OpenTelemetry does not name is _OTHER: callers cannot make up dimensions.
        #expect(try metrics.expectCounter("curlxhr_client_requests_total", Self.dimensions("_OTHER") + [("status_class", "error")]).totalValue == 1)
        #expect(try metrics.expectMeter("curlxhr_client_requests_in_flight", Self.dimensions("PATCH")).lastValue == 0)
    }
}
#endif
