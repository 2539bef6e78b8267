@testable import CurlXHR
import Foundation
import Testing

/// TLS verification against Apache's three HTTPS listeners. Serialized: two tests change the
/// process-wide CA setting.
@Suite(.serialized, .ownThreads) struct TLSTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func expectSSLFailure(_ request: HttpRequest, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request.getState() == .done, sourceLocation: sourceLocation)
        #expect(request.getStatus() == 0, sourceLocation: sourceLocation)
        let text = request.getStatusText() ?? ""
        #expect(text.hasPrefix("SSL"), "status text: \(text)", sourceLocation: sourceLocation)
        #expect(request.getFailureKind() == .tls, sourceLocation: sourceLocation)
    }

    @Test func privateCAVerifiesOnlyWhenConfiguredPerRequest() throws {
        let url = try env.httpsURL + "/echo"
        expectSSLFailure(fetchSync("GET", url).0)  // the system store does not know the test CA
        let (trusted, body) = fetchSync("GET", url) { #expect($0.setCACertificateFile(try! env.caFile)) }
        #expect(trusted.getStatus() == 200)
        #expect(try Echo(body).method == "GET")
        expectSSLFailure(fetchSync("GET", url) { #expect($0.setCACertificateFile(try! env.otherCAFile)) }.0)
        let missing = HttpRequest()
        #expect(!missing.setCACertificateFile("/nonexistent/ca.pem"))
        #expect(missing.lastError?.code == .fileUnreadable)
    }

    @Test(.alone) func privateCAVerifiesWhenConfiguredProcessWide() throws {
        defer { HttpRequest.caCertificateFile = nil }
        HttpRequest.caCertificateFile = try env.otherCAFile
        expectSSLFailure(fetchSync("GET", try env.httpsURL + "/echo").0)
        HttpRequest.caCertificateFile = try env.caFile  // a change applies to the next request
        #expect(fetchSync("GET", try env.httpsURL + "/echo").0.getStatus() == 200)
        #expect(fetchSync("GET", try env.httpsURL(port: "TESTENV_HTTPS_PORT", host: "127.0.0.1") + "/echo").0.getStatus() == 200)
    }

    @Test func privateCAVerifiesFromTheEnvironment() throws {
        // SSL_CERT_FILE and CURL_CA_BUNDLE are read by the library, as the curl tool does;
        // checked in a child process so this process's environment stays untouched.
        let xhr = TestEnvironment.builtProduct("xhr")
        let url = try env.httpsURL + "/files/100b"
        let unset: [String: String?] = ["SSL_CERT_FILE": nil, "CURL_CA_BUNDLE": nil]
        for variable in ["SSL_CERT_FILE", "CURL_CA_BUNDLE"] {
            var environment = unset
            environment[variable] = try env.caFile
            let result = try Shell.run(xhr, ["-o", "/dev/null", url], environment: environment)
            #expect(result.status == 0, "\(variable): \(result.output)")
        }
        var other = unset
        other["SSL_CERT_FILE"] = try env.otherCAFile
        let without = try Shell.run(xhr, ["-o", "/dev/null", url], environment: other)
        #expect(without.status == 60, "curl's status for a certificate it cannot verify: \(without.output)")
        #expect(without.output.hasPrefix("xhr: SSL"), "\(without.output)")
    }

    @Test func wrongHostFailsUntilHostVerificationIsOff() throws {
        let url = try env.httpsURL(port: "TESTENV_HTTPS_WRONGHOST_PORT") + "/echo"
        let trust: (HttpRequest) -> Void = { #expect($0.setCACertificateFile(try! env.caFile)) }
        expectSSLFailure(fetchSync("GET", url, configure: trust).0)
        let relaxed = fetchSync("GET", url) { trust($0); #expect($0.disableHostVerification()) }.0
        #expect(relaxed.getStatus() == 200)
    }

    @Test func selfSignedFailsUntilPeerVerificationIsOff() throws {
        let url = try env.httpsURL(port: "TESTENV_HTTPS_SELFSIGNED_PORT") + "/echo"
        let trust: (HttpRequest) -> Void = { #expect($0.setCACertificateFile(try! env.caFile)) }
        expectSSLFailure(fetchSync("GET", url, configure: trust).0)
        let hostOnly = fetchSync("GET", url) { trust($0); #expect($0.disableHostVerification()) }.0
        expectSSLFailure(hostOnly)
        let (relaxed, seen) = fetchAsync("GET", url) { #expect($0.disablePeerVerification()) }
        #expect(relaxed.getStatus() == 200)
        #expect(seen.states.last == .done)
    }

    @Test func closeMakesTheNextRequestVerifyAfresh() throws {
        // The CA file's path stays the same while its content changes: a reused connection
        // or TLS session would skip the check, a new handshake must not.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("curlxhr-ca-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let caPath = dir.appendingPathComponent("ca.pem").path
        try FileManager.default.copyItem(atPath: try env.caFile, toPath: caPath)

        let url = try env.httpsURL + "/files/100b"
        let request = HttpRequest()
        #expect(request.setCACertificateFile(caPath))
        #expect(request.open("GET", url: url))
        #expect(request.send())
        #expect(request.getStatus() == 200)

        try FileManager.default.removeItem(atPath: caPath)
        try FileManager.default.copyItem(atPath: try env.otherCAFile, toPath: caPath)
        #expect(request.close())
        #expect(request.open("GET", url: url))
        #expect(request.send())
        expectSSLFailure(request)
    }
}

/// `openssl s_server -www` with the test CA's certificate for localhost: a real TLS server
/// whose protocol versions the test picks (`-tls1_2`: TLS 1.2 only) and whose page names the
/// version it negotiated ("Protocol  : TLSv1.2"). Killed when the test lets it go.
final class TLSVersionServer {
    let process = Process()
    let url: String

    init(_ env: TestEnvironment, only flags: [String] = []) throws {
        let directory = try env["TESTENV_DIR"] + "/tls"
        let port = ProxyTests.freePort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", directory + "/localhost.pem",
                             "-key", directory + "/localhost.key", "-www", "-quiet"] + flags
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        url = "https://localhost:\(port)/"
        for _ in 0..<100 where process.isRunning {
            if Self.accepts(port) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "openssl s_server did not listen on \(port)"])
    }

    deinit {
        // SIGKILL: the child inherits the test thread's signal mask, which blocks SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// setTLSVersion against servers whose versions are known: the range asked for is the one
/// negotiated, and a server below the minimum fails the handshake with curl's 35.
@Suite(.ownThreads) struct TLSVersionTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// The protocol s_server's page says it negotiated, or nil after a failure.
    func negotiated(_ url: String, minimum: HttpRequest.TLSVersion? = nil, maximum: HttpRequest.TLSVersion? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> (HttpRequest, String?) {
        let caFile = try env.caFile
        let (request, body) = fetchSync("GET", url, configure: {
            #expect($0.setCACertificateFile(caFile), sourceLocation: sourceLocation)
            #expect($0.setTLSVersion(minimum: minimum, maximum: maximum), sourceLocation: sourceLocation)
        }, sourceLocation: sourceLocation)
        let page = String(decoding: body, as: UTF8.self)
        let line = page.split(separator: "\n").first { $0.contains("Protocol  :") }
        return (request, line.map { String($0.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces) })
    }

    @Test func theVersionNegotiatedIsWithinTheRangeAskedFor() throws {
        let server = try TLSVersionServer(env)
        #expect(try negotiated(server.url).1 == "TLSv1.3")
        #expect(try negotiated(server.url, maximum: .v1_2).1 == "TLSv1.2")
        #expect(try negotiated(server.url, minimum: .v1_2, maximum: .v1_2).1 == "TLSv1.2")
        #expect(try negotiated(server.url, minimum: .v1_3).1 == "TLSv1.3")
        #expect(try negotiated(server.url, minimum: .v1_2, maximum: .v1_3).1 == "TLSv1.3")
    }

    @Test func aServerBelowTheMinimumFailsTheHandshake() throws {
        let capped = try TLSVersionServer(env, only: ["-tls1_2"])
        #expect(try negotiated(capped.url).1 == "TLSv1.2")
        let (refused, page) = try negotiated(capped.url, minimum: .v1_3)
        #expect(page == nil && refused.getStatus() == 0 && refused.getFailureKind() == .tls, "\(refused.getStatusText() ?? "")")
        #expect(refused.getFailureCode() == 35 && refused.getStatusText()?.hasPrefix("SSL") == true, "\(refused.getStatusText() ?? "")")
        // The switch stays with the object; nil bounds lift it.
        #expect(refused.open("GET", url: capped.url) && refused.send() && refused.getStatus() == 0)
        #expect(refused.setTLSVersion() && refused.open("GET", url: capped.url) && refused.send() && refused.getStatus() == 200)
    }

    @Test func aMinimumAboveTheMaximumIsRefused() throws {
        let request = HttpRequest()
        #expect(!request.setTLSVersion(minimum: .v1_3, maximum: .v1_2))
        #expect(request.lastError?.code == .invalidArgument && request.lastError?.message.contains("TLS 1.3") == true,
                "\(String(describing: request.lastError))")
        #expect(request.setTLSVersion(minimum: .v1_2, maximum: .v1_2) && request.setTLSVersion(maximum: .v1_0))
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true) && request.send())
        #expect(!request.setTLSVersion(minimum: .v1_2) && request.lastError?.code == .invalidState, "not while in flight")
        request.abort()
        #expect(HttpRequest.TLSVersion.allCases.sorted() == [.v1_0, .v1_1, .v1_2, .v1_3])
    }

    /// --tlsv1.2, --tlsv1.3 and --tls-max as curl's: the same page and exit status.
    @Test func xhrTLSOptionsAsCurlHasThem() throws {
        let server = try TLSVersionServer(env), capped = try TLSVersionServer(env, only: ["-tls1_2"])
        let caFile = try env.caFile
        let cases: [([String], String, Int32)] = [
            (["--tls-max", "1.2"], server.url, 0), (["--tlsv1.3"], server.url, 0), (["--tlsv1.2", "--tls-max", "1.2"], server.url, 0),
            (["--tlsv1.3"], capped.url, 35), (["--tlsv1.2"], capped.url, 0), (["--tls-max", "default"], capped.url, 0),
        ]
        for (options, url, status) in cases {
            let ours = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "--cacert", caFile] + options + [url])
            let curl = try XHRToolTests.run("/usr/bin/curl", ["-s", "--cacert", caFile] + options + [url])
            #expect(ours.status == status && curl.status == status, "\(options) \(url): xhr \(ours.status), curl \(curl.status)")
            let protocolLine = { (text: String) in text.split(separator: "\n").first { $0.contains("Protocol  :") }.map(String.init) }
            #expect(protocolLine(ours.text) == protocolLine(curl.text), "\(options): \(ours.text.prefix(200))")
        }
        for bad in [["--tls-max", "1.4"], ["--tls-max", "tls1.2"], ["--tlsv1.3", "--tls-max", "1.2"]] {
            let refused = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "--cacert", caFile] + bad + [server.url])
            #expect(refused.status == 2, "\(bad): \(refused.status) \(refused.stderr)")
        }
    }
}

