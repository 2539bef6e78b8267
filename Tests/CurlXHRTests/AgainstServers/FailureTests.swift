@testable import CurlXHR
import Foundation
import Testing

/// Network failures end in DONE with status 0 and a text; protocol details stay invisible.
@Suite(.ownThreads) struct FailureTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func expectFailure(_ request: HttpRequest, _ seen: Recorder.Seen, _ kind: FailureKind, mentioning words: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request.getState() == .done, sourceLocation: sourceLocation)
        #expect(request.getFailureKind() == kind, sourceLocation: sourceLocation)
        #expect(request.getStatus() == 0, sourceLocation: sourceLocation)
        #expect(seen.statusAtDone == 0, sourceLocation: sourceLocation)
        #expect(seen.states.last == .done, sourceLocation: sourceLocation)
        let text = (request.getStatusText() ?? "").lowercased()
        #expect(words.contains { text.contains($0.lowercased()) }, "status text: \(text)", sourceLocation: sourceLocation)
    }

    @Test func connectionRefused() {
        let (request, seen) = fetchAsync("GET", "http://127.0.0.1:1/")
        expectFailure(request, seen, .connection, mentioning: ["connect"])
        #expect(seen.states == [.opened, .sent, .done])
        let sync = fetchSync("GET", "http://127.0.0.1:1/").0
        #expect(sync.getStatus() == 0)
        #expect(sync.getStatusText()?.isEmpty == false)
    }

    @Test func resetMidBodyEndsWithStatusZeroAfterLoadingSawTheStatus() throws {
        let request = HttpRequest()
        let statuses = Locked<[Int]>([])
        let recorder = Recorder { request, state in
            if state == .loading { statuses.withLock { $0.append(request.getStatus()) } }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/reset?after=5000&wait_ms=500", async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        let seen = recorder.result
        #expect(seen.statusAtHeaders == 200)
        #expect(statuses.withLock { $0 }.first == 200, "LOADING saw the 200")
        #expect(seen.body.count == 5000, "the bytes that arrived are not lost")
        // "receiving": libcurl's words for the code alone (``Transfer/failure(_:)``).
        expectFailure(request, seen, .connection, mentioning: ["reset", "recv", "receiving", "connection", "transfer closed"])
    }

    /// libcurl sends a request again on a new connection when the kept-alive one it reused
    /// turns out dropped before any byte of a response (a race with the server closing it).
    /// If the second attempt fails too, the text tells that failure, not the one libcurl mended.
    @Test(arguments: ["/delay?ms=5000", "/stall?n=1000&after_head_ms=5000"])
    func aFailureAfterLibcurlSentTheRequestAgainIsToldByItsOwnText(path: String) throws {
        // A listener of this test's own: no other test takes the connection it leaves idle.
        let (_, portBody) = fetchSync("GET", try env.faultURL + "/own-port")
        let port = try #require(try JSONSerialization.jsonObject(with: portBody) as? [String: Int])["port"] ?? 0
        let base = "http://127.0.0.1:\(port)"
        let key = UUID().uuidString
        #expect(fetchSync("GET", base + "/status?code=200").0.getStatus() == 200, "a connection kept alive")
        let (request, seen) = fetchAsync("GET", base + path + "&reset_if_reused=\(key)", timeout: 1)
        let (_, countBody) = fetchSync("GET", base + "/reuse-resets?key=\(key)")
        let count = try #require(try JSONSerialization.jsonObject(with: countBody) as? [String: Int])["count"]
        #expect(count == 1, "sent on the reused connection, reset there, then sent on a new one")
        expectFailure(request, seen, .timeout, mentioning: ["timed out", "timeout"])
        #expect(request.getStatusText()?.lowercased().contains("reset") == false, "\(request.getStatusText() ?? "")")
        // The retry failed where the route makes it: waiting for the head, or in the body.
        #expect(seen.statusAtHeaders == (path.hasPrefix("/stall") ? 200 : nil))
    }

    @Test func timeoutCountsTheWholeRequest() throws {
        let started = Date()
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/delay?ms=5000", timeout: 0.5)
        expectFailure(request, seen, .timeout, mentioning: ["timed out", "timeout"])
        #expect(Date().timeIntervalSince(started) < 3)
        let slowBody = fetchSync("GET", try env.faultURL + "/drip?chunks=20&size=10&interval_ms=200", timeout: 1).0
        #expect(slowBody.getStatus() == 0, "the timeout covers the body too")
        let inTime = fetchSync("GET", try env.faultURL + "/delay?ms=100", timeout: 5).0
        #expect(inTime.getStatus() == 200)
    }

    @Test func malformedStatusLine() throws {
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/malformed")
        expectFailure(request, seen, .response, mentioning: ["http", "weird", "unsupported", "0.9"])
    }

    @Test(arguments: ["status", "field"])
    func aHeadCutOffIsAFailureNotAResponse(at: String) throws {
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/cuthead?at=\(at)")
        expectFailure(request, seen, .response, mentioning: ["ended inside its head"])
        #expect(seen.states == [.opened, .sent, .done], "no HEADERS_RECEIVED for a head that never ended")
        #expect(request.getResponseHeader("Content-Type") == nil)
        let sync = fetchSync("GET", try env.faultURL + "/cuthead?at=\(at)").0
        #expect(sync.getStatus() == 0)
        #expect(sync.getFailureKind() == .response)
    }

    @Test func unresolvableHost() {
        let (request, seen) = fetchAsync("GET", "http://nonexistent.invalid/", timeout: 20)
        expectFailure(request, seen, .dns, mentioning: ["resolve"])
    }

    @Test func hugeHeaderLinesAreHandled() throws {
        let fine = fetchSync("GET", try env.faultURL + "/hugeheader?kb=40").0
        #expect(fine.getStatus() == 200)
        #expect(fine.getResponseHeader("X-Huge")?.count == 40 * 1024)
        let (tooBig, seen) = fetchAsync("GET", try env.faultURL + "/hugeheader?kb=300")
        expectFailure(tooBig, seen, .response, mentioning: ["header", "too large", "recv", "failure"])
    }

    @Test func hundredContinueIsNotAFinalResponse() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlxhr-continue-\(UUID())").path
        try Pattern.bytes(2 * 1024 * 1024).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("PUT", url: try env.faultURL + "/continue", async: true))
        #expect(request.setRequestHeader("Expect", value: "100-continue"))
        #expect(request.sendWithFile(path))
        #expect(recorder.waitForDone())
        let seen = recorder.result
        #expect(seen.states.filter { $0 == .headersReceived }.count == 1)
        #expect(seen.statusAtHeaders == 200)
        let echo = try Echo(seen.body)
        #expect(echo.json["saw_expect"] as? Bool == true)
        #expect(echo.bodyLength == 2 * 1024 * 1024)
    }
}

