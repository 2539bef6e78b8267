@testable import CurlXHR
import Foundation
import Testing

extension AuthTests {
    /// SOCKS5 with Kerberos (GSS-API, RFC 1961), whose handshake the library runs (libcurl
    /// 7.88 cannot), against the test environment's proxy (`Tests/Servers/socksgss.py`, which
    /// logs whom it let through to where) and its faulty ports, with tickets from the test KDC.
    /// Inside ``AuthTests``, serialized with it: the library's ticket cache is process-wide.
    @Suite struct SocksGSSAPITests {
        let env: TestEnvironment
        init() throws { env = try TestEnvironment.get() }

        func proxyURL(_ scheme: String = "socks5h", port name: String = "SOCKS_GSSAPI") throws -> String {
            "\(scheme)://127.0.0.1:\(try env["TESTENV_\(name)_PORT"])"
        }

        var principal: String { get throws { try env["TESTENV_KRB5_PRINCIPAL"] } }
        var secret: String { get throws { try env["TESTENV_KRB5_PASSWORD"] } }

        /// The proxy's log, read now.
        func proxyLog() throws -> [String] {
            try String(contentsOfFile: try env["TESTENV_SOCKS_GSSAPI_LOG"], encoding: .utf8)
                .split(separator: "\n").map(String.init)
        }

        /// Runs `body` with the library's own ticket cache in the environment's scratch folder,
        /// cleared after.
        func withTicketCache<T>(_ body: () throws -> T) throws -> T {
            KerberosCredentials.cacheFile = try env.scratchPath("socks-krb") + "/cc"
            defer { KerberosCredentials.clearCredentials(forMethod: nil) }
            return try body()
        }

        /// A GET of `url` through `proxy` with `configure`'s settings, sync or async, in DONE.
        func get(_ url: String, through proxy: String, user: String?, password: String?, async: Bool = false,
                 configure: (HttpRequest) -> Void = { _ in },
                 sourceLocation: SourceLocation = #_sourceLocation) -> (HttpRequest, Data) {
            let request = HttpRequest()
            let recorder = Recorder()
            request.delegate = recorder
            #expect(request.open("GET", url: url, async: async), sourceLocation: sourceLocation)
            #expect(request.setProxy(proxy, user: user, password: password, auth: "NEGOTIATE"),
                    "\(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
            configure(request)
            #expect(request.send(timeout: 20), "\(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
            if async {
                #expect(recorder.waitForDone(), sourceLocation: sourceLocation)
                return (request, recorder.result.body)
            }
            return (request, request.getReceiveBuffer())
        }

        func expectProxyFailure(_ request: HttpRequest, naming proxy: String, _ words: String,
                                sourceLocation: SourceLocation = #_sourceLocation) {
            let text = request.getStatusText() ?? ""
            #expect(request.getState() == .done, sourceLocation: sourceLocation)
            #expect(request.getStatus() == 0 && request.getFailureKind() == .proxy, "\(text)", sourceLocation: sourceLocation)
            #expect(text.contains(proxy) && text.contains(words), "\(text)", sourceLocation: sourceLocation)
        }

        @Test func aGETGoesThroughTheProxyAsAlice() throws {
            try withTicketCache {
                let http = try env["TESTENV_HTTP_PORT"], alice = try principal
                // socks5h: the proxy is asked for the name; socks5: for the address.
                for (scheme, url, target) in [("socks5h", "http://localhost:\(http)/echo", "localhost:\(http)"),
                                              ("socks5", "http://127.0.0.1:\(http)/echo", "127.0.0.1:\(http)")] {
                    for async in [false, true] {
                        let before = try proxyLog().count
                        let (request, body) = get(url, through: try proxyURL(scheme), user: try principal, password: try secret, async: async)
                        #expect(request.getStatus() == 200, "\(scheme) async=\(async): \(request.getStatusText() ?? "")")
                        #expect(try Echo(body).method == "GET")
                        let lines = try proxyLog().dropFirst(before)
                        #expect(lines.contains("accepted \(alice) connect \(target)"), "\(scheme): \(Array(lines))")
                    }
                }
            }
        }

        @Test func httpsGoesEndToEndThroughTheTunnel() throws {
            let ca = try env.caFile
            try withTicketCache {
                let (request, body) = get(try env.httpsURL + "/echo", through: try proxyURL(), user: try principal, password: try secret) {
                    #expect($0.setCACertificateFile(ca))
                }
                #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
                #expect(try Echo(body).method == "GET")
            }
        }

