@testable import CurlXHR
import Foundation
import Testing

/// `enablePipelining` (the default) multiplexes requests to one origin over one HTTP/2
/// connection (TLS with ALPN); off, requests stay on HTTP/1.1, one connection each at a time.
/// One test at a time. libcurl lets a request that may use HTTP/2 reuse an idle HTTP/1.1
/// connection to the same host name and port: the HTTP/1.1 test uses the servers' other name
/// (``http11Name(_:)``) and closes its connections when done.
@Suite(.serialized, .ownThreads) struct HTTP2Tests {
    @Test func twentyConcurrentRequestsShareOneHTTP2Connection() throws {
        let environment = try TestEnvironment.get()
        let (base, caFile, log) = (try environment.h2URL, try environment.caFile, try H2AccessLog())
        let tag = "share-\(UUID().uuidString)"
        let requests = (0..<20).map { openedAsync("\(base)/small?\(tag)-\($0)", caFile: caFile) }
        sendAllAndWait(requests)
        for (request, recorder) in requests {
            #expect(request.getStatus() == 200 && recorder.result.body.count == 100)
            #expect(request.getMetrics().httpVersion == "HTTP/2")
        }
        let lines = log.lines(tagged: tag, count: 20)
        #expect(lines.count == 20)
        #expect(Set(lines.map(\.serverProtocol)) == ["HTTP/2.0"])
        #expect(Set(lines.map(\.connection)).count == 1, "connections: \(Set(lines.map(\.connection)))")
    }

    @Test func twentyRequestsToAOneSecondEndpointFinishTogetherOnOneConnection() throws {
        let server = try SlowServer()
        let requests = (0..<20).map { openedAsync(server.url(ms: 1000, tag: "r\($0)"), caFile: server.caFile) }
        let seconds = sendAllAndWait(requests)
        for (request, _) in requests {
            #expect(request.getStatus() == 200 && request.getMetrics().httpVersion == "HTTP/2")
        }
        // Twenty one-second answers, all at the server at once: about 1 s, not 20 (a bound well
        // above 1 s: beside five other tests a run here took 1.86 s; one at a time would take 20,
        // and the server's count of requests in flight says the rest).
        #expect(seconds < 5, "took \(seconds) s")
        let stats = try server.stats()
        #expect(stats.max_in_flight == 20 && stats.http_versions == ["2"])
        // Should it fail: each request's connect time (about 0 for a request that found the
        // connection made) tells whether libcurl itself opened a connection per request.
        let connects = requests.map { $0.0.getMetrics().connectTime.map { String(format: "%.4f", $0) } ?? "-" }
        #expect(stats.client_ports.count == 1, "client ports: \(stats.client_ports); connect times: \(connects)")
    }

    @Test func withPipeliningOffRequestsUseHTTP11OnSeveralConnections() throws {
        let environment = try TestEnvironment.get()
        let (base, caFile, log) = (try environment.h2URL, try environment.caFile, try H2AccessLog())
        let tag = "h1-\(UUID().uuidString)"
        let requests = (0..<6).map {
            openedAsync(http11Name("\(base)/small?\(tag)-\($0)"), caFile: caFile) { $0.enablePipelining = false }
        }
        sendAllAndWait(requests)
        for (request, recorder) in requests {
            #expect(request.getStatus() == 200 && recorder.result.body.count == 100)
            #expect(request.getMetrics().httpVersion == "HTTP/1.1")
        }
        let lines = log.lines(tagged: tag, count: 6)
        #expect(lines.count == 6 && Set(lines.map(\.serverProtocol)) == ["HTTP/1.1"])

        // Slow answers show the connections: each HTTP/1.1 connection carries one at a time.
        let server = try SlowServer()
        let slow = (0..<4).map {
            openedAsync(server.http11URL(ms: 500, tag: "h1-\($0)"), caFile: server.caFile) { $0.enablePipelining = false }
        }
        sendAllAndWait(slow)
        let stats = try server.stats()
        #expect(stats.http_versions == ["1.1"] && stats.client_ports.count == 4 && stats.max_in_flight == 4)
        for (request, _) in requests + slow { request.close() }
    }

    @Test func aSynchronousRequestReportsItsProtocolAndTheStandardStatusText() throws {
        let environment = try TestEnvironment.get()
        let (request, body) = fetchSync("GET", try environment.h2URL + "/echo-protocol") {
            $0.setCACertificateFile(try! environment.caFile)
        }
        #expect(request.getStatus() == 200 && String(decoding: body, as: UTF8.self) == "HTTP/2.0\n")
        #expect(request.getMetrics().httpVersion == "HTTP/2")
        // HTTP/2 has no reason phrase; the text is the standard one for the status.
        #expect(request.getStatusText() == "OK")
    }

    @Test func theProtocolIsKnownFromTheHeadOnNotOnlyAtTheEnd() throws {
        let environment = try TestEnvironment.get()
        let seenAtHeaders = Locked<String?>(nil)
        let recorder = Recorder { request, state in
            if state == .headersReceived { seenAtHeaders.withLock { $0 = request.getMetrics().httpVersion ?? "none" } }
        }
        let request = HttpRequest()
        request.delegate = recorder
        // The body follows the head by 0.6 s: the HEADERS_RECEIVED callback runs before the end.
        #expect(request.open("GET", url: try environment.faultURL + "/drip?chunks=3&size=10&interval_ms=200", async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        #expect(seenAtHeaders.withLock { $0 } == "HTTP/1.1")
        #expect(request.getMetrics().httpVersion == "HTTP/1.1" && request.getMetrics().totalTime != nil)
    }
}
