@testable import CurlXHR
import Foundation
import Testing

/// Server authentication against Apache (Basic, Digest, Negotiate with an MIT KDC) and a
/// password-verifying NTLM server. Serialized: the Kerberos ticket cache is process-wide.
@Suite(.serialized, .ownThreads) struct AuthTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    var user: String { get throws { try env["TESTENV_USER"] } }
    var password: String { get throws { try env["TESTENV_PASSWORD"] } }

    /// Sends a GET, sync or async, and returns the request in DONE with its body.
    func get(_ url: String, async: Bool, user: String? = nil, password: String? = nil, auth: String? = nil,
             sourceLocation: SourceLocation = #_sourceLocation) -> (HttpRequest, Data, [HttpRequest.State]) {
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: url, async: async, user: user, password: password, auth: auth),
                "\(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
        #expect(request.send(timeout: 20), sourceLocation: sourceLocation)
        if async {
            #expect(recorder.waitForDone(), sourceLocation: sourceLocation)
            return (request, recorder.result.body, recorder.result.states)
        }
        return (request, request.getReceiveBuffer(), [])
    }

    /// Right credentials: 200 and the body; wrong ones and none: 401, each in DONE, sync and
    /// async, with one HEADERS_RECEIVED however many rounds the handshake took.
    func checkScheme(_ auth: String, url: String, user: String, password: String,
                     sourceLocation: SourceLocation = #_sourceLocation) throws {
        for async in [false, true] {
            let (ok, body, states) = get(url, async: async, user: user, password: password, auth: auth,
                                         sourceLocation: sourceLocation)
            #expect(ok.getStatus() == 200, "\(auth) async=\(async): \(ok.getStatusText() ?? "")", sourceLocation: sourceLocation)
            #expect(!body.isEmpty, sourceLocation: sourceLocation)
            if async {
                #expect(states.filter { $0 == .headersReceived }.count == 1, "\(states)", sourceLocation: sourceLocation)
                #expect(states.last == .done, sourceLocation: sourceLocation)
            }
            let wrong = get(url, async: async, user: user, password: password + "-wrong", auth: auth,
                            sourceLocation: sourceLocation).0
            #expect(wrong.getStatus() == 401, "\(auth) wrong password async=\(async)", sourceLocation: sourceLocation)
            #expect(wrong.getState() == .done, sourceLocation: sourceLocation)
            let none = get(url, async: async, sourceLocation: sourceLocation).0
            #expect(none.getStatus() == 401, "\(auth) no credentials async=\(async)", sourceLocation: sourceLocation)
        }
    }

    @Test func basic() throws {
        let url = try env.httpURL + "/basic/echo"
        try checkScheme("BASIC", url: url, user: try user, password: try password)
        // nil means Basic; user names and passwords with reserved characters pass intact.
        let (request, body, _) = get(url, async: false, user: try env["TESTENV_USER2"], password: try env["TESTENV_PASSWORD2"])
        #expect(request.getStatus() == 200)
        #expect(try Echo(body).json["remote_user"] as? String == (try env["TESTENV_USER2"]))
    }

    @Test func digest() throws {
        let url = try env.httpURL + "/digest/echo"
        try checkScheme("digest", url: url, user: try user, password: try password)
        // qop=auth with a POST body: the body arrives whole after the challenge round.
        let request = HttpRequest()
        #expect(request.open("POST", url: url, user: try user, password: try password, auth: "DIGEST"))
        #expect(request.send("form=1&b=2"))
        #expect(request.getStatus() == 200)
        let echo = try Echo(request.getReceiveBuffer())
        #expect(echo.body == Data("form=1&b=2".utf8))
        #expect(echo.json["auth_type"] as? String == "Digest")
        #expect(echo.header("Authorization")?.contains("qop=auth") == true)
        // A body over 64 KiB, streamed from the caller's Data: libcurl rewinds it for the
        // round after the challenge, and it still arrives whole.
        let large = Pattern.bytes(300_000)
        #expect(request.open("POST", url: url, user: try user, password: try password, auth: "DIGEST"))
        #expect(request.sendData(large))
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(try Echo(request.getReceiveBuffer()).body == large)
    }

    @Test func ntlm() throws {
        let url = try env["TESTENV_HTTP_NTLM_URL"] + "/echo"
        try checkScheme("NTLM", url: url, user: try user, password: try password)
        // The handshake binds to a kept-alive connection; a second request on the same
        // object authenticates again and succeeds.
        let request = HttpRequest()
        for _ in 0..<2 {
            #expect(request.open("GET", url: url, user: try user, password: try password, auth: "NTLM"))
            #expect(request.send(timeout: 20))
            #expect(request.getStatus() == 200)
        }
    }

    /// "ANY" (curl's --anyauth): the scheme each location's 401 offers, as Apache reports it;
    /// the same answers as curl's --anyauth, right and wrong.
    @Test func anyAnswersWithTheSchemeTheServerOffers() throws {
        for (path, type) in [("/basic/echo", "Basic"), ("/digest/echo", "Digest")] {
            let url = try env.httpURL + path
            try checkScheme("ANY", url: url, user: try user, password: try password)
            let (request, body, _) = get(url, async: false, user: try user, password: try password, auth: "any")
            #expect(request.getStatus() == 200)
            #expect(try Echo(body).json["auth_type"] as? String == type, "\(path)")
            // Reserved characters survive whichever scheme is picked.
            let second = get(url, async: true, user: try env["TESTENV_USER2"], password: try env["TESTENV_PASSWORD2"], auth: "ANY")
            let secondUser = try Echo(second.1).json["remote_user"] as? String
            let user2 = try env["TESTENV_USER2"]
            #expect(second.0.getStatus() == 200 && secondUser == user2)
            for suffix in ["", "-wrong"] {
                let curl = try XHRToolTests.run("/usr/bin/curl", ["-s", "--anyauth", "-u", "\(try user):\(try password)\(suffix)",
                                                                  "-w", "%{http_code}", "-o", "/dev/null", url])
                let ours = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "--anyauth", "-u", "\(try user):\(try password)\(suffix)",
                                                                                      "-w", "%{http_code}", "-o", "/dev/null", url])
                #expect(ours.status == curl.status && ours.text == curl.text, "\(path)\(suffix): xhr \(ours.text), curl \(curl.text)")
                #expect(ours.text == (suffix.isEmpty ? "200" : "401"))
            }
        }
        // NTLM, offered alone by the verifying server.
        let ntlm = get(try env["TESTENV_HTTP_NTLM_URL"] + "/echo", async: false, user: try user, password: try password, auth: "ANY")
        #expect(ntlm.0.getStatus() == 200, "\(ntlm.0.getStatusText() ?? "")")
        // --anyauth off again with --no-anyauth: Basic, which the Digest location refuses.
        let off = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "--anyauth", "--no-anyauth", "-u", "\(try user):\(try password)",
                                                                             "-w", "%{http_code}", "-o", "/dev/null", try env.httpURL + "/digest/echo"])
        #expect(off.text == "401")
        // Kerberos is never picked: ANY with a user@REALM and password at the Negotiate location is a 401.
        let negotiate = "http://\(try env["TESTENV_KRB_HOST"]):\(try env["TESTENV_HTTP_PORT"])/negotiate/echo"
        let kerberos = get(negotiate, async: false, user: try env["TESTENV_KRB5_PRINCIPAL"], password: try env["TESTENV_KRB5_PASSWORD"], auth: "ANY")
        #expect(kerberos.0.getStatus() == 401)
    }

    @Test func unknownSchemesAndShortKerberosNamesSayFalse() {
        let request = HttpRequest()
        #expect(!request.open("GET", url: "http://127.0.0.1/", user: "a", password: "b", auth: "SPNEGO"))
        #expect(!request.open("GET", url: "http://127.0.0.1/", user: "EXAMPLE\\alice", password: "b", auth: "NEGOTIATE"))
        #expect(request.lastError?.message.contains("user@REALM") == true)
        #expect(!request.open("GET", url: "http://127.0.0.1/", user: "alice", password: "b", auth: "negotiate"))
        #expect(request.getState() == .unsent)
    }

    @Test func credentialsAreNotForwardedToAnotherHost() throws {
        let marker = UUID().uuidString
        let port = try env["TESTENV_FAULT_PORT"]
        let target = "http://localhost:\(port)/record?auth-redirect=\(marker)"
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let (request, _, _) = get(try env.httpURL + "/basic/echo?redirect=\(encoded)", async: false,
                                  user: try user, password: try password, auth: "BASIC")
        #expect(request.getStatus() == 200)
        let records = try #require(try JSONSerialization.jsonObject(with: fetchSync("GET", try env.faultURL + "/recorded").1) as? [[String: Any]])
        let hop = try #require(records.last { ($0["path"] as? String)?.contains(marker) == true }, "the redirect was followed")
        let headers = (hop["headers"] as? [String: String] ?? [:]).mapKeys { $0.lowercased() }
        #expect(headers["authorization"] == nil)
    }

    @Test func kerberosTicketsComeFromTheKDCAndServeLaterRequests() throws {
        let dir = URL(fileURLWithPath: try env.scratchPath("krb"))
        KerberosCredentials.cacheFile = dir.appendingPathComponent("state/krb5cc").path
        defer {
            KerberosCredentials.clearCredentials(forMethod: "NEGOTIATE")
            try? FileManager.default.removeItem(at: dir)
        }
        let url = "http://\(try env["TESTENV_KRB_HOST"]):\(try env["TESTENV_HTTP_PORT"])/negotiate/echo"
        let principal = try env["TESTENV_KRB5_PRINCIPAL"]
        let secret = try env["TESTENV_KRB5_PASSWORD"]

        let (first, body, states) = get(url, async: true, user: principal, password: secret, auth: "NEGOTIATE")
        #expect(first.getStatus() == 200, "\(first.getStatusText() ?? "")")
        #expect(try Echo(body).json["remote_user"] as? String == principal)
        #expect(states.filter { $0 == .headersReceived }.count == 1)
        let attributes = try FileManager.default.attributesOfItem(atPath: KerberosCredentials.cacheFile)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0, "the cache is private to its owner")
        let klist = try Shell.run("/usr/bin/klist", ["-c", "FILE:" + KerberosCredentials.cacheFile])
        #expect(klist.output.contains("krbtgt/"), "\(klist.output)")
        #expect(!klist.output.contains(secret))

        // Later requests without credentials use the tickets.
        let (later, laterBody, _) = get(url, async: false)
        #expect(later.getStatus() == 200)
        #expect(try Echo(laterBody).json["remote_user"] as? String == principal)

        // Cleared: gone from the file, and the next request is refused.
        #expect(KerberosCredentials.clearCredentials(forMethod: "NEGOTIATE"))
        #expect(!FileManager.default.fileExists(atPath: KerberosCredentials.cacheFile))
        #expect(get(url, async: false).0.getStatus() == 401)
    }

    @Test func aWrongKerberosPasswordFailsClearly() throws {
        KerberosCredentials.cacheFile = try env.scratchPath("krb") + "/cc"
        defer { KerberosCredentials.clearCredentials(forMethod: nil) }
        let url = "http://\(try env["TESTENV_KRB_HOST"]):\(try env["TESTENV_HTTP_PORT"])/negotiate/echo"
        for async in [false, true] {
            let (request, _, states) = get(url, async: async, user: try env["TESTENV_KRB5_PRINCIPAL"], password: "not-the-password",
                                           auth: "NEGOTIATE")
            #expect(request.getState() == .done)
            #expect(request.getStatus() == 0)
            let text = request.getStatusText() ?? ""
            #expect(text.contains("Kerberos"), "\(text)")
            #expect(!text.contains("not-the-password"))
            if async { #expect(states == [.opened, .sent, .done]) }
        }
    }

    @Test func aKDCStoppedMidTestFailsClearlyWithinTheTimeout() throws {
        let kdc = TestEnvironment.packageRoot.appendingPathComponent("Tests/Servers/kdc.sh").path
        let dir = try env["TESTENV_DIR"]
        KerberosCredentials.cacheFile = try env.scratchPath("krb") + "/cc"
        defer { KerberosCredentials.clearCredentials(forMethod: nil) }
        let url = "http://\(try env["TESTENV_KRB_HOST"]):\(try env["TESTENV_HTTP_PORT"])/negotiate/echo"
        let principal = try env["TESTENV_KRB5_PRINCIPAL"], secret = try env["TESTENV_KRB5_PASSWORD"]
        #expect(get(url, async: false, user: principal, password: secret, auth: "NEGOTIATE").0.getStatus() == 200, "the KDC works first")
        KerberosCredentials.clearCredentials(forMethod: "NEGOTIATE")

        let stopped = try Shell.run("/bin/bash", [kdc, dir, "stop"])
        #expect(stopped.status == 0, "\(stopped.output)")
        defer {
            let restarted = try? Shell.run("/bin/bash", [kdc, dir, "start"])
            #expect(restarted?.status == 0, "\(restarted?.output ?? "")")
        }
        for async in [false, true] {
            let started = Date()
            let (request, _, states) = get(url, async: async, user: principal, password: secret, auth: "NEGOTIATE")
            #expect(Date().timeIntervalSince(started) < 20, "within the request's timeout")
            #expect(request.getStatus() == 0)
            #expect(request.getFailureKind() == .authentication)
            #expect((request.getStatusText() ?? "").contains("Kerberos"), "\(request.getStatusText() ?? "")")
            if async { #expect(states.last == .done) }
        }
    }

    @Test func tenThreadsAuthenticatingWithDifferentSchemesAtOnce() throws {
        let basic = try env.httpURL + "/basic/echo"
        let digest = try env.httpURL + "/digest/echo"
        let ntlm = try env["TESTENV_HTTP_NTLM_URL"] + "/echo"
        let negotiate = "http://\(try env["TESTENV_KRB_HOST"]):\(try env["TESTENV_HTTP_PORT"])/negotiate/echo"
        KerberosCredentials.cacheFile = try env.scratchPath("krb") + "/cc"
        defer { KerberosCredentials.clearCredentials(forMethod: nil) }
        let principal = try env["TESTENV_KRB5_PRINCIPAL"], secret = try env["TESTENV_KRB5_PASSWORD"]
        let (user, password) = (try user, try password)
        let cases = [("BASIC", basic, user, password), ("DIGEST", digest, user, password), ("NTLM", ntlm, user, password),
                     ("NEGOTIATE", negotiate, principal, secret)]
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 10) { index in
            let (scheme, url, user, password) = cases[index % cases.count]
            for round in 0..<5 {
                let (request, _, _) = get(url, async: round % 2 == 1, user: user, password: password, auth: scheme)
                if request.getStatus() != 200 {
                    failures.withLock { $0.append("\(scheme): \(request.getStatus()) \(request.getStatusText() ?? "")") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    }

    /// `setServiceName` picks the service Negotiate asks a ticket for: Apache's keytab holds
    /// HTTP/localhost and ALT/localhost, and the KDC knows no NOSUCH (the server's 401).
    @Test func theServiceNameChoosesTheKerberosService() throws {
        KerberosCredentials.cacheFile = try env.scratchPath("krb") + "/cc"
        defer { KerberosCredentials.clearCredentials(forMethod: nil) }
        let url = "http://\(try env["TESTENV_KRB_HOST"]):\(try env["TESTENV_HTTP_PORT"])/negotiate/echo"
        let principal = try env["TESTENV_KRB5_PRINCIPAL"], secret = try env["TESTENV_KRB5_PASSWORD"]
        func login(_ service: String?) throws -> HttpRequest {
            let request = HttpRequest()
            #expect(request.open("GET", url: url, async: false, user: principal, password: secret, auth: "NEGOTIATE"))
            if let service { #expect(request.setServiceName(service)) }
            #expect(request.send(timeout: 20))
            return request
        }
        let alternative = try login(try env["TESTENV_KRB5_ALT_SERVICE"])
        #expect(alternative.getStatus() == 200, "\(alternative.getStatusText() ?? "")")
        #expect(try Echo(alternative.getReceiveBuffer()).json["remote_user"] as? String == principal)
        let klist = try Shell.run("/usr/bin/klist", ["-c", "FILE:" + KerberosCredentials.cacheFile])
        #expect(klist.output.contains("ALT/localhost@"), "a ticket for the ALT service: \(klist.output)")
        let wrong = try login("NOSUCH")
        #expect(wrong.getStatus() == 401, "\(wrong.getStatusText() ?? "")")
        #expect(try login(nil).getStatus() == 200)
        #expect(try login("HTTP").getStatus() == 200)
        let request = HttpRequest()
        for bad in ["", "HTTP/localhost", "HTTP@localhost", "H TTP", "HTTP\r\n", String(repeating: "S", count: 256)] {
            #expect(!request.setServiceName(bad), "\(bad)")
            #expect(request.lastError?.code == .invalidArgument)
        }
    }
}
