import Foundation
import Testing
@testable import xhr

/// xhr's --cert, --cert-type, --key, --key-type, --pass and --pinnedpubkey against nginx's
/// server that asks for a client certificate from the test CA (/whoami answers its subject).
@Suite(.ownThreads) struct XHRClientCertificateTests {
    let env: TestEnvironment
    let whoami: String
    init() throws {
        env = try TestEnvironment.get()
        whoami = try env["TESTENV_MTLS_URL"] + "/whoami"
    }

    func xhr(_ arguments: [String]) throws -> XHRToolTests.Run {
        try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-S", "--cacert", try env.caFile] + arguments + [whoami])
    }

    func expectShown(_ run: XHRToolTests.Run, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 0 && run.text == "CN=xhr-client SUCCESS\n", "\(run.status) \(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test func theIdentityIsShownInEveryFormat() throws {
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"], password = try env["TESTENV_CLIENT_PASSWORD"]
        let without = try xhr(["-w", "%{http_code}", "-o", "/dev/null"])
        #expect(without.status == 0 && without.text == "400", "nginx asks for a certificate")
        expectShown(try xhr(["--cert", cert, "--key", key]))
        expectShown(try xhr(["-E", cert, "--key", try env["TESTENV_CLIENT_KEY_ENCRYPTED"], "--pass", password]))
        expectShown(try xhr(["--cert", try env["TESTENV_CLIENT_P12"] + ":" + password, "--cert-type", "P12"]))
        expectShown(try xhr(["--cert", try env["TESTENV_CLIENT_P12"], "--cert-type", "p12", "--pass", password]))
        expectShown(try xhr(["--cert", try env["TESTENV_CLIENT_CERT_DER"], "--cert-type", "DER",
                             "--key", try env["TESTENV_CLIENT_KEY_DER"], "--key-type", "DER"]))
        // A PEM certificate with a DER key: each file in its own format.
        expectShown(try xhr(["--cert", cert, "--key", try env["TESTENV_CLIENT_KEY_DER"], "--key-type", "der"]))
    }

    @Test func failuresEndWithCurlsExitCodes() throws {
        let cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"]
        // A copy under its own name: a new connection, so the wrong password is tried.
        let p12 = try env.scratchPath("xhr-client") + ".p12"
        try FileManager.default.copyItem(atPath: try env["TESTENV_CLIENT_P12"], toPath: p12)
        let wrong = try xhr(["--cert", p12 + ":wrong", "--cert-type", "P12"])
        #expect(wrong.status == 58 && wrong.stderr.contains(p12), "\(wrong.status) \(wrong.stderr)")
        let missing = try xhr(["--cert", "/nonexistent/client.pem", "--key", key])
        #expect(missing.status == 58 && missing.stderr.contains("/nonexistent/client.pem"), "\(missing.status) \(missing.stderr)")
        let engine = try xhr(["--cert", cert, "--cert-type", "ENG"])
        #expect(engine.status == 2 && engine.stderr.contains("--cert-type"), "\(engine.status) \(engine.stderr)")
        let pin = try xhr(["--cert", cert, "--key", key, "--pinnedpubkey", try env["TESTENV_LOCALHOST_PIN"]])
        expectShown(pin)
        let other = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        let mismatch = try xhr(["--pinnedpubkey", other])
        #expect(mismatch.status == 90 && mismatch.stderr.contains("pinned public key"), "\(mismatch.status) \(mismatch.stderr)")
        let malformed = try xhr(["--pinnedpubkey", "sha256//abc"])
        #expect(malformed.status == 90 && malformed.stderr.contains("sha256//abc"), "\(malformed.status) \(malformed.stderr)")
    }

    /// curl, given an encrypted key and no password, lets OpenSSL ask for it on the terminal
    /// and wait; xhr fails at once (58) — checked on a terminal of its own.
    @Test func anEncryptedKeyWithoutItsPasswordIsNeverAskedFor() throws {
        let arguments = ["-s", "-S", "--cacert", try env.caFile, "--cert", try env["TESTENV_CLIENT_CERT"],
                         "--key", try env["TESTENV_CLIENT_KEY_ENCRYPTED"], whoami]
        let started = Date()
        let run = try XHRToolTests.run("/usr/bin/timeout", ["30", "/usr/bin/python3", "-c",
            "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))",
            TestEnvironment.builtProduct("xhr")] + arguments)
        #expect(run.status == 58, "\(run.status): \(run.text) \(run.stderr)")
        #expect(!run.text.lowercased().contains("pass phrase"), "\(run.text)")
        #expect(Date().timeIntervalSince(started) < 25)
    }

    @Test func certReadsAPasswordAfterAnUnescapedColon() {
        #expect(Fetch.certificateAndPassword("client.pem") == ("client.pem", nil))
        #expect(Fetch.certificateAndPassword("client.p12:secret") == ("client.p12", "secret"))
        #expect(Fetch.certificateAndPassword("c\\:1.p12:se:cret") == ("c:1.p12", "se:cret"))
        #expect(Fetch.certificateAndPassword("a\\\\b:") == ("a\\b", ""))
        #expect(Fetch.certificateAndPassword("a\\b") == ("a\\b", nil))
        #expect(Fetch.certificateAndPassword("trailing\\") == ("trailing\\", nil))
    }
}