/// Redirects: followed by default with one HEADERS_RECEIVED, or returned as they are.
@Suite(.ownThreads) struct RedirectTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    @Test func chainIsFollowedWithOneHeadersReceived() throws {
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/redirect/chain?n=5")
        #expect(request.getStatus() == 200)
        #expect(seen.states.filter { $0 == .headersReceived }.count == 1)
        #expect(seen.statusAtHeaders == 200, "HEADERS_RECEIVED is for the final response")
        #expect(String(decoding: seen.body, as: UTF8.self) == "end of chain")
        #expect(request.getResponseHeader("Location") == nil, "headers are the final response's only")
    }

    @Test func notFollowedAfterDisableFollowLocation() throws {
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/redirect/chain?n=5") {
            #expect($0.disableFollowLocation())
        }
        #expect(request.getStatus() == 302)
        #expect(seen.statusAtHeaders == 302)
        #expect(request.getResponseHeader("Location")?.contains("n=4") == true)
    }

    @Test func loopsEndAfterTwentyHops() throws {
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/redirect/loop")
        #expect(request.getStatus() == 0)
        #expect(seen.states.last == .done)
        #expect(request.getStatusText()?.lowercased().contains("redirect") == true, "\(request.getStatusText() ?? "")")
        #expect(request.getFailureKind() == .redirects)
    }

    /// setMaxRedirects: the chain's hops within the limit are followed, one more ends the
    /// request as curl's --max-redirs does; -1 follows past the default 20.
    @Test func theRedirectLimitIsSetPerRequest() throws {
        let chain = try env.faultURL + "/redirect/chain?n=5"
        let (within, _) = fetchAsync("GET", chain) { #expect($0.setMaxRedirects(5)) }
        #expect(within.getStatus() == 200)
        let (over, seen) = fetchAsync("GET", chain) { #expect($0.setMaxRedirects(4)) }
        #expect(over.getStatus() == 0 && seen.states.last == .done && !seen.states.contains(.headersReceived))
        #expect(over.getFailureKind() == .redirects && over.getFailureCode() == 47)
        #expect(over.getStatusText() == "Maximum (4) redirects followed", "\(over.getStatusText() ?? "")")
        let (none, _) = fetchSync("GET", chain) { $0.setMaxRedirects(0) }
        #expect(none.getStatus() == 0 && none.getStatusText() == "Maximum (0) redirects followed")
        let (long, longSeen) = fetchAsync("GET", try env.faultURL + "/redirect/chain?n=30") { #expect($0.setMaxRedirects(-1)) }
        #expect(long.getStatus() == 200 && String(decoding: longSeen.body, as: UTF8.self) == "end of chain")
        // The limit stays with the request object: sent again, it holds.
        #expect(over.open("GET", url: chain) && over.send())
        #expect(over.getStatus() == 0 && over.getFailureKind() == .redirects)
        #expect(over.setMaxRedirects(20) && over.open("GET", url: chain) && over.send() && over.getStatus() == 200)
    }

    @Test func aRedirectLimitOutOfRangeIsRefused() throws {
        let request = HttpRequest()
        for count in [-2, -1000, 10_001, Int.max, Int.min] {
            #expect(!request.setMaxRedirects(count), "\(count)")
            #expect(request.lastError?.code == .invalidArgument && request.lastError?.message.contains("redirect limit") == true)
        }
        #expect(request.setMaxRedirects(10_000) && request.lastError == nil)
        #expect(request.setMaxRedirects(-1))
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true))
        #expect(request.send())
        #expect(!request.setMaxRedirects(3), "not while in flight")
        request.abort()
    }

    @Test func onlyHttpAndHttpsAreFollowed() throws {
        let (request, _) = fetchAsync("GET", try env.faultURL + "/redirect/to?url=ftp://127.0.0.1/x")
        #expect(request.getStatus() == 0)
        #expect(request.getStatusText()?.isEmpty == false)
    }

    @Test func credentialsNeverGoToAnotherHost() throws {
        let marker = UUID().uuidString
        let port = try env["TESTENV_FAULT_PORT"]
        let target = "http://localhost:\(port)/record?marker=\(marker)"
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        // 127.0.0.1 and localhost are different hosts to the client: the hop must lose the credentials.
        let (request, _) = fetchSync("GET", "http://127.0.0.1:\(port)/redirect/to?url=\(encoded)") { request in
            #expect(request.open("GET", url: "http://127.0.0.1:\(port)/redirect/to?url=\(encoded)",
                                 user: "alice", password: "s3cret"))
            #expect(request.setRequestHeader("X-Marker", value: marker))
        }
        #expect(request.getStatus() == 200)
        let recorded = String(decoding: fetchSync("GET", try env.faultURL + "/recorded").1, as: UTF8.self)
        #expect(recorded.contains("marker=\(marker)"), "the redirect was followed")
        let records = try #require(try JSONSerialization.jsonObject(with: Data(recorded.utf8)) as? [[String: Any]])
        let hop = try #require(records.last { ($0["path"] as? String)?.contains("marker=\(marker)") == true })
        let headers = (hop["headers"] as? [String: String] ?? [:]).mapKeys { $0.lowercased() }
        #expect(headers["authorization"] == nil, "no credentials after a redirect to another host")
        #expect(headers["x-marker"] == marker, "other headers still go")
    }

    /// enableLocationTrusted (curl's --location-trusted): the hop to another host carries the
    /// credentials and the caller's Cookie field; xhr's option as curl's.
    @Test func trustedLocationsGetTheCredentials() throws {
        let marker = UUID().uuidString
        let port = try env["TESTENV_FAULT_PORT"]
        let target = "http://localhost:\(port)/record?trusted=\(marker)"
        let start = "http://127.0.0.1:\(port)/redirect/to?url=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
        let (request, _) = fetchSync("GET", start) { request in
            #expect(request.open("GET", url: start, user: "alice", password: "s3cret"))
            #expect(request.setRequestHeader("Cookie", value: "c=\(marker)"))
            #expect(request.enableLocationTrusted())
        }
        #expect(request.getStatus() == 200)
        func hopHeaders(_ key: String) throws -> [String: String] {
            let records = try #require(try JSONSerialization.jsonObject(with: fetchSync("GET", try env.faultURL + "/recorded").1) as? [[String: Any]])
            let hop = try #require(records.last { ($0["path"] as? String)?.contains(key) == true })
            return (hop["headers"] as? [String: String] ?? [:]).mapKeys { $0.lowercased() }
        }
        let headers = try hopHeaders("trusted=\(marker)")
        #expect(headers["authorization"] == "Basic " + Data("alice:s3cret".utf8).base64EncodedString(), "\(headers)")
        #expect(headers["cookie"] == "c=\(marker)")
        // The same hop through xhr and curl, with and without the option.
        for (options, sends) in [(["--location-trusted"], true), ([], false)] {
            for program in [TestEnvironment.builtProduct("xhr"), "/usr/bin/curl"] {
                let key = UUID().uuidString
                let hop = "http://localhost:\(port)/record?cli=\(key)"
                let url = "http://127.0.0.1:\(port)/redirect/to?url=\(hop.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
                let run = try XHRToolTests.run(program, ["-s", "-L", "-o", "/dev/null", "-u", "alice:s3cret"] + options + [url])
                #expect(run.status == 0)
                #expect((try hopHeaders("cli=\(key)")["authorization"] != nil) == sends, "\(program) \(options)")
            }
        }
    }

    /// setAllowedSchemes (curl's --proto, --proto-redir): a URL or a redirect of a scheme left
    /// out fails with libcurl's words; xhr and curl exit alike.
    @Test func theSchemesAllowedAreTheOnlyOnesUsed() throws {
        let target = try env.httpsURL + "/files/100b"
        let toHTTPS = try env.faultURL + "/redirect/to?url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let caFile = try env.caFile
        let (plain, _) = fetchSync("GET", try env.faultURL + "/files/100b") { #expect($0.setAllowedSchemes(["https"])) }
        #expect(plain.getStatus() == 0 && plain.getFailureCode() == 1, "\(plain.getStatusText() ?? "")")
        #expect(plain.getStatusText() == #"Protocol "http" not supported or disabled in libcurl"#, "\(plain.getStatusText() ?? "")")
        let (hop, _) = fetchSync("GET", toHTTPS) {
            $0.setCACertificateFile(caFile)
            #expect($0.setAllowedSchemes(["HTTP", "https"], redirects: ["http"]))
        }
        #expect(hop.getStatus() == 0 && hop.getFailureCode() == 1, "\(hop.getStatusText() ?? "")")
        #expect(hop.getStatusText() == #"Protocol "https" not supported or disabled in libcurl"#, "\(hop.getStatusText() ?? "")")
        let (allowed, body) = fetchSync("GET", toHTTPS) {
            $0.setCACertificateFile(caFile)
            #expect($0.setAllowedSchemes(["http", "https"], redirects: ["https"]))
        }
        #expect(allowed.getStatus() == 200 && body == Pattern.bytes(100), "\(allowed.getStatusText() ?? "")")
        let (none, _) = fetchSync("GET", try env.faultURL + "/redirect/chain?n=1") { #expect($0.setAllowedSchemes(["http"], redirects: [])) }
        #expect(none.getStatus() == 0 && none.getFailureCode() == 1)
        let request = HttpRequest()
        for (schemes, redirects) in [([String](), nil), (["ftp"], nil), (["http\r\n"], nil), (["http"], ["file"]), (["http", ""], nil)] as [([String], [String]?)] {
            #expect(!request.setAllowedSchemes(schemes, redirects: redirects), "\(schemes) \(String(describing: redirects))")
            #expect(request.lastError?.code == .invalidArgument && request.lastError?.message.contains("\n") == false)
        }
        let cases: [([String], String, Int32)] = [
            (["--proto", "=https"], try env.faultURL + "/files/100b", 1), (["--proto-redir", "=http"], toHTTPS, 1),
            (["--proto", "=http"], toHTTPS, 1), (["--proto", "-all,http"], try env.faultURL + "/redirect/chain?n=1", 0),
            (["--proto", "-all"], try env.faultURL + "/files/100b", 1), (["--proto-redir", "-https"], toHTTPS, 1),
            (["--proto", "-http,+https,ftp", "--proto-redir", "all"], toHTTPS, 1), (["--proto", "https,=http"], toHTTPS, 1),
            (["--proto", "http", "--proto-redir", "-all,https"], toHTTPS, 0),
        ]
        for (options, url, status) in cases {
            let ours = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-sS", "-L", "-o", "/dev/null", "--cacert", caFile] + options + [url])
            let curl = try XHRToolTests.run("/usr/bin/curl", ["-sS", "-L", "-o", "/dev/null", "--cacert", caFile] + options + [url])
            #expect(ours.status == status && curl.status == status, "\(options): xhr \(ours.status) \(ours.stderr), curl \(curl.status)")
            if status == 1 {
                let words = { (text: String) in text.components(separatedBy: "Protocol ").last ?? "" }
                #expect(words(ours.stderr) == words(curl.stderr), "\(options): \(ours.stderr) / \(curl.stderr)")
            }
        }
    }

    @Test func basicCredentialsGoToTheirOwnHost() throws {
        let marker = UUID().uuidString
        let (request, _) = fetchSync("GET", try env.faultURL + "/record?basic=\(marker)") { request in
            #expect(request.open("GET", url: try! env.faultURL + "/record?basic=\(marker)",
                                 user: "bob", password: "b0b p@ss:w%rd/ü", auth: "basic"))
        }
        #expect(request.getStatus() == 200)
        let records = try #require(try JSONSerialization.jsonObject(with: fetchSync("GET", try env.faultURL + "/recorded").1) as? [[String: Any]])
        let hop = try #require(records.last { ($0["path"] as? String)?.contains(marker) == true })
        let headers = (hop["headers"] as? [String: String] ?? [:]).mapKeys { $0.lowercased() }
        let expected = "Basic " + Data("bob:b0b p@ss:w%rd/ü".utf8).base64EncodedString()
        #expect(headers["authorization"] == expected)
    }
}

