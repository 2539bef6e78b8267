@testable import CurlXHR
import Foundation
import Testing

/// Proxy auto-config against the real servers: PAC files on disk and served over HTTP (the
/// fault server's /cache route, which counts fetches and revalidates), routes through squid
/// (its access log proves it) and dante (its log names the connection), the fallback past
/// dead proxies, broken PAC files, the process-wide default and redirects. Serialized: one
/// test sets the process-wide default (to a file that answers DIRECT for every URL but its own).
@Suite(.serialized, .ownThreads) struct ProxyAutoConfigServerTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    var squid: String { get throws { "127.0.0.1:\(try env["TESTENV_PROXY_PORT"])" } }
    var dante: String { get throws { "127.0.0.1:\(try env["TESTENV_SOCKS_PORT"])" } }
    static func marker() -> String { "pac-" + UUID().uuidString.prefix(12).lowercased() }

    /// A PAC file with `body` as FindProxyForURL's body; its path.
    func pacFile(_ body: String) throws -> String {
        let path = try env.scratchPath("pac") + ".pac"
        try "function FindProxyForURL(url, host) {\n\(body)\n}\n".write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    /// A sync GET of `url` after `configure`, in DONE.
    func fetch(_ url: String, _ configure: (HttpRequest) throws -> Void = { _ in }) throws -> HttpRequest {
        let request = HttpRequest()
        #expect(request.open("GET", url: url, async: false))
        try configure(request)
        #expect(request.send(timeout: 20), "\(request.lastError?.message ?? "")")
        #expect(request.getState() == .done)
        return request
    }

    func expectOK(_ request: HttpRequest, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")", sourceLocation: sourceLocation)
    }

    func expectProxyFailure(_ request: HttpRequest, naming words: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let text = request.getStatusText() ?? ""
        #expect(request.getStatus() == 0 && request.getFailureKind() == .proxy, "\(text)", sourceLocation: sourceLocation)
        for word in words { #expect(text.contains(word), "\(text.prefix(400))", sourceLocation: sourceLocation) }
    }

    /// Whether squid logged a request whose URL holds `marker` (squid logs as a request
    /// ends: waited for up to 5 s when `expected`).
    func squidSaw(_ marker: String, expected: Bool = true) throws -> [String] {
        let deadline = Date().addingTimeInterval(expected ? 5 : 0.3)
        while true {
            let log = try String(contentsOfFile: try env["TESTENV_SQUID_ACCESS_LOG"], encoding: .utf8)
            let lines = log.split(separator: "\n").map(String.init).filter { $0.contains(marker) }
            if !lines.isEmpty || Date() > deadline { return lines }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func faultJSON(_ path: String) throws -> [String: Any] {
        let request = try fetch(env.faultURL + path) { $0.disableHttpProxy() }
        return try #require(try JSONSerialization.jsonObject(with: request.getReceiveBuffer()) as? [String: Any])
    }

    /// A PAC URL on the fault server serving `script` under `key`, with `query` added.
    func pacURL(_ key: String, _ script: String, _ query: String = "") throws -> String {
        let encoded = script.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try env.faultURL + "/cache?key=\(key)&type=application/x-ns-proxy-autoconfig&body=\(encoded)" + query
    }

    @Test func aPACFileSendsThroughSquidDirectOrDante() throws {
        let mark = Self.marker()
        let pac = try pacFile("""
            if (url.indexOf("via-squid") >= 0) return "PROXY \(try squid)";
            if (url.indexOf("via-socks") >= 0) return "SOCKS5 \(try dante)";
            return "DIRECT";
            """)
        let proxied = try fetch(try env.httpURL + "/echo/via-squid-\(mark)") { #expect($0.setProxyAutoConfig(pac)) }
        expectOK(proxied)
        #expect(try squidSaw("via-squid-\(mark)").count == 1)
        let direct = try fetch(try env.httpURL + "/echo/direct-\(mark)") { #expect($0.setProxyAutoConfig("file://" + pac)) }
        expectOK(direct)
        #expect(try squidSaw("direct-\(mark)", expected: false).isEmpty, "DIRECT never reaches squid")
        // A listener of its own, so dante's log names this connection alone.
        let port = try #require(try faultJSON("/own-port")["port"] as? Int)
        let socks = try fetch("http://127.0.0.1:\(port)/echo/via-socks-\(mark)") { #expect($0.setProxyAutoConfig(pac)) }
        expectOK(socks)
        let danteLog = try String(contentsOfFile: try env["TESTENV_DIR"] + "/logs/danted.log", encoding: .utf8)
        #expect(danteLog.contains("127.0.0.1.\(port)"), "dante connected to the origin")
    }

    @Test func deadProxiesAreSkippedUntilOneAnswers() throws {
        let mark = Self.marker()
        let pac = try pacFile("return \"PROXY 127.0.0.1:1; SOCKS5 127.0.0.1:1; PROXY \(try squid); DIRECT\";")
        let request = try fetch(try env.httpURL + "/echo/\(mark)") { #expect($0.setProxyAutoConfig(pac)) }
        expectOK(request)
        #expect(try squidSaw(mark).count == 1, "the third route, squid, carried it")
        // An https proxy whose certificate the system store does not know: its handshake
        // fails, and the next route (squid) carries the request, http and https alike.
        let tlsProxy = "localhost:\(try env["TESTENV_PROXY_TLS_PORT"])", ca = try env.caFile
        let handshakePAC = try pacFile("return \"HTTPS \(tlsProxy); PROXY \(try squid)\";")
        expectOK(try fetch(try env.httpURL + "/echo/tls-\(mark)") { #expect($0.setProxyAutoConfig(handshakePAC)) })
        #expect(try squidSaw("tls-\(mark)").count == 1)
        expectOK(try fetch(try env.httpsURL + "/echo") { #expect($0.setProxyAutoConfig(handshakePAC) && $0.setCACertificateFile(ca)) })
        // Trusted, the https proxy itself carries it; a refused origin certificate behind it is no proxy's failure.
        let trusted = try fetch(try env.httpURL + "/echo/tls-ok-\(mark)") {
            #expect($0.setProxyAutoConfig(handshakePAC) && $0.setProxyCACertificateFile(ca))
        }
        expectOK(trusted)
        // (The server's certificate names another host: refused whatever CAs the process trusts
        // meanwhile, which other suites change.)
        let wrongHost = "https://localhost:\(try env["TESTENV_HTTPS_WRONGHOST_PORT"])/echo"
        let origin = try fetch(wrongHost) {
            #expect($0.setProxyAutoConfig(handshakePAC) && $0.setProxyCACertificateFile(ca) && $0.setCACertificateFile(ca))
        }
        #expect(origin.getStatus() == 0 && origin.getFailureKind() == .tls, "\(origin.getStatusText() ?? "")")
        let toDirectPAC = try pacFile("return \"HTTPS 127.0.0.1:1; DIRECT\";")
        let toDirect = try fetch(try env.httpURL + "/echo/direct-\(mark)") { #expect($0.setProxyAutoConfig(toDirectPAC)) }
        expectOK(toDirect)
    }

    @Test func allProxiesDeadFailsAsTheProxy() throws {
        let pac = try pacFile("return \"PROXY 127.0.0.1:1; SOCKS5 127.0.0.1:1\";")
        let request = try fetch(try env.httpURL + "/echo") { #expect($0.setProxyAutoConfig(pac)) }
        expectProxyFailure(request, naming: ["socks5://127.0.0.1:1"])
        // Async alike: DONE once, with the same failure.
        let async = HttpRequest()
        let done = DispatchSemaphore(value: 0)
        async.onStatusChange = { if $0.getState() == .done { done.signal() } }
        #expect(async.open("GET", url: try env.httpURL + "/echo", async: true) && async.setProxyAutoConfig(pac) && async.send())
        #expect(done.wait(timeout: .now() + 20) == .success)
        expectProxyFailure(async, naming: ["socks5://127.0.0.1:1"])
    }

    @Test func aPACURLIsFetchedOnceForManySends() throws {
        let key = Self.marker()
        let url = try pacURL(key, "function FindProxyForURL(url, host) { return \"PROXY \(try squid)\"; }",
                             "&etag=%22p1%22&h=Cache-Control:max-age%3D600")
        for index in 0..<5 {
            let request = try fetch(try env.httpURL + "/echo/\(key)-\(index)") { #expect($0.setProxyAutoConfig(url)) }
            expectOK(request)
        }
        #expect(try squidSaw("\(key)-4").count == 1)
        #expect(try faultJSON("/cache-log?key=\(key)")["count"] as? Int == 1, "fetched once")
    }

    @Test func aStalePACURLIsRevalidatedAndA304KeepsIt() throws {
        let key = Self.marker()
        let url = try pacURL(key, "function FindProxyForURL(url, host) { return \"DIRECT\"; }",
                             "&etag=%22p1%22&h=Cache-Control:max-age%3D0")
        for _ in 0..<3 { expectOK(try fetch(try env.httpURL + "/echo") { #expect($0.setProxyAutoConfig(url)) }) }
        let log = try faultJSON("/cache-log?key=\(key)")
        let requests = try #require(log["requests"] as? [[String: Any]])
        #expect(requests.count == 3)
        #expect(requests.compactMap { $0["status"] as? Int } == [200, 304, 304])
        let conditions = requests.dropFirst().map { entry in
            ((entry["headers"] as? [[String]]) ?? []).first { $0.first?.lowercased() == "if-none-match" }?.last
        }
        #expect(conditions == ["\"p1\"", "\"p1\""])
    }

    @Test func aBrokenPACFailsTheSendNamingIt() throws {
        let throwing = try pacFile("throw \"no routes today\";")
        let syntax = try pacFile("return (;")
        let missing = try env.scratchPath("pac") + ".pac"
        try "function Other(url, host) { return \"DIRECT\"; }".write(toFile: missing, atomically: false, encoding: .utf8)
        let garbage = try pacFile("return \"FETCH me:1\";")
        let undefinedAnswer = try pacFile("return;")
        let huge = try pacFile("var s = \"PROXY 127.0.0.1:1\"; var a = []; for (var i = 0; i < 100000; i++) a.push(s); return a.join(\"; \");")
        let cases: [(String, [String])] = [
            (throwing, ["no routes today"]), (syntax, ["does not run", "SyntaxError"]), (missing, ["FindProxyForURL"]),
            (garbage, ["'FETCH' is not DIRECT"]), (undefinedAnswer, ["undefined"]), (huge, ["longer than"]),
            (try pacURL(Self.marker(), "", "&status=404"), ["HTTP 404"]),
            ("http://127.0.0.1:1/proxy.pac", ["cannot be fetched"]),
        ]
        for (location, words) in cases {
            let request = try fetch(try env.httpURL + "/echo") { #expect($0.setProxyAutoConfig(location)) }
            expectProxyFailure(request, naming: ["Proxy auto-config '\(location)'"] + words)
        }
    }

    @Test func aChangedFileIsReadAgain() throws {
        let mark = Self.marker()
        let pac = try pacFile("return \"DIRECT\";")
        expectOK(try fetch(try env.httpURL + "/echo/first-\(mark)") { #expect($0.setProxyAutoConfig(pac)) })
        try "function FindProxyForURL(url, host) { return \"PROXY \(try squid)\"; }".write(toFile: pac, atomically: false, encoding: .utf8)
        // A modification time of its own, whatever the clock's granularity.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: pac)
        expectOK(try fetch(try env.httpURL + "/echo/second-\(mark)") { #expect($0.setProxyAutoConfig(pac)) })
        #expect(try squidSaw("first-\(mark)", expected: false).isEmpty)
        #expect(try squidSaw("second-\(mark)").count == 1)
    }

    @Test(.alone) func theProcessWideDefaultYieldsToTheRequestsOwnChoice() throws {
        let mark = Self.marker()
        // Every other URL goes DIRECT: tests running meanwhile are not disturbed.
        let pac = try pacFile("if (url.indexOf(\"\(mark)\") >= 0) return \"PROXY 127.0.0.1:1\"; return \"DIRECT\";")
        HttpRequest.proxyAutoConfig = pac
        defer { HttpRequest.proxyAutoConfig = nil }
        #expect(HttpRequest.proxyAutoConfig == pac)
        let url = try env.httpURL + "/echo/\(mark)"
        expectProxyFailure(try fetch(url), naming: ["127.0.0.1:1"])
        expectOK(try fetch(url) { #expect($0.disableHttpProxy()) })
        let squid = try squid, direct = try pacFile("return \"DIRECT\";"), squidPort = Int(try env["TESTENV_PROXY_PORT"])!
        expectOK(try fetch(url + "-own") { #expect($0.setProxy("http://" + squid)) })
        #expect(try squidSaw(mark + "-own").count == 1)
        expectOK(try fetch(url) { #expect($0.setProxyAutoConfig(direct)) })
        expectOK(try fetch(url) { #expect($0.enableHttpProxy(host: "127.0.0.1", port: squidPort)) })
        HttpRequest.proxyAutoConfig = nil
        expectOK(try fetch(url))
    }

    @Test(.alone) func thePACFetchGoesDirectNeverThroughPAC() throws {
        let mark = Self.marker()
        // The PAC URL names the marker (its key): fetched through PAC, it would go to the dead proxy.
        let url = try pacURL(mark, "function FindProxyForURL(url, host) { if (url.indexOf(\"\(mark)\") >= 0) return \"PROXY 127.0.0.1:1\"; return \"DIRECT\"; }",
                             "&h=Cache-Control:max-age%3D600")
        #expect(url.contains(mark))
        #expect(HttpRequest.setDefaultProxyAutoConfig(url))
        defer { HttpRequest.proxyAutoConfig = nil }
        expectOK(try fetch(try env.httpURL + "/echo"))
        expectProxyFailure(try fetch(try env.httpURL + "/echo/\(mark)"), naming: ["127.0.0.1:1"])
        #expect(try faultJSON("/cache-log?key=\(mark)")["count"] as? Int == 1)
        #expect(!HttpRequest.setDefaultProxyAutoConfig("/no/such/proxy.pac") && HttpRequest.proxyAutoConfig == url, "refused, unchanged")
        #expect(HttpRequest.setDefaultProxyAutoConfig(nil) && HttpRequest.proxyAutoConfig == nil)
    }

    @Test func eightThreadsSendWithPACAtOnce() throws {
        let mark = Self.marker()
        let pac = try pacFile("if (url.indexOf(\"odd\") >= 0) return \"PROXY 127.0.0.1:1; PROXY \(try squid)\"; return \"DIRECT\";")
        let url = try pacURL(mark, "function FindProxyForURL(url, host) { return \"SOCKS5 \(try dante)\"; }",
                             "&h=Cache-Control:max-age%3D600")
        let base = try env.httpURL + "/echo/\(mark)"
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<6 {
                let request = HttpRequest()
                let async = index % 2 == 1
                let target = base + "-\(thread)-\(index)" + (index % 3 == 0 ? "-odd" : "")
                _ = request.open("GET", url: target, async: async)
                _ = request.setProxyAutoConfig(thread % 2 == 0 ? pac : url)
                let done = DispatchSemaphore(value: 0)
                if async { request.onStatusChange = { if $0.getState() == .done { done.signal() } } }
                guard request.send(timeout: 20) else {
                    failures.withLock { $0.append("send refused: \(request.lastError?.message ?? "")") }
                    continue
                }
                if async, done.wait(timeout: .now() + 25) != .success { failures.withLock { $0.append("\(target): no DONE") } }
                if request.getStatus() != 200 { failures.withLock { $0.append("\(target): \(request.getStatusText() ?? "")") } }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try faultJSON("/cache-log?key=\(mark)")["count"] as? Int == 1, "four threads, one fetch")
    }

    @Test func aRedirectToAnotherHostAsksThePACAgain() throws {
        let mark = Self.marker()
        let pac = try pacFile("if (host == \"localhost\") return \"PROXY \(try squid)\"; return \"DIRECT\";")
        let target = "http://localhost:\(try env["TESTENV_HTTP_PORT"])/echo/\(mark)"
        let start = try env.faultURL + "/redirect/to?url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let request = try fetch(start) { #expect($0.setProxyAutoConfig(pac)) }
        expectOK(request)
        let lines = try squidSaw(mark)
        #expect(lines.count == 1 && lines.allSatisfy { !$0.contains("redirect") }, "only the second hop went through squid: \(lines)")
    }

    @Test func anAsyncSendDoesNotWaitForTheFetch() throws {
        let key = Self.marker()
        let url = try pacURL(key, "function FindProxyForURL(url, host) { return \"DIRECT\"; }", "&delay_ms=1500")
        let request = HttpRequest()
        let done = DispatchSemaphore(value: 0)
        request.onStatusChange = { if $0.getState() == .done { done.signal() } }
        #expect(request.open("GET", url: try env.httpURL + "/echo", async: true) && request.setProxyAutoConfig(url))
        let began = Date()
        #expect(request.send())
        #expect(Date().timeIntervalSince(began) < 1, "the fetch runs off the caller's thread")
        // A pre-send switch: refused while the send is in flight, with a reason.
        #expect(!request.setProxyAutoConfig(url) && request.lastError != nil)
        #expect(done.wait(timeout: .now() + 20) == .success)
        expectOK(request)
    }

    @Test func findProxyForURLSeesTheURLAndHost() throws {
        let mark = Self.marker()
        // Routed through squid only when the script sees what browsers give it.
        let httpPort = try env["TESTENV_HTTP_PORT"], httpsPort = try env["TESTENV_HTTPS_PORT"]
        let pac = try pacFile("""
            if (url == "http://127.0.0.1:\(httpPort)/echo/\(mark)?q=1" && host == "127.0.0.1") return "PROXY \(try squid)";
            if (url == "https://localhost:\(httpsPort)/" && host == "localhost") return "PROXY \(try squid)";
            return "PROXY 127.0.0.1:1";
            """)
        expectOK(try fetch("http://127.0.0.1:\(httpPort)/echo/\(mark)?q=1#fragment") { #expect($0.setProxyAutoConfig(pac)) })
        let ca = try env.caFile
        let secure = try fetch(try env.httpsURL + "/echo/secret-path?token=1") {
            #expect($0.setProxyAutoConfig(pac) && $0.setCACertificateFile(ca))
        }
        expectOK(secure)
    }

    @Test func xhrTakesAPACFile() throws {
        let mark = Self.marker()
        let xhr = TestEnvironment.builtProduct("xhr")
        func run(_ arguments: [String]) throws -> XHRToolTests.Run {
            try XHRToolTests.run(xhr, ["-s", "-S", "-o", "/dev/null", "-w", "%{http_code}"] + arguments)
        }
        let pac = try pacFile("return \"PROXY 127.0.0.1:1; PROXY \(try squid)\";")
        let proxied = try run(["--proxy-pac", pac, try env.httpURL + "/echo/xhr-\(mark)"])
        #expect(proxied.status == 0 && proxied.text == "200", "\(proxied.status) \(proxied.stderr)")
        #expect(try squidSaw("xhr-\(mark)").count == 1)
        // -x wins over it.
        let direct = try run(["--proxy-pac", pac, "-x", try squid, try env.httpURL + "/echo/xhr-x-\(mark)"])
        #expect(direct.status == 0 && direct.text == "200", "\(direct.status) \(direct.stderr)")
        // A PAC file that throws: curl's exit for a proxy (5), naming the file.
        let throwing = try pacFile("throw \"nothing here\";")
        let failed = try run(["--proxy-pac", throwing, try env.httpURL + "/echo"])
        #expect(failed.status == 5 && failed.stderr.contains(throwing) && failed.stderr.contains("nothing here"), "\(failed.status) \(failed.stderr)")
        let refused = try run(["--proxy-pac", "/no/such/proxy.pac", try env.httpURL + "/echo"])
        #expect(refused.status == 2 && refused.stderr.contains("/no/such/proxy.pac"), "\(refused.status) \(refused.stderr)")
        let help = try XHRToolTests.run(xhr, ["fetch", "--help"])
        #expect(help.text.contains("--proxy-pac"), "\(help.text.suffix(300))")
    }

    @Test func hostileLocationsAreRefusedAtTheCall() throws {
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.httpURL + "/echo", async: false))
        let folder = try env.scratchPath("pac-folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let link = try env.scratchPath("pac-link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder)
        for location in ["", "http://h/p.pac\r\nX: y", "/tmp/a\npac", "/tmp/a\0.pac", link, folder, "/no/such.pac", "ftp://h/p.pac"] {
            #expect(!request.setProxyAutoConfig(location), "\(location)")
            let message = request.lastError?.message ?? ""
            #expect(message.contains("no proxy auto-config file") && !message.contains("\r") && !message.contains("\n"), "\(message)")
        }
        // A 10 MB PAC file is refused when read, naming the limit.
        let big = try env.scratchPath("pac-big") + ".pac"
        try Data(repeating: UInt8(ascii: " "), count: 10 * 1024 * 1024).write(to: URL(fileURLWithPath: big))
        #expect(request.setProxyAutoConfig(big))
        #expect(request.send(timeout: 20))
        expectProxyFailure(request, naming: [big, "larger than \(PACSource.maxSize) bytes"])
    }
}
