@testable import CurlXHR
import Foundation
import Testing

/// Routing (`setResolve`, `setConnectTo`, `setUnixSocket`, `setInterface`, `setServiceName`),
/// `disableConnectionReuse` and `sendWithFile(_:offset:length:timeout:)` against the fault
/// server (TCP and its Unix sockets) and Apache (TLS); `setServiceName` is tested with the
/// other Kerberos tests (`AuthTests`, which alone set the process-wide Kerberos cache).
@Suite(.ownThreads) struct RoutingTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// The fault server's echo of a request: what arrived, and through which socket.
    struct FaultEcho {
        let json: [String: Any]
        init(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws {
            json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))",
                                sourceLocation: sourceLocation)
        }
        var socket: String? { json["socket"] as? String }
        var body: String? { json["body"] as? String }
        func header(_ name: String) -> String? {
            (json["headers"] as? [[String]])?.first { $0.first?.lowercased() == name.lowercased() }?.last
        }
    }

    var faultPort: String { get throws { try env["TESTENV_FAULT_PORT"] } }
    var httpsPort: String { get throws { try env["TESTENV_HTTPS_PORT"] } }

    func expectConnectionFailure(_ request: HttpRequest, code: Int32 = 7, mentioning words: [String] = [],
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request.getState() == .done, sourceLocation: sourceLocation)
        #expect(request.getStatus() == 0, sourceLocation: sourceLocation)
        #expect(request.getFailureKind() == .connection, "\(String(describing: request.getFailureKind()))", sourceLocation: sourceLocation)
        #expect(request.getFailureCode() == code, sourceLocation: sourceLocation)
        let text = request.getStatusText() ?? ""
        for word in words { #expect(text.contains(word), "\(text)", sourceLocation: sourceLocation) }
    }

    /// A GET of `url` over TLS that trusts the test CA, routed by `route`.
    func fetchTLS(_ url: String, _ route: (HttpRequest) -> Bool) -> HttpRequest {
        fetchSync("GET", url) {
            #expect($0.setCACertificateFile(try! env.caFile))
            #expect(route($0))
        }.0
    }

    // MARK: setResolve

    @Test func resolveSendsTheRequestToTheAddressesGiven() throws {
        let port = try faultPort
        let url = "http://api.resolve-test.invalid:\(port)/echo"
        // The first address refuses (nothing listens on 127.0.0.2): the next one is tried.
        let (request, body) = fetchSync("GET", url) { #expect($0.setResolve(["api.resolve-test.invalid:\(port):127.0.0.2,127.0.0.1"])) }
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        let echo = try FaultEcho(body)
        #expect(echo.header("Host") == "api.resolve-test.invalid:\(port)")
        #expect(echo.socket == "tcp")

        // The entries are the request's own: another request to the name does not resolve it.
        let other = fetchSync("GET", url).0
        #expect(other.getFailureKind() == .dns, "\(other.getStatusText() ?? "")")
        // [] removes them; the next send of the same request does not resolve it either.
        #expect(request.setResolve([]))
        #expect(request.open("GET", url: url))
        #expect(request.send())
        #expect(request.getFailureKind() == .dns)
        // A wildcard covers any name on the port.
        let (wildcard, _) = fetchSync("GET", "http://other.resolve-test.invalid:\(port)/echo") { #expect($0.setResolve(["*:\(port):127.0.0.1"])) }
        #expect(wildcard.getStatus() == 200)
    }

    @Test func resolveKeepsTheURLsNameForTLS() throws {
        let port = try httpsPort
        // The certificate names localhost: a resolved localhost passes, another name does not.
        let good = fetchTLS("https://localhost:\(port)/echo") { $0.setResolve(["localhost:\(port):127.0.0.1"]) }
        #expect(good.getStatus() == 200, "\(good.getStatusText() ?? "")")
        let wrongName = fetchTLS("https://not-localhost.invalid:\(port)/echo") { $0.setResolve(["not-localhost.invalid:\(port):127.0.0.1"]) }
        #expect(wrongName.getFailureKind() == .tls)
        #expect(wrongName.getStatusText()?.contains("not-localhost.invalid") == true, "\(wrongName.getStatusText() ?? "")")
        // The wrong-host listener's certificate names wronghost.invalid: resolved, it passes.
        let wrongHostPort = try env["TESTENV_HTTPS_WRONGHOST_PORT"]
        let named = fetchTLS("https://wronghost.invalid:\(wrongHostPort)/echo") { $0.setResolve(["wronghost.invalid:\(wrongHostPort):127.0.0.1"]) }
        #expect(named.getStatus() == 200, "\(named.getStatusText() ?? "")")
    }

    @Test func aResolvedAddressThatRefusesFailsWithTheAddressInTheText() throws {
        let (request, _) = fetchSync("GET", "http://down.resolve-test.invalid:1/") { #expect($0.setResolve(["down.resolve-test.invalid:1:127.0.0.1"])) }
        expectConnectionFailure(request, mentioning: ["127.0.0.1"])
        #expect(request.getStatusText()?.contains(".resolve.invalid") == false, "\(request.getStatusText() ?? "")")
    }

    @Test func badResolveEntriesAreRefusedByTheCall() throws {
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/echo"))
        let bad = ["h:0:127.0.0.1", "h:65536:127.0.0.1", "h:80:not-an-address", "h:80:", "h:80:127.0.0.1\r\nX: y", "h:80:127.0.0.1\0",
                   "h\n:80:127.0.0.1", "h 1:80:127.0.0.1", "h:80", String(repeating: "h", count: 5000) + ":80:127.0.0.1"]
        for entry in bad {
            #expect(!request.setResolve(["ok:80:127.0.0.1", entry]), "\(entry)")
            #expect(request.lastError?.code == .invalidArgument)
            #expect(request.lastError?.message.contains("\n") == false && request.lastError?.message.contains("\r") == false)
            #expect(request.getState() == .opened)
        }
        #expect(!request.setResolve(Array(repeating: "h:80:127.0.0.1", count: 1001)))
        // Nothing was set: the request goes where its URL says.
        #expect(request.send())
        #expect(request.getStatus() == 200)
    }

    // MARK: setConnectTo

    @Test func connectToSendsTheRequestElsewhereKeepingTheURL() throws {
        let port = try faultPort
        let (request, body) = fetchSync("GET", "http://front.connect-test.invalid:1/echo") {
            #expect($0.setConnectTo(["front.connect-test.invalid:1:127.0.0.1:\(port)"]))
        }
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(try FaultEcho(body).header("Host") == "front.connect-test.invalid:1")
        // Empty parts: any host on port 1 goes to the fault server's port on the same host.
        let (any, _) = fetchSync("GET", "http://127.0.0.1:1/echo") { #expect($0.setConnectTo([":1::\(port)"])) }
        #expect(any.getStatus() == 200)
        // A resolve entry resolves the name a connect-to entry names.
        let (both, _) = fetchSync("GET", "http://a.connect-test.invalid:1/echo") {
            #expect($0.setConnectTo(["a.connect-test.invalid:1:b.connect-test.invalid:\(port)"]))
            #expect($0.setResolve(["b.connect-test.invalid:\(port):127.0.0.1"]))
        }
        #expect(both.getStatus() == 200, "\(both.getStatusText() ?? "")")
        // A non-matching entry changes nothing.
        let (unmatched, _) = fetchSync("GET", "http://127.0.0.1:\(port)/echo") { #expect($0.setConnectTo(["other.invalid:\(port):127.0.0.1:1"])) }
        #expect(unmatched.getStatus() == 200)
    }

    @Test func connectToKeepsTheURLsNameForTLS() throws {
        let port = try httpsPort
        let good = fetchTLS("https://localhost:9/echo") { $0.setConnectTo(["localhost:9:127.0.0.1:\(port)"]) }
        #expect(good.getStatus() == 200, "\(good.getStatusText() ?? "")")
        let wrongName = fetchTLS("https://front.connect-test.invalid:\(port)/echo") {
            $0.setConnectTo(["front.connect-test.invalid:\(port):127.0.0.1:\(port)"])
        }
        #expect(wrongName.getFailureKind() == .tls, "\(wrongName.getStatusText() ?? "")")
    }

    @Test func badConnectToEntriesAreRefusedByTheCall() throws {
        let request = HttpRequest()
        for entry in ["a:1:b:0", "a:0:b:1", "a:1:b:65536", "a:1:b", "a:1:b:2:3", "a:1:[::1:2", "a:1:[zz]:2", "a:1:b:2\n", "a\r:1:b:2"] {
            #expect(!request.setConnectTo([entry]), "\(entry)")
            #expect(request.lastError?.code == .invalidArgument)
        }
        #expect(request.setConnectTo(["a:1:[::1]:2"]))
        #expect(request.setConnectTo([]))
    }

    /// The process's HTTP cache neither answers a routed request nor keeps its answer.
    @Test func aRoutedRequestTakesNoPartInTheCache() throws {
        CacheFixture.on()
        let port = try faultPort
        let routes: [(HttpRequest) -> Bool] = [
            { $0.setUnixSocket(try! env.faultUnixSocket) },
            { $0.setResolve(["127.0.0.1:\(port):127.0.0.1"]) },
            { $0.setConnectTo(["127.0.0.1:\(port):127.0.0.1:\(port)"]) },
        ]
        for (index, route) in routes.enumerated() {
            let stored = "routing-stored-\(index)-\(UUID().uuidString)", routedFirst = "routing-first-\(index)-\(UUID().uuidString)"
            let fresh = CacheFixture.h("Cache-Control", "max-age=600")
            func get(_ key: String, routed: Bool) throws -> Int {
                fetchSync("GET", try CacheFixture.url(key, fresh)) { if routed { #expect(route($0)) } }.0.getStatus()
            }
            #expect(try get(stored, routed: false) == 200)
            #expect(try get(stored, routed: true) == 200)
            #expect(try CacheFixture.log(stored).count == 2, "the routed request reached the server, not the stored answer")
            #expect(try get(routedFirst, routed: true) == 200)
            #expect(try get(routedFirst, routed: false) == 200)
            #expect(try CacheFixture.log(routedFirst).count == 2, "the routed request's answer was not stored")
        }
    }

    // MARK: setUnixSocket

    @Test func aUnixSocketCarriesTheRequest() throws {
        let path = try env.faultUnixSocket
        let (request, body) = fetchSync("POST", "http://socket.invalid/echo", body: Data("through the socket".utf8)) {
            #expect($0.setUnixSocket(path))
        }
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        let echo = try FaultEcho(body)
        #expect(echo.socket == "unix:\(path)")
        #expect(echo.body == "through the socket")
        #expect(echo.header("Host") == "socket.invalid")

        let abstract = try env.faultAbstractSocket
        let (viaAbstract, abstractBody) = fetchSync("GET", "http://socket.invalid/echo") { #expect($0.setUnixSocket(abstract)) }
        #expect(viaAbstract.getStatus() == 200, "\(viaAbstract.getStatusText() ?? "")")
        #expect(try FaultEcho(abstractBody).socket == "abstract:" + abstract.dropFirst())

        // nil goes back to TCP.
        #expect(viaAbstract.setUnixSocket(nil))
        #expect(viaAbstract.open("GET", url: try env.faultURL + "/echo"))
        #expect(viaAbstract.send())
        #expect(try FaultEcho(viaAbstract.getReceiveBuffer()).socket == "tcp")
    }

    @Test func aSymbolicLinkToTheSocketIsFollowedAndOneToAFileFails() throws {
        let folder = try env.scratchPath("sockets")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/link.sock"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: try env.faultUnixSocket)
        let (followed, _) = fetchSync("GET", "http://socket.invalid/echo") { #expect($0.setUnixSocket(link)) }
        #expect(followed.getStatus() == 200, "\(followed.getStatusText() ?? "")")

        let file = folder + "/plain"
        try Data("not a socket".utf8).write(to: URL(fileURLWithPath: file))
        let toFile = folder + "/file.sock"
        try FileManager.default.createSymbolicLink(atPath: toFile, withDestinationPath: file)
        expectConnectionFailure(fetchSync("GET", "http://socket.invalid/echo") { #expect($0.setUnixSocket(toFile)) }.0)
        expectConnectionFailure(fetchSync("GET", "http://socket.invalid/echo") { #expect($0.setUnixSocket(folder + "/missing.sock")) }.0)
        expectConnectionFailure(fetchSync("GET", "http://socket.invalid/echo") { #expect($0.setUnixSocket("@curlxhr-no-such-socket")) }.0)
    }

    @Test func badUnixSocketPathsAreRefusedByTheCall() {
        let request = HttpRequest()
        for path in ["", "@", "/tmp/a\r\nb", "/tmp/a\0b", "/" + String(repeating: "s", count: 107), "@" + String(repeating: "n", count: 108)] {
            #expect(!request.setUnixSocket(path), "\(path)")
            #expect(request.lastError?.code == .invalidArgument)
        }
        #expect(request.setUnixSocket("/" + String(repeating: "s", count: 106)))
    }

    // MARK: disableConnectionReuse

    @Test func withoutReuseEachSendHasAConnectionOfItsOwn() throws {
        // The fault server's /record answers with the client's port: one port, one connection.
        // On a listener of the test's own, whose connections no other test's request takes.
        let (listener, answer) = fetchSync("GET", try env.faultURL + "/own-port")
        #expect(listener.getStatus() == 200)
        let ownPort = try #require((try JSONSerialization.jsonObject(with: answer) as? [String: Any])?["port"] as? Int)
        let url = "http://127.0.0.1:\(ownPort)/record/routing-reuse"
        func clientPorts(_ configure: (HttpRequest) -> Void) throws -> [Int] {
            var ports: [Int] = []
            let request = HttpRequest()
            configure(request)
            for _ in 0..<3 {
                #expect(request.open("GET", url: url))
                #expect(request.send())
                let json = try #require(try JSONSerialization.jsonObject(with: request.getReceiveBuffer()) as? [String: Any])
                ports.append(try #require(json["client_port"] as? Int, "\(json)"))
            }
            return ports
        }
        let reused = try clientPorts { _ in }
        #expect(Set(reused).count == 1, "a kept-alive connection serves the three: \(reused)")
        let own = try clientPorts { #expect($0.disableConnectionReuse()) }
        #expect(Set(own).count == 3, "three connections: \(own)")
        #expect(!own.contains(reused[0]))
    }

    // MARK: setInterface

    @Test func theLoopbackInterfaceWorksAndAMissingOneFails() throws {
        let url = try env.faultURL + "/echo"
        let (viaLo, _) = fetchSync("GET", url) { #expect($0.setInterface("lo")) }
        #expect(viaLo.getStatus() == 200, "\(viaLo.getStatusText() ?? "")")
        let (viaAddress, _) = fetchSync("GET", url) { #expect($0.setInterface("127.0.0.1")) }
        #expect(viaAddress.getStatus() == 200, "\(viaAddress.getStatusText() ?? "")")
        let (missing, _) = fetchSync("GET", url) { #expect($0.setInterface("nosuchif0")) }
        expectConnectionFailure(missing, code: 45, mentioning: ["nosuchif0"])
        #expect(missing.setInterface(nil))
        #expect(missing.open("GET", url: url))
        #expect(missing.send())
        #expect(missing.getStatus() == 200)
        for bad in ["", "a b", "a/b", "abcdefghijklmnop", "lo\r\n", "lo\0"] {
            #expect(!missing.setInterface(bad), "\(bad)")
            #expect(missing.lastError?.code == .invalidArgument)
        }
    }

    // MARK: Pre-send switches: refused in flight

    @Test func routingSwitchesAreRefusedInFlightAndAcceptedInDone() throws {
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=500", async: true))
        #expect(request.send())
        #expect(!request.setResolve(["h:80:127.0.0.1"]))
        #expect(request.lastError?.code == .invalidState)
        #expect(!request.setConnectTo(["h:80:127.0.0.1:81"]))
        #expect(!request.setUnixSocket("/tmp/x.sock"))
        #expect(!request.setInterface("lo"))
        #expect(!request.setServiceName("HTTP"))
        #expect(!request.disableConnectionReuse())
        request.abort()
        #expect(request.getState() == .done)
        #expect(request.setResolve(["h:80:127.0.0.1"]) && request.setConnectTo([]) && request.setUnixSocket(nil) && request.setInterface(nil)
                && request.setServiceName(nil) && request.disableConnectionReuse())
        #expect(HttpRequest().setResolve(["h:80:127.0.0.1"]), "UNSENT")
    }

    // MARK: sendWithFile(_:offset:length:timeout:)

    @Test func aByteRangeOfAFileIsSent() throws {
        let path = try env.scratchPath("range")
        let bytes = Data((0..<100_000).map { UInt8($0 % 251) })
        try bytes.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let url = try env.faultURL + "/echo"
        func send(offset: Int64, length: Int64) throws -> (HttpRequest, Data) {
            let request = HttpRequest()
            #expect(request.open("PUT", url: url))
            #expect(request.sendWithFile(path, offset: offset, length: length), "\(request.lastError?.message ?? "")")
            return (request, request.getReceiveBuffer())
        }
        for (offset, length) in [(Int64(0), Int64(10)), (1000, 70_000), (99_990, -1), (100_000, -1), (5, 0), (0, -1)] {
            let (request, body) = try send(offset: offset, length: length)
            #expect(request.getStatus() == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let expected = bytes[Int(offset)..<(length == -1 ? bytes.count : Int(offset + length))]
            #expect(json["bodyLength"] as? Int == expected.count, "\(offset) \(length)")
            #expect(json["bodySha256"] as? String == (try sha256Hex(Data(expected))), "\(offset) \(length)")
            #expect(request.getBytesSent() == Int64(expected.count))
        }
        // A redirect that keeps the body (307) sends the same range again.
        let redirect = HttpRequest()
        #expect(redirect.open("PUT", url: try env.faultURL + "/redirect/to?code=307&url=/echo"))
        #expect(redirect.sendWithFile(path, offset: 50, length: 1000))
        let json = try #require(try JSONSerialization.jsonObject(with: redirect.getReceiveBuffer()) as? [String: Any])
        #expect(json["bodySha256"] as? String == (try sha256Hex(Data(bytes[50..<1050]))), "\(json)")
    }

    @Test func aRangeOutsideTheFileIsRefusedAndTheRequestStaysOpened() throws {
        let path = try env.scratchPath("range")
        try Data(count: 100).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let request = HttpRequest()
        #expect(request.open("PUT", url: try env.faultURL + "/echo"))
        for (offset, length) in [(Int64(-1), Int64(-1)), (101, -1), (0, 101), (50, 51), (0, -2), (Int64.max, 1), (1, Int64.max), (Int64.min, 0)] {
            #expect(!request.sendWithFile(path, offset: offset, length: length), "\(offset) \(length)")
            #expect(request.lastError?.code == .invalidArgument)
            #expect(request.lastError?.message.contains("not inside") == true, "\(request.lastError?.message ?? "")")
            #expect(request.getState() == .opened)
        }
        #expect(!request.sendWithFile("/nonexistent/file", offset: 0))
        #expect(request.lastError?.code == .fileUnreadable)
        #expect(request.sendWithFile(path, offset: 100, length: 0))
        #expect(request.getStatus() == 200)
    }
}

/// The SHA-256 of `data` in hex (through a file and sha256sum, as the other tests do).
private func sha256Hex(_ data: Data) throws -> String {
    let path = try TestEnvironment.get().scratchPath("sha")
    try data.write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try MultipartTests.sha256(path)
}