/// setCACertificatePath: a folder made by `openssl rehash` holding the test CA (or another)
/// against Apache's CA-signed listener, alone and with a CA file.
@Suite(.ownThreads) struct CACertificatePathTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// A new folder holding copies of `files`, hashed by `openssl rehash`.
    func hashedFolder(_ files: [String]) throws -> String {
        let folder = try env.scratchPath("capath")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (index, file) in files.enumerated() {
            try FileManager.default.copyItem(atPath: file, toPath: folder + "/ca\(index).pem")
        }
        let rehash = try Shell.run("/usr/bin/openssl", ["rehash", folder])
        #expect(rehash.status == 0, "\(rehash.output)")
        return folder
    }

    @Test func theFolderIsTheTrustStore() throws {
        let url = try env.httpsURL + "/files/100b"
        let trusted = try hashedFolder([try env.caFile]), other = try hashedFolder([try env.otherCAFile])
        let (ok, body) = fetchSync("GET", url) { #expect($0.setCACertificatePath(trusted)) }
        #expect(ok.getStatus() == 200 && body == Pattern.bytes(100), "\(ok.getStatusText() ?? "")")
        let (refused, _) = fetchSync("GET", url) { #expect($0.setCACertificatePath(other)) }
        #expect(refused.getStatus() == 0 && refused.getFailureKind() == .tls && refused.getFailureCode() == 60, "\(refused.getStatusText() ?? "")")
        // A folder without the CA wins over nothing: the process-wide and system stores are not read.
        let otherFile = try env.otherCAFile, caFile = try env.caFile
        let (fileToo, _) = fetchSync("GET", url) {
            #expect($0.setCACertificatePath(other))
            #expect($0.setCACertificateFile(caFile))
        }
        #expect(fileToo.getStatus() == 200, "the request's own file is trusted with the folder: \(fileToo.getStatusText() ?? "")")
        let (folderToo, _) = fetchSync("GET", url) {
            #expect($0.setCACertificateFile(otherFile))
            #expect($0.setCACertificatePath(trusted))
        }
        #expect(folderToo.getStatus() == 200, "\(folderToo.getStatusText() ?? "")")
    }

    @Test func whatIsNoFolderIsRefused() throws {
        let folder = try hashedFolder([try env.caFile])
        let link = try env.scratchPath("capath-link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder)
        let request = HttpRequest()
        for bad in ["/nonexistent/folder", try env.caFile, link, "", folder + "\n", folder + "\r", folder + "\u{0}x"] {
            #expect(!request.setCACertificatePath(bad), "\(bad)")
            #expect(request.lastError?.code == .fileUnreadable, "\(bad)")
            #expect(request.lastError?.message.contains("\n") == false, "escaped: \(request.lastError?.message ?? "")")
        }
        #expect(request.lastError?.message.contains("NUL") == true)
        #expect(!request.setCACertificatePath(link) && request.lastError?.message.contains("symbolic link") == true)
        #expect(request.setCACertificatePath(folder) && request.lastError == nil)
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true) && request.send())
        #expect(!request.setCACertificatePath(folder) && request.lastError?.code == .invalidState, "not while in flight")
        request.abort()
    }

    /// --capath as curl's: the same page or exit status.
    @Test func xhrCapathAsCurlHasIt() throws {
        let url = try env.httpsURL + "/files/100b"
        let trusted = try hashedFolder([try env.caFile]), other = try hashedFolder([try env.otherCAFile])
        for (options, status) in [(["--capath", trusted], Int32(0)), (["--capath", other], 60), (["--capath", other, "--cacert", try env.caFile], 0)] {
            let ours = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s"] + options + [url])
            let curl = try XHRToolTests.run("/usr/bin/curl", ["-s"] + options + [url])
            #expect(ours.status == status && curl.status == status, "\(options): xhr \(ours.status), curl \(curl.status)")
            #expect(ours.stdout == curl.stdout)
        }
        let missing = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["--capath", "/nonexistent/folder", url])
        #expect(missing.status == 26 && missing.stderr.contains("CA folder"), "\(missing.stderr)")
    }
}
