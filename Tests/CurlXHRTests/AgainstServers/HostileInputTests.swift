@testable import CurlXHR
import Foundation
import Testing

/// What a hostile server or a careless caller sends never breaks an invariant: a response
/// with trailers completes, a response with disagreeing lengths fails, and input that would
/// split the request's head is refused before anything goes out.
@Suite(.ownThreads) struct HostileInputTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    // MARK: Trailers

    @Test func aChunkedResponseWithTrailersCompletesAndItsTrailersAreReadable() throws {
        let sha = "9f2c3d0e1b"
        let url = try env.faultURL + "/trailers?n=5000&name=X-Checksum&value=\(sha)&name=X-Count&value=5000"
        let (request, seen) = fetchAsync("GET", url)
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(request.getFailureKind() == nil)
        #expect(seen.states.first == .opened && seen.states.last == .done && seen.states.contains(.headersReceived))
        #expect(seen.body == Pattern.bytes(5000), "the body arrives whole")
        #expect(request.getResponseTrailer("X-Checksum") == sha)
        #expect(request.getResponseTrailer("x-count") == "5000", "matched in any case")
        #expect(request.getResponseTrailer("X-Absent") == nil)
        // Trailers are not header fields.
        #expect(request.getResponseHeader("X-Checksum") == nil)
        #expect(request.getAllResponseHeaders()?.contains("X-Checksum:") == false)
        #expect(request.getResponseHeader("Trailer") == "X-Checksum, X-Count")

        // Synchronous, and again on the same request (the connection stays usable).
        let (sync, body) = fetchSync("GET", url)
        #expect(sync.getStatus() == 200 && body == Pattern.bytes(5000))
        #expect(sync.getResponseTrailer("X-Checksum") == sha)
        #expect(sync.open("GET", url: try env.faultURL + "/status?code=200"))
        #expect(sync.getResponseTrailer("X-Checksum") == nil, "open forgets the previous response's trailers")
        #expect(sync.send())
        #expect(sync.getStatus() == 200)
        #expect(sync.getResponseTrailer("X-Checksum") == nil, "a response without trailers has none")
    }

    @Test func theDoneCallbackReadsTheTrailers() throws {
        let request = HttpRequest()
        let atDone = Locked<[String?]>([])
        let recorder = Recorder { request, state in
            if state == .done { atDone.withLock { $0.append(request.getResponseTrailer("X-Count")) } }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/trailers?n=10", async: true))
        #expect(request.getResponseTrailer("X-Count") == nil, "nothing before the send")
        #expect(request.send())
        #expect(recorder.waitForDone())
        #expect(atDone.withLock { $0 } == ["10"])
    }

    @Test func http2TrailersAreReadableToo() throws {
        let environment = try TestEnvironment.get()
        let (request, body) = fetchSync("GET", try environment.slowH2URL + "/trailers?n=20000") {
            $0.setCACertificateFile(try! environment.caFile)
            $0.setRequestHeader("TE", value: "trailers")
        }
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(request.getMetrics().httpVersion == "HTTP/2")
        #expect(body == Data(repeating: UInt8(ascii: "x"), count: 20000))
        #expect(request.getResponseTrailer("X-Checksum") == "abc")
        #expect(request.getResponseTrailer("X-Count") == "20000")
        #expect(request.getResponseHeader("X-Checksum") == nil)
    }

    @Test func anAsyncResponseWithTrailersEndsNormally() async throws {
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/trailers?n=70000"))
        let response = try await request.response()
        #expect(response.status == 200)
        let body = try await response.body.collect(upTo: 1 << 20)
        #expect(body == Pattern.bytes(70000))
    }

    // MARK: Framing

    @Test(arguments: ["fields", "list"])
    func twoDifferentContentLengthsAreAFailure(form: String) throws {
        let url = try env.faultURL + "/two-lengths?a=5&b=7&form=\(form)"
        let (request, seen) = fetchAsync("GET", url)
        #expect(request.getStatus() == 0)
        #expect(seen.statusAtDone == 0)
        #expect(request.getFailureKind() == .response)
        #expect(request.getStatusText()?.contains("Content-Length") == true, "\(request.getStatusText() ?? "")")
        #expect(seen.states == [.opened, .sent, .done], "no HEADERS_RECEIVED for a response that is refused")
        #expect(seen.body.isEmpty)
        let (sync, body) = fetchSync("GET", url)
        #expect(sync.getStatus() == 0 && sync.getFailureKind() == .response && body.isEmpty)
    }

    @Test func repeatedEqualContentLengthsAreOne() throws {
        let (request, body) = fetchSync("GET", try env.faultURL + "/two-lengths?a=5&b=5&form=list")
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(body == Pattern.bytes(5))
        let (fields, fieldsBody) = fetchSync("GET", try env.faultURL + "/two-lengths?a=5&b=5")
        #expect(fields.getStatus() == 200 && fieldsBody == Pattern.bytes(5))
    }

    // MARK: Input that would split the request

    /// A refused `open` leaves the request as the last good `open` made it: what goes out is
    /// that request, unaltered.
    func expectRefused(_ request: HttpRequest, _ accepted: Bool, naming words: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!accepted, sourceLocation: sourceLocation)
        #expect(request.lastError?.code == .invalidArgument, sourceLocation: sourceLocation)
        let message = request.lastError?.message ?? ""
        #expect(words.allSatisfy { message.lowercased().contains($0.lowercased()) }, "\(message)", sourceLocation: sourceLocation)
        #expect(!message.contains("\r") && !message.contains("\n") && !message.contains("\0"),
                "control characters are escaped: \(message.debugDescription)", sourceLocation: sourceLocation)
    }

    @Test func credentialsMethodsAndURLsThatWouldSplitTheRequestAreRefused() throws {
        let echo = try env.httpURL + "/echo"
        let request = HttpRequest()
        #expect(request.open("GET", url: echo, user: "alice", password: "secret", auth: "DIGEST"))
        for scheme in ["BASIC", "DIGEST", "NTLM", nil] {
            expectRefused(request, request.open("GET", url: echo, user: "alice\r\nX-Injected: 1", password: "p", auth: scheme),
                          naming: ["user name", "\\r\\n"])
            expectRefused(request, request.open("GET", url: echo, user: "alice\0", password: "p", auth: scheme), naming: ["user name"])
            expectRefused(request, request.open("GET", url: echo, user: "alice", password: "p\nX-Injected: 1", auth: scheme),
                          naming: ["password"])
        }
        expectRefused(request, request.open("GET", url: echo, user: "a\r\n@EXAMPLE.TEST", password: "p", auth: "NEGOTIATE"),
                      naming: ["user name"])
        for method in ["CONNECT", "trace", "Track"] {
            expectRefused(request, request.open(method, url: echo), naming: ["forbidden", method.uppercased()])
        }
        expectRefused(request, request.open("GE\rT", url: echo), naming: ["method", "\\r"])
        expectRefused(request, request.open("GET", url: echo + "?a\r\nX-Injected: 1"), naming: ["URL", "\\r\\n"])
        expectRefused(request, request.open("GET", url: echo + "\n"), naming: ["URL"])
        expectRefused(request, request.open("GET", url: "http://a.example:80\\@127.0.0.1/echo"), naming: ["backslash"])
        expectRefused(request, request.open("GET", url: "http://user:pa\\ss@127.0.0.1/echo"), naming: ["backslash"])
        // libcurl reads "http:/" and "http:///" as "http://": their authority is checked too.
        expectRefused(request, request.open("GET", url: "http:/a.example\\@127.0.0.1/echo"), naming: ["backslash"])
        expectRefused(request, request.open("GET", url: "http:///user:pa\\ss@127.0.0.1/echo"), naming: ["backslash"])
        expectRefused(request, request.enableHttpProxy(host: "127.0.0.1", port: 3128, user: "bob\r\nX-Injected: 1", password: "p"),
                      naming: ["user name"])
        expectRefused(request, request.enableHttpProxy(host: "127.0.0.1", port: 3128, user: "bob", password: "p\r\n", auth: "DIGEST"),
                      naming: ["password"])
        expectRefused(request, request.enableHttpProxy(host: "proxy\r\nX-Injected: 1", port: 3128), naming: ["proxy", "\\r\\n"])

        // A backslash after the authority is a path's byte, sent as libcurl sends it.
        #expect(HttpRequest().open("GET", url: echo + "/a\\b"))

        // None of that changed the request: it sends the last good open, credentials and all.
        #expect(request.getState() == .opened)
        #expect(request.send())
        #expect(request.getStatus() == 200)
        let sent = try Echo(request.getReceiveBuffer())
        #expect(sent.method == "GET")
        #expect(sent.header("X-Injected") == nil)
        #expect(sent.headers.allSatisfy { !$0.key.contains("Injected") && !$0.value.contains("Injected") })
    }

    @Test func digestWithAnInjectedUserNeverReachesTheServer() throws {
        let request = HttpRequest()
        #expect(!request.open("GET", url: try env.httpURL + "/digest/echo", async: false, user: "alice\r\nX-Injected: 1", password: "x", auth: "DIGEST"))
        #expect(request.getState() == .unsent)
        #expect(!request.send(), "nothing to send")
    }

    @Test func xhrRefusesCredentialsThatWouldSplitTheRequest() throws {
        let run = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"),
                                       ["-s", "-S", "-u", "alice\r\nX-Injected: 1:secret", "--auth", "digest", try env.faultURL + "/echo"])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("\\r\\n") && !run.stderr.dropLast().contains("\n"), "\(run.stderr.debugDescription)")
        let method = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-S", "-X", "TRACE", try env.faultURL + "/echo"])
        #expect(method.status == 2, "\(method.stderr)")
        #expect(method.stderr.contains("TRACE"))
    }

    @Test func refusalsQuotingPathsAndCookiesEscapeControlCharacters() throws {
        let request = HttpRequest()
        #expect(request.open("PUT", url: try env.faultURL + "/sink"))
        expectRefusedQuietly(request, request.sendWithFile("/no/such\nfile"))
        expectRefusedQuietly(request, request.setResponseFile("/no/such\r\nfolder/file"))
        #expect(!CookieStore.shared.setCookie(Cookie(name: "a", value: "b", domain: "ex\nample.com", path: "/")))
    }

    /// Refused, with a text that names the input with its control characters escaped.
    func expectRefusedQuietly(_ request: HttpRequest, _ accepted: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!accepted, sourceLocation: sourceLocation)
        let message = request.lastError?.message ?? ""
        #expect(message.contains("\\n") && !message.contains("\n") && !message.contains("\r"), "\(message.debugDescription)",
                sourceLocation: sourceLocation)
    }

    @Test func escapedWritesEveryControlCharacterVisibly() {
        #expect(MessageValidation.escaped("plain") == "plain")
        #expect(MessageValidation.escaped("a\r\nb\tc\0d") == "a\\r\\nb\\tc\\0d")
        #expect(MessageValidation.escaped("\u{1B}[31m\u{7F}\u{85}\u{2028}") == "\\u{1B}[31m\\u{7F}\\u{85}\\u{2028}")
        #expect(MessageValidation.escaped("héllo ✓") == "héllo ✓")
    }
}
