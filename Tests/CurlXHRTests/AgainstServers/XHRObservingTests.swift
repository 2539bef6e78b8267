import Foundation
import Testing

/// xhr's `-w` time and address variables, `%{json}`, and `--trace`, `--trace-ascii` and
/// `--trace-time`, beside curl run on the same URLs.
@Suite(.ownThreads) struct XHRObservingTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func xhr(_ arguments: [String]) throws -> XHRToolTests.Run {
        try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), arguments)
    }

    func curl(_ arguments: [String]) throws -> XHRToolTests.Run {
        try XHRToolTests.run("/usr/bin/curl", arguments)
    }

    static let variables = ["time_namelookup", "time_connect", "time_appconnect", "time_pretransfer", "time_starttransfer",
                            "time_redirect", "time_total", "remote_ip", "remote_port", "local_ip", "local_port", "num_connects",
                            "num_redirects", "size_download", "size_upload", "size_header", "speed_download", "method", "scheme"]

    /// `-w` with each variable, one a line: what each tool printed, by name.
    func written(_ run: (([String]) throws -> XHRToolTests.Run), _ arguments: [String]) throws -> [String: String] {
        let format = Self.variables.map { "\($0)=%{\($0)}" }.joined(separator: "\\n")
        let result = try run(["-s", "-o", "/dev/null", "-w", format] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return Dictionary(uniqueKeysWithValues: result.text.split(separator: "\n").map {
            let parts = $0.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        })
    }

    @Test func writeOutVariablesAreCurls() throws {
        let url = try env.faultURL + "/redirect/chain?n=1"
        let ours = try written(xhr, ["-L", "-d", "abc", url])
        let theirs = try written(curl, ["-L", "-d", "abc", url])
        #expect(ours.count == Self.variables.count && !ours.values.contains(""), "\(ours)")
        // The same facts, as curl gives them.
        for name in ["remote_ip", "remote_port", "local_ip", "num_connects", "num_redirects", "size_download", "size_upload",
                     "size_header", "method", "scheme", "time_appconnect"] {
            #expect(ours[name] == theirs[name], "\(name): xhr \(ours[name] ?? "-"), curl \(theirs[name] ?? "-")")
        }
        // Times in curl's format, in the order of the phases.
        let times = ["time_namelookup", "time_connect", "time_pretransfer", "time_starttransfer", "time_total"].map { ours[$0] ?? "" }
        #expect(times.allSatisfy { $0.wholeMatch(of: /\d+\.\d{6}/) != nil }, "\(times)")
        let values = times.compactMap(Double.init)
        #expect(values.count == 5 && Array(values[1...]) == values[1...].sorted() && values.last! > 0, "\(times)")
        #expect(values.first! <= values[2], "the name looked up before the request: \(times)")
        let redirect = Double(ours["time_redirect"] ?? "") ?? -1
        #expect(redirect > 0 && redirect <= values.last!)
        #expect((Int(ours["speed_download"] ?? "") ?? 0) > 0)

        // HTTPS: the handshake's time between connect and pre-transfer.
        let secure = try written(xhr, ["--cacert", try env.caFile, try env.httpsURL + "/"])
        let tls = ["time_connect", "time_appconnect", "time_pretransfer"].compactMap { Double(secure[$0] ?? "") }
        #expect(tls.count == 3 && tls[1] > 0 && tls == tls.sorted(), "\(secure)")
        #expect(secure["scheme"] == "HTTPS")
    }

    @Test func jsonHoldsEveryVariableAsCurlTypesIt() throws {
        let url = try env.faultURL + "/respond?body=hi"
        let result = try xhr(["-s", "-o", "/dev/null", "-w", "%{json}", url])
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(object["http_code"] as? Int == 200)
        #expect(object["remote_port"] as? Int == Int(URL(string: url)!.port!))
        #expect(object["remote_ip"] as? String == "127.0.0.1")
        #expect((object["time_total"] as? Double ?? 0) > 0)
        #expect(object["errormsg"] is NSNull, "an empty string curl leaves out is null")
        for name in Self.variables { #expect(object[name] != nil, "\(name) missing") }
        // curl's own %{json} has the same types for the shared names.
        let theirs = try #require(try JSONSerialization.jsonObject(with: try curl(["-s", "-o", "/dev/null", "-w", "%{json}", url]).stdout)
                                  as? [String: Any])
        for name in Self.variables where theirs[name] != nil {
            #expect((object[name] is String) == (theirs[name] is String), "\(name): a string in one only")
        }
    }

    @Test func traceIsCurlsFormatWithSecretsRedacted() throws {
        let directory = try env.scratchPath("xhr-trace")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Not the echo: a response body is traced as it came (it would show the cookie sent).
        let url = try env["TESTENV_DIGEST_FILE_URL"]
        let password = try env["TESTENV_PASSWORD"]
        let user = try env["TESTENV_USER"] + ":" + password
        for (option, name) in [("--trace", "hex"), ("--trace-ascii", "ascii")] {
            let ours = directory + "/xhr-\(name)", theirs = directory + "/curl-\(name)"
            let run = try xhr(["-s", "-o", "/dev/null", option, ours, "--digest", "-u", user, "-b", "session=cookie-secret", url])
            #expect(run.status == 0, "\(run.stderr)")
            _ = try curl(["-s", "-o", "/dev/null", option, theirs, "--digest", "-u", user, url])
            let traced = try String(contentsOfFile: ours, encoding: .utf8)
            let reference = try String(contentsOfFile: theirs, encoding: .utf8)
            // The same headings, in curl's form.
            func headings(_ text: String) -> [String] {
                text.split(separator: "\n").filter { $0.hasPrefix("=> Send header") || $0.hasPrefix("<= Recv header") }
                    .map { $0.split(separator: ",")[0].description }
            }
            #expect(headings(traced) == headings(reference), "\(name)")
            #expect(traced.contains("== Info: Connected to 127.0.0.1"))
            #expect(!traced.contains(password) && !traced.contains("cookie-secret"), "\(name): a secret in the trace")
            if name == "ascii" {
                #expect(traced.contains(": Authorization: [redacted]\n"))
                #expect(traced.contains(": Cookie: [redacted]\n"))
                #expect(traced.contains(": HTTP/1.1 401 Unauthorized\n"))
            } else {
                #expect(traced.contains("0000: 47 45 54 20 2f 64 69 67 65 73 74 2f 66 69 6c 65 GET /digest/file"))
            }
        }
        // --trace-time: each entry starts with the time of day; "-" is standard output.
        let timed = try xhr(["-s", "-o", "/dev/null", "--trace-ascii", "-", "--trace-time", try env.faultURL + "/respond?body=hi"])
        let lines = timed.text.split(separator: "\n").filter { $0.contains("== Info:") || $0.contains("=> Send") || $0.contains("<= Recv") }
        func startsWithTime(_ line: Substring) -> Bool {
            let pattern = Array("00:00:00.000000 ".utf8), text = Array(line.utf8.prefix(pattern.count))
            return text.count == pattern.count && zip(pattern, text).allSatisfy { $0 == UInt8(ascii: "0") ? (48...57).contains($1) : $0 == $1 }
        }
        #expect(!lines.isEmpty && lines.allSatisfy(startsWithTime), "\(lines.prefix(3))")
        // A trace file that cannot be written: refused before any request.
        let refused = try xhr(["-s", "--trace", directory + "/missing/trace", try env.faultURL + "/respond?body=hi"])
        #expect(refused.status != 0 && refused.stderr.contains("trace"))
    }
}