extension Dictionary {
    func mapKeys<T: Hashable>(_ transform: (Key) -> T) -> [T: Value] {
        Dictionary<T, Value>(map { (transform($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

/// setIPVersion: the servers listen on 127.0.0.1 only, so IPv4 reaches them and IPv6 (`::1`,
/// which `localhost` also names here) finds no one: the switch decides which is tried.
@Suite(.ownThreads) struct IPVersionTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    @Test func onlyTheAddressesOfTheVersionAskedForAreTried() throws {
        let port = try env["TESTENV_HTTP_PORT"]
        let byName = "http://localhost:\(port)/files/100b"
        let (any, _) = fetchSync("GET", byName)
        #expect(any.getStatus() == 200)
        let (v4, body) = fetchSync("GET", byName) { #expect($0.setIPVersion(.v4)) }
        #expect(v4.getStatus() == 200 && body == Pattern.bytes(100))
        // A connection to 127.0.0.1 is in the pool now: an IPv6-only request must not take it.
        let (v6, seen) = fetchAsync("GET", byName) { #expect($0.setIPVersion(.v6)) }
        #expect(v6.getStatus() == 0 && seen.states.last == .done, "\(v6.getStatusText() ?? "")")
        #expect(v6.getFailureKind() == .connection || v6.getFailureKind() == .dns, "\(String(describing: v6.getFailureKind()))")
        let (literal, _) = fetchSync("GET", "http://127.0.0.1:\(port)/files/100b") { $0.setIPVersion(.v6) }
        #expect(literal.getStatus() == 0 && literal.getFailureKind() == .connection, "\(literal.getStatusText() ?? "")")
        let (loopback6, _) = fetchSync("GET", "http://[::1]:\(port)/files/100b") { $0.setIPVersion(.v4) }
        #expect(loopback6.getStatus() == 0, "\(loopback6.getStatusText() ?? "")")
        // The switch stays with the object; .any lifts it.
        #expect(v6.open("GET", url: byName) && v6.send() && v6.getStatus() == 0)
        #expect(v6.setIPVersion(.any) && v6.open("GET", url: byName) && v6.send() && v6.getStatus() == 200)
    }

    @Test func notWhileInFlight() throws {
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true))
        #expect(request.send())
        #expect(!request.setIPVersion(.v4) && request.lastError?.code == .invalidState)
        request.abort()
        #expect(HttpRequest.IPVersion(rawValue: 5) == nil && HttpRequest.IPVersion.allCases.map(\.rawValue) == [0, 4, 6])
    }

    /// -4 and -6 as curl's: the same exit status for each address family and name.
    @Test func xhrIPv4AndIPv6ExitAsCurlDoes() throws {
        let port = try env["TESTENV_HTTP_PORT"]
        for option in ["-4", "-6", "--ipv4", "--ipv6"] {
            for host in ["localhost", "127.0.0.1", "[::1]"] {
                let url = "http://\(host):\(port)/files/100b"
                let ours = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-o", "/dev/null", option, url])
                let curl = try XHRToolTests.run("/usr/bin/curl", ["-s", "-o", "/dev/null", option, url])
                #expect(ours.status == curl.status, "\(option) \(host): xhr \(ours.status), curl \(curl.status)")
            }
        }
        let last = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-o", "/dev/null", "-6", "-4", "http://localhost:\(port)/files/100b"])
        #expect(last.status == 0, "the last of -4 and -6 wins")
    }
}