        @Test func theAsyncResponseGoesThroughTheProxy() async throws {
            KerberosCredentials.cacheFile = try env.scratchPath("socks-krb") + "/cc"
            defer { KerberosCredentials.clearCredentials(forMethod: nil) }
            let request = HttpRequest()
            #expect(request.open("GET", url: try env.httpURL + "/echo"))
            #expect(request.setProxy(try proxyURL(), user: try principal, password: try secret, auth: "NEGOTIATE"))
            let response = try await request.response(timeout: 20)
            #expect(response.status == 200)
            #expect(try Echo(try await response.body.collect(upTo: 1 << 20)).method == "GET")
            // A proxy that refuses GSS-API: the call throws with the failure's kind.
            let refused = HttpRequest()
            #expect(refused.open("GET", url: try env.httpURL + "/echo"))
            #expect(refused.setProxy(try proxyURL(port: "SOCKS_GSSAPI_NOMETHOD"), auth: "NEGOTIATE"))
            do {
                _ = try await refused.response(timeout: 20)
                Issue.record("a proxy that refuses GSS-API gave a response")
            } catch let error as HttpRequestError {
                #expect(error.code == .transferFailed && error.failureKind == .proxy, "\(error)")
            }
        }

        /// Each send has a connection of its own, closed after it: a following request
        /// without the proxy reaches the origin on a connection of its own, not the tunnel.
        @Test func theTunnelIsLentToNoOtherRequest() throws {
            try withTicketCache {
                let url = try env.httpURL + "/echo", origin = Int(try env["TESTENV_HTTP_PORT"])
                let first = get(url, through: try proxyURL(), user: try principal, password: try secret).0
                #expect(first.getStatus() == 200, "\(first.getStatusText() ?? "")")
                // libcurl's connection is the tunnel's (to the proxy, or the relay in front of it).
                #expect(first.getMetrics().remotePort != nil && first.getMetrics().remotePort != origin)
                let accepted = try proxyLog().filter { $0.hasPrefix("accepted ") }.count
                let direct = HttpRequest()
                #expect(direct.open("GET", url: url, async: false) && direct.send(timeout: 20))
                #expect(direct.getStatus() == 200)
                #expect(direct.getMetrics().remotePort == origin, "the direct request reached the origin itself")
                let again = get(url, through: try proxyURL(), user: try principal, password: try secret).0
                #expect(again.getStatus() == 200)
                #expect(again.getMetrics().reusedConnection == false)
                // (Other suites' requests may go through the proxy meanwhile: at least one more.)
                #expect(try proxyLog().filter { $0.hasPrefix("accepted ") }.count > accepted,
                        "the second proxied request had a tunnel of its own")
            }
        }

        @Test func aRefusedPrincipalAndMissingTicketsFailClearly() throws {
            let proxy = try proxyURL()
            let refusedPrincipal = try env["TESTENV_KRB5_REFUSED_PRINCIPAL"]
            try withTicketCache {
                let (carol, _) = get(try env.httpURL + "/echo", through: proxy, user: refusedPrincipal,
                                     password: try env["TESTENV_KRB5_REFUSED_PASSWORD"])
                expectProxyFailure(carol, naming: proxy, "refused the GSS-API authentication")
                #expect(try proxyLog().contains("refused \(refusedPrincipal)"))
            }
            // No tickets: the library's cache is empty and the default one (the realm's
            // krb5.conf names one that is never written) holds none.
            KerberosCredentials.clearCredentials(forMethod: nil)
            for async in [false, true] {
                let (request, _) = get(try env.httpURL + "/echo", through: proxy, user: nil, password: nil, async: async)
                expectProxyFailure(request, naming: proxy, "Kerberos (GSS-API) authentication to the proxy failed")
            }
            // A service the KDC does not know.
            try withTicketCache {
                let (request, _) = get(try env.httpURL + "/echo", through: proxy, user: try principal, password: try secret) {
                    #expect($0.setProxyServiceName("nosuch"))
                }
                expectProxyFailure(request, naming: proxy, "Kerberos (GSS-API) authentication to the proxy failed")
            }
        }

