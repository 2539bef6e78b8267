import Foundation
import Testing
@testable import CurlXHR

/// xhr's routing options as curl's: --resolve, --connect-to, --unix-socket,
/// --abstract-unix-socket, --interface and --service-name, with the same bodies and exit
/// statuses as curl where curl has them.
@Suite(.ownThreads) struct XHRRoutingTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func xhr(_ arguments: [String], environment: [String: String?] = [:]) throws -> XHRToolTests.Run {
        try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), arguments, environment: environment)
    }

    func curl(_ arguments: [String], environment: [String: String?] = [:]) throws -> XHRToolTests.Run {
        try XHRToolTests.run("/usr/bin/curl", arguments, environment: environment)
    }

    /// The fault server's echo: the Host field and the socket a request came through.
    func echo(_ run: XHRToolTests.Run) throws -> (host: String?, socket: String?) {
        let json = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any], "\(run.text) \(run.stderr)")
        let host = (json["headers"] as? [[String]])?.first { $0.first == "Host" }?.last
        return (host, json["socket"] as? String)
    }

    @Test func resolveAndConnectToRouteAsCurlDoes() throws {
        let port = try env["TESTENV_FAULT_PORT"]
        let name = "http://xhr.resolve-test.invalid:\(port)/echo"
        for arguments in [["--resolve", "xhr.resolve-test.invalid:\(port):127.0.0.2,127.0.0.1", name],
                          ["--connect-to", "xhr.resolve-test.invalid:\(port):127.0.0.1:\(port)", name],
                          ["--resolve", "other.invalid:1:127.0.0.9", "--resolve", "*:\(port):127.0.0.1", name]] {
            let ours = try xhr(["-sS"] + arguments), theirs = try curl(["-sS"] + arguments)
            #expect(ours.status == 0 && theirs.status == 0, "\(arguments): \(ours.stderr) \(theirs.stderr)")
            #expect(try echo(ours).host == "xhr.resolve-test.invalid:\(port)")
        }
        // TLS checks the URL's name: the test certificate names localhost.
        let https = try env["TESTENV_HTTPS_PORT"], ca = try env.caFile
        let good = try xhr(["-sS", "--cacert", ca, "--resolve", "localhost:\(https):127.0.0.1", "https://localhost:\(https)/echo"])
        #expect(good.status == 0, "\(good.stderr)")
        for arguments in [["--resolve", "wrong.invalid:\(https):127.0.0.1", "https://wrong.invalid:\(https)/echo"],
                          ["--connect-to", "wrong.invalid:\(https):127.0.0.1:\(https)", "https://wrong.invalid:\(https)/echo"]] {
            let ours = try xhr(["-sS", "--cacert", ca] + arguments), theirs = try curl(["-sS", "--cacert", ca] + arguments)
            #expect(ours.status == theirs.status && ours.status == 60, "\(arguments): xhr \(ours.status) \(ours.stderr), curl \(theirs.status)")
        }
        // An address that refuses: exit 7, with the address (not the alias) in the words.
        let refused = try xhr(["-sS", "--resolve", "down.invalid:1:127.0.0.1", "http://down.invalid:1/"])
        #expect(refused.status == 7 && refused.stderr.contains("127.0.0.1") && !refused.stderr.contains(".resolve.invalid"), "\(refused.stderr)")
    }

    @Test func malformedEntriesExit49AsWithCurl() throws {
        let url = try env.faultURL + "/echo", port = try env["TESTENV_FAULT_PORT"]
        // curl finds a bad --connect-to entry only when it matches the URL; xhr at once.
        for arguments in [["--resolve", "bad", url], ["--resolve", "h:80:not-an-address", url], ["--connect-to", "127.0.0.1:\(port):b:99999", url]] {
            let ours = try xhr(["-sS"] + arguments), theirs = try curl(["-sS"] + arguments)
            #expect(ours.status == 49 && theirs.status == 49, "\(arguments): xhr \(ours.status), curl \(theirs.status)")
            #expect(ours.stdout.isEmpty && ours.stderr.hasPrefix("xhr: '"), "\(ours.stderr)")
        }
        // Where curl takes an entry libcurl cannot use, xhr refuses it at once (port 0, a line break).
        for (option, entry) in [("--resolve", "h:0:127.0.0.1"), ("--resolve", "h:80:127.0.0.1\r\nX: y"), ("--connect-to", "a:1:b:99999")] {
            let ours = try xhr(["-sS", option, entry, url])
            #expect(ours.status == 49, "\(entry): \(ours.status) \(ours.stderr)")
            #expect(!ours.stderr.dropLast().contains("\n"), "one line: \(ours.stderr)")
        }
    }

    @Test func unixSocketsCarryTheRequest() throws {
        let path = try env.faultUnixSocket, abstract = try env.faultAbstractSocket
        let viaPath = try xhr(["-sS", "--unix-socket", path, "http://socket.invalid/echo"])
        #expect(viaPath.status == 0, "\(viaPath.stderr)")
        #expect(try echo(viaPath).socket == "unix:" + path)
        let name = String(abstract.dropFirst())
        let viaName = try xhr(["-sS", "--abstract-unix-socket", name, "http://socket.invalid/echo"])
        #expect(viaName.status == 0, "\(viaName.stderr)")
        #expect(try echo(viaName).socket == "abstract:" + name)
        // The last of the two wins, as with curl.
        let last = try xhr(["-sS", "--unix-socket", "/nonexistent/x.sock", "--abstract-unix-socket", name, "http://socket.invalid/echo"])
        #expect(try echo(last).socket == "abstract:" + name)
        for arguments in [["--unix-socket", "/nonexistent/curlxhr.sock"], ["--abstract-unix-socket", "curlxhr-no-such-socket"]] {
            let ours = try xhr(["-sS"] + arguments + ["http://socket.invalid/"]), theirs = try curl(["-sS"] + arguments + ["http://socket.invalid/"])
            #expect(ours.status == 7 && theirs.status == 7, "\(arguments): xhr \(ours.status) \(ours.stderr), curl \(theirs.status)")
        }
        let tooLong = try xhr(["-sS", "--unix-socket", "/" + String(repeating: "s", count: 120), "http://socket.invalid/"])
        #expect(tooLong.status == 2 && tooLong.stderr.contains("at most 107"), "\(tooLong.stderr)")
    }

    @Test func interfaceAsCurl() throws {
        let url = try env.faultURL + "/echo"
        let lo = try xhr(["-sS", "--interface", "lo", url])
        #expect(lo.status == 0, "\(lo.stderr)")
        for name in ["nosuchif0", "if!nosuchif0"] {
            let ours = try xhr(["-sS", "--interface", name, url]), theirs = try curl(["-sS", "--interface", name, url])
            #expect(ours.status == 45 && theirs.status == 45, "\(name): xhr \(ours.status) \(ours.stderr), curl \(theirs.status)")
            #expect(ours.stderr.contains("nosuchif0"), "\(ours.stderr)")
        }
        let bad = try xhr(["-sS", "--interface", "a b", url])
        #expect(bad.status == 45 && bad.stderr.contains("not a network interface name"), "\(bad.stderr)")
    }

    @Test func serviceNameChoosesTheKerberosService() throws {
        let url = "http://\(try env["TESTENV_KRB_HOST"]):\(try env["TESTENV_HTTP_PORT"])/negotiate/echo"
        let kerberos: [String: String?] = ["KRB5CCNAME": try env["TESTENV_KRB5CCNAME"], "KRB5_CONFIG": try env["TESTENV_KRB5_CONFIG"]]
        for (service, status) in [(try env["TESTENV_KRB5_ALT_SERVICE"], "200"), ("NOSUCH", "401"), ("HTTP", "200")] {
            let arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--negotiate", "-u", ":", "--service-name", service, url]
            let ours = try xhr(arguments, environment: kerberos), theirs = try curl(arguments, environment: kerberos)
            #expect(ours.text == status && theirs.text == status, "\(service): xhr \(ours.text) \(ours.stderr), curl \(theirs.text)")
        }
        let bad = try xhr(["-sS", "--negotiate", "-u", ":", "--service-name", "HTTP/localhost", url], environment: kerberos)
        #expect(bad.status == 2 && bad.stderr.contains("not a Kerberos service name"), "\(bad.stderr)")
    }
}
