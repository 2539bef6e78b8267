@testable import CurlXHR
import Foundation
import Testing

/// TLS client certificates and pinned public keys against nginx's server that asks for a
/// certificate from the test CA (`ssl_verify_client on`; /whoami answers its subject).
@Suite(.ownThreads) struct ClientCertificateTests {
    let env: TestEnvironment
    let whoami: String
    init() throws {
        env = try TestEnvironment.get()
        whoami = try env["TESTENV_MTLS_URL"] + "/whoami"
    }

    /// A GET of /whoami trusting the test CA, after `setUp`.
    func whoamiSent(_ setUp: (HttpRequest) throws -> Void) throws -> (HttpRequest, String) {
        let caFile = try env.caFile
        var failure: (any Error)?
        let (request, body) = fetchSync("GET", whoami) {
            #expect($0.setCACertificateFile(caFile))
            do { try setUp($0) } catch { failure = error }
        }
        if let failure { throw failure }
        return (request, String(decoding: body, as: UTF8.self))
    }

    func expectShown(_ sent: (HttpRequest, String), sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sent.0.getStatus() == 200, "\(sent.0.getStatusText() ?? "")", sourceLocation: sourceLocation)
        #expect(sent.1 == "CN=xhr-client SUCCESS\n", sourceLocation: sourceLocation)
    }

    func expectCertificateRefused(_ request: HttpRequest, naming file: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request.getState() == .done && request.getStatus() == 0, sourceLocation: sourceLocation)
        #expect(request.getFailureKind() == .tls, sourceLocation: sourceLocation)
        #expect(request.getFailureCode() == 58, "curl's exit for a certificate it cannot use", sourceLocation: sourceLocation)
        #expect(request.getStatusText()?.contains(file) == true, "\(request.getStatusText() ?? "") names \(file)", sourceLocation: sourceLocation)
    }

    @Test func everyFormatOfTheIdentityIsShown() throws {
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"], password = try env["TESTENV_CLIENT_PASSWORD"]
        let (without, page) = try whoamiSent { _ in }
        #expect(without.getStatus() == 400 && page.contains("No required SSL certificate"), "nginx asks for one")
        expectShown(try whoamiSent { #expect($0.setClientCertificate(cert, keyPath: key)) })
        // A PEM file with the key after the certificate.
        let both = try env.scratchPath("client-and-key.pem")
        try (String(contentsOfFile: cert, encoding: .utf8) + String(contentsOfFile: key, encoding: .utf8)).write(toFile: both, atomically: true, encoding: .utf8)
        expectShown(try whoamiSent { #expect($0.setClientCertificate(both)) })
        let encrypted = try env["TESTENV_CLIENT_KEY_ENCRYPTED"]
        expectShown(try whoamiSent { #expect($0.setClientCertificate(cert, keyPath: encrypted, password: password)) })
        let der = try env["TESTENV_CLIENT_CERT_DER"], derKey = try env["TESTENV_CLIENT_KEY_DER"]
        expectShown(try whoamiSent { #expect($0.setClientCertificate(der, format: .der, keyPath: derKey)) })
        let p12 = try env["TESTENV_CLIENT_P12"]
        expectShown(try whoamiSent { #expect($0.setClientCertificate(p12, format: .pkcs12, password: password)) })
        let bundle = try Data(contentsOf: URL(fileURLWithPath: p12))
        expectShown(try whoamiSent { #expect($0.setClientCertificate(pkcs12: bundle, password: password)) })
    }

    /// A copy of the file at `path` under a new name: libcurl lends a connection to requests
    /// with the same certificate path, so a certificate of its own makes a new connection.
    func copy(_ path: String) throws -> String {
        let copy = try env.scratchPath("identity") + "-" + (path as NSString).lastPathComponent
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        return copy
    }

    @Test func aWrongOrMissingPasswordFailsTheSendNamingTheFile() throws {
        let cert = try copy(env["TESTENV_CLIENT_CERT"]), encrypted = try env["TESTENV_CLIENT_KEY_ENCRYPTED"]
        let p12 = try copy(env["TESTENV_CLIENT_P12"])
        // No password: refused at once, never asked for (OpenSSL would prompt on a terminal).
        expectCertificateRefused(try whoamiSent { #expect($0.setClientCertificate(cert, keyPath: encrypted)) }.0, naming: encrypted)
        expectCertificateRefused(try whoamiSent { #expect($0.setClientCertificate(cert, keyPath: encrypted, password: "wrong")) }.0,
                                 naming: encrypted)
        expectCertificateRefused(try whoamiSent { #expect($0.setClientCertificate(p12, format: .pkcs12, password: "wrong")) }.0,
                                 naming: p12)
        // A file that is not what the format says.
        expectCertificateRefused(try whoamiSent { #expect($0.setClientCertificate(cert, format: .der)) }.0, naming: cert)
        var bundle = try Data(contentsOf: URL(fileURLWithPath: p12))
        bundle[bundle.count - 1] ^= 0x55  // bytes of their own: no connection made with the right ones is lent
        let (inMemory, _) = try whoamiSent { #expect($0.setClientCertificate(pkcs12: bundle, password: "wrong")) }
        expectCertificateRefused(inMemory, naming: "the PKCS#12 bytes given in memory")
    }

    @Test func aCertificateFromAnotherCAIsNotTrusted() throws {
        let cert = try env["TESTENV_OTHER_CLIENT_CERT"], key = try env["TESTENV_OTHER_CLIENT_KEY"]
        let (request, page) = try whoamiSent { #expect($0.setClientCertificate(cert, keyPath: key)) }
        #expect(request.getStatus() == 400 && page.contains("SSL certificate error"), "\(page)")
    }

    @Test func aConnectionMadeWithACertificateServesNoRequestWithout() throws {
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"], caFile = try env.caFile
        let request = HttpRequest()
        #expect(request.setCACertificateFile(caFile) && request.setClientCertificate(cert, keyPath: key))
        #expect(request.open("GET", url: whoami, async: false) && request.send())
        #expect(request.getStatus() == 200)
        // The same object without its identity: a new connection, which shows none.
        let plain = HttpRequest()
        #expect(plain.setCACertificateFile(caFile))
        #expect(plain.open("GET", url: whoami, async: false) && plain.send())
        #expect(plain.getStatus() == 400, "a connection's identity is not lent to a request without one")
        #expect(request.open("GET", url: whoami, async: false) && request.send())
        #expect(request.getStatus() == 200 && String(decoding: request.getReceiveBuffer(), as: UTF8.self).hasPrefix("CN=xhr-client"))
    }

    @Test func whatCannotBeAnIdentityIsRefused() throws {
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"], p12 = try env["TESTENV_CLIENT_P12"]
        let folder = try env.scratchPath("not-a-certificate")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let request = HttpRequest()
        for bad in ["", "/nonexistent/client.pem", folder, cert + "\n", cert + "\r", cert + "\u{0}x"] {
            #expect(!request.setClientCertificate(bad, keyPath: key), "\(bad.debugDescription)")
            #expect(request.lastError?.code == .fileUnreadable, "\(bad.debugDescription)")
            #expect(request.lastError?.message.contains("certificate") == true, "\(request.lastError?.message ?? "")")
            #expect(request.lastError?.message.contains("\n") == false, "escaped: \(request.lastError?.message ?? "")")
            #expect(!request.setClientCertificate(cert, keyPath: bad), "\(bad.debugDescription)")
            #expect(request.lastError?.message.contains("key") == true, "\(request.lastError?.message ?? "")")
        }
        #expect(!request.setClientCertificate(cert, keyPath: key, password: "p\u{0}w") && request.lastError?.message.contains("NUL") == true)
        #expect(!request.setClientCertificate(p12, format: .pkcs12, keyPath: key) && request.lastError?.message.contains("PKCS#12") == true)
        #expect(!request.setClientCertificate(pkcs12: Data()) && request.lastError?.code == .invalidArgument)
        #expect(!request.setClientCertificate(pkcs12: Data("-----BEGIN CERTIFICATE-----".utf8)))
        #expect(request.lastError?.message.contains("not PKCS#12") == true)
        // A symbolic link to a certificate is a certificate (as distributions install them).
        let link = try env.scratchPath("client-link.pem")
        try? FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: cert)
        #expect(request.setClientCertificate(link, keyPath: key) && request.lastError == nil)
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true) && request.send())
        #expect(!request.setClientCertificate(cert, keyPath: key) && request.lastError?.code == .invalidState, "not while in flight")
        #expect(!request.setPinnedPublicKeys(try env["TESTENV_LOCALHOST_PIN"]) && request.lastError?.code == .invalidState)
        request.abort()
    }

    @Test func thePinnedKeyDecides() throws {
        let pin = try env["TESTENV_LOCALHOST_PIN"]
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"]
        let other = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        for pins in [pin, other + ";" + pin, try env["TESTENV_LOCALHOST_PUBKEY"], try env["TESTENV_LOCALHOST_PUBKEY_DER"]] {
            let (request, body) = try whoamiSent {
                #expect($0.setPinnedPublicKeys(pins))
                #expect($0.setClientCertificate(cert, keyPath: key))
            }
            #expect(request.getStatus() == 200 && body.hasPrefix("CN=xhr-client"), "\(pins): \(request.getStatusText() ?? "")")
        }
        let (refused, _) = try whoamiSent { #expect($0.setPinnedPublicKeys(other)) }
        #expect(refused.getStatus() == 0 && refused.getFailureKind() == .tls && refused.getFailureCode() == 90)
        #expect(refused.getStatusText()?.contains("pinned public key") == true, "\(refused.getStatusText() ?? "")")
        // Another key file: the CA's.
        let caKey = try env.scratchPath("ca-pubkey.pem")
        let made = try Shell.run("/usr/bin/openssl", ["x509", "-in", try env.caFile, "-pubkey", "-noout", "-out", caKey])
        #expect(made.status == 0, "\(made.output)")
        let (byFile, _) = try whoamiSent { #expect($0.setPinnedPublicKeys(caKey)) }
        #expect(byFile.getStatus() == 0 && byFile.getFailureCode() == 90)
        // "" removes the pins.
        let (cleared, _) = try whoamiSent {
            #expect($0.setPinnedPublicKeys(other) && $0.setPinnedPublicKeys(""))
            #expect($0.setClientCertificate(cert, keyPath: key))
        }
        #expect(cleared.getStatus() == 200)
    }

    @Test func whatIsNoPinIsRefused() throws {
        let request = HttpRequest()
        let good = try env["TESTENV_LOCALHOST_PIN"]
        let short = "sha256//" + Data(repeating: 1, count: 31).base64EncodedString()
        for bad in ["sha256//", "sha256//abc", short, good + ";", good + ";sha1//" + Data(repeating: 1, count: 20).base64EncodedString(),
                    good + "\r\nX-Injected: 1", "/nonexistent/key.pem", try env["TESTENV_DIR"], try env["TESTENV_CLIENT_P12"] + "\u{0}",
                    "/dev/null"] {
            #expect(!request.setPinnedPublicKeys(bad), "\(bad.debugDescription)")
            #expect(request.lastError?.code == .invalidArgument, "\(bad.debugDescription)")
            #expect(request.lastError?.message.contains("\r") == false, "escaped: \(request.lastError?.message ?? "")")
        }
        let text = try env.scratchPath("not-a-key.txt")
        try "hello".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(!request.setPinnedPublicKeys(text) && request.lastError?.message.contains("not a public key") == true)
        #expect(request.setPinnedPublicKeys(good) && request.lastError == nil)
    }
}