        @Test func hostileProxiesFailClearly() throws {
            try withTicketCache {
                let cases = [("SOCKS_GSSAPI_CLOSE", "closed the connection"), ("SOCKS_GSSAPI_GARBAGE", "Kerberos (GSS-API) authentication to the proxy failed"),
                             ("SOCKS_GSSAPI_OVERSIZED", "65535 bytes"), ("SOCKS_GSSAPI_NOMETHOD", "does not accept GSS-API"),
                             ("SOCKS_GSSAPI_PROTECT", "per-message protection")]
                for (port, words) in cases {
                    for async in [false, true] {
                        let proxy = try proxyURL(port: port)
                        let (request, _) = get(try env.httpURL + "/echo", through: proxy, user: try principal, password: try secret, async: async)
                        expectProxyFailure(request, naming: proxy, words)
                    }
                }
                // A proxy that does not answer: the connect timeout ends the handshake.
                let silent = try proxyURL(port: "SOCKS_GSSAPI_SILENT")
                let started = Date()
                let (request, _) = get(try env.httpURL + "/echo", through: silent, user: try principal, password: try secret) {
                    #expect($0.setTimeouts(connect: 1))
                }
                #expect(Date().timeIntervalSince(started) < 5, "the connect timeout holds")
                expectProxyFailure(request, naming: silent, "did not answer within 1000 ms")
                // Nobody listens: the proxy cannot be reached.
                let dead = "socks5h://127.0.0.1:1"
                let (unreachable, _) = get(try env.httpURL + "/echo", through: dead, user: try principal, password: try secret)
                expectProxyFailure(unreachable, naming: dead, "cannot connect to the proxy")
            }
        }

        /// A proxy that never answers holds its own request alone: the handshake runs on a
        /// thread of its connection's own, so requests sent meanwhile (direct, and through a
        /// proxy that answers) are answered at once, and an abort ends the held one at once.
        @Test func aSilentProxyHoldsOnlyItsOwnRequest() throws {
            try withTicketCache {
                let silent = try proxyURL(port: "SOCKS_GSSAPI_SILENT")
                let url = try env.httpURL + "/echo"
                let held = HttpRequest()
                let recorder = Recorder()
                held.delegate = recorder
                #expect(held.open("GET", url: url, async: true))
                #expect(held.setProxy(silent, user: try principal, password: try secret, auth: "NEGOTIATE"))
                #expect(held.setTimeouts(connect: 6))
                let started = Date()
                #expect(held.send(timeout: 20))
                Thread.sleep(forTimeInterval: 0.3)  // its handshake under way
                let direct = HttpRequest()
                #expect(direct.open("GET", url: url, async: false) && direct.send(timeout: 20))
                #expect(direct.getStatus() == 200)
                let (proxied, _) = get(url, through: try proxyURL(), user: try principal, password: try secret)
                #expect(proxied.getStatus() == 200, "\(proxied.getStatusText() ?? "")")
                #expect(Date().timeIntervalSince(started) < 3, "the other requests did not wait for the silent proxy")
                #expect(held.getState() != .done, "the held request still waits for its proxy")
                // The held one ends at its connect timeout, with its proxy named.
                #expect(recorder.waitForDone())
                #expect(Date().timeIntervalSince(started) > 5.5)
                expectProxyFailure(held, naming: silent, "did not answer within 6000 ms")

                // An abort ends the handshake of a request held by its proxy: the proxy sees
                // the connection close at once, not at the connect timeout.
                let closed = { try proxyLog().filter { $0 == "silent: the client closed the connection" }.count }
                let aborted = HttpRequest()
                #expect(aborted.open("GET", url: url, async: true))
                #expect(aborted.setProxy(silent, user: try principal, password: try secret, auth: "NEGOTIATE"))
                #expect(aborted.setTimeouts(connect: 60))
                #expect(aborted.send(timeout: 90))
                Thread.sleep(forTimeInterval: 0.3)
                let closedBefore = try closed()
                #expect(aborted.abort() && aborted.getState() == .done && aborted.getStatus() == 0)
                let abortedAt = Date()
                while try closed() == closedBefore, Date().timeIntervalSince(abortedAt) < 5 {
                    Thread.sleep(forTimeInterval: 0.05)
                }
                #expect(try closed() > closedBefore, "the proxy's connection closed after the abort")
                #expect(Date().timeIntervalSince(abortedAt) < 3)
            }
        }

