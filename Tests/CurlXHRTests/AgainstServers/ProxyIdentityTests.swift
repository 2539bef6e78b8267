@testable import CurlXHR
import Foundation
import Testing

/// An https proxy's key pinned (squid's TLS port, whose key is its own, not the server's) and
/// a client certificate shown to a proxy that asks for one (nginx as a forward proxy that
/// requires one from the test CA, passing requests to Apache).
@Suite(.ownThreads) struct ProxyIdentityTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    var tlsProxy: String { get throws { "https://localhost:\(try env["TESTENV_PROXY_TLS_PORT"])" } }
    var certificateProxy: String { get throws { "https://localhost:\(try env["TESTENV_PROXY_MTLS_PORT"])" } }
    var otherPin: String { "sha256//" + Data(repeating: 7, count: 32).base64EncodedString() }

    /// A sync GET of `url` through squid's TLS port (its CA trusted for proxy and server alike)
    /// after `configure`, in DONE.
    func sent(_ url: String, _ configure: (HttpRequest) throws -> Void) throws -> HttpRequest {
        let request = HttpRequest()
        #expect(request.open("GET", url: url, async: false))
        let proxy = try tlsProxy, ca = try env.caFile
        #expect(request.setProxy(proxy) && request.setProxyCACertificateFile(ca))
        #expect(request.setCACertificateFile(try env.caFile))
        try configure(request)
        #expect(request.send(timeout: 20), "\(request.lastError?.message ?? "")")
        #expect(request.getState() == .done)
        return request
    }

    func expectPinRefused(_ request: HttpRequest, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = request.getStatusText() ?? ""
        #expect(request.getStatus() == 0 && request.getFailureKind() == .tls && request.getFailureCode() == 90, "\(text)",
                sourceLocation: sourceLocation)
        #expect(text.contains("proxy's public key does not match"), "\(text)", sourceLocation: sourceLocation)
    }

    @Test func theProxysPinnedKeyDecides() throws {
        let pin = try env["TESTENV_PROXY_TLS_PIN"], keyFile = try env["TESTENV_PROXY_TLS_PUBKEY"]
        let serverPin = try env["TESTENV_LOCALHOST_PIN"]
        for url in [try env.httpURL + "/echo", try env.httpsURL + "/echo"] {
            for pins in [pin, otherPin + ";" + pin, keyFile] {
                let request = try sent(url) { #expect($0.setProxyPinnedPublicKeys(pins)) }
                #expect(request.getStatus() == 200, "\(url) \(pins): \(request.getStatusText() ?? "")")
            }
            // The server's key is not the proxy's: pinned for the proxy, it is refused.
            expectPinRefused(try sent(url) { #expect($0.setProxyPinnedPublicKeys(serverPin)) })
            expectPinRefused(try sent(url) { #expect($0.setProxyPinnedPublicKeys(otherPin)) })
            // The pins hold when the proxy's certificate is not verified.
            expectPinRefused(try sent(url) { #expect($0.disableProxyPeerVerification() && $0.setProxyPinnedPublicKeys(otherPin)) })
            let unverified = try sent(url) { #expect($0.disableProxyPeerVerification() && $0.setProxyPinnedPublicKeys(pin)) }
            #expect(unverified.getStatus() == 200, "\(unverified.getStatusText() ?? "")")
            // "" removes them.
            let cleared = try sent(url) { #expect($0.setProxyPinnedPublicKeys(otherPin) && $0.setProxyPinnedPublicKeys("")) }
            #expect(cleared.getStatus() == 200, "\(cleared.getStatusText() ?? "")")
        }
        // Both ends pinned, each to its own key; the server's pins are libcurl's, the proxy's the library's.
        let both = try sent(try env.httpsURL + "/echo") { #expect($0.setProxyPinnedPublicKeys(pin) && $0.setPinnedPublicKeys(serverPin)) }
        #expect(both.getStatus() == 200, "\(both.getStatusText() ?? "")")
        let swapped = try sent(try env.httpsURL + "/echo") { #expect($0.setProxyPinnedPublicKeys(pin) && $0.setPinnedPublicKeys(pin)) }
        #expect(swapped.getStatus() == 0 && swapped.getFailureCode() == 90, "\(swapped.getStatusText() ?? "")")
        #expect(swapped.getStatusText()?.contains("proxy's") == false, "the server's pin failed: \(swapped.getStatusText() ?? "")")
    }

    @Test func aPooledTunnelIsNotLentToARequestWithProxyPins() throws {
        // One request leaves a tunnel through the proxy in the pool; the next, with pins the
        // proxy's key does not match, must make its own connection and refuse it.
        let url = try env.httpsURL + "/echo"
        let request = try sent(url) { _ in }
        #expect(request.getStatus() == 200)
        expectPinRefused(try sent(url) { #expect($0.setProxyPinnedPublicKeys(otherPin)) })
        // Asynchronous sends are checked the same way.
        let proxy = try tlsProxy, ca = try env.caFile, pin = otherPin
        let (async, _) = fetchAsync("GET", url) {
            #expect($0.setProxy(proxy) && $0.setProxyCACertificateFile(ca) && $0.setCACertificateFile(ca))
            #expect($0.setProxyPinnedPublicKeys(pin))
        }
        expectPinRefused(async)
    }

    @Test func whatIsNoProxyPinIsRefused() throws {
        let request = HttpRequest()
        let certificate = try env["TESTENV_CLIENT_CERT"]  // a certificate, not a public key
        for bad in ["sha256//", "sha256//abc", otherPin + ";", otherPin + "\r\nX-Injected: 1", "/nonexistent/key.pem",
                    try env["TESTENV_DIR"], certificate, "/dev/null", otherPin + "\u{0}"] {
            #expect(!request.setProxyPinnedPublicKeys(bad), "\(bad.debugDescription)")
            #expect(request.lastError?.code == .invalidArgument, "\(bad.debugDescription)")
            #expect(request.lastError?.message.contains("\r") == false, "escaped: \(request.lastError?.message ?? "")")
        }
        // A PEM file with the marker lines but no key between them, and a huge one.
        let empty = try env.scratchPath("empty-pubkey.pem")
        try "-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n".write(toFile: empty, atomically: true, encoding: .utf8)
        #expect(!request.setProxyPinnedPublicKeys(empty) && request.lastError?.message.contains("not a public key") == true)
        let huge = try env.scratchPath("huge-pubkey.der")
        try Data(repeating: 0x30, count: 2 << 20).write(to: URL(fileURLWithPath: huge))
        #expect(!request.setProxyPinnedPublicKeys(huge) && request.lastError?.message.contains("1 MiB") == true)
        // A symbolic link to the key is the key.
        let link = try env.scratchPath("proxy-pubkey-link.pem")
        try? FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: try env["TESTENV_PROXY_TLS_PUBKEY"])
        #expect(request.setProxyPinnedPublicKeys(link) && request.lastError == nil)
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true) && request.send())
        #expect(!request.setProxyPinnedPublicKeys(otherPin) && request.lastError?.code == .invalidState, "not while in flight")
        #expect(!request.setProxyClientCertificate(certificate) && request.lastError?.code == .invalidState)
        request.abort()
    }

    @Test func aProxyThatAsksForACertificateGetsIt() throws {
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"]
        let password = try env["TESTENV_CLIENT_PASSWORD"], encrypted = try env["TESTENV_CLIENT_KEY_ENCRYPTED"]
        let der = try env["TESTENV_CLIENT_CERT_DER"], derKey = try env["TESTENV_CLIENT_KEY_DER"], p12 = try env["TESTENV_CLIENT_P12"]
        let identities: [(String, (HttpRequest) -> Bool)] = [
            ("PEM", { $0.setProxyClientCertificate(cert, keyPath: key) }),
            ("encrypted PEM", { $0.setProxyClientCertificate(cert, keyPath: encrypted, password: password) }),
            ("DER", { $0.setProxyClientCertificate(der, format: .der, keyPath: derKey) }),
            ("PKCS#12", { $0.setProxyClientCertificate(p12, format: .pkcs12, password: password) }),
        ]
        for (name, configure) in identities {
            let request = try proxied { #expect(configure($0), "\(name): \($0.lastError?.message ?? "")") }
            #expect(request.getStatus() == 200, "\(name): \(request.getStatusText() ?? "")")
            #expect(request.getResponseHeader("X-Proxy-Client") == "CN=xhr-client", "\(name)")
            #expect(try Echo(request.getReceiveBuffer()).method == "GET", "\(name): Apache answered through the proxy")
        }
        // The server's certificate is not the proxy's: without a proxy certificate, nginx says
        // 400. (libcurl 7.88 would lend this request the connection the certificates above
        // were shown on: they were the requests' own.)
        let none = try proxied { #expect($0.setClientCertificate(cert, keyPath: key)) }
        #expect(none.getStatus() == 400 && (none.getResponseHeader("X-Proxy-Client") ?? "").isEmpty, "\(none.getStatusText() ?? "")")
        // Nor is a request without any certificate lent the connection a certificate was shown on.
        let plain = try proxied { _ in }
        #expect(plain.getStatus() == 400 && (plain.getResponseHeader("X-Proxy-Client") ?? "").isEmpty, "\(plain.getStatusText() ?? "")")
        // A wrong password fails the proxy's handshake, naming the certificate.
        let wrong = try proxied { #expect($0.setProxyClientCertificate(p12, format: .pkcs12, password: "wrong")) }
        #expect(wrong.getStatus() == 0 && wrong.getFailureKind() == .tls && wrong.getFailureCode() == 58, "\(wrong.getStatusText() ?? "")")
        #expect(wrong.getStatusText()?.contains("proxy client certificate '\(p12)'") == true, "\(wrong.getStatusText() ?? "")")
        // An encrypted key without a password is refused, never prompted for.
        let locked = try proxied { #expect($0.setProxyClientCertificate(cert, keyPath: encrypted)) }
        #expect(locked.getStatus() == 0 && locked.getFailureCode() == 58, "\(locked.getStatusText() ?? "")")
        // What cannot be an identity is refused at the call.
        let request = HttpRequest()
        for bad in ["", "/nonexistent/client.pem", try env["TESTENV_DIR"], cert + "\n"] {
            #expect(!request.setProxyClientCertificate(bad, keyPath: key) && request.lastError?.code == .fileUnreadable, "\(bad.debugDescription)")
        }
        #expect(!request.setProxyClientCertificate(p12, format: .pkcs12, keyPath: key) && request.lastError?.message.contains("PKCS#12") == true)
    }

    /// A sync GET of Apache's /echo through nginx's certificate-asking proxy, after `configure`.
    func proxied(_ configure: (HttpRequest) throws -> Void) throws -> HttpRequest {
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.httpURL + "/echo", async: false))
        let proxy = try certificateProxy, ca = try env.caFile
        #expect(request.setProxy(proxy) && request.setProxyCACertificateFile(ca))
        try configure(request)
        #expect(request.send(timeout: 20), "\(request.lastError?.message ?? "")")
        return request
    }

    @Test func xhrTakesCurlsProxyIdentityOptions() throws {
        let echo = try env.httpURL + "/echo", ca = try env.caFile
        let tlsProxy = try self.tlsProxy, certificateProxy = try self.certificateProxy
        func xhr(_ arguments: [String]) throws -> XHRToolTests.Run {
            try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-S", "-o", "/dev/null", "-w", "%{http_code}"] + arguments + [echo])
        }
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"]
        let p12 = try env["TESTENV_CLIENT_P12"], password = try env["TESTENV_CLIENT_PASSWORD"]
        for arguments in [["-x", tlsProxy, "--proxy-cacert", ca, "--proxy-pinnedpubkey", try env["TESTENV_PROXY_TLS_PIN"]],
                          ["-x", tlsProxy, "--proxy-insecure", "--proxy-pinnedpubkey", try env["TESTENV_PROXY_TLS_PUBKEY"]],
                          ["-x", certificateProxy, "--proxy-cacert", ca, "--proxy-cert", cert, "--proxy-key", key],
                          ["-x", certificateProxy, "--proxy-cacert", ca, "--proxy-cert", p12 + ":" + password, "--proxy-cert-type", "p12"],
                          ["-x", certificateProxy, "--proxy-cacert", ca, "--proxy-cert", try env["TESTENV_CLIENT_CERT_DER"],
                           "--proxy-cert-type", "DER", "--proxy-key", try env["TESTENV_CLIENT_KEY_DER"], "--proxy-key-type", "DER"]] {
            let run = try xhr(arguments)
            #expect(run.status == 0 && run.text == "200", "\(arguments): \(run.status) \(run.stderr)")
        }
        // curl's exits: 90 a proxy key not pinned (curl 7.88 itself says 0 here), 58 a proxy
        // certificate that cannot be unlocked; 90 and 58 for what is no pin or no certificate.
        let unpinned = try xhr(["-x", tlsProxy, "--proxy-cacert", ca, "--proxy-pinnedpubkey", try env["TESTENV_LOCALHOST_PIN"]])
        #expect(unpinned.status == 90 && unpinned.stderr.contains("proxy's public key"), "\(unpinned.status) \(unpinned.stderr)")
        let locked = try xhr(["-x", certificateProxy, "--proxy-cacert", ca, "--proxy-cert", p12, "--proxy-cert-type", "P12", "--proxy-pass", "wrong"])
        #expect(locked.status == 58, "\(locked.status) \(locked.stderr)")
        #expect(try xhr(["-x", tlsProxy, "--proxy-pinnedpubkey", "sha256//abc"]).status == 90)
        #expect(try xhr(["-x", tlsProxy, "--proxy-cert", "/nonexistent/cert.pem"]).status == 58)
        #expect(try xhr(["-x", tlsProxy, "--proxy-key-type", "P12"]).status == 2)
    }
}
