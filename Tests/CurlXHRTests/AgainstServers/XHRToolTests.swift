import Foundation
import Testing
@testable import CurlXHR

/// The `xhr` tool run as a user runs it: arguments in; standard output, standard error and
/// the exit status out; against the loopback servers.
@Suite(.ownThreads) struct XHRToolTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    struct Run {
        let status: Int32
        let stdout: Data
        let stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs the built `xhr` with separate pipes for standard output and standard error.
    func xhr(_ arguments: [String], environment: [String: String?] = [:], directory: String? = nil) throws -> Run {
        try Self.run(TestEnvironment.builtProduct("xhr"), arguments, environment: environment, directory: directory)
    }

    /// Runs a program with separate pipes for standard output and standard error, without
    /// the proxy variables of the environment, in `directory` if given.
    static func run(_ program: String, _ arguments: [String], environment: [String: String?] = [:],
                    directory: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var variables = ProcessInfo.processInfo.environment
        variables["http_proxy"] = nil
        variables["https_proxy"] = nil
        variables["all_proxy"] = nil
        for name in ["HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "no_proxy"] { variables[name] = nil }
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

    @Test func continueAtResumesTheDownloadAnInterruptedRunLeft() throws {
        let directory = try env.scratchPath("xhr-continue")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/big.bin"
        let key = UUID().uuidString
        let broken = try xhr(["-s", "-C", "-", "-o", file, try env.faultURL + "/file?size=1000000&cut=400000&key=\(key)"])
        #expect(broken.status == 56, "the connection broke (a reset): \(broken.stderr)")
        // As curl: the file holds what arrived, and the next run continues it from its size.
        #expect((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) == 400_000)
        #expect(!FileManager.default.fileExists(atPath: file + ".part"))
        let resumed = try xhr(["-s", "-C", "-", "-o", file, "-w", "%{http_code}", try env.faultURL + "/file?size=1000000&key=\(key)"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.text == "206")
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(data.count == 1_000_000 && Pattern.matches(data, at: 0))
        #expect(!FileManager.default.fileExists(atPath: file + ".part"))
        #expect(try xhr(["-s", "-C", "ten", "-o", file, try env.faultURL + "/file?size=10"]).status == 2, "-C takes a number or '-'")
        #expect(try xhr(["-s", "-C", "-", try env.faultURL + "/file?size=10"]).status == 2, "-C - needs -o")
    }

    /// A FILE.part the library left (with its validator, setResponseFile(_:resume:)) is
    /// still continued the library's way by -C -, and renamed to FILE when complete.
    @Test func continueAtFinishesAPartFileTheLibraryLeft() throws {
        let directory = try env.scratchPath("xhr-continue-part")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/big.bin", key = UUID().uuidString
        _ = fetchSync("GET", try env.faultURL + "/file?size=500000&key=\(key)&cut=200000") { $0.setResponseFile(file, resume: true) }
        #expect(FileManager.default.fileExists(atPath: file + ".part.validator"))
        let resumed = try xhr(["-s", "-C", "-", "-o", file, "-w", "%{http_code}", try env.faultURL + "/file?size=500000&key=\(key)"])
        #expect(resumed.status == 0 && resumed.text == "206", "\(resumed.text) \(resumed.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(data.count == 500_000 && Pattern.matches(data, at: 0))
        #expect(!FileManager.default.fileExists(atPath: file + ".part"))
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

        let form = try Echo(try xhr(["--data-urlencode", "name=Ada Lovelace", "--data-urlencode", "city=a&b", echo]).stdout)
        #expect(form.method == "POST")
        #expect(form.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(form.body == Data("name=Ada+Lovelace&city=a%26b".utf8), "curl's encoding")
        let multipart = try Echo(try xhr(["-F", "name=Ada Lovelace", echo]).stdout)
        #expect(multipart.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(multipart.body.map { String(decoding: $0, as: UTF8.self).contains("name=\"name\"\r\n\r\nAda Lovelace\r\n") } == true)
        #expect(try xhr(["-F", "novalue", echo]).status == 2)

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
            #expect(wrong.text.hasPrefix("HTTP/1.1 401 "), "\(scheme): \(wrong.text.prefix(80))")
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
        let curlUnreachable = try Self.run("/usr/bin/curl", ["-s", "-x", "127.0.0.1:1", echo])
        #expect(unreachable.status == curlUnreachable.status && unreachable.status == 7, "\(unreachable.stderr)")
        // A proxy without a port is on 1080, as with curl; a scheme that is no proxy's is refused.
        let portless = try xhr(["-x", "no-port.invalid", echo])
        let curlPortless = try Self.run("/usr/bin/curl", ["-s", "-x", "no-port.invalid", echo])
        #expect(portless.status == curlPortless.status && portless.status == 5, "\(portless.stderr)")
        #expect(portless.stderr.contains("no-port.invalid:1080"), "\(portless.stderr)")
        #expect(try xhr(["-x", "gopher://proxy:70", echo]).status == 2)
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
        #expect(refused.status == 60 && refused.stderr.hasPrefix("xhr: SSL"), "curl's 60, a certificate: \(refused.stderr)")
        #expect(try xhr(["-k", selfSigned]).stdout == Pattern.bytes(100))
        #expect(try xhr(["--cacert", try env.caFile, try env.httpsURL + "/files/100b"]).stdout == Pattern.bytes(100))

        let redirect = try env.httpURL + "/echo?redirect=/files/100b"
        #expect(try xhr([redirect]).stdout == Pattern.bytes(100))
        let kept = try xhr(["-i", "--no-location", redirect])
        #expect(kept.text.hasPrefix("HTTP/1.1 302 ") && kept.text.contains("Location: /files/100b"), "\(kept.text.prefix(200))")

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

    /// The exit status of a failure is curl's, run side by side on the same servers.
    @Test func failuresExitWithCurlsStatus() throws {
        let fault = try env.faultURL
        let selfSigned = "https://127.0.0.1:\(try env["TESTENV_HTTPS_SELFSIGNED_PORT"])/files/100b"
        let cases: [(arguments: [String], status: Int32)] = [
            (["http://127.0.0.1:1/"], 7), (["http://nonexistent.invalid/"], 6), ([fault + "/empty"], 52),
            ([fault + "/short?n=1000&send=10"], 18), ([fault + "/reset?after=100"], 56), ([selfSigned], 60),
            (["-m", "0.3", fault + "/delay?ms=3000"], 28), (["--max-filesize", "100", fault + "/bytes?n=5000"], 63),
            (["-L", fault + "/redirect/loop"], 47), (["-f", fault + "/status?code=404"], 22),
        ]
        for (arguments, status) in cases {
            let ours = try xhr(["-s", "-o", "/dev/null"] + arguments)
            let curl = try Self.run("/usr/bin/curl", ["-s", "-o", "/dev/null"] + arguments)
            #expect(ours.status == status && curl.status == status, "\(arguments): xhr \(ours.status), curl \(curl.status)")
        }
    }

    /// --max-redirs as curl's (with -L, which xhr implies): the same exit status, the same
    /// words, the same body when the chain fits.
    @Test func maxRedirsLimitsTheChainAsCurlDoes() throws {
        let chain = try env.faultURL + "/redirect/chain?n=5"
        for (limit, status) in [("2", Int32(47)), ("0", 47), ("5", 0), ("-1", 0)] {
            let ours = try xhr(["-sS", "--max-redirs", limit, chain])
            let curl = try Self.run("/usr/bin/curl", ["-sS", "-L", "--max-redirs", limit, chain])
            #expect(ours.status == status && curl.status == status, "--max-redirs \(limit): xhr \(ours.status), curl \(curl.status)")
            #expect(ours.stdout == curl.stdout)
            if status == 47 {
                #expect(ours.stderr == "xhr: Maximum (\(limit)) redirects followed\n", "\(ours.stderr)")
                #expect(curl.stderr.contains("Maximum (\(limit)) redirects followed"), "\(curl.stderr)")
            }
        }
        let long = try xhr(["-s", "--max-redirs", "-1", "-w", "%{num_redirects}", "-o", "/dev/null", try env.faultURL + "/redirect/chain?n=25"])
        #expect(long.status == 0 && long.text == "25", "past the default 20: \(long.status) \(long.text)")
        for bad in ["-2", "x", "1.5", ""] {
            let refused = try xhr(["--max-redirs", bad, chain])
            #expect(refused.status == 2 && refused.stderr.contains("--max-redirs"), "\(bad): \(refused.stderr)")
        }
        let tooMany = try xhr(["--max-redirs", "10001", chain])
        #expect(tooMany.status == 2 && tooMany.stderr.contains("redirect limit"), "\(tooMany.stderr)")
    }

    @Test func exitCodesForFailuresAndUsage() throws {
        let refused = try xhr(["http://127.0.0.1:1/"])
        #expect(refused.status == 7)
        #expect(refused.stderr.hasPrefix("xhr: ") && refused.stderr.split(separator: "\n").count == 1, "one line: \(refused.stderr)")
        #expect(try xhr(["http://nonexistent.invalid/"]).status == 6)
        #expect(try xhr(["-f", try env.httpURL + "/echo?status=503"]).status == 22)
        #expect(try xhr([try env.httpURL + "/echo?status=503"]).status == 0, "without --fail any status completes")
        let unknown = try xhr(["--no-such-option", try env.httpURL])
        #expect(unknown.status == 2 && unknown.stderr.hasPrefix("xhr: option --no-such-option: is unknown"), "\(unknown.stderr)")
        #expect(try xhr([]).status == 2)
        #expect(try xhr(["-H", "no colon", try env.httpURL]).status == 0, "ignored, as curl ignores it")
        #expect(try xhr(["-H", "Bad Name: x", try env.httpURL + "/echo"]).status == 2)
        #expect(try xhr(["ftp://127.0.0.1/"]).status == 2)
        #expect(try xhr(["-T", "/nonexistent/file", try env.httpURL + "/echo"]).status == 26)
        let help = try xhr(["fetch", "--help"])
        #expect(help.status == 0 && help.text.contains("EXIT STATUS") && help.text.contains("--proxy-auth"))
        #expect(help.text.contains("DIFFERENCES FROM CURL") && help.text.contains("--no-location"))
    }

    @Test func verboseAndStates() throws {
        let verbose = try xhr(["-v", "-o", "/dev/null", try env.httpURL + "/files/100b"])
        #expect(verbose.stderr.contains("> GET ") && verbose.stderr.contains("< HTTP/1.1 200 OK"), "\(verbose.stderr)")
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

    // MARK: curl's habits, side by side with the real curl

    /// One command line run by xhr and by curl on the same fault-server URL. `{F}` stands for
    /// the fault server's base URL; each tool runs in a directory of its own (its current
    /// directory, for -O, -c and -b files) with `files` created in it beforehand.
    struct Incantation: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        /// curl's arguments where they differ (curl follows redirects only with -L).
        var curlArguments: [String]? = nil
        var files: [String: String] = [:]
        /// Files both tools write, compared after the run (cookie jars by their cookie lines).
        var written: [String] = []
        /// The fault server's /record echoes the User-Agent, which differs unless -A sets it.
        var keepsUserAgent = false
        var testDescription: String { arguments.joined(separator: " ") }

        static let all: [Incantation] = [
            Incantation(arguments: ["-sSL", "{F}/redirect/chain?n=2&to=/bytes%3Fn%3D300"]),
            Incantation(arguments: ["-sSL", "http://127.0.0.1:1/"]),
            Incantation(arguments: ["-s", "{F}/redirect/chain?n=1&to=/bytes%3Fn%3D20"],
                        curlArguments: ["-s", "-L", "{F}/redirect/chain?n=1&to=/bytes%3Fn%3D20"]),
            Incantation(arguments: ["-s", "-i", "--no-location", "{F}/redirect/to?code=302&url=/bytes"],
                        curlArguments: ["-s", "-i", "{F}/redirect/to?code=302&url=/bytes"]),
            Incantation(arguments: ["-I", "{F}/status?code=200&reason=OK"]),
            Incantation(arguments: ["-I", "{F}/bytes?n=50"]),
            Incantation(arguments: ["-i", "{F}/headers"]),
            // With a reason phrase: the library gives the standard one when a status line
            // has none, where curl shows the line as it came (a documented difference).
            Incantation(arguments: ["-i", "{F}/status?code=201&reason=Created"]),
            Incantation(arguments: ["-s", "-D", "-", "{F}/headers"]),
            Incantation(arguments: ["-s", "-D", "head.txt", "-o", "body.bin", "{F}/bytes?n=100"], written: ["head.txt", "body.bin"]),
            Incantation(arguments: ["-s", "-L", "-o", "/dev/null", "-w",
                                    "%{http_code}|%{size_download}|%{url_effective}|%{num_redirects}|%{http_version}|%{content_type}|%header{content-length}|%%|%z|\\t|\\n",
                                    "{F}/redirect/chain?n=2&to=/bytes%3Fn%3D300"]),
            Incantation(arguments: ["-s", "-w", "%{http_code} %{size_download} %{num_redirects} %{http_version} [%{content_type}]\\n",
                                    "{F}/status?code=404&reason=Not%20Found"]),
            Incantation(arguments: ["-s", "-w", "%{http_code} %{size_download} %{url_effective} %{num_redirects} %{http_version} [%{content_type}]\\n",
                                    "http://127.0.0.1:1/nothing"]),
            Incantation(arguments: ["-s", "-O", "{F}/bytes?n=1000"], written: ["bytes"]),
            Incantation(arguments: ["-s", "-O", "{F}/"]),
            Incantation(arguments: ["-s", "-A", "curl-compatible/1.0", "{F}/record"], keepsUserAgent: true),
            Incantation(arguments: ["-s", "-e", "http://referrer.example/page", "{F}/record"]),
            Incantation(arguments: ["-s", "-b", "a=1; b=2", "{F}/record"]),
            Incantation(arguments: ["-s", "-b", "cookies.txt", "{F}/record"],
                        files: ["cookies.txt": "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tfromfile\tyes\n"
                            + "127.0.0.1\tFALSE\t/elsewhere\tFALSE\t0\tnotsent\tno\n"]),
            Incantation(arguments: ["-s", "-c", "jar.txt", "{F}/headers"], written: ["jar.txt"]),
            Incantation(arguments: ["-s", "-G", "-d", "a=1", "-d", "b=x%20y", "{F}/record?z=0"]),
            // -d and --data-binary send a form, -d @FILE without the file's line ends.
            Incantation(arguments: ["-s", "-d", "a=1", "-d", "b=2", "{F}/record"]),
            Incantation(arguments: ["-s", "-d", "@form.txt", "-d", "c=3", "{F}/record"], files: ["form.txt": "a=1\r\n&b=2\n"]),
            Incantation(arguments: ["-s", "--data-binary", "@form.txt", "{F}/record"], files: ["form.txt": "a=1\r\n&b=2\n"]),
            Incantation(arguments: ["-s", "-d", "x", "-H", "Content-Type: text/plain", "{F}/record"]),
            Incantation(arguments: ["-s", "-G", "-d", "@form.txt", "{F}/record"], files: ["form.txt": "a=1\n&b=2\n"]),
            Incantation(arguments: ["-s", "--json", "{\"a\":1}", "{F}/record"]),
            Incantation(arguments: ["-s", "--json", "[1,", "--json", "2]", "-H", "Accept: text/plain", "{F}/record"]),
            Incantation(arguments: ["-s", "-f", "{F}/status?code=404&reason=Not%20Found"]),
            Incantation(arguments: ["-s", "-f", "-i", "{F}/status?code=503&reason=Busy"]),
            Incantation(arguments: ["-s", "-f", "{F}/bytes?n=10"]),
            Incantation(arguments: ["-s", "--fail-with-body", "{F}/status?code=404&reason=Not%20Found"]),
            // Transfer control: ranges, decoding, timeouts (exit 28 and nothing on standard output).
            Incantation(arguments: ["-s", "-r", "100-199", "-i", "{F}/file?size=1000"]),
            Incantation(arguments: ["-s", "-r", "900-", "{F}/file?size=1000"]),
            Incantation(arguments: ["-s", "-r", "5000-", "-w", "%{http_code}", "{F}/file?size=1000"]),
            Incantation(arguments: ["-s", "-i", "{F}/encoded?enc=gzip&n=3000"]),
            Incantation(arguments: ["-s", "--no-compressed", "{F}/encoded?enc=zstd&n=3000&force=1"]),
            Incantation(arguments: ["-s", "--compressed", "-w", "%{http_code}", "-o", "out.bin", "{F}/encoded?enc=br&n=3000"], written: ["out.bin"]),
            Incantation(arguments: ["-s", "-m", "0.5", "{F}/stall?n=10&head_ms=3000"]),
            // -F is multipart, as with curl: values, files, a type and a file name of one's own.
            Incantation(arguments: ["-s", "-F", "a=1", "-F", "b=x y", "{F}/multipart"]),
            Incantation(arguments: ["-s", "-F", "a=1", "-F", "doc=@note.txt", "-F", "raw=@data.bin;type=application/x-test;filename=r.bin",
                                    "{F}/multipart"],
                        files: ["note.txt": "a note\n", "data.bin": String(repeating: "0123456789", count: 5000)]),
            Incantation(arguments: ["-s", "-C", "-", "-o", "out.bin", "-w", "%{http_code}", "{F}/file?size=200000"], written: ["out.bin"]),
            // (curl writes a refused attempt's body to standard output too, and cannot truncate
            // /dev/null before a retry: a regular file, which curl truncates, holds the last only.)
            Incantation(arguments: ["-s", "--retry", "2", "--retry-delay", "0", "-o", "out.txt", "-w", "%{http_code}",
                                    "{F}/retry?key=xhr-tool-{U}&fail=1&code=503"],
                        curlArguments: ["-s", "--retry", "2", "--retry-delay", "0", "-o", "out.txt", "-w", "%{http_code}",
                                        "{F}/retry?key=curl-tool-{U}&fail=1&code=503"],
                        written: ["out.txt"]),
            // --retry-all-errors: any failure is sent again, a POST and -f's 404 too; the output
            // file starts over.
            Incantation(arguments: ["-s", "--retry", "2", "--retry-all-errors", "--retry-delay", "0", "-d", "x", "-w", "%{http_code}",
                                    "{F}/retry?key=xhr-all-{U}&fail=2&mode=reset"],
                        curlArguments: ["-s", "--retry", "2", "--retry-all-errors", "--retry-delay", "0", "-d", "x", "-w", "%{http_code}",
                                        "{F}/retry?key=curl-all-{U}&fail=2&mode=reset"]),
            Incantation(arguments: ["-s", "-f", "--retry", "1", "--retry-all-errors", "--retry-delay", "0", "-o", "out.txt",
                                    "-w", "%{http_code}", "{F}/retry?key=xhr-all-404-{U}&fail=1&code=404"],
                        curlArguments: ["-s", "-f", "--retry", "1", "--retry-all-errors", "--retry-delay", "0", "-o", "out.txt",
                                        "-w", "%{http_code}", "{F}/retry?key=curl-all-404-{U}&fail=1&code=404"],
                        written: ["out.txt"]),
            Incantation(arguments: ["-s", "--retry", "1", "--retry-all-errors", "--retry-delay", "0", "-o", "out.bin",
                                    "{F}/file?size=100000&cut=5000"], written: ["out.bin"]),
            Incantation(arguments: ["-s", "--connect-timeout", "0.5", "-w", "%{http_code}", "{B}/"]),
            // -H as curl reads it: 'Name:' removes a field of the tool's, 'Name;' sends it empty,
            // a line with neither is ignored.
            Incantation(arguments: ["-s", "-H", "Host:", "-H", "Accept:", "{F}/record"]),
            Incantation(arguments: ["-s", "-H", "X-Empty;", "-H", "no colon", "-H", "X-Gone:", "{F}/record"]),
            // Usage and URL errors: curl's 2 and 3.
            Incantation(arguments: ["-s", "--no-such-option", "{F}/record"]),
            Incantation(arguments: ["-s", "http://127.0.0.1:99999/"]),
            Incantation(arguments: ["-s", "http://127.0.0.1:8x/"]),
            Incantation(arguments: ["-s", "-o"]),
            // -T to a URL ending in /: the file's name (percent-encoded) is appended.
            Incantation(arguments: ["-s", "-T", "a note.txt", "{F}/record/"], files: ["a note.txt": "a note\n"]),
            Incantation(arguments: ["-s", "-T", "a note.txt", "{F}/record/x"], files: ["a note.txt": "a note\n"]),
            // -F name=<FILE: the file's content as the value.
            Incantation(arguments: ["-s", "-F", "a=<note.txt", "-F", "b=@note.txt", "{F}/multipart"], files: ["note.txt": "a note\n"]),
            // --data-urlencode, --data-raw and -d mixed, joined with &.
            Incantation(arguments: ["-s", "--data-urlencode", "name=Ada Lovelace", "--data-urlencode", "a&b=c", "--data-urlencode", "=x y",
                                    "--data-raw", "@raw", "-d", "k=v", "{F}/record"]),
            Incantation(arguments: ["-s", "--data-urlencode", "n@note.txt", "{F}/record"], files: ["note.txt": "a note&more\n"]),
            // -K: options from a config file, in curl's syntax.
            Incantation(arguments: ["-K", "config.txt", "{F}/record"],
                        files: ["config.txt": "# a comment\n  silent\nheader = \"X-From: the config\"\n--header: X-Two:two\n-H \"X-Three: 3\"\ndata-raw=a=1\n"]),
            Incantation(arguments: ["-s", "--url", "{F}/record", "--basic", "-u", "alice:secret"]),
            // --netrc-file: the entry of the host, or default; odd lines skipped.
            Incantation(arguments: ["-s", "--netrc-file", "netrc", "{F}/record"],
                        files: ["netrc": "# comment\nmachine other.example login x password y\nmachine 127.0.0.1\n  login alice\n  password \"s3 cret\"\n"]),
            Incantation(arguments: ["-s", "--netrc-file", "netrc", "{F}/record"],
                        files: ["netrc": "macdef init\ncd /\n\nmachine other.example login x password y\ndefault login dflt password dp\n"]),
            Incantation(arguments: ["-s", "--netrc-optional", "--netrc-file", "missing", "{F}/record"]),
            Incantation(arguments: ["-s", "--netrc", "--netrc-file", "missing", "{F}/record"]),
            Incantation(arguments: ["-s", "-K", "missing.txt", "{F}/record"]),
            // -C as curl: continue the file from its size (or OFFSET), appending the 206's body.
            Incantation(arguments: ["-s", "-C", "-", "-o", "out.bin", "-w", "%{http_code}", "{F}/file?size=1000"],
                        files: ["out.bin": "0123456789"], written: ["out.bin"]),
            Incantation(arguments: ["-s", "-C", "250", "-o", "out.bin", "-w", "%{http_code}", "{F}/file?size=1000"], written: ["out.bin"]),
            Incantation(arguments: ["-s", "-C", "5", "-o", "out.bin", "{F}/bytes?n=100"]),
            // Globbing: {a,b} and [1-3], #N in -o; -g takes them as they are.
            Incantation(arguments: ["-s", "-o", "f_#1_#2.bin", "{F}/bytes?n=[1-3]&x={a,b}"],
                        written: ["f_1_a.bin", "f_1_b.bin", "f_2_a.bin", "f_2_b.bin", "f_3_a.bin", "f_3_b.bin"]),
            Incantation(arguments: ["-s", "-o", "f#1.bin", "{F}/bytes?n=[08-10]"], written: ["f08.bin", "f09.bin", "f10.bin"]),
            Incantation(arguments: ["-s", "-g", "{F}/record?a=[1-2]"]),
            // --create-dirs, -J -O (the header's name, stripped of its path).
            Incantation(arguments: ["-s", "--create-dirs", "-o", "sub/dir/out.bin", "{F}/bytes?n=10"], written: ["sub/dir/out.bin"]),
            Incantation(arguments: ["-s", "-J", "-O", "{F}/disposition?name=fromheader.txt"], written: ["fromheader.txt"]),
            Incantation(arguments: ["-s", "-J", "-O", "{F}/disposition?name=../../up.txt"], written: ["up.txt"]),
            Incantation(arguments: ["-s", "-J", "-O", "{F}/disposition?name=%2Fetc%2Fplain.txt"], written: ["plain.txt"]),
            Incantation(arguments: ["-s", "--stderr", "-", "http://127.0.0.1:1/"]),
            Incantation(arguments: ["-q", "-so", "-", "{F}/bytes?n=10"]),
            // HTTP/2 (Apache through ALPN): the protocol in -w.
            Incantation(arguments: ["-s", "--cacert", "{CA}", "-o", "/dev/null", "-w", "%{http_code} %{http_version} %{size_download}\\n",
                                    "{H2}/files/100b"]),
        ]
    }

    /// What may legitimately differ between the tools' outputs is taken out: the fault
    /// server's /record echo shows the client's port (new each connection) and the
    /// User-Agent (curl sends curl/VERSION, xhr none); its JSON is compared without them.
    /// Nothing else is normalised: the fault server sends no Date header.
    static func normalised(_ output: Data, keepingUserAgent: Bool) -> Data {
        guard var echo = (try? JSONSerialization.jsonObject(with: output)) as? [String: Any], echo["client_port"] != nil else {
            return output
        }
        echo["client_port"] = nil
        if !keepingUserAgent, var headers = echo["headers"] as? [String: Any] {
            headers["User-Agent"] = nil
            echo["headers"] = headers
        }
        return (try? JSONSerialization.data(withJSONObject: echo, options: [.sortedKeys])) ?? output
    }

    /// A loopback URL whose connection never comes up (the fault server's full accept queue).
    func blackholeURL() throws -> String {
        let answer = fetchSync("GET", try env.faultURL + "/blackhole").1
        let port = try #require((try JSONSerialization.jsonObject(with: answer) as? [String: Any])?["port"] as? Int)
        return "http://127.0.0.1:\(port)"
    }

    /// A cookie file's cookies, one per line, sorted (curl writes the newest first).
    static func cookieLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") || $0.hasPrefix("#HttpOnly_") }.sorted()
    }

    @Test(arguments: Incantation.all)
    func curlsIncantationsGiveCurlsOutput(_ incantation: Incantation) throws {
        let curl = "/usr/bin/curl"
        try #require(FileManager.default.isExecutableFile(atPath: curl), "curl is missing: scripts/install-deps.sh installs it")
        let base = try env.scratchPath("xhr-vs-curl")
        let fault = try env.faultURL
        let runID = UUID().uuidString  // {U}: keys of the fault server's counters, new each run
        func runIn(_ tool: String, _ program: String, _ arguments: [String]) throws -> (Run, String) {
            let directory = base + "/" + tool
            try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
            for (name, content) in incantation.files {
                try Data(content.utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
            }
            let h2 = try env["TESTENV_HTTPS_H2_URL"], ca = try env.caFile
            let arguments = try arguments.map {
                $0.replacingOccurrences(of: "{F}", with: fault).replacingOccurrences(of: "{H2}", with: h2)
                    .replacingOccurrences(of: "{CA}", with: ca)
                    .replacingOccurrences(of: "{B}", with: $0.contains("{B}") ? try blackholeURL() : "")
                    .replacingOccurrences(of: "{U}", with: runID)
            }
            // XDG_DATA_HOME: xhr's cookie store starts empty, as curl's jar does. -q: no ~/.curlrc.
            // --compressed: what xhr does by default.
            let run = try Self.run(program, (tool == "curl" ? ["-q", "--compressed"] : []) + arguments,
                                   environment: ["XDG_DATA_HOME": directory + "/data"], directory: directory)
            return (run, directory)
        }
        let (ours, ourDirectory) = try runIn("xhr", TestEnvironment.builtProduct("xhr"), incantation.arguments)
        let (theirs, theirDirectory) = try runIn("curl", curl, incantation.curlArguments ?? incantation.arguments)

        #expect(ours.status == theirs.status, "exit status: xhr \(ours.status) (\(ours.stderr)), curl \(theirs.status) (\(theirs.stderr))")
        let mine = Self.normalised(ours.stdout, keepingUserAgent: incantation.keepsUserAgent)
        let curls = Self.normalised(theirs.stdout, keepingUserAgent: incantation.keepsUserAgent)
        #expect(mine == curls, "standard output:\nxhr:  \(String(decoding: mine, as: UTF8.self).debugDescription)\ncurl: \(String(decoding: curls, as: UTF8.self).debugDescription)")
        for name in incantation.written {
            let ourFile = FileManager.default.contents(atPath: ourDirectory + "/" + name)
            let theirFile = FileManager.default.contents(atPath: theirDirectory + "/" + name)
            #expect(theirFile != nil, "curl wrote \(name)")
            if name.hasPrefix("jar") {
                let ourLines = Self.cookieLines(String(decoding: ourFile ?? Data(), as: UTF8.self))
                #expect(!ourLines.isEmpty && ourLines == Self.cookieLines(String(decoding: theirFile ?? Data(), as: UTF8.self)),
                        "\(name): \(ourLines)")
            } else {
                #expect(ourFile == theirFile, "\(name) differs")
            }
        }
        // Neither leaves files it was not asked for (-O without a name, -f): the same listing.
        let ourFiles = try FileManager.default.contentsOfDirectory(atPath: ourDirectory).sorted()
        let theirFiles = try FileManager.default.contentsOfDirectory(atPath: theirDirectory).sorted()
        #expect(ourFiles == theirFiles, "files (no .lock beside a -c jar): xhr \(ourFiles), curl \(theirFiles)")
    }

    /// -i over HTTP/2 prints curl's status line (`HTTP/2 200`), and the same header names
    /// (lower case, as HTTP/2 sends them).
    @Test func theStatusLineOverHTTP2IsCurls() throws {
        let url = try env["TESTENV_HTTPS_H2_URL"] + "/files/100b"
        let ours = try xhr(["-s", "-i", "--cacert", try env.caFile, url])
        let theirs = try Self.run("/usr/bin/curl", ["-q", "-s", "-i", "--cacert", try env.caFile, url])
        #expect(ours.status == 0 && theirs.status == 0, "\(ours.stderr) \(theirs.stderr)")
        func lines(_ run: Run) -> [String] { run.text.components(separatedBy: "\r\n") }
        #expect(lines(ours).first == lines(theirs).first, "xhr \(lines(ours).first ?? ""), curl \(lines(theirs).first ?? "")")
        #expect(lines(ours).first?.hasPrefix("HTTP/2 200") == true)
        func names(_ run: Run) -> [String] {
            lines(run).dropFirst().prefix { !$0.isEmpty }.map { String($0.prefix { $0 != ":" }) }
        }
        #expect(names(ours) == names(theirs))
        #expect(ours.stdout.suffix(100) == theirs.stdout.suffix(100), "the same body")
    }

    /// -w's times: seconds with six decimals, as curl prints them, in order, for both tools.
    @Test func writeOutTimesAreCurlsNumbers() throws {
        let url = try env.faultURL + "/drip?chunks=2&size=10&interval_ms=30"
        let format = "%{time_connect} %{time_starttransfer} %{time_total}"
        for (tool, arguments) in [("xhr", ["-s", "-w", format, "-o", "/dev/null", url]),
                                  ("curl", ["-q", "-s", "-w", format, "-o", "/dev/null", url])] {
            let program = tool == "xhr" ? TestEnvironment.builtProduct("xhr") : "/usr/bin/curl"
            let run = try Self.run(program, arguments)
            let fields = run.text.split(separator: " ").map(String.init)
            #expect(run.status == 0 && fields.count == 3, "\(tool): \(run.text) \(run.stderr)")
            for field in fields {
                #expect(field.wholeMatch(of: /[0-9]+\.[0-9]{6}/) != nil, "\(tool): \(field) is not seconds with six decimals")
            }
            let times = fields.compactMap(Double.init)
            #expect(times.count == 3 && times[0] > 0 && times[0] <= times[1] && times[1] <= times[2] && times[2] >= 0.05,
                    "\(tool): connect ≤ first byte ≤ total, and the drip takes 60 ms: \(times)")
        }
    }

    /// -s hides the error line, -sS shows it; -w's unknown variables are reported even so.
    @Test func showErrorAndWriteOutWarnings() throws {
        #expect(try xhr(["-s", "http://127.0.0.1:1/"]).stderr.isEmpty)
        let shown = try xhr(["-sS", "http://127.0.0.1:1/"])
        #expect(shown.status == 7 && shown.stderr.hasPrefix("xhr: ") && shown.stderr.split(separator: "\n").count == 1, "\(shown.stderr)")
        let unknown = try xhr(["-s", "-o", "/dev/null", "-w", "%{nope}%{http_code}", try env.faultURL + "/bytes?n=1"])
        #expect(unknown.text == "200" && unknown.stderr.contains("unknown --write-out variable: 'nope'"), "\(unknown.stderr)")
        let toStandardError = try xhr(["-s", "-o", "/dev/null", "-w", "a%{stderr}b%{stdout}c", try env.faultURL + "/bytes?n=1"])
        #expect(toStandardError.text == "ac" && toStandardError.stderr == "b")
        #expect(try xhr(["-f", "--fail-with-body", try env.faultURL]).status == 2)
        #expect(try xhr(["-I", "-d", "x", try env.faultURL]).status == 2)
        #expect(try xhr(["-o", "a", "-O", try env.faultURL + "/a"]).status == 2)
    }

    /// -b NAME=VALUE while the jar has cookies for the URL: one Cookie line with both, and the
    /// -b cookies do not stay in the jar (nor replace a stored cookie of the same name).
    @Test func aCookieStringJoinsTheJarForOneTransfer() throws {
        let jar = try env.scratchPath("xhr-b") + "/cookies.txt"
        let name = "xhrb\(UUID().uuidString.prefix(6).lowercased())"
        let setting = try env.httpURL + "/echo?set_cookie=\(name)%3Dstored%3B%20Max-Age%3D600%3B%20Path%3D%2F"
        #expect(try xhr(["-c", jar, setting]).status == 0)
        let echoed = try Echo(try xhr(["-c", jar, "-b", "extra=1; \(name)=given", try env.httpURL + "/echo"]).stdout)
        let sent = (echoed.header("Cookie") ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.sorted()
        #expect(sent == ["\(name)=given", "extra=1"].sorted(), "one Cookie line, the -b value winning for the transfer: \(echoed.header("Cookie") ?? "none")")
        let after = try String(contentsOfFile: jar, encoding: .utf8)
        #expect(after.contains("\t\(name)\tstored") && !after.contains("extra"), "the stored cookie is back: \(after)")
        #expect(try Echo(try xhr(["-c", jar, try env.httpURL + "/echo"]).stdout).header("Cookie") == "\(name)=stored")
    }

    /// Hostile input: CR and LF in a -H from a config file, a -J name that climbs out, a glob
    /// of a hundred million URLs: refused or bounded, never sent, never a hang.
    @Test func hostileCommandLinesAreRefusedOrBounded() throws {
        let directory = try env.scratchPath("xhr-hostile")
        try FileManager.default.createDirectory(atPath: directory + "/inner", withIntermediateDirectories: true)
        let config = directory + "/config.txt"
        try Data("header = \"X-A: 1\\r\\nX-Injected: yes\"\n".utf8).write(to: URL(fileURLWithPath: config))
        let injected = try xhr(["-K", config, try env.faultURL + "/record"])
        #expect(injected.status == 2 && injected.stdout.isEmpty && injected.stderr.contains("CR, LF"), "\(injected.stderr)")
        let unterminated = directory + "/open.txt"
        try Data("header = \"X-A: 1\n".utf8).write(to: URL(fileURLWithPath: unterminated))
        #expect(try xhr(["-K", unterminated, try env.faultURL + "/record"]).status == 2)
        let loop = directory + "/loop.txt"
        try Data("config = \"\(loop)\"\n".utf8).write(to: URL(fileURLWithPath: loop))
        #expect(try xhr(["-K", loop, try env.faultURL + "/record"]).status == 2, "a config file naming itself ends")

        let started = Date()
        let huge = try xhr(["-s", "-o", "f#1", try env.faultURL + "/bytes?n=[1-100000000]"])
        #expect(huge.status == 3 && Date().timeIntervalSince(started) < 5, "\(huge.status) \(huge.stderr)")
        #expect(try xhr(["-s", try env.faultURL + "/bytes?n=[1-"]).status == 3)

        for name in ["..", "../..", "/", "a/..", "x\u{1}y"] {
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
            let run = try xhr(["-s", "-J", "-O", try env.faultURL + "/disposition?name=\(encoded)"], directory: directory + "/inner")
            #expect(run.status == 23, "\(name): \(run.status) \(run.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/inner").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["config.txt", "inner", "loop.txt", "open.txt"])
        let existing = directory + "/inner/taken.txt"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: existing))
        let overwrite = try xhr(["-s", "-J", "-O", try env.faultURL + "/disposition?name=taken.txt"], directory: directory + "/inner")
        let kept = try String(contentsOfFile: existing, encoding: .utf8)
        #expect(overwrite.status == 23 && kept == "mine", "-J never replaces a file")
    }

    /// -T - sends standard input; -w %{json} is one JSON object; -# draws the bar without a terminal.
    @Test func uploadFromStandardInputJSONWriteOutAndTheBar() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.builtProduct("xhr"))
        process.arguments = ["-s", "-T", "-", try env.httpURL + "/echo"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("from standard input".utf8))
        try input.fileHandleForWriting.close()
        let echoed = try Echo(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && echoed.method == "PUT" && echoed.body == Data("from standard input".utf8))

        let json = try xhr(["-s", "-o", "/dev/null", "-w", "%{json}", try env.faultURL + "/bytes?n=5"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any], "\(json.text)")
        #expect(object["http_code"] as? Int == 200 && object["size_download"] as? Int == 5 && object["exitcode"] as? Int == 0, "\(json.text)")
        let bar = try xhr(["-#", "-o", "/dev/null", try env.faultURL + "/drip?chunks=3&size=1000&interval_ms=150"])
        #expect(bar.status == 0 && bar.stderr.contains("↓"), "\(bar.stderr)")
        #expect(try xhr(["--no-progress-meter", "-#", "-o", "/dev/null", try env.faultURL + "/bytes?n=5"]).stderr.isEmpty)
    }
}
