@testable import CurlXHR
import Foundation
import Testing

/// TLS verification against Apache's three HTTPS listeners. Serialized: two tests change the
/// process-wide CA setting.
@Suite(.serialized) struct TLSTests {
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

    @Test func privateCAVerifiesWhenConfiguredProcessWide() throws {
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
