#if Tracing
import CurlXHR
import CurlXHRClient
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// swift-distributed-tracing's `InMemoryTracer` with W3C trace context: 32 and 16 hex digit
/// ids, and `traceparent` injected as an OpenTelemetry tracer injects it.
struct W3CTestTracer: Tracer {
    let recorder = InMemoryTracer(idGenerator: .init(
        nextTraceID: { Self.hex(UInt64.random(in: 1...UInt64.max)) + Self.hex(UInt64.random(in: 0...UInt64.max)) },
        nextSpanID: { Self.hex(UInt64.random(in: 1...UInt64.max)) }))

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> InMemorySpan {
        recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}

/// The `Tracing` trait: one `.client` span per call with OpenTelemetry's HTTP attributes, its
/// context in the `traceparent` the server receives, and its status — against the fault server.
@Suite(.ownThreads) struct ClientTracingTests {
    let env: TestEnvironment
    var client: HttpClient
    let tracer = W3CTestTracer()

    init() throws {
        (env, client) = try faultServerClient()
        client.tracer = tracer
    }

    var port: Int { get throws { Int(try env.faultURL.split(separator: ":").last!)! } }

    func onlySpan(sourceLocation: SourceLocation = #_sourceLocation) throws -> FinishedInMemorySpan {
        let spans = tracer.recorder.finishedSpans
        #expect(spans.count == 1, "\(spans.map(\.operationName))", sourceLocation: sourceLocation)
        return try #require(spans.first, sourceLocation: sourceLocation)
    }

    @Test func a200IsOneClientSpanWhoseContextTheServerReceived() async throws {
        let echoed = try await client.invoke("GET", path: "echo", arguments: [("q", 1)], as: EchoedRequest.self)
        let span = try onlySpan()
        #expect(span.operationName == "GET" && span.kind == .client)
        #expect(span.status == nil && span.errors.isEmpty)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(span.attributes["url.full"]?.toSpanAttribute() == .string(try env.faultURL + "/echo?q=1"))
        #expect(span.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(try port)))
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        // W3C: version, 32 hex digits of trace id, 16 of parent (this span's) id, flags.
        let traceparent = try #require(echoed.header("traceparent"))
        let parts = traceparent.split(separator: "-").map(String.init)
        #expect(parts.count == 4 && parts[0] == "00" && parts[3] == "01", "\(traceparent)")
        #expect(parts[1] == span.traceID && parts[1].count == 32 && parts[1].allSatisfy(\.isHexDigit))
        #expect(parts[2] == span.spanID && parts[2].count == 16)
        #expect(echoed.headers(named: "traceparent").count == 1)
    }

    @Test func theTasksContextIsTheParent() async throws {
        let parent = tracer.startSpan("handler", ofKind: .server)
        let echoed = try await ServiceContext.$current.withValue(parent.context) {
            try await client.invoke("POST", path: "echo", body: .data(Data("x".utf8), contentType: "text/plain"), as: EchoedRequest.self)
        }
        parent.end()
        let span = try #require(tracer.recorder.finishedSpans.first { $0.operationName == "POST" })
        #expect(span.traceID == parent.traceID && span.parentSpanID == parent.spanID)
        #expect(echoed.header("traceparent") == "00-\(parent.traceID)-\(span.spanID)-01")
    }

    @Test func a500IsAnError() async throws {
        _ = await clientError { try await client.invoke("GET", path: "respond", arguments: [("status", 500)]) }
        let span = try onlySpan()
        #expect(span.status?.code == .error)
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 500)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "500")
    }

    @Test func aRefusedConnectionIsARecordedError() async throws {
        var client = HttpClient(baseURL: "http://127.0.0.1:1")
        client.tracer = tracer
        _ = await clientError { try await client.invoke("DELETE", path: "items/7") }
        let span = try onlySpan()
        #expect(span.operationName == "DELETE" && span.status?.code == .error)
        #expect(span.attributes["http.response.status_code"] == nil)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "connection")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == 1)
        #expect(span.errors.count == 1)
    }

    @Test func aPasswordNeverReachesTheSpan() async throws {
        let host = try env.faultURL.replacingOccurrences(of: "http://", with: "")
        var client = client
        client.password = "client-pass-2f7e"
        let echoed = try await client.invoke("GET", path: "http://bob:url-pass-9c4b@\(host)/echo?sig=sig-val-13ab",
                                             headerFields: [.authorization: "Bearer span-tok-55e1"], as: EchoedRequest.self)
        #expect(echoed.header("traceparent") != nil)
        // A refused field (CR, LF) fails the call: its span neither.
        _ = await clientError {
            try await client.invoke("GET", path: "http://bob:url-pass-9c4b@127.0.0.1:1/x\r\nX-Injected: yes")
        }
        let spans = tracer.recorder.finishedSpans
        #expect(spans.count == 2)
        #expect(spans.first?.attributes["url.full"]?.toSpanAttribute() == .string("http://REDACTED:REDACTED@\(host)/echo?sig=REDACTED"))
        let texts = spans.flatMap { span in
            var texts = [span.operationName] + span.errors.map { "\($0.error)" }
            span.attributes.forEach { name, value in texts.append("\(name)=\(value)") }
            return texts
        }
        for secret in ["client-pass-2f7e", "url-pass-9c4b", "sig-val-13ab", "span-tok-55e1", "\r", "\n"] {
            #expect(!texts.contains { $0.contains(secret) }, "\(secret): \(texts)")
        }
        #expect(spans.last?.attributes["url.full"]?.toSpanAttribute() == "http://REDACTED:REDACTED@127.0.0.1:1/x%0D%0AX-Injected: yes")
        #expect(spans.last?.attributes["error.type"]?.toSpanAttribute() == "invalidArgument")
    }

    @Test func withoutATracerTheBootstrappedOneIsUsed() async throws {
        // InstrumentationSystem is not bootstrapped by the tests: its no-op tracer injects nothing.
        let echoed = try await HttpClient(baseURL: try env.faultURL).invoke("GET", path: "echo", as: EchoedRequest.self)
        #expect(echoed.header("traceparent") == nil)
        #expect(HttpClient(baseURL: try env.faultURL).tracer == nil)
    }
}
#endif
