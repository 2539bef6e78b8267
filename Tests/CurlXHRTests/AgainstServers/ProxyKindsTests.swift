@testable import CurlXHR
import Foundation
import Testing

/// setProxy's kinds of proxy: squid's TLS port (an https proxy, its headers logged), dante for
/// SOCKS4 and SOCKS5 (open, and with a user name login on another port); the bypass list and
/// the proxy's own header fields.
@Suite(.ownThreads) struct ProxyKindsTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func port(_ name: String) throws -> String { try env["TESTENV_\(name)_PORT"] }

    /// A sync GET of `url` after `configure`, in DONE.
    func fetch(_ url: String, _ configure: (HttpRequest) throws -> Void) throws -> (HttpRequest, Data) {
        let request = HttpRequest()
        #expect(request.open("GET", url: url, async: false))
        try configure(request)
        #expect(request.send(timeout: 20), "\(request.lastError?.message ?? "")")
        #expect(request.getState() == .done)
        return (request, request.getReceiveBuffer())
    }

    func expectProxyFailure(_ request: HttpRequest, naming proxy: String, _ words: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let text = request.getStatusText() ?? ""
        #expect(request.getStatus() == 0 && request.getFailureKind() == .proxy, "\(text)", sourceLocation: sourceLocation)
        #expect(text.contains(proxy) && (words.isEmpty || text.contains(words)), "\(text)", sourceLocation: sourceLocation)
    }

    /// The lines squid logged for requests it received with `marker` among their fields,
    /// once there are some (squid logs a CONNECT when its tunnel closes), within 10 s.
    func squidLines(with marker: String) throws -> [String] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let log = try String(contentsOfFile: try env["TESTENV_SQUID_HEADERS_LOG"], encoding: .utf8)
            let lines = log.split(separator: "\n").map(String.init).filter { $0.contains(marker) }
            if !lines.isEmpty || Date() > deadline { return lines }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// A connection to the proxy that one request trusted (by a CA file of its own, or
    /// without verifying it) is never lent to a request that trusts the system's CAs alone.
    @Test func aProxyTrustedByOneRequestIsNotTrustedByTheNext() throws {
        let proxy = "https://localhost:\(try port("PROXY_TLS"))", ca = try env.caFile
        let url = try env.httpURL + "/echo"
        let trusts: [(String, (HttpRequest) -> Bool)] = [("its CA file", { $0.setProxyCACertificateFile(ca) }),
                                                         ("no verification", { $0.disableProxyPeerVerification() })]
        for (name, trust) in trusts {
            for _ in 0..<2 {
                let (trusted, _) = try fetch(url) { #expect($0.setProxy(proxy) && trust($0)) }
                #expect(trusted.getStatus() == 200, "\(name): \(trusted.getStatusText() ?? "")")
                let (next, _) = try fetch(url) { #expect($0.setProxy(proxy)) }
                #expect(next.getStatus() == 0 && next.getFailureKind() == .tls, "after \(name): \(next.getStatusText() ?? "")")
            }
        }
    }

    @Test func anHTTPSProxyIsReachedOverTLS() throws {
        let proxy = "https://localhost:\(try port("PROXY_TLS"))", ca = try env.caFile
        for url in [try env.httpURL + "/echo", try env.httpsURL + "/echo"] {
            let (request, body) = try fetch(url) {
                #expect($0.setProxy(proxy) && $0.setProxyCACertificateFile(ca) && $0.setCACertificateFile(ca))
            }
            #expect(request.getStatus() == 200, "\(url): \(request.getStatusText() ?? "")")
            #expect(try Echo(body).method == "GET")
        }
        // The system store does not know the test CA: the proxy's certificate is refused.
        let (unverified, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(proxy)) }
        #expect(unverified.getStatus() == 0 && unverified.getFailureKind() == .tls, "\(unverified.getStatusText() ?? "")")
        let (insecure, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(proxy) && $0.disableProxyPeerVerification()) }
        #expect(insecure.getStatus() == 200, "\(insecure.getStatusText() ?? "")")
        // The origin's certificate is still verified through an unverified proxy.
        let (origin, _) = try fetch(try env.httpsURL + "/echo") { #expect($0.setProxy(proxy) && $0.disableProxyPeerVerification()) }
        #expect(origin.getStatus() == 0 && origin.getFailureKind() == .tls, "\(origin.getStatusText() ?? "")")
    }

    @Test func proxyHeadersGoToTheProxyAlone() throws {
        let marker = "x-\(UUID().uuidString.prefix(8))"
        let ca = try env.caFile, proxy = "https://localhost:\(try port("PROXY_TLS"))"
        let (request, body) = try fetch(try env.httpsURL + "/echo") {
            #expect($0.setProxy(proxy) && $0.setProxyCACertificateFile(ca))
            #expect($0.setCACertificateFile(ca))
            #expect($0.setProxyHeader("X-Proxy-Only", value: "first"))
            #expect($0.setProxyHeader("x-proxy-only", value: marker))  // replaces, case aside
            #expect($0.setRequestHeader("X-Origin-Only", value: marker + "-origin"))
        }
        #expect(request.getStatus() == 200)
        let echo = try Echo(body)
        #expect(echo.header("X-Proxy-Only") == nil, "the origin never sees it")
        #expect(echo.header("X-Origin-Only") == marker + "-origin")
        request.close()  // ends the tunnel, which squid then logs
        let lines = try squidLines(with: marker)
        #expect(lines.count == 1 && lines[0].hasPrefix("CONNECT "), "\(lines)")
        #expect(lines.first?.contains("first") == false && lines.first?.contains("-origin") == false, "\(lines)")
    }

    @Test func socksProxiesCarryTheRequest() throws {
        let socks = "127.0.0.1:\(try port("SOCKS"))"
        for scheme in ["socks4", "socks5", "socks5h"] {
            let (request, body) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy("\(scheme)://\(socks)")) }
            #expect(request.getStatus() == 200, "\(scheme): \(request.getStatusText() ?? "")")
            #expect(try Echo(body).method == "GET")
        }
        // socks5h: the proxy resolves the name (dante does; "localhost" is its own).
        let named = "http://localhost:\(try port("HTTP"))/echo"
        let (byName, _) = try fetch(named) { #expect($0.setProxy("socks5h://\(socks)")) }
        #expect(byName.getStatus() == 200, "\(byName.getStatusText() ?? "")")
        // https through SOCKS: TLS end to end with the origin.
        let ca = try env.caFile
        let (tls, _) = try fetch(try env.httpsURL + "/echo") { #expect($0.setProxy("socks5://\(socks)") && $0.setCACertificateFile(ca)) }
        #expect(tls.getStatus() == 200, "\(tls.getStatusText() ?? "")")
        // Dante has no SOCKS4a: the name it is asked to resolve is refused, by the proxy.
        let (fourA, _) = try fetch(named) { #expect($0.setProxy("socks4a://\(socks)")) }
        expectProxyFailure(fourA, naming: "socks4a://\(socks)", "SOCKS4")
    }

    @Test func aSOCKS5LoginIsChecked() throws {
        let socks = "socks5://127.0.0.1:\(try port("SOCKS_AUTH"))"
        let user = try env["TESTENV_SOCKS_USER"], password = try env["TESTENV_SOCKS_PASSWORD"]
        let (request, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(socks, user: user, password: password)) }
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        // In the URL, percent-encoded as a URL's user information is.
        let withLogin = "socks5://\(user):\(password)@127.0.0.1:\(try port("SOCKS_AUTH"))"
        let (inURL, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(withLogin)) }
        #expect(inURL.getStatus() == 200, "\(inURL.getStatusText() ?? "")")
        let (wrong, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(socks, user: user, password: "wrong")) }
        expectProxyFailure(wrong, naming: socks, "rejected")
        #expect(wrong.getFailureCode() == 97, "curl's exit for a proxy handshake")
        let (none, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(socks)) }
        expectProxyFailure(none, naming: socks, "authentication")
    }

    @Test func theBypassListGoesDirect() throws {
        // A proxy nobody listens on: only a bypassed host is reached.
        let dead = "socks5://127.0.0.1:1"
        for bypass in ["127.0.0.1", "*", "example.org, 127.0.0.1"] {
            let (request, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(dead) && $0.setProxyBypass(bypass)) }
            #expect(request.getStatus() == 200, "\(bypass): \(request.getStatusText() ?? "")")
        }
        let (proxied, _) = try fetch(try env.httpURL + "/echo") { #expect($0.setProxy(dead) && $0.setProxyBypass("example.org")) }
        expectProxyFailure(proxied, naming: dead, "")
        // "" removes the list; the environment's NO_PROXY is never read for it.
        let (cleared, _) = try fetch(try env.httpURL + "/echo") {
            #expect($0.setProxy(dead) && $0.setProxyBypass("*") && $0.setProxyBypass(""))
        }
        expectProxyFailure(cleared, naming: dead, "")
    }

    @Test func whatIsNoProxyIsRefused() throws {
        let request = HttpRequest()
        for bad in ["ftp://proxy:21", "http://proxy:0", "http://proxy:65536", "http://proxy:80/path", "http://proxy:80?q",
                    "http://pro\r\nxy:80", "http://proxy:80\u{0}", "", "http://:80", "socks6://proxy:1080", "http://a b:80"] {
            #expect(!request.setProxy(bad), "\(bad.debugDescription)")
            #expect(request.lastError?.code == .invalidArgument, "\(bad.debugDescription)")
            #expect(request.lastError?.message.contains("\n") == false, "\(request.lastError?.message ?? "")")
        }
        #expect(!request.setProxy("socks4://proxy:1080", user: "u", password: "p"))
        #expect(request.lastError?.message.contains("SOCKS4") == true)
        #expect(!request.setProxy("socks5://proxy:1080", user: "u", password: "p", auth: "NTLM"))
        // SOCKS5 with GSS-API is the library's (SocksGSSAPITests); SOCKS4 has none.
        #expect(request.setProxy("socks5h://proxy:1080", user: "alice@EXAMPLE.TEST", password: "p", auth: "negotiate"))
        #expect(!request.setProxy("socks4://proxy:1080", auth: "NEGOTIATE"))
        #expect(request.lastError?.message.contains("GSS-API") == true, "\(request.lastError?.message ?? "")")
        #expect(!request.setProxy("http://proxy:3128", user: "u\r\n", password: "p"))
        #expect(request.setProxy("socks4://proxy:1080", user: "u"))
        #expect(request.setProxy("proxy:3128") && request.setProxy("[::1]:3128") && request.setProxy("HTTPS://proxy"))
        #expect(!request.setProxyHeader("X Y", value: "1") && !request.setProxyHeader("X", value: "a\r\nB: c"))
        #expect(!request.setProxyHeader("X", value: "a\u{0}"))
        #expect(!request.setProxyBypass("a\nb"))
        #expect(!request.setProxyCACertificateFile("/nonexistent/ca.pem") && request.lastError?.code == .fileUnreadable)
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true) && request.send())
        #expect(!request.setProxy("socks5://proxy:1080") && request.lastError?.code == .invalidState, "not while in flight")
        #expect(!request.setProxyHeader("X", value: "1") && !request.setProxyBypass("*") && !request.disableProxyPeerVerification())
        request.abort()
    }

    @Test func proxyURLsAreReadAsLibcurlReadsThem() {
        func parts(_ url: String) -> ProxySetting.Parts? { try? ProxySetting.parse(url).get() }
        #expect(parts("proxy:3128") == ProxySetting.Parts(scheme: .http, host: "proxy", port: 3128, user: nil, password: nil))
        #expect(parts("https://proxy")?.port == 443)
        #expect(parts("socks5h://proxy")?.port == 1080)
        #expect(parts("http://[::1]:8080/") == ProxySetting.Parts(scheme: .http, host: "::1", port: 8080, user: nil, password: nil))
        #expect(parts("socks5://us%40er:p%3Ass@proxy:1") == ProxySetting.Parts(scheme: .socks5, host: "proxy", port: 1, user: "us@er", password: "p:ss"))
        #expect(ProxySetting(scheme: .socks5h, host: "::1", port: 1080).name == "socks5h://[::1]:1080")
        #expect(ProxySetting(host: "proxy", port: 3128).name == "proxy:3128")
    }

    func xhr(_ arguments: [String]) throws -> XHRToolTests.Run {
        try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-S", "-o", "/dev/null", "-w", "%{http_code}"] + arguments)
    }

    @Test func xhrTakesCurlsProxyOptions() throws {
        let echo = try env.httpURL + "/echo", ca = try env.caFile
        let tlsProxy = "https://localhost:\(try port("PROXY_TLS"))", socks = "127.0.0.1:\(try port("SOCKS"))"
        let login = "127.0.0.1:\(try port("SOCKS_AUTH"))"
        let user = try env["TESTENV_SOCKS_USER"] + ":" + env["TESTENV_SOCKS_PASSWORD"]
        for arguments in [["-x", tlsProxy, "--proxy-cacert", ca], ["-x", tlsProxy, "--proxy-insecure"],
                          ["-x", "socks5h://" + socks], ["--socks5", socks], ["--socks5-hostname", socks], ["--socks4", socks],
                          ["--socks5", login, "--proxy-user", user], ["-x", "socks5://127.0.0.1:1", "--noproxy", "127.0.0.1"],
                          ["-x", tlsProxy, "--proxy-cacert", ca, "--proxy-header", "X-Proxy-Only: 1", "--proxy-header", "X-Empty;"]] {
            let run = try xhr(arguments + [echo])
            #expect(run.status == 0 && run.text == "200", "\(arguments): \(run.status) \(run.stderr)")
        }
        // curl's exits: 35 a proxy certificate the system store does not know (curl says 60 for
        // the server's), 97 a SOCKS login refused, 7 a proxy nobody listens on.
        let unverified = try xhr(["-x", tlsProxy, echo])
        #expect(unverified.status == 60 || unverified.status == 35, "\(unverified.status) \(unverified.stderr)")
        let refused = try xhr(["--socks5", login, "--proxy-user", "nobody:wrong", echo])
        #expect(refused.status == 97 && refused.stderr.contains(login), "\(refused.status) \(refused.stderr)")
        let dead = try xhr(["--socks5", "127.0.0.1:1", echo])
        #expect(dead.status == 7 && dead.stderr.contains("127.0.0.1:1"), "\(dead.status) \(dead.stderr)")
        for bad in [["-x", "ftp://proxy:21"], ["-x", "proxy:99999"], ["-x", "socks5://p:1", "--proxy-header", "no colon"],
                    ["-x", "socks5://p:1", "--proxy-header", "X: a\rb"]] {
            let run = try xhr(bad + [echo])
            #expect(run.status == 2, "\(bad): \(run.status) \(run.stderr)")
        }
    }
}
