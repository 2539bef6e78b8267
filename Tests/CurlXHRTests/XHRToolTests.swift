import Foundation
import Testing
@testable import CurlXHR

/// The `xhr` tool run as a user runs it: arguments in; standard output, standard error and
/// the exit status out; against the loopback servers.
@Suite struct XHRToolTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    struct Run {
        let status: Int32
        let stdout: Data
        let stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs the built `xhr` with separate pipes for standard output and standard error.
    func xhr(_ arguments: [String], environment: [String: String?] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.builtProduct("xhr"))
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        variables["http_proxy"] = nil
        variables["https_proxy"] = nil
        variables["all_proxy"] = nil
        for (name, value) in environment { variables[name] = value }
        process.environment = variables
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let errors = Locked(Data())
        let reader = Thread { errors.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while reader.isExecuting || !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        return Run(status: process.terminationStatus, stdout: stdout, stderr: String(decoding: errors.withLock { $0 }, as: UTF8.self))
    }

    func temporaryFile(_ content: Data) throws -> String {
        let path = NSTemporaryDirectory() + "xhr-test-\(UUID().uuidString)"
        try content.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theDemoRunsEveryStepAndExitsZero() throws {
        let run = try xhr(["demo"])
        #expect(run.status == 0, "\(run.text)\n\(run.stderr)")
        for step in ["1. A synchronous GET", "2. An asynchronous GET", "3. A form POST", "4. A body that arrives slowly",
                     "5. abort()", "6. Redirects", "7. Cookies", "8. Basic authentication", "9. Digest authentication"] {
            #expect(run.text.contains(step), "missing: \(step)")
        }
        #expect(run.text.contains("OPENED → SENT → HEADERS_RECEIVED → LOADING → DONE"))
        #expect(run.text.contains(" 0 failed."))
        #expect(!run.text.contains("✗"))
    }

    @Test func aGetWritesTheBodyToStandardOutputOrAFile() throws {
        for mode in [[], ["--sync"]] {
            let run = try xhr(mode + [try env.httpURL + "/files/10k"])
            #expect(run.status == 0)
            #expect(run.stdout == Pattern.bytes(10 * 1024), "the body byte for byte")
            #expect(run.stderr.isEmpty, "nothing on stderr when it is not a terminal: \(run.stderr)")
        }
        let path = NSTemporaryDirectory() + "xhr-out-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let toFile = try xhr(["-o", path, try env.httpURL + "/files/1m"])
        #expect(toFile.status == 0 && toFile.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Pattern.bytes(1 << 20))
    }

    @Test func methodHeadersAndBodies() throws {
        let echo = try env.httpURL + "/echo"
        let custom = try Echo(try xhr(["-X", "PATCH", "-H", "X-One: 1", "-H", "X-Two:  two  ", "-d", "a=1", "-d", "b=2", echo]).stdout)
        #expect(custom.method == "PATCH")
        #expect(custom.header("X-One") == "1" && custom.header("X-Two") == "two")
        #expect(custom.body == Data("a=1&b=2".utf8))

        let binary = Data((0..<5000).map { UInt8(($0 * 7) % 256) } + [0, 0, 13, 10])
        let path = try temporaryFile(binary)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let posted = try Echo(try xhr(["--data-binary", "@" + path, echo]).stdout)
        #expect(posted.method == "POST" && posted.body == binary)

        let form = try Echo(try xhr(["-F", "name=Ada Lovelace", "-F", "city=a&b", echo]).stdout)
        #expect(form.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(form.body == Data("name=Ada+Lovelace&city=a%26b".utf8))

        let put = try Echo(try xhr(["-T", path, echo]).stdout)
        #expect(put.method == "PUT" && put.bodyLength == binary.count)
        #expect(put.body == binary)
    }

    @Test func serverAuthentication() throws {
        let user = try env["TESTENV_USER"] + ":" + env["TESTENV_PASSWORD"]
        for (scheme, url) in [("basic", try env["TESTENV_BASIC_URL"]), ("digest", try env["TESTENV_DIGEST_URL"]),
                              ("ntlm", try env["TESTENV_HTTP_NTLM_URL"] + "/echo")] {
            let ok = try xhr(["-u", user, "--auth", scheme, url])
            #expect(ok.status == 0, "\(scheme): \(ok.stderr)")
            #expect(try Echo(ok.stdout).json["remote_user"] as? String == (try env["TESTENV_USER"]), "\(scheme)")
            let wrong = try xhr(["-i", "-u", user + "x", "--auth", scheme, url])
            #expect(wrong.status == 0, "a 401 is a completed request")
            #expect(wrong.text.hasPrefix("HTTP 401"), "\(scheme): \(wrong.text.prefix(80))")
            #expect(try xhr(["-f", "-u", user + "x", "--auth", scheme, url]).status == 22)
        }
        let unknown = try xhr(["-u", user, "--auth", "kerberos5", try env["TESTENV_BASIC_URL"]])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown authentication scheme"), "\(unknown.stderr)")
    }

    @Test func proxies() throws {
        let proxyUser = try env["TESTENV_PROXY_USER"] + ":" + env["TESTENV_PROXY_PASSWORD"]
        let echo = try env.httpURL + "/echo"
        for (scheme, port) in [("basic", try env["TESTENV_PROXY_BASIC_PORT"]), ("digest", try env["TESTENV_PROXY_DIGEST_PORT"]),
                               ("ntlm", try env["TESTENV_PROXY_NTLM_PORT"])] {
            let ok = try xhr(["-x", "127.0.0.1:\(port)", "--proxy-user", proxyUser, "--proxy-auth", scheme, echo])
            #expect(ok.status == 0, "\(scheme): \(ok.stderr)")
            #expect(try Echo(ok.stdout).header("X-Squid-User")?.contains(try env["TESTENV_PROXY_USER"]) == true, "\(scheme)")
            let refused = try xhr(["-f", "-x", "127.0.0.1:\(port)", "--proxy-user", proxyUser + "x", "--proxy-auth", scheme, echo])
            #expect(refused.status == 22 && refused.stderr.contains("407"), "\(scheme): \(refused.stderr)")
        }
        let unreachable = try xhr(["-x", "127.0.0.1:1", echo])
        #expect(unreachable.status == 5, "\(unreachable.stderr)")
        #expect(try xhr(["-x", "no-port", echo]).status == 64)
    }

    @Test func theProxyEnvironmentIsHonouredAsCurlDoes() throws {
        let proxy = "http://127.0.0.1:\(try env["TESTENV_FAULT_PORT"])"
        let through = try xhr(["http://origin.example.test/record"], environment: ["http_proxy": proxy])
        #expect(through.status == 0, "\(through.stderr)")
        #expect(through.text.contains("http://origin.example.test/record"))
        let bypassed = try xhr(["http://origin.example.test/record"], environment: ["http_proxy": proxy, "no_proxy": "example.test"])
        #expect(bypassed.status == 6, "no_proxy: went direct, and the name does not resolve: \(bypassed.stderr)")
    }

    @Test func tlsRedirectsCookiesAndTimeouts() throws {
        let selfSigned = "https://127.0.0.1:\(try env["TESTENV_HTTPS_SELFSIGNED_PORT"])/files/100b"
        let refused = try xhr([selfSigned])
        #expect(refused.status == 35 && refused.stderr.hasPrefix("xhr: SSL"), "\(refused.stderr)")
        #expect(try xhr(["-k", selfSigned]).stdout == Pattern.bytes(100))
        #expect(try xhr(["--cacert", try env.caFile, try env.httpsURL + "/files/100b"]).stdout == Pattern.bytes(100))

        let redirect = try env.httpURL + "/echo?redirect=/files/100b"
        #expect(try xhr([redirect]).stdout == Pattern.bytes(100))
        let kept = try xhr(["-i", "--no-location", redirect])
        #expect(kept.text.hasPrefix("HTTP 302") && kept.text.contains("Location: /files/100b"), "\(kept.text.prefix(200))")

        let jar = try env.scratchPath("xhr-jar") + "/cookies.txt"
        let name = "xhr\(UUID().uuidString.prefix(6).lowercased())"
        let setting = try env.httpURL + "/echo?set_cookie=\(name)%3Dv%3B%20Max-Age%3D600%3B%20Path%3D%2F"
        #expect(try xhr(["--cookie-jar", jar, setting]).status == 0)
        #expect(((try? String(contentsOfFile: jar, encoding: .utf8)) ?? "").contains("\t\(name)\tv"), "the store file has it")
        #expect(try Echo(try xhr(["--cookie-jar", jar, try env.httpURL + "/echo"]).stdout).header("Cookie") == "\(name)=v")
        #expect(try Echo(try xhr(["--cookie-jar", jar, "--no-cookies", try env.httpURL + "/echo"]).stdout).header("Cookie") == nil)

        let slow = try xhr(["-m", "0.3", try env.faultURL + "/delay?ms=3000"])
        #expect(slow.status == 28, "\(slow.stderr)")
        #expect(try xhr(["-s", "-m", "0.3", try env.faultURL + "/delay?ms=3000"]).stderr.isEmpty, "-s: no error line")
    }

    @Test func exitCodesForFailuresAndUsage() throws {
        let refused = try xhr(["http://127.0.0.1:1/"])
        #expect(refused.status == 7)
        #expect(refused.stderr.hasPrefix("xhr: ") && refused.stderr.split(separator: "\n").count == 1, "one line: \(refused.stderr)")
        #expect(try xhr(["http://nonexistent.invalid/"]).status == 6)
        #expect(try xhr(["-f", try env.httpURL + "/echo?status=503"]).status == 22)
        #expect(try xhr([try env.httpURL + "/echo?status=503"]).status == 0, "without --fail any status completes")
        #expect(try xhr(["--no-such-option", try env.httpURL]).status == 64)
        #expect(try xhr([]).status == 64)
        #expect(try xhr(["-H", "no colon", try env.httpURL]).status == 64)
        #expect(try xhr(["-H", "Bad Name: x", try env.httpURL + "/echo"]).status == 2)
        #expect(try xhr(["ftp://127.0.0.1/"]).status == 2)
        #expect(try xhr(["-T", "/nonexistent/file", try env.httpURL + "/echo"]).status == 26)
        let help = try xhr(["fetch", "--help"])
        #expect(help.status == 0 && help.text.contains("EXIT STATUS") && help.text.contains("--proxy-auth"))
    }

    @Test func verboseAndStates() throws {
        let verbose = try xhr(["-v", "-o", "/dev/null", try env.httpURL + "/files/100b"])
        #expect(verbose.stderr.contains("> GET ") && verbose.stderr.contains("< HTTP 200 OK"), "\(verbose.stderr)")
        let states = try xhr(["--states", "-o", "/dev/null", try env.faultURL + "/drip?chunks=3&size=10&interval_ms=50"])
        // Lines look like "[    12.3 ms] LOADING          received 10".
        let names = states.stderr.split(separator: "\n").compactMap { $0.split(separator: "]").dropFirst().first?.split(separator: " ").first }
        #expect(names.first == "OPENED" && names.contains("SENT") && names.contains("HEADERS_RECEIVED") && names.last == "DONE", "\(names) \(states.stderr)")
        #expect(names.filter { $0 == "LOADING" }.count >= 2)
        #expect(states.stderr.contains("received 30, status 200"), "\(states.stderr)")
        let sync = try xhr(["--sync", "--states", "-o", "/dev/null", try env.httpURL + "/files/100b"])
        #expect(sync.stderr.contains("DONE") && sync.stderr.contains("received 100"), "\(sync.stderr)")
    }

    /// The progress bar is drawn on a terminal (a pseudo-terminal from `script`) and not
    /// when standard error is a pipe.
    @Test func theProgressBarAppearsOnATerminalOnly() throws {
        let xhrPath = TestEnvironment.builtProduct("xhr")
        let download = try env.faultURL + "/drip?chunks=6&size=50000&interval_ms=100"
        let onTerminal = try Shell.run("/usr/bin/script", ["-qfec", "\(xhrPath) -o /dev/null '\(download)'", "/dev/null"])
        #expect(onTerminal.status == 0, "\(onTerminal.output)")
        #expect(onTerminal.output.contains("%") && onTerminal.output.contains("KiB") && onTerminal.output.contains("↓"),
                "\(onTerminal.output)")
        let silent = try Shell.run("/usr/bin/script", ["-qfec", "\(xhrPath) -s -o /dev/null '\(download)'", "/dev/null"])
        #expect(!silent.output.contains("%"), "-s: \(silent.output)")
        #expect(try xhr(["-o", "/dev/null", download]).stderr.isEmpty, "piped: no bar")

        let upload = try temporaryFile(Pattern.bytes(4 << 20))
        defer { try? FileManager.default.removeItem(atPath: upload) }
        let sending = try Shell.run("/usr/bin/script", ["-qfec", "\(xhrPath) -o /dev/null -T \(upload) '\(try env.faultURL)/sink?pause_ms=150'", "/dev/null"])
        #expect(sending.output.contains("↑") && sending.output.contains("MiB"), "\(sending.output)")
    }
}
