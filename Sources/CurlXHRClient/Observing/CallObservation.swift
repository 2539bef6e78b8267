import CurlXHR

/// The logs, span and metrics of one call, each present only with its package trait (a
/// package without them keeps none of this): made when the call's request is, ended when its
/// transfer (middlewares included) is.
struct CallObservation: Sendable {
    #if Logging || Metrics
    let start = ContinuousClock.now
    #endif
    #if Logging || Tracing
    let secrets = CallSecrets()
    #endif
    #if Logging
    let log: CallLog?
    #endif
    #if Tracing
    let span: CallSpan
    #endif
    #if Metrics
    let metrics: CallMetrics
    #endif

    /// Starts observing the call of `request` by `client`: the span's context goes into the
    /// request's header fields.
    init(_ request: inout HttpClientRequest, client: HttpClient) {
        #if Logging || Tracing
        secrets.add(request, password: request.isToClientOrigin ? client.password : nil)
        #endif
        #if Logging
        log = CallLog(client.logger, secrets: secrets)
        #endif
        #if Tracing
        span = CallSpan(&request, tracer: client.tracer, secrets: secrets)
        #endif
        #if Metrics
        metrics = CallMetrics(request, metrics: client.observability.metrics)
        #endif
    }

    /// Runs `operation` (the middlewares and the transfer) in the span's context.
    func run<Value>(_ operation: () async -> Value) async -> Value {
        #if Tracing
        return await span.run(operation)
        #else
        return await operation()
        #endif
    }

    /// A send of `request`, as the middlewares made it, is about to be made, with `added` in
    /// place of its field of that name. `password`: the client's.
    func sending(_ request: HttpClientRequest, adding added: HeaderFieldList.Entry?, password: String?) {
        #if Logging || Tracing
        secrets.add(request, adding: added?.fields ?? [:], password: request.isToClientOrigin ? password : nil)
        #endif
    }

    /// Whether ``watch(_:)`` sets a request up (its `onEvent`): such a request is not used again.
    var watchesRequests: Bool {
        #if Logging
        log != nil
        #else
        false
        #endif
    }

    /// `http`, ready, is about to send: its events are watched (after those of an `onEvent`
    /// already set).
    func watch(_ http: HttpRequest) {
        #if Logging
        log?.watch(http)
        #endif
    }

    /// The call's transfer ended with `outcome`.
    func end(_ request: HttpClientRequest, _ outcome: Result<HttpClientResponse, HttpClientError>) {
        #if Logging || Metrics
        let elapsed = ContinuousClock.now - start
        #endif
        #if Logging
        log?.ended(request, outcome, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        #endif
        #if Tracing
        span.end(outcome)
        #endif
        #if Metrics
        metrics.end(outcome, elapsed: elapsed)
        #endif
    }
}