        @Test func whatIsNoGSSAPIProxyIsRefused() throws {
            let request = HttpRequest()
            #expect(request.setProxy("socks5://proxy:1080", auth: "NEGOTIATE"))
            #expect(request.setProxy("socks5h://proxy:1080", user: "alice@EXAMPLE.TEST", password: "p", auth: "negotiate"))
            for refused in ["socks4://proxy:1080", "socks4a://proxy:1080"] {
                #expect(!request.setProxy(refused, auth: "NEGOTIATE"))
                #expect(request.lastError?.message.contains("SOCKS4") == true, "\(request.lastError?.message ?? "")")
            }
            #expect(request.setProxyServiceName("rcmd") && request.setProxyServiceName(nil))
            for bad in ["", "rcmd\r\n", "rc\u{0}md", "rcmd/host", "rcmd@host", "r cmd", String(repeating: "s", count: 256)] {
                #expect(!request.setProxyServiceName(bad), "\(bad)")
                #expect(request.lastError?.code == .invalidArgument)
            }
            // A bypass list and the library's own tunnel are not taken together, in either order.
            let bypassed = HttpRequest()
            #expect(bypassed.setProxyBypass("localhost"))
            #expect(!bypassed.setProxy("socks5h://proxy:1080", auth: "NEGOTIATE"))
            #expect(bypassed.lastError?.message.contains("bypass") == true, "\(bypassed.lastError?.message ?? "")")
            #expect(bypassed.setProxy("socks5h://proxy:1080"), "without GSS-API the list applies")
            let tunnelled = HttpRequest()
            #expect(tunnelled.setProxy("socks5h://proxy:1080", auth: "NEGOTIATE"))
            #expect(!tunnelled.setProxyBypass("localhost") && tunnelled.lastError?.code == .invalidArgument)
            #expect(tunnelled.setProxyBypass(""), "no list is no conflict")
            // curl's command for it: curl 7.88 ends that handshake, but the command says what was asked.
            #expect(request.open("GET", url: "http://example.com/", async: false))
            #expect(request.setProxy("socks5h://proxy:1080", auth: "NEGOTIATE") && request.setProxyServiceName("socks"))
            let command = request.curlCommand()
            #expect(command.contains("--socks5-gssapi") && command.contains("--proxy-service-name socks"), "\(command)")
        }

        func xhr(_ arguments: [String], ccache: String) throws -> XHRToolTests.Run {
            try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-S", "-o", "/dev/null", "-w", "%{http_code}"] + arguments,
                                 environment: ["KRB5CCNAME": ccache, "KRB5_CONFIG": try env["TESTENV_KRB5_CONFIG"]])
        }

        @Test func xhrTakesCurlsGSSAPIOptions() throws {
            let echo = "http://localhost:\(try env["TESTENV_HTTP_PORT"])/echo"
            let tickets = try env["TESTENV_KRB5CCNAME"], none = try env["TESTENV_KRB5CCNAME_EMPTY"]
            let socks = "127.0.0.1:\(try env["TESTENV_SOCKS_GSSAPI_PORT"])"
            for arguments in [["--socks5-gssapi", "-x", "socks5h://" + socks], ["--socks5-hostname", socks, "--socks5-gssapi"],
                              ["--socks5-gssapi", "--socks5-hostname", socks, "--socks5-gssapi-service", "rcmd"],
                              ["--socks5-gssapi", "-x", "socks5h://" + socks, "--proxy-service-name", "rcmd"]] {
                let run = try xhr(arguments + [echo], ccache: tickets)
                #expect(run.status == 0 && run.text == "200", "\(arguments): \(run.status) \(run.stderr)")
            }
            let noTickets = try xhr(["--socks5-gssapi", "-x", "socks5h://" + socks, echo], ccache: none)
            #expect(noTickets.status == 97 && noTickets.stderr.contains(socks), "\(noTickets.status) \(noTickets.stderr)")
            let noMethod = try xhr(["--socks5-gssapi", "--socks5-hostname", "127.0.0.1:\(try env["TESTENV_SOCKS_GSSAPI_NOMETHOD_PORT"])", echo],
                                   ccache: tickets)
            #expect(noMethod.status == 97 && noMethod.stderr.contains("GSS-API"), "\(noMethod.status) \(noMethod.stderr)")
            let wrongService = try xhr(["--socks5-gssapi", "--socks5-hostname", socks, "--socks5-gssapi-service", "nosuch", echo], ccache: tickets)
            #expect(wrongService.status == 97, "\(wrongService.status) \(wrongService.stderr)")
            let socks4 = try xhr(["--socks5-gssapi", "--socks4", socks, echo], ccache: tickets)
            #expect(socks4.status == 2 && socks4.stderr.contains("SOCKS4"), "\(socks4.status) \(socks4.stderr)")
            let badService = try xhr(["--socks5-gssapi", "--socks5", socks, "--socks5-gssapi-service", "a/b", echo], ccache: tickets)
            #expect(badService.status == 2 && badService.stderr.contains("not a Kerberos service name"), "\(badService.stderr)")
        }
    }
}
