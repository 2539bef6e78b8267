@testable import CurlXHR
import Foundation
import Testing

/// Requests against Apache's echo CGI: what was sent, what came back, and every state seen.
@Suite(.ownThreads) struct FetchTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    @Test func asyncGetReportsEveryStateOnceInOrder() throws {
        let (request, seen) = fetchAsync("GET", try env.httpURL + "/echo/path?x=1")
        #expect(seen.states.first == .opened)
        #expect(Array(seen.states.prefix(3)) == [.opened, .sent, .headersReceived])
        #expect(seen.states.last == .done)
        #expect(seen.states.dropFirst(3).dropLast().allSatisfy { $0 == .loading })
        #expect(seen.states.contains(.loading))
        #expect(seen.callbacksAfterDone == 0)
        #expect(seen.statusAtHeaders == 200)
        #expect(request.getStatus() == 200)
        #expect(request.getStatusText() == "OK")
        #expect(request.getResponseHeader("content-type")?.hasPrefix("application/json") == true)
        let echo = try Echo(seen.body)
        #expect(echo.method == "GET")
        #expect(echo.json["uri"] as? String == "/echo/path?x=1")
    }

    @Test func syncGetReturnsInDoneWithTheBody() throws {
        let (request, body) = fetchSync("GET", try env.httpURL + "/files/10k")
        #expect(request.getStatus() == 200)
        #expect(body == Pattern.bytes(10 * 1024))
        #expect(request.getReceiveBuffer().isEmpty, "the buffer holds the bytes since the previous call")
        #expect(request.getResponseHeader("Content-Length") == "10240")
        let all = try #require(request.getAllResponseHeaders())
        #expect(all.split(separator: "\n").contains("Content-Length: 10240"))
        #expect(!all.contains("\r"))
    }

    @Test func formPostIsUrlencoded() throws {
        let (request, seen) = fetchAsync("POST", try env.httpURL + "/echo") { request in
            request.setPostValue("grüße & more", forKey: "greeting")
            request.setPostValue("1+1=2", forKey: "sum")
        }
        #expect(request.getStatus() == 200)
        let echo = try Echo(seen.body)
        #expect(echo.method == "POST")
        #expect(echo.body == Data("greeting=gr%C3%BC%C3%9Fe+%26+more&sum=1%2B1%3D2".utf8))
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func requestsWithoutABodyCarryNoContentType() throws {
        // POST, PUT and PATCH without a body send an empty one; libcurl's form type for a
        // POST must not come with it. Other methods send neither body nor type.
        for method in ["POST", "PUT", "PATCH", "GET", "DELETE", "OPTIONS"] {
            let (request, body) = fetchSync(method, try env.httpURL + "/echo")
            #expect(request.getStatus() == 200, "\(method)")
            let echo = try Echo(body)
            #expect(echo.method == method)
            #expect(echo.header("Content-Type") == nil, "\(method) got \(echo.header("Content-Type") ?? "")")
            #expect(echo.bodyLength == 0)
            let sendsEmptyBody = ["POST", "PUT", "PATCH"].contains(method)
            #expect(echo.header("Content-Length") == (sendsEmptyBody ? "0" : nil), "\(method)")
        }
    }

    @Test func rawBinaryBodyArrivesByteForByte() throws {
        var bytes = Data((0..<4096).map { UInt8($0 & 0xFF) })
        bytes.append(contentsOf: [0, 0, 0, 13, 10, 0])
        let (request, seen) = fetchAsync("POST", try env.httpURL + "/echo", body: bytes) { request in
            request.setRequestHeader("Content-Type", value: "application/octet-stream")
            request.setRequestHeader("X-Test", value: "  padded  ")
            request.setRequestHeader("X-Empty", value: "")
            request.setRequestHeader("X-Multi", value: "a")
            request.setRequestHeader("x-MULTI", value: " b")
        }
        #expect(request.getStatus() == 200)
        let echo = try Echo(seen.body)
        #expect(echo.bodyLength == bytes.count)
        #expect(echo.body == bytes)
        #expect(echo.header("Content-Type") == "application/octet-stream")
        #expect(echo.header("X-Test") == "padded")
        #expect(echo.header("X-Empty") == "", "an empty value is sent, not dropped")
        #expect(echo.header("X-Multi") == "a, b", "a repeated name, in any case, is joined")
    }

    /// removeRequestHeader leaves out a field libcurl adds (Host, Accept, the default
    /// User-Agent) and one set before; a later setRequestHeader sends the name again.
    @Test func removedHeadersAreLeftOut() throws {
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/record"))
        #expect(request.removeRequestHeader("Host") && request.removeRequestHeader("accept"))
        #expect(request.removeRequestHeader("User-Agent"))
        #expect(request.setRequestHeader("X-Gone", value: "1") && request.removeRequestHeader("X-Gone"))
        #expect(request.removeRequestHeader("X-Back") && request.setRequestHeader("X-Back", value: "2"))
        #expect(!request.removeRequestHeader("Content-Length") && !request.removeRequestHeader("Bad Name"))
        #expect(request.send())
        let headers = try #require((try JSONSerialization.jsonObject(with: request.getReceiveBuffer()) as? [String: Any])?["headers"] as? [String: String])
        #expect(headers["Host"] == nil && headers["Accept"] == nil && headers["User-Agent"] == nil && headers["X-Gone"] == nil, "\(headers)")
        #expect(headers["X-Back"] == "2", "\(headers)")
    }

    @Test func stringBodyIsUTF8TextAndSyncPostWorks() throws {
        let request = HttpRequest()
        #expect(request.open("post", url: try env.httpURL + "/echo?status=201"))
        #expect(request.send("héllo"))
        #expect(request.getStatus() == 201)
        let echo = try Echo(request.getReceiveBuffer())
        #expect(echo.method == "POST")
        #expect(echo.body == Data("héllo".utf8))
        #expect(echo.header("Content-Type") == "text/plain;charset=UTF-8")
    }

    @Test func headHasHeadersAndNoBody() throws {
        let (request, seen) = fetchAsync("HEAD", try env.httpURL + "/files/10k")
        #expect(seen.states == [.opened, .sent, .headersReceived, .done])
        #expect(request.getStatus() == 200)
        #expect(request.getResponseHeader("Content-Length") == "10240")
        #expect(seen.body.isEmpty)
    }

    @Test func putStreamsAFileAndCustomMethodsAreKept() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlxhr-put-\(UUID())").path
        let content = Pattern.bytes(300_000)
        try content.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let put = HttpRequest()
        let recorder = Recorder()
        put.delegate = recorder
        #expect(put.open("POST", url: try env.httpURL + "/echo", async: true))
        #expect(put.sendWithFile(path))
        #expect(recorder.waitForDone())
        let echo = try Echo(recorder.result.body)
        #expect(echo.method == "PUT", "sendWithFile uses PUT unless the method is custom")
        #expect(echo.bodyLength == content.count)
        #expect(echo.body == content)
        #expect(put.getBytesSent() == Int64(content.count), "upload progress reached the whole file")

        let custom = HttpRequest()
        #expect(custom.open("PROPPATCH", url: try env.httpURL + "/echo"))
        #expect(custom.sendWithFile(path))
        #expect(try Echo(custom.getReceiveBuffer()).method == "PROPPATCH")

        let delete = HttpRequest()
        #expect(delete.open("delete", url: try env.httpURL + "/echo"))
        #expect(delete.send())
        #expect(try Echo(delete.getReceiveBuffer()).method == "DELETE")
        #expect(delete.getBytesSent() == 0)
        let post = HttpRequest()
        #expect(post.open("POST", url: try env.httpURL + "/echo"))
        #expect(post.sendData(content))
        #expect(post.getBytesSent() == Int64(content.count))
        #expect(try Echo(post.getReceiveBuffer()).body == content,
                "a body over 64 KiB is read from the caller's Data as it goes out, byte for byte")
    }

    @Test func nothingCarriesOverFromOneRequestToTheNext() throws {
        // The engine keeps libcurl handles between requests together with their options:
        // each request must still go out with its own method, URL, headers, credentials and
        // body, and nothing of the one before.
        let basic = try env.httpURL + "/basic/echo", plain = try env.httpURL + "/echo"
        let user = try env["TESTENV_USER"], password = try env["TESTENV_PASSWORD"]
        let request = HttpRequest()
        for round in 0..<5 {
            #expect(request.open("POST", url: basic + "?first", user: user, password: password))
            request.setRequestHeader("X-Round", value: "\(round)")
            #expect(request.send("first \(round)", timeout: 10))
            #expect(request.getStatus() == 200)
            let first = try Echo(request.getReceiveBuffer())
            #expect(first.json["remote_user"] as? String == user)
            #expect(first.header("X-Round") == "\(round)")
            #expect(first.json["query"] as? String == "first")
            #expect(first.body == Data("first \(round)".utf8))

            // The same shape again: the URL and the body are this request's.
            #expect(request.open("POST", url: basic + "?second", user: user, password: password))
            request.setRequestHeader("X-Round", value: "\(round)")
            #expect(request.send("second", timeout: 10))
            let second = try Echo(request.getReceiveBuffer())
            #expect(second.json["query"] as? String == "second")
            #expect(second.body == Data("second".utf8))

            // A plain GET: no credentials, header, body or Content-Type left over.
            #expect(request.open("GET", url: plain + "?plain"))
            #expect(request.send())
            #expect(request.getStatus() == 200)
            let third = try Echo(request.getReceiveBuffer())
            #expect(third.method == "GET")
            #expect(third.json["query"] as? String == "plain")
            #expect(third.header("Authorization") == nil)
            #expect(third.header("X-Round") == nil)
            #expect(third.header("Content-Type") == nil)
            #expect(third.bodyLength == 0)

            // HEAD, then a GET that gets its body again.
            #expect(request.open("HEAD", url: try env.httpURL + "/files/100b"))
            #expect(request.send())
            #expect(request.getStatus() == 200)
            #expect(request.getReceiveBuffer().isEmpty)
            #expect(request.open("GET", url: try env.httpURL + "/files/100b"))
            #expect(request.send())
            #expect(request.getReceiveBuffer() == Pattern.bytes(100))
        }
    }

    @Test func sendWithFileRefusesWhatItCannotRead() throws {
        let request = HttpRequest()
        #expect(request.open("PUT", url: try env.httpURL + "/echo"))
        #expect(!request.sendWithFile("/nonexistent/file"))
        #expect(request.lastError?.code == .fileUnreadable)
        #expect(!request.sendWithFile(FileManager.default.temporaryDirectory.path))
        #expect(request.lastError?.code == .fileUnreadable)
        #expect(request.getState() == .opened, "a refused send sends nothing")
        #expect(request.send())
        #expect(request.getStatus() == 200)
    }

    @Test func badHeadersAreRefusedAndNothingIsSent() throws {
        let url = try env.faultURL + "/record?case=headers-\(UUID())"
        let request = HttpRequest()
        #expect(request.open("GET", url: url))
        let refused: [(String, String)] = [
            ("X-Bad", "a\r\nInjected: 1"), ("X-Bad", "a\nb"), ("X-Bad", "a\0b"),
            ("Bad Name", "v"), ("Bad:Name", "v"), ("", "v"), ("X\rY", "v"), ("Content-Length", "5"),
            ("content-LENGTH", "5"), ("Transfer-encoding", "chunked"),
        ]
        for (name, value) in refused {
            #expect(!request.setRequestHeader(name, value: value), "\(name.debugDescription): \(value.debugDescription)")
            #expect(request.lastError?.code == .invalidArgument)
        }
        #expect(request.getState() == .opened)
        let recorded = fetchSync("GET", try env.faultURL + "/recorded").1
        #expect(!String(decoding: recorded, as: UTF8.self).contains(url.split(separator: "?").last!))
    }

    @Test func openRefusesMalformedInput() {
        let request = HttpRequest()
        #expect(!request.open("GET", url: "not a url"))
        #expect(request.lastError?.code == .invalidArgument)
        #expect(!request.open("GET", url: "ftp://127.0.0.1/"))
        #expect(!request.open("BAD METHOD", url: "http://127.0.0.1/"))
        #expect(!request.open("GET", url: "http://127.0.0.1/", user: "u", password: "p", auth: "KERBEROS5"))
        #expect(request.lastError?.message.contains("KERBEROS5") == true)
        #expect(request.getState() == .unsent)
        #expect(!request.send())
        #expect(request.lastError?.code == .invalidState)
    }

    @Test func callsOutOfStateSayFalse() throws {
        let request = HttpRequest()
        #expect(!request.setRequestHeader("X-A", value: "1"), "setRequestHeader needs OPENED")
        #expect(!request.abort(), "abort in UNSENT")
        #expect(request.disableFollowLocation(), "pre-send switches work in UNSENT")
        #expect(request.open("GET", url: try env.httpURL + "/echo"))
        #expect(!request.abort(), "abort in OPENED")
        #expect(request.send())
        #expect(!request.abort(), "abort in DONE")
        #expect(request.getStatus() == 200, "abort in DONE changes nothing")
        #expect(!request.send(), "send in DONE")
        #expect(!request.setRequestHeader("X-A", value: "1"))
        request.setPostValue("v", forKey: "k")
        #expect(request.lastError?.code == .invalidState)
        #expect(request.disableCookieHandling(), "pre-send switches work in DONE")
        #expect(request.open("GET", url: try env.httpURL + "/echo"))
        #expect(!request.send(nil, timeout: -1))
        #expect(request.lastError?.code == .invalidArgument)
        #expect(!request.send(nil, timeout: .nan))
        #expect(request.getState() == .opened)
    }

    @Test func bodyAndFormValuesExcludeEachOther() throws {
        let request = HttpRequest()
        #expect(request.open("POST", url: try env.httpURL + "/echo"))
        request.setPostValue("v", forKey: "k")
        #expect(!request.send("raw"))
        #expect(request.lastError?.code == .invalidArgument)
        request.clearPostValues()
        #expect(request.send("raw"))
        #expect(try Echo(request.getReceiveBuffer()).body == Data("raw".utf8))
    }

    @Test func theDelegateIsHeldWeakly() throws {
        let request = HttpRequest()
        weak var released: Recorder?
        do {
            let recorder = Recorder()
            released = recorder
            request.delegate = recorder
            #expect(request.delegate === recorder)
        }
        #expect(released == nil, "the request does not keep its delegate alive")
        #expect(request.delegate == nil)
        // With no delegate left, the closure still reports and nothing crashes.
        let done = DispatchSemaphore(value: 0)
        request.onStatusChange = { if $0.getState() == .done { done.signal() } }
        #expect(request.open("GET", url: try env.httpURL + "/files/100b", async: true))
        #expect(request.send())
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(request.getStatus() == 200)
    }

    @Test func connectionsAreKeptAliveAndReused() throws {
        // The fault server answers /record with the client's port: one port, one connection.
        // (Other tests may open connections to the same server at the same time, so look for
        // reuse among a few sequential requests rather than demanding it of one pair.)
        var ports: [Int] = []
        for _ in 0..<5 {
            let (request, body) = fetchSync("GET", try env.faultURL + "/record?reuse=\(UUID())")
            #expect(request.getStatus() == 200)
            let record = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            ports.append(try #require(record["client_port"] as? Int))
        }
        #expect(Set(ports).count < ports.count, "ports \(ports): no connection was reused")
    }

    @Test func headersRepeatedAndMixedCase() throws {
        let (request, _) = fetchSync("GET", try env.faultURL + "/headers")
        #expect(request.getResponseHeader("x-mixed-case") == "yes")
        #expect(request.getResponseHeader("X-MULTI") == "a, b")
        #expect(request.getResponseHeader("X-Absent") == nil)
        let lines = try #require(request.getAllResponseHeaders()).split(separator: "\n")
        #expect(lines.contains("X-MiXeD-Case: yes"))
        #expect(lines.filter { $0.hasPrefix("X-Multi:") }.count == 2)
    }

    @Test func oneRequestSendsEveryKindOfBodyInTurn() throws {
        // One request object, re-opened: each send must carry exactly its own body, method and
        // type, whatever the send before it carried (a copied body, a streamed one, a file,
        // none), synchronous and asynchronous.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlxhr-turns-\(UUID())").path
        let file = Pattern.bytes(200_000, from: 7)
        try file.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let small = Data("small body".utf8)
        let large = Pattern.bytes(150_000)
        let request = HttpRequest()
        let url = try env.httpURL + "/echo"
        func echo(_ async: Bool, _ method: String, _ send: () -> Bool) throws -> Echo {
            let recorder = Recorder()
            request.delegate = recorder
            #expect(request.open(method, url: url, async: async))
            #expect(send())
            if async { #expect(recorder.waitForDone()) }
            #expect(request.getStatus() == 200)
            return try Echo(async ? recorder.result.body : request.getReceiveBuffer())
        }
        for async in [false, true, false] {
            let copied = try echo(async, "POST") { request.sendData(small) }
            #expect(copied.method == "POST" && copied.body == small && copied.header("Content-Type") == nil)
            let text = try echo(async, "PATCH") { request.send("text") }
            #expect(text.method == "PATCH" && text.body == Data("text".utf8))
            #expect(text.header("Content-Type") == "text/plain;charset=UTF-8")
            let streamed = try echo(async, "POST") { request.sendData(large) }  // above the copied-body limit
            #expect(streamed.bodyLength == large.count && streamed.body == large)
            let put = try echo(async, "POST") { request.sendWithFile(path) }
            #expect(put.method == "PUT" && put.body == file)
            let get = try echo(async, "GET") { request.send() }
            #expect(get.method == "GET" && get.bodyLength == 0 && get.header("Content-Type") == nil)
        }
    }

    @Test func aReusedRequestReportsOnlyItsLatestResponseHeaders() throws {
        // One request object, re-opened: each response's headers replace the last one's
        // entirely, a long head followed by a shorter one included.
        let request = HttpRequest()
        for _ in 0..<2 {
            #expect(request.open("GET", url: try env.faultURL + "/headers"))
            #expect(request.send())
            let many = try #require(request.getAllResponseHeaders())
            #expect(many.split(separator: "\n").filter { $0.hasPrefix("X-Multi:") }.count == 2)

            #expect(request.open("GET", url: try env.httpURL + "/files/10k"))
            #expect(request.getAllResponseHeaders() == nil, "open forgets the last response")
            #expect(request.send())
            let lines = try #require(request.getAllResponseHeaders()).split(separator: "\n")
            #expect(lines.contains("Content-Length: 10240"))
            #expect(!lines.contains { $0.hasPrefix("X-Multi") || $0.hasPrefix("X-MiXeD-Case") }, "\(lines)")
            #expect(request.getResponseHeader("X-Multi") == nil)
            #expect(lines.filter { $0.hasPrefix("Content-Length:") }.count == 1)
        }
    }

    @Test func receiveBuffersHandedOutNeverChange() throws {
        // A request refills its small receive buffer in place once the caller has let go of
        // it: buffers the caller keeps must stay exactly as they were handed out.
        let request = HttpRequest()
        let kept = Locked([Data]())
        let done = DispatchSemaphore(value: 0)
        request.onStatusChange = { request in
            let state = request.getState()
            guard state == .loading || state == .done else { return }
            let buffer = request.getReceiveBuffer()
            kept.withLock { $0.append(buffer) }
            if state == .done { done.signal() }
        }
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=6&size=300&interval_ms=30", async: true))
        #expect(request.send())
        #expect(done.wait(timeout: .now() + 20) == .success)
        let chunks = kept.withLock { $0 }
        #expect(chunks.filter { !$0.isEmpty }.count >= 2, "the body came in one piece: \(chunks.map(\.count))")
        #expect(chunks.reduce(Data(), +) == Pattern.bytes(1800))

        // The same object, synchronous: the first response's buffer, kept, outlives the next.
        let other = HttpRequest()
        #expect(other.open("GET", url: try env.faultURL + "/bytes?n=1000"))
        #expect(other.send())
        let first = other.getReceiveBuffer()
        #expect(other.open("GET", url: try env.httpURL + "/echo"))
        #expect(other.send())
        let second = other.getReceiveBuffer()
        #expect(first == Pattern.bytes(1000))
        #expect(try Echo(second).method == "GET")
        // Let go of, the buffer is refilled in place by the next response; the result is the same.
        #expect(other.open("GET", url: try env.faultURL + "/bytes?n=900"))
        #expect(other.send())
        #expect(other.getReceiveBuffer() == Pattern.bytes(900))
        #expect(first == Pattern.bytes(1000))
        #expect(try Echo(second).method == "GET")
    }

    @Test func aRequestCanBeOpenedAndSentFromItsDoneCallback() throws {
        let url = try env.httpURL + "/echo?second=1"
        let secondDone = DispatchSemaphore(value: 0)
        let states = RecordedStates()
        let request = HttpRequest()
        request.onStatusChange = { request in
            let state = request.getState()
            states.append(state)
            guard state == .done else { return }
            if states.count(of: .done) == 1 {
                #expect(request.open("GET", url: url, async: true))
                #expect(request.send())
            } else {
                secondDone.signal()
            }
        }
        #expect(request.open("GET", url: try env.httpURL + "/echo?first=1", async: true))
        #expect(request.send())
        #expect(secondDone.wait(timeout: .now() + 30) == .success)
        #expect(request.getStatus() == 200)
        #expect(try Echo(request.getReceiveBuffer()).json["query"] as? String == "second=1")
        let seen = states.all
        #expect(seen.first == .opened)
        #expect(seen.filter { $0 == .opened }.count == 2)
        #expect(seen.filter { $0 == .done }.count == 2)
    }

    /// libcurl is handed each URL as `open` parsed it, on handles that go from request to
    /// request: every send must still go to its own URL, whatever the handle carried before
    /// (another URL, a redirect's next hop, a user in the URL). Against the fault server's
    /// echo, which answers with the request's target and header fields.
    @Test func everySendGoesToTheURLItsRequestWasOpenedWith() throws {
        let base = try env.faultURL
        let host = try #require(URL(string: base)?.host)
        let withUser = base.replacingOccurrences(of: "://\(host)", with: "://u:p@\(host)")
        let redirect = base + "/redirect/to?url=" + (base + "/echo/hop?n=3").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        /// The target and whether an Authorization field came, from an echo's JSON.
        func echoed(_ body: Data) throws -> (target: String?, authorized: Bool) {
            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let fields = json["headers"] as? [[String]] ?? []
            return (json["target"] as? String, fields.contains { $0.first?.lowercased() == "authorization" })
        }
        let steps: [(url: String, target: String)] = [
            (base + "/echo/a?n=1", "/echo/a?n=1"), (base + "/echo/b?n=2", "/echo/b?n=2"), (redirect, "/echo/hop?n=3"),
            (base + "/echo/a?n=1", "/echo/a?n=1"), (withUser + "/echo/user?n=4", "/echo/user?n=4"),
            (base + "/echo/b?n=2", "/echo/b?n=2"), (redirect, "/echo/hop?n=3"), (redirect, "/echo/hop?n=3"),
        ]
        let request = HttpRequest()
        for (index, step) in steps.enumerated() {
            #expect(request.open("GET", url: step.url))
            #expect(request.send())
            #expect(request.getStatus() == 200, "step \(index)")
            let echo = try echoed(request.getReceiveBuffer())
            #expect(echo.target == step.target, "step \(index): \(step.url)")
            // Where the response came from: the URL opened, or the redirect's hop.
            #expect(request.getMetrics().effectiveURL == (step.url == redirect ? base + step.target : step.url), "step \(index)")
            #expect(echo.authorized == step.url.hasPrefix(withUser), "step \(index)")
        }
        // Many at once, on alternating URLs, so the engine's handles change URL while others run.
        let targets = (0..<24).map { "/echo/many\($0 % 3)?i=\($0)" }
        let requests = targets.map { _ in HttpRequest() }
        let done = DispatchSemaphore(value: 0)
        for (request, target) in zip(requests, targets) {
            request.onStatusChange = { if $0.getState() == .done { done.signal() } }
            #expect(request.open("GET", url: base + target, async: true))
            #expect(request.send())
        }
        for _ in targets { #expect(done.wait(timeout: .now() + 30) == .success) }
        for (request, target) in zip(requests, targets) {
            #expect(request.getStatus() == 200)
            #expect(try echoed(request.getReceiveBuffer()).target == target)
        }
    }
}

/// A thread-safe list of states for closure-based callbacks.
final class RecordedStates: Sendable {
    private let states = Locked<[HttpRequest.State]>([])
    func append(_ state: HttpRequest.State) { states.withLock { $0.append(state) } }
    func count(of state: HttpRequest.State) -> Int { states.withLock { $0.filter { $0 == state }.count } }
    var all: [HttpRequest.State] { states.withLock { $0 } }
}
