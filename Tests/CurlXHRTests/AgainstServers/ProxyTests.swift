@testable import CurlXHR
import Foundation
import Testing

/// HTTP proxies: squid on loopback with an open port and Basic, Digest and NTLM ports (its
/// NTLM helper verifies passwords), plus the fault server standing in as a proxy that
/// records exactly what it received.
@Suite(.ownThreads) struct ProxyTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    var proxyUser: String { get throws { try env["TESTENV_PROXY_USER"] } }
    var proxyPassword: String { get throws { try env["TESTENV_PROXY_PASSWORD"] } }

    func port(_ name: String) throws -> Int {
        try #require(Int(try env["TESTENV_\(name)_PORT"]))
    }

    struct Outcome {
        let request: HttpRequest
        let body: Data
        let states: [HttpRequest.State]
    }

    /// A GET through `configure`'s proxy, sync or async, in DONE.
    func fetch(_ url: String, async: Bool, user: String? = nil, password: String? = nil, auth: String? = nil,
               timeout: Double = 20, sourceLocation: SourceLocation = #_sourceLocation,
               configure: (HttpRequest) -> Void) -> Outcome {
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: url, async: async, user: user, password: password, auth: auth), sourceLocation: sourceLocation)
        configure(request)
        #expect(request.send(timeout: timeout), "\(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
        if async {
            #expect(recorder.waitForDone(), sourceLocation: sourceLocation)
            return Outcome(request: request, body: recorder.result.body, states: recorder.result.states)
        }
        return Outcome(request: request, body: request.getReceiveBuffer(), states: [])
    }

    /// Whether squid's access log has a line containing every one of `texts`, waiting a little
    /// for squid to write it.
    func accessLogHasLine(with texts: [String]) throws -> Bool {
        let path = try env["TESTENV_SQUID_ACCESS_LOG"]
        for _ in 0..<50 {
            let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
            if lines.contains(where: { line in texts.allSatisfy { line.contains($0) } }) { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// For one proxy port and scheme: right credentials give the origin's body, over http and
    /// https (CONNECT), sync and async, with the 407 rounds invisible; wrong ones and none 407.
    func checkProxy(_ name: String, auth: String?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let proxyPort = try port(name)
        let origins = [try env.httpURL + "/echo", try env.httpsURL + "/echo"]
        let marker = UUID().uuidString
        for origin in origins {
            for async in [false, true] {
                let url = origin + "?via=\(marker)-\(async)"
                let ok = fetch(url, async: async, sourceLocation: sourceLocation) {
                    #expect($0.enableHttpProxy(host: "127.0.0.1", port: proxyPort, user: auth == nil ? nil : try? self.proxyUser,
                                               password: try? self.proxyPassword, auth: auth), sourceLocation: sourceLocation)
                    if origin.hasPrefix("https") { #expect($0.setCACertificateFile(try! self.env.caFile), sourceLocation: sourceLocation) }
                }
                let context = "\(name) \(origin.prefix(5)) async=\(async)"
                #expect(ok.request.getStatus() == 200, "\(context): \(ok.request.getStatusText() ?? "")", sourceLocation: sourceLocation)
                let echo = try Echo(ok.body)
                #expect(echo.json["query"] as? String == "via=\(marker)-\(async)", sourceLocation: sourceLocation)
                #expect(echo.header("Proxy-Authorization") == nil, "proxy credentials reached the origin", sourceLocation: sourceLocation)
                if origin.hasPrefix("https") {
                    // A tunnel: the origin sees the client's bytes. squid logs the CONNECT when
                    // the tunnel ends, which close() makes happen now.
                    #expect(ok.request.close(), sourceLocation: sourceLocation)
                    let tunnel = ["TCP_TUNNEL/200", "CONNECT localhost:\(try env["TESTENV_HTTPS_PORT"]) \(auth == nil ? "-" : try proxyUser) "]
                    #expect(try accessLogHasLine(with: tunnel), "\(context): no \(tunnel) in squid's log", sourceLocation: sourceLocation)
                } else {
                    #expect(echo.header("Via")?.contains("squid") == true, "\(context): \(echo.headers)", sourceLocation: sourceLocation)
                    if auth != nil {
                        #expect(echo.header("X-Squid-User")?.contains(try proxyUser) == true, "\(echo.headers)", sourceLocation: sourceLocation)
                    }
                }
                if async {
                    #expect(ok.states.filter { $0 == .headersReceived }.count == 1, "\(context): \(ok.states)", sourceLocation: sourceLocation)
                    #expect(ok.states.first == .opened && ok.states.last == .done, sourceLocation: sourceLocation)
                }
                guard auth != nil else { continue }
                let wrong = fetch(url, async: async, sourceLocation: sourceLocation) {
                    $0.enableHttpProxy(host: "127.0.0.1", port: proxyPort, user: try? self.proxyUser, password: "wrong-password", auth: auth)
                    if origin.hasPrefix("https") { $0.setCACertificateFile(try! self.env.caFile) }
                }
                let letThroughAs = (try? Echo(wrong.body))?.header("X-Squid-User") ?? "-"
                #expect(wrong.request.getStatus() == 407, "\(context) wrong: \(wrong.request.getStatusText() ?? ""), let through as \(letThroughAs)",
                        sourceLocation: sourceLocation)
                #expect(wrong.request.getState() == .done, sourceLocation: sourceLocation)
                if async { #expect(wrong.states.last == .done, sourceLocation: sourceLocation) }
                let none = fetch(url, async: async, sourceLocation: sourceLocation) {
                    $0.enableHttpProxy(host: "127.0.0.1", port: proxyPort)
                    if origin.hasPrefix("https") { $0.setCACertificateFile(try! self.env.caFile) }
                }
                #expect(none.request.getStatus() == 407, "\(context) none: \(none.request.getStatusText() ?? "")", sourceLocation: sourceLocation)
            }
        }
    }

    /// `enableHttpProxy(_:)` with an `HttpRequest.Proxy` value is the switch its parts name:
    /// through squid with Basic credentials, and refused as they are (bad port, CR/LF).
    @Test func aProxyValueIsTheSwitchItsPartsName() throws {
        let proxy = HttpRequest.Proxy(host: "127.0.0.1", port: try port("PROXY_BASIC"),
                                      credentials: HttpRequest.Credentials(user: try proxyUser, password: try proxyPassword))
        let (request, body) = fetchSync("GET", try env.httpURL + "/echo") { #expect($0.enableHttpProxy(proxy)) }
        #expect(request.getStatus() == 200)
        let echo = try Echo(body)
        #expect(echo.header("X-Squid-User")?.contains(try proxyUser) == true, "\(echo.headers)")
        #expect(echo.header("Proxy-Authorization") == nil)
        let refusing = HttpRequest()
        #expect(refusing.open("GET", url: try env.httpURL + "/echo"))
        #expect(!refusing.enableHttpProxy(HttpRequest.Proxy(host: "127.0.0.1", port: 0)))
        #expect(refusing.lastError?.code == .invalidArgument)
        var injected = proxy
        injected.credentials?.password = "p\r\nX-Injected: 1"
        #expect(!refusing.enableHttpProxy(injected), "a password with CR/LF")
        #expect(refusing.lastError?.description.contains("CR, LF or NUL") == true, "\(String(describing: refusing.lastError))")
    }

    @Test func openProxy() throws { try checkProxy("PROXY", auth: nil) }
    @Test func basicProxy() throws { try checkProxy("PROXY_BASIC", auth: "BASIC") }
    @Test func digestProxy() throws { try checkProxy("PROXY_DIGEST", auth: "DIGEST") }
    /// "ANY": the scheme the proxy's 407 offers, Digest on this port, Basic on that one.
    @Test func anyProxyScheme() throws {
        try checkProxy("PROXY_DIGEST", auth: "ANY")
        try checkProxy("PROXY_BASIC", auth: "any")
    }

    @Test func ntlmProxyVerifiesThePassword() throws {
        #expect(try env["TESTENV_PROXY_NTLM_VERIFIES_PASSWORD"] == "1", "the NTLM proxy must check passwords")
        try checkProxy("PROXY_NTLM", auth: "NTLM")
    }

    @Test func serverDigestBehindAnNTLMProxy() throws {
        let proxyPort = try port("PROXY_NTLM")
        for async in [false, true] {
            let outcome = fetch(try env.httpURL + "/digest/echo", async: async,
                                user: try env["TESTENV_USER"], password: try env["TESTENV_PASSWORD"], auth: "DIGEST") {
                #expect($0.enableHttpProxy(host: "127.0.0.1", port: proxyPort, user: try? self.proxyUser,
                                           password: try? self.proxyPassword, auth: "NTLM"))
            }
            #expect(outcome.request.getStatus() == 200, "\(outcome.request.getStatusText() ?? "")")
            let echo = try Echo(outcome.body)
            #expect(echo.json["remote_user"] as? String == (try env["TESTENV_USER"]))
            #expect(echo.header("X-Squid-User")?.contains(try proxyUser) == true)
            if async { #expect(outcome.states.filter { $0 == .headersReceived }.count == 1, "\(outcome.states)") }
        }
    }

    @Test func httpsThroughTheProxyStillVerifiesTheOrigin() throws {
        let proxyPort = try port("PROXY")
        let url = try env.httpsURL(port: "TESTENV_HTTPS_SELFSIGNED_PORT", host: "127.0.0.1") + "/echo"
        let refused = fetch(url, async: false) {
            $0.enableHttpProxy(host: "127.0.0.1", port: proxyPort)
            $0.setCACertificateFile(try! self.env.caFile)
        }
        #expect(refused.request.getStatus() == 0)
        #expect(refused.request.getStatusText()?.hasPrefix("SSL") == true, "\(refused.request.getStatusText() ?? "")")
        let accepted = fetch(url, async: true) {
            $0.enableHttpProxy(host: "127.0.0.1", port: proxyPort)
            #expect($0.disablePeerVerification())
        }
        #expect(accepted.request.getStatus() == 200)
    }

    @Test func disableHttpProxyGoesDirect() throws {
        let proxyPort = try port("PROXY")
        let request = HttpRequest()
        #expect(request.enableHttpProxy(host: "127.0.0.1", port: proxyPort))
        request.open("GET", url: try env.httpURL + "/echo")
        request.send(timeout: 20)
        #expect(try Echo(request.getReceiveBuffer()).header("Via")?.contains("squid") == true)
        #expect(request.disableHttpProxy())
        request.open("GET", url: try env.httpURL + "/echo")
        request.send(timeout: 20)
        #expect(request.getStatus() == 200)
        #expect(try Echo(request.getReceiveBuffer()).header("Via") == nil)
    }

    /// The fault server as the proxy: it records the request as the proxy received it.
    func recordedThroughFaultProxy(user: String?, password: String?, auth: String?,
                                   proxyUser: String?, proxyPassword: String?) throws -> [String: String] {
        let outcome = fetch("http://origin.example.test/record", async: false, user: user, password: password, auth: auth) {
            #expect($0.enableHttpProxy(host: "127.0.0.1", port: try! self.port("FAULT"), user: proxyUser, password: proxyPassword))
        }
        #expect(outcome.request.getStatus() == 200)
        let seen = try JSONSerialization.jsonObject(with: outcome.body) as? [String: Any]
        return seen?["headers"] as? [String: String] ?? [:]
    }

    static func basicUser(_ header: String?) -> String? {
        guard let header, header.hasPrefix("Basic "), let data = Data(base64Encoded: String(header.dropFirst(6))) else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: ":").first.map(String.init)
    }

    @Test func proxyAndOriginCredentialsStayApart() throws {
        let both = try recordedThroughFaultProxy(user: "origin-user", password: "o", auth: "BASIC",
                                                 proxyUser: "proxy-user", proxyPassword: "p")
        #expect(Self.basicUser(both["Proxy-Authorization"]) == "proxy-user")
        #expect(Self.basicUser(both["Authorization"]) == "origin-user")
        let originOnly = try recordedThroughFaultProxy(user: "origin-user", password: "o", auth: "BASIC", proxyUser: nil, proxyPassword: nil)
        #expect(originOnly["Proxy-Authorization"] == nil, "origin credentials were offered to the proxy")
        let proxyOnly = try recordedThroughFaultProxy(user: nil, password: nil, auth: nil, proxyUser: "proxy-user", proxyPassword: "p")
        #expect(proxyOnly["Authorization"] == nil, "proxy credentials were offered to the origin")
    }

    /// A loopback port that was free a moment ago.
    static func freePort() -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(socket, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func anUnreachableProxyEndsWithStatusZeroAndATextNamingIt() throws {
        let freePort = Self.freePort()
        for async in [false, true] {
            let outcome = fetch(try env.httpURL + "/echo", async: async) {
                $0.enableHttpProxy(host: "127.0.0.1", port: freePort)
            }
            #expect(outcome.request.getStatus() == 0)
            #expect(outcome.request.getStatusText()?.contains("Proxy 127.0.0.1:\(freePort)") == true, "\(outcome.request.getStatusText() ?? "")")
            #expect(outcome.request.getFailureKind() == .proxy)
        }
    }

    @Test func aProxyKilledMidTransferEndsInDoneWithStatusZero() throws {
        // A proxy process of this test's own: the fault server, killed while it drips a body.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let script = TestEnvironment.packageRoot.appendingPathComponent("Tests/Servers/faultserver.py").path
        let proxyPort = Self.freePort()
        process.arguments = [script, String(proxyPort)]
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var listening = false
        for _ in 0..<100 where !listening {
            listening = fetch("http://origin.example.test/status?code=200", async: false, timeout: 2) {
                $0.enableHttpProxy(host: "127.0.0.1", port: proxyPort)
            }.request.getStatus() == 200
            if !listening { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(listening, "the proxy process did not start")
        let request = HttpRequest()
        let killed = Locked(false)
        let recorder = Recorder { _, state in
            if state == .loading, !killed.withLock({ $0 }) {
                killed.withLock { $0 = true }
                kill(process.processIdentifier, SIGKILL)
            }
        }
        request.delegate = recorder
        request.open("GET", url: "http://origin.example.test/drip?chunks=50&interval_ms=100&size=100", async: true)
        #expect(request.enableHttpProxy(host: "127.0.0.1", port: proxyPort))
        #expect(request.send(timeout: 30))
        #expect(recorder.waitForDone())
        #expect(killed.withLock { $0 }, "the body never started: \(request.getStatus()) \(request.getStatusText() ?? "")")
        #expect(request.getStatus() == 0)
        #expect(request.getStatusText()?.isEmpty == false)
        #expect(recorder.result.states.last == .done)
    }

    @Test func theEnvironmentIsIgnoredUnlessTheApplicationOptsIn() throws {
        let proxy = "http://127.0.0.1:\(try port("FAULT"))"
        let probe = TestEnvironment.builtProduct("curlxhr-probe")
        let url = "http://origin.example.test/record"
        let ignored = try Shell.run(probe, ["env-proxy", url, "off"], environment: ["http_proxy": proxy])
        #expect(ignored.output.contains("\"status\":0"), "went direct (and origin.example.test does not resolve): \(ignored.output)")
        let used = try Shell.run(probe, ["env-proxy", url, "on"], environment: ["http_proxy": proxy])
        #expect(used.output.contains("\"status\":200"), "\(used.output)")
        let bypassed = try Shell.run(probe, ["env-proxy", url, "on"], environment: ["http_proxy": proxy, "no_proxy": "example.test"])
        #expect(bypassed.output.contains("\"status\":0"), "no_proxy is honoured: \(bypassed.output)")
    }

    @Test func badProxySettingsSayFalseWithAReason() throws {
        let request = HttpRequest()
        #expect(!request.enableHttpProxy(host: "", port: 3128))
        #expect(request.lastError != nil)
        #expect(!request.enableHttpProxy(host: "proxy.example.test", port: 0))
        #expect(!request.enableHttpProxy(host: "proxy.example.test", port: 70000))
        #expect(!request.enableHttpProxy(host: "bad host", port: 3128))
        #expect(!request.enableHttpProxy(host: "proxy.example.test/x", port: 3128))
        #expect(!request.enableHttpProxy(host: "proxy.example.test", port: 3128, user: "u", password: "p", auth: "KERBEROS"))
        #expect(request.lastError?.message.contains("KERBEROS") == true)
        #expect(request.enableHttpProxy(host: "::1", port: 3128))
        #expect(request.enableHttpProxy(host: "proxy.example.test", port: 3128, user: "u", password: "p", auth: "ntlm"))
        // In flight: refused.
        request.open("GET", url: try env.faultURL + "/delay?ms=500", async: true)
        #expect(request.disableHttpProxy())
        request.send()
        #expect(!request.enableHttpProxy(host: "127.0.0.1", port: 3128))
        #expect(!request.disableHttpProxy())
        request.abort()
    }
}
