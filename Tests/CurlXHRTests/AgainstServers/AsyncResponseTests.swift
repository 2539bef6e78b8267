@testable import CurlXHR
import Foundation
import HTTPTypes
import Testing

/// `HttpRequest.response()`: the response at its head, the body as an `AsyncSequence`, and
/// cancellation, against the fault server, Apache and nginx.
@Suite(.ownThreads) struct AsyncResponseTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func opened(_ url: String, method: String = "GET", configure: (HttpRequest) -> Void = { _ in }) -> HttpRequest {
        let request = HttpRequest()
        request.disableCookieHandling()
        #expect(request.open(method, url: url))
        configure(request)
        return request
    }

    /// What the fault server's `/trickle` with `key` saw of its connection.
    struct Trickle: Decodable {
        var startedAt: Double
        var endedAt: Double?
        var closedAt: Double?
        var sent: Int
        var complete: Bool
    }

    /// A `/trickle` that takes hours unless its client closes it; `gate`: its body waits for
    /// ``openGate(_:)``.
    func endless(_ key: String, gate: Bool = false, headMilliseconds: Int = 0) throws -> String {
        try env.faultURL + "/trickle?key=\(key)&n=1000000000&size=1000&interval_ms=20&head_ms=\(headMilliseconds)&gate=\(gate ? 1 : 0)"
    }

    func openGate(_ key: String) throws {
        #expect(fetchSync("GET", try env.faultURL + "/trickle-open?key=\(key)") { $0.disableCookieHandling() }.0.getStatus() == 200)
    }

    func trickle(_ key: String) throws -> Trickle {
        try #require(try trickle(key, mayBeMissing: false), "no /trickle with key \(key)")
    }

    /// nil when no `/trickle` with `key` reached the server (yet).
    func trickle(_ key: String, mayBeMissing: Bool) throws -> Trickle? {
        let (request, body) = fetchSync("GET", try env.faultURL + "/trickle-log?key=\(key)") { $0.disableCookieHandling() }
        guard request.getStatus() == 200 else { return nil }
        return try JSONDecoder().decode(Trickle.self, from: body)
    }

    /// Polls `/trickle-log` until the server saw the connection closed (or `seconds` pass).
    func closedAt(_ key: String, within seconds: Double = 5) throws -> Double? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let closed = try trickle(key, mayBeMissing: true)?.closedAt { return closed }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    /// How soon after a cancel the server must see the connection closed. The response is still
    /// held, so without the cancel the transfer would go on for hours; the server notices within
    /// a few milliseconds on an idle machine, but its threads share one lock and the suite runs
    /// in parallel under the sanitizers, so the bound leaves room for a loaded machine.
    static let atOnce = 1.0

    static func isPattern(_ data: Data, from offset: Int = 0) -> Bool {
        data.enumerated().allSatisfy { $0.element == UInt8((offset + $0.offset) % 251) }
    }

    @Test func theResponseComesAtItsHeadAndTheBodyFollowsWhole() async throws {
        // The server holds the body back until the test opens its gate: the response can
        // only have come at the head.
        let key = UUID().uuidString
        let request = opened(try env.faultURL + "/trickle?key=\(key)&n=20000&size=2000&interval_ms=5&gate=1")
        let response = try await request.response()
        #expect(response.status == 200 && response.statusText == "OK" && response.httpVersion == "HTTP/1.1")
        #expect(response.expectedContentLength == 20000)
        #expect(response.header("content-type") == "application/octet-stream")
        #expect(try trickle(key).sent == 0)
        try openGate(key)
        var chunks = 0
        var body = Data()
        for try await chunk in response.body {
            chunks += 1
            body.append(chunk)
        }
        #expect(body.count == 20000 && Self.isPattern(body))
        #expect(chunks >= 2, "the body came as it arrived, in \(chunks) chunks")
        #expect(request.getState() == .opened, "the request is the template, unchanged")
    }

    /// Small chunks are written into the buffer of the last chunk handed out once the
    /// consumer let go of it: a consumer that keeps its chunks, across the body and into the
    /// request's next response (which reuses the stream), finds each as it came.
    @Test func chunksTheConsumerKeepsStayAsTheyCame() async throws {
        let request = HttpRequest()
        request.disableCookieHandling()
        var kept: [(offset: Int, chunk: Data)] = []
        for round in 0..<2 {
            #expect(request.open("GET", url: try env.faultURL + "/trickle?key=\(UUID().uuidString)&n=3000&size=100&interval_ms=2"))
            let response = try await request.response()
            var offset = 0
            for try await chunk in response.body {
                kept.append((offset, chunk))
                offset += chunk.count
            }
            #expect(offset == 3000, "round \(round)")
        }
        #expect(kept.count >= 4, "the bodies came in \(kept.count) chunks")
        let whole = kept.allSatisfy { Self.isPattern($0.chunk, from: $0.offset) }
        #expect(whole, "a kept chunk was written over")
        // And a consumer that lets each chunk go (the buffer reused in place) reads it whole.
        #expect(request.open("GET", url: try env.faultURL + "/trickle?key=\(UUID().uuidString)&n=3000&size=100&interval_ms=2"))
        var offset = 0, intact = true
        for try await chunk in try await request.response().body {
            intact = intact && Self.isPattern(chunk, from: offset)
            offset += chunk.count
        }
        #expect(offset == 3000 && intact)
    }

    /// Responses that end in one round of the engine wake their tasks together, from two
    /// jobs of the pool taking turns on one list: each task gets its own response, once,
    /// round after round (each request's stream reused from one response to the next).
    @Test func tasksWokenTogetherGetTheirOwnResponses() async throws {
        struct Echo: Decodable { var target: String }
        let (tasks, rounds) = (48, 8)
        let base = try env.faultURL
        let mismatches = try await withThrowingTaskGroup(of: [String].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    let request = HttpRequest()
                    request.disableCookieHandling()
                    var wrong: [String] = []
                    for round in 0..<rounds {
                        let target = "/echo?task=\(task)&round=\(round)"
                        guard request.open("GET", url: base + target) else { return ["task \(task): open refused"] }
                        let response = try await request.response()
                        let body = try await response.body.collect(upTo: 1 << 16)
                        let echo = try JSONDecoder().decode(Echo.self, from: body)
                        if response.status != 200 || echo.target != target {
                            wrong.append("task \(task) round \(round): \(response.status) \(echo.target)")
                        }
                    }
                    return wrong
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test func statusHeadersAndRequestBodiesAreTheRequestsOwn() async throws {
        let notFound = try await opened(try env.faultURL + "/status?code=404&reason=Nowhere").response()
        #expect(notFound.status == 404 && notFound.statusText == "Nowhere", "a 404 is a response, not an error")
        #expect(try await notFound.body.collect(upTo: 100) == Data("status".utf8))

        let multi = try await opened(try env.faultURL + "/headers").response()
        #expect(multi.header("X-Multi") == "a, b")
        #expect(multi.headerFields[values: try #require(HTTPField.Name("x-multi"))] == ["a", "b"])

        let payload = Data((0..<200_000).map { UInt8($0 % 256) })
        let posted = opened(try env.faultURL + "/sink", method: "POST") { $0.setRequestHeader("X-Test", value: "async") }
        let echo = try await posted.response(sending: payload).body.collect(upTo: 1 << 20)
        let fields = try #require(try JSONSerialization.jsonObject(with: echo) as? [String: Any])
        #expect(fields["method"] as? String == "POST" && fields["body_length"] as? Int == payload.count)
        #expect((fields["headers"] as? [String: String])?["X-Test"] == "async")

        // One request is the template of several sends, at once.
        let template = opened(try env.faultURL + "/bytes?n=5000")
        async let first = template.response().body.collect(upTo: 10_000)
        async let second = template.response().body.collect(upTo: 10_000)
        let (a, b) = try await (first, second)
        #expect(a.count == 5000 && a == b && Self.isPattern(a))
    }

    @Test func cancellingTheTaskMidBodyClosesTheConnectionAtOnce() async throws {
        let key = UUID().uuidString
        let response = try await opened(try endless(key)).response()
        let reading = Task {
            var received = 0
            for try await chunk in response.body { received += chunk.count }
            return received
        }
        try await Task.sleep(for: .milliseconds(200))
        let cancelledAt = Date().timeIntervalSince1970
        reading.cancel()
        await #expect(throws: CancellationError.self) { try await reading.value }
        let closed = try #require(try closedAt(key), "the server never saw the connection close")
        #expect(closed - cancelledAt < Self.atOnce, "the server saw the connection closed \(closed - cancelledAt) s after the cancel")
        #expect(try trickle(key).complete == false)
    }

    @Test func cancellingWhileWaitingForTheHeadEndsTheSendAtOnce() async throws {
        let key = UUID().uuidString
        let request = opened(try endless(key, headMilliseconds: 60_000))
        let waiting = Task { try await request.response() }
        // Until the server has the request (it answers in a minute).
        for _ in 0..<500 where try trickle(key, mayBeMissing: true) == nil { try await Task.sleep(for: .milliseconds(10)) }
        let cancelledAt = Date().timeIntervalSince1970
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        let closed = try #require(try closedAt(key), "the server never saw the connection close")
        #expect(closed - cancelledAt < Self.atOnce, "the server saw the connection closed \(closed - cancelledAt) s after the cancel")
    }

    @Test func lettingGoOfAnUnreadResponseStopsItsTransfer() async throws {
        let key = UUID().uuidString
        do {
            let response = try await opened(try endless(key)).response()
            #expect(response.status == 200)
        }
        #expect(try closedAt(key) != nil, "the transfer of a response no one reads goes on")
    }

    @Test func failuresThrowWithTheirKindAndTheBytesBeforeThemArrive() async throws {
        do {
            _ = try await opened("http://127.0.0.1:1/").response()
            Issue.record("a refused connection returned a response")
        } catch let error as HttpRequestError {
            #expect(error.code == .transferFailed && error.failureKind == .connection, "\(error)")
        }
        // A reset after 5000 bytes: the 5000 arrive, then the error.
        let response = try await opened(try env.faultURL + "/reset?after=5000").response()
        var received = Data()
        do {
            for try await chunk in response.body { received.append(chunk) }
            Issue.record("a reset body ended without an error")
        } catch let error as HttpRequestError {
            #expect(error.code == .transferFailed && error.failureKind == .connection, "\(error)")
        }
        #expect(received.count == 5000 && Self.isPattern(received))
    }

    @Test func refusalsThrowWhatSendWouldSay() async throws {
        await #expect(throws: HttpRequestError(.invalidState, "send is not allowed in state UNSENT")) {
            _ = try await HttpRequest().response()
        }
        do {
            _ = try await opened(try env.faultURL + "/bytes?n=1", method: "HEAD").response(sending: Data("x".utf8))
            Issue.record("a HEAD with a body was sent")
        } catch let error as HttpRequestError {
            #expect(error.code == .invalidArgument)
        }
        do {
            _ = try await opened(try env.faultURL + "/sink", method: "PUT").response(sendingFile: "/nonexistent/file")
            Issue.record("a missing file was sent")
        } catch let error as HttpRequestError {
            #expect(error.code == .fileUnreadable)
        }
    }

    /// A task cancelled before its send throws `CancellationError` and leaves no descriptor of
    /// the body's file open.
    @Test func aTaskCancelledBeforeItsSendKeepsNoFileOpen() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cxhr-\(UUID().uuidString)").path
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let request = opened(try env.faultURL + "/sink", method: "PUT")
        for _ in 0..<3 {
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await request.response(sendingFile: path)
            }
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
        // The process's descriptors that name the file.
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path
        }
        #expect(descriptors.isEmpty, "descriptors \(descriptors) still open on the body's file")
        #expect(request.getState() == .opened)
    }

    @Test func collectStopsAtItsLimit() async throws {
        let key = UUID().uuidString
        let response = try await opened(try env.faultURL + "/trickle?key=\(key)&n=1000000000&size=10000&interval_ms=5").response()
        do {
            _ = try await response.body.collect(upTo: 25_000)
            Issue.record("collected more than the limit")
        } catch let error as HttpRequestError {
            #expect(error.code == .tooLarge)
        }
        #expect(try closedAt(key) != nil, "the transfer went on past the limit")
    }

    @Test func collectKeepsItsLimitWhetherTheBodyCameInOneChunkOrMany() async throws {
        let small = try await opened(try env.faultURL + "/bytes?n=100").response().body.collect(upTo: 100)
        #expect(small.count == 100 && Self.isPattern(small), "a limit of exactly the body's size")
        await #expect(throws: HttpRequestError.self) {
            _ = try await self.opened(try self.env.faultURL + "/bytes?n=100").response().body.collect(upTo: 99)
        }
        #expect(try await opened(try env.faultURL + "/bytes?n=0").response().body.collect(upTo: 0).isEmpty)
        let dripped = try await opened(try env.faultURL + "/drip?chunks=3&size=1000&interval_ms=20").response().body.collect(upTo: 3000)
        #expect(dripped.count == 3000, "chunks that came apart, joined")
        do {
            _ = try await opened(try env.faultURL + "/drip?chunks=3&size=1000&interval_ms=20").response().body.collect(upTo: 2500)
            Issue.record("collected more than the limit")
        } catch let error as HttpRequestError {
            #expect(error.code == .tooLarge && error.message.contains("2500"), "\(error)")
        }
    }

    @Test func theTotalTimeoutEndsASlowBody() async throws {
        let response = try await opened(try env.faultURL + "/drip?chunks=50&size=100&interval_ms=100").response(timeout: 0.5)
        do {
            for try await _ in response.body {}
            Issue.record("the body outlived its timeout")
        } catch let error as HttpRequestError {
            #expect(error.failureKind == .timeout, "\(error)")
        }
    }

    @Test func everySwitchOfTheRequestApplies() async throws {
        // Digest from Apache and NTLM, through the request's credentials; a wrong password is a 401.
        let (user, password) = (try env["TESTENV_USER"], try env["TESTENV_PASSWORD"])
        for (url, scheme) in [(try env.httpURL + "/digest/echo", "digest"), (try env["TESTENV_HTTP_NTLM_URL"] + "/echo", "NTLM")] {
            let right = HttpRequest(), wrong = HttpRequest()
            #expect(right.open("GET", url: url, user: user, password: password, auth: scheme))
            #expect(wrong.open("GET", url: url, user: user, password: password + "-wrong", auth: scheme))
            let echo = try await right.response()
            #expect(echo.status == 200, "\(scheme)")
            #expect(String(decoding: try await echo.body.collect(upTo: 1 << 20), as: UTF8.self).contains(user))
            #expect(try await wrong.response().status == 401, "\(scheme)")
        }
        // Redirects followed, or not.
        let chain = try env.faultURL + "/redirect/chain?n=2"
        #expect(try await opened(chain).response().status == 200)
        #expect(try await opened(chain) { $0.disableFollowLocation() }.response().status == 302)
        // A range.
        let ranged = try await opened(try env.faultURL + "/file?size=1000&version=1") { $0.setRange(from: 100, to: 199) }.response()
        #expect(ranged.status == 206)
        #expect(try await ranged.body.collect(upTo: 1000).count == 100)
        // HTTPS with the test CA, over HTTP/2.
        let h2 = try await opened(try env.h2URL + "/small") { $0.setCACertificateFile(try! env.caFile) }.response()
        #expect(h2.status == 200 && h2.httpVersion == "HTTP/2")
    }

    @Test func aResponseFileTakesTheBodyAndIsCompleteWhenTheBodyEnds() async throws {
        let path = try env.scratchPath("async-file") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let request = opened(try env.faultURL + "/bytes?n=300000") { #expect($0.setResponseFile(path)) }
        let response = try await request.response()
        var yielded = 0
        for try await chunk in response.body { yielded += chunk.count }
        #expect(yielded == 0, "the bytes went to the file")
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(file.count == 300_000 && Self.isPattern(file))
    }

    @Test func aQueueHoldsAsyncResponsesToItsLimit() async throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let keys = (0..<3).map { _ in UUID().uuidString }
        let requests = try keys.map { key in
            opened(try env.faultURL + "/trickle?key=\(key)&n=3000&size=1000&interval_ms=30") { $0.queue = queue }
        }
        let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
            for request in requests { group.addTask { try await request.response().body.collect(upTo: 10_000) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.allSatisfy { $0.count == 3000 && Self.isPattern($0) })
        // One at a time at the server: each started after the one before ended.
        let log = try keys.map { try trickle($0) }.sorted { $0.startedAt < $1.startedAt }
        #expect(log.allSatisfy { $0.complete })
        for (earlier, later) in zip(log, log.dropFirst()) {
            #expect(later.startedAt >= (earlier.endedAt ?? .infinity), "two responses of a queue of one ran at once")
        }
        // The engine hands the slot back just after the body's end.
        for _ in 0..<100 where queue.runningCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(queue.runningCount == 0 && queue.waitingCount == 0)

        // A cancelled waiting response leaves its queue, and never reaches the server.
        let (blockerKey, waiterKey) = (UUID().uuidString, UUID().uuidString)
        let blocker = opened(try env.faultURL + "/trickle?key=\(blockerKey)&n=10&gate=1") { $0.queue = queue }
        let waiter = opened(try env.faultURL + "/trickle?key=\(waiterKey)&n=10") { $0.queue = queue }
        let running = try await blocker.response()
        let waiting = Task { try await waiter.response() }
        for _ in 0..<500 where queue.waitingCount < 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(queue.waitingCount == 1)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        #expect(queue.waitingCount == 0)
        try openGate(blockerKey)
        #expect(try await running.body.collect(upTo: 100).count == 10)
        #expect(try trickle(waiterKey, mayBeMissing: true) == nil)
    }

    @Test func aGibibyteReadSlowlyKeepsMemoryBounded() throws {
        let size = 1 << 30
        let result = try probe(["stream", try env.faultURL + "/bytes?n=\(size)"])
        #expect(result["status"] as? Int == 200, "\(result)")
        #expect(result["bytes"] as? Int == size)
        #expect(result["pattern_ok"] as? Bool == true)
        let growth = (result["peak_kib"] as? Int ?? .max) - (result["baseline_kib"] as? Int ?? 0)
        #expect(growth < 64 * 1024, "peak memory grew by \(growth) KiB")
    }
}
