#if Tracing
import CurlXHR
import Tracing

extension HttpClient {
    /// The tracer of the client's calls (package trait `Tracing`); `nil` (the default): the
    /// one `InstrumentationSystem` was bootstrapped with, at each call (a no-op until then).
    ///
    /// Each call is one span of kind `.client`, a child of the task's `ServiceContext.current`
    /// when it has one, named after the method (OpenTelemetry's HTTP conventions: `GET`,
    /// `POST`, … and `HTTP` for another method), with the attributes `http.request.method`,
    /// `url.full` (its password and signatures `REDACTED`), `server.address`, `server.port`
    /// and `http.response.status_code`. A failed transfer, or a status of 400 or more, records
    /// the error (its text without the call's secrets), sets `error.type` and ends the span
    /// with status `.error`. Before the middlewares run, the span's context is injected into
    /// the request's header fields by the instrument (`InstrumentationSystem.instrument`, or
    /// this tracer): W3C `traceparent` and `tracestate` with an OpenTelemetry tracer. The
    /// middlewares and the transfer run with the span's context as `ServiceContext.current`.
    public var tracer: (any Tracer)? {
        get { observability.tracer }
        set { observability.tracer = newValue }
    }
}

/// The span of one call.
struct CallSpan: Sendable {
    let span: any Span
    let secrets: CallSecrets

    /// Starts the span of `request` with `tracer` (nil: `InstrumentationSystem`'s), and injects
    /// its context into the request's header fields.
    init(_ request: inout HttpClientRequest, tracer: (any Tracer)?, secrets: CallSecrets) {
        let known = CallOutcome.knownMethods.contains(request.method)
        let parent = ServiceContext.current ?? .topLevel
        let span = (tracer ?? InstrumentationSystem.tracer).startSpan(known ? request.method : "HTTP", context: parent, ofKind: .client)
        let url = HTTPURL(request.url)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = known ? request.method : "_OTHER"
            if !known { attributes["http.request.method_original"] = request.method }
            attributes["url.full"] = secrets.scrub(Redaction.url(request.url))
            if let url {
                // OpenTelemetry's server.address is the host without an IPv6 address's brackets.
                attributes["server.address"] = url.host.hasPrefix("[") ? String(url.host.dropFirst().dropLast()) : url.host
                attributes["server.port"] = url.port
            }
        }
        if let tracer {
            tracer.inject(span.context, into: &request, using: HeaderInjector())
        } else {
            InstrumentationSystem.instrument.inject(span.context, into: &request, using: HeaderInjector())
        }
        self.span = span
        self.secrets = secrets
    }

    /// Runs `operation` (the middlewares and the transfer) with the span's context as the task's.
    func run<Value>(_ operation: () async -> Value) async -> Value {
        await ServiceContext.$current.withValue(span.context, operation: operation)
    }

    /// Ends the span with the status of the response, or the call's failure.
    func end(_ outcome: Result<HttpClientResponse, HttpClientError>) {
        switch outcome {
        case .success(let response):
            span.attributes["http.response.status_code"] = response.status
            if response.status >= 400 {
                span.attributes["error.type"] = "\(response.status)"
                span.setStatus(SpanStatus(code: .error))
            }
        case .failure(let error):
            span.attributes["error.type"] = CallOutcome.errorType(error)
            span.recordError(RecordedFailure(description: secrets.scrub(error.description)))
            span.setStatus(SpanStatus(code: .error, message: CallOutcome.errorType(error)))
        }
        span.end()
    }
}

/// A call's failure as its span records it: the error's text without the call's secrets.
struct RecordedFailure: Error, CustomStringConvertible {
    let description: String
}

/// Writes what the instrument injects (`traceparent`, `tracestate`, baggage…) into the
/// request's header fields, replacing a field of the same name.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout HttpClientRequest) {
        request.setHeader(key, value: value)
    }
}
#endif
