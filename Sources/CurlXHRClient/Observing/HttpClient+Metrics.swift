#if Metrics
import CurlXHR
import Metrics

extension HttpClient {
    /// Where the client's calls are counted and timed (package trait `Metrics`): by default
    /// the factory `MetricsSystem` was bootstrapped with when the client was made. Setting it
    /// gives the client (and its copies made afterwards) metrics of their own.
    ///
    /// Every call records, with the dimensions `method` (`GET`, …, `_OTHER` for a method
    /// OpenTelemetry's HTTP conventions do not name) and `server_address` (the
    /// URL's host):
    /// - `curlxhr_client_requests_total`, a `Counter`, also with `status_class`: `1xx` to
    ///   `5xx`, or `error` for a call that got no response;
    /// - `curlxhr_client_request_duration_seconds`, a `Timer`: from the call's start (its
    ///   request made) to its response's end, or its failure (the body's decoding aside);
    /// - `curlxhr_client_requests_in_flight`, a `Meter`: the calls under way, up by one at
    ///   the start and down by one at the end.
    ///
    /// The metric objects are made once for each set of dimensions and kept by the client.
    public var metricsFactory: any MetricsFactory {
        get { observability.metrics.factory }
        set { observability.metrics = ClientMetrics(factory: newValue) }
    }
}

/// A client's metric objects, made on first use for each method, server and status class.
final class ClientMetrics: Sendable {
    let factory: any MetricsFactory

    private struct Kept {
        var counters: [String: Counter] = [:]
        var timers: [String: Timer] = [:]
        var meters: [String: Meter] = [:]
    }

    private let kept = Locked(Kept())

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    static let requests = "curlxhr_client_requests_total"
    static let duration = "curlxhr_client_request_duration_seconds"
    static let inFlight = "curlxhr_client_requests_in_flight"

    func inFlight(method: String, server: String) -> Meter {
        kept.withLock { kept in
            let key = method + " " + server
            if let meter = kept.meters[key] { return meter }
            let meter = Meter(label: Self.inFlight, dimensions: [("method", method), ("server_address", server)], factory: factory)
            kept.meters[key] = meter
            return meter
        }
    }

    func duration(method: String, server: String) -> Timer {
        kept.withLock { kept in
            let key = method + " " + server
            if let timer = kept.timers[key] { return timer }
            let timer = Timer(label: Self.duration, dimensions: [("method", method), ("server_address", server)],
                              factory: factory)
            kept.timers[key] = timer
            return timer
        }
    }

    func requests(method: String, server: String, statusClass: String) -> Counter {
        kept.withLock { kept in
            let key = method + " " + server + " " + statusClass
            if let counter = kept.counters[key] { return counter }
            let counter = Counter(label: Self.requests,
                                  dimensions: [("method", method), ("server_address", server), ("status_class", statusClass)],
                                  factory: factory)
            kept.counters[key] = counter
            return counter
        }
    }
}

/// The metrics of one call: in flight from its start, counted and timed at its end.
struct CallMetrics: Sendable {
    let metrics: ClientMetrics
    let method: String
    let server: String

    init(_ request: HttpClientRequest, metrics: ClientMetrics) {
        self.metrics = metrics
        method = CallOutcome.method(request.method)
        server = HTTPURL(request.url)?.host ?? ""
        metrics.inFlight(method: method, server: server).increment()
    }

    func end(_ outcome: Result<HttpClientResponse, HttpClientError>, elapsed: Duration) {
        metrics.duration(method: method, server: server)
            .recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        metrics.requests(method: method, server: server, statusClass: CallOutcome.statusClass(outcome)).increment()
        metrics.inFlight(method: method, server: server).decrement()
    }
}
#endif
