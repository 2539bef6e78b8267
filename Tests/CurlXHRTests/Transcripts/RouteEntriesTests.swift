@testable import CurlXHR
import Testing

/// The routing switches' parsing, without a network: what is accepted, what is refused and
/// why, and what libcurl is handed.
@Suite(.ownThreads) struct RouteEntriesTests {
    private func resolveProblem(_ entries: [String]) -> String? {
        if case .failure(let problem) = RouteEntries.resolve(entries) { return problem.message }
        return nil
    }

    private func connectToProblem(_ entries: [String]) -> String? {
        if case .failure(let problem) = RouteEntries.connectTo(entries) { return problem.message }
        return nil
    }

    @Test func resolveEntriesAsCurlWritesThem() throws {
        let parsed = try RouteEntries.resolve([
            "example.com:443:127.0.0.1", "+Other.example:80:[::1],127.0.0.2", "*:8080:10.0.0.1", "a.example:1:127.0.0.1",
            "-a.example:1",
        ]).get()
        #expect(parsed == [
            ResolveEntry(host: "example.com", port: 443, addresses: ["127.0.0.1"]),
            ResolveEntry(host: "Other.example", port: 80, addresses: ["::1", "127.0.0.2"]),
            ResolveEntry(host: nil, port: 8080, addresses: ["10.0.0.1"]),
        ])
        // A later entry for the same host and port (case aside) replaces the earlier one.
        let replaced = try RouteEntries.resolve(["h.example:80:127.0.0.1", "H.EXAMPLE:80:127.0.0.2"]).get()
        #expect(replaced == [ResolveEntry(host: "H.EXAMPLE", port: 80, addresses: ["127.0.0.2"])])
        #expect(try RouteEntries.resolve([]).get().isEmpty)
    }

    @Test func badResolveEntriesAreRefusedWithTheReason() {
        #expect(resolveProblem(["example.com:443"])?.contains("three parts") == true)
        #expect(resolveProblem(["example.com:0:127.0.0.1"])?.contains("the port '0' is not between 1 and 65535") == true)
        #expect(resolveProblem(["example.com:65536:127.0.0.1"])?.contains("'65536'") == true)
        #expect(resolveProblem(["example.com:-1:127.0.0.1"]) != nil)
        #expect(resolveProblem(["example.com:99999999999999999999:127.0.0.1"]) != nil)
        #expect(resolveProblem(["example.com:443:localhost"])?.contains("'localhost' is not a numerical IPv4 or IPv6 address") == true)
        #expect(resolveProblem(["example.com:443:1.2.3"]) != nil)
        #expect(resolveProblem(["example.com:443:256.1.1.1"]) != nil)
        #expect(resolveProblem(["example.com:443:[127.0.0.1"]) != nil)
        #expect(resolveProblem(["example.com:443:,"])?.contains("names no address") == true)
        #expect(resolveProblem([":443:127.0.0.1"])?.contains("is not a host name or *") == true)
        #expect(resolveProblem(["exa mple.com:443:127.0.0.1"]) != nil)
        #expect(resolveProblem(["-example.com"])?.contains("-HOST:PORT") == true)
        #expect(resolveProblem(["example.com:443:127.0.0.1\r\nX: y"]) == "the --resolve entry 'example.com:443:127.0.0.1\\r\\nX: y' contains CR, LF or NUL")
        #expect(resolveProblem(["example.com:443:127.0.0.1\0"])?.contains("\\0") == true)
        #expect(resolveProblem(Array(repeating: "a:1:127.0.0.1", count: 1001)) == "1001 --resolve entries: at most 1000 are taken")
        #expect(resolveProblem(["a:1:" + Array(repeating: "127.0.0.1", count: 500).joined(separator: ",")])?.contains("at most 4096") == true)
        #expect(resolveProblem([String(repeating: "a", count: 254) + ":1:127.0.0.1"]) != nil)
    }

    @Test func connectToEntriesAsCurlWritesThem() throws {
        let parsed = try RouteEntries.connectTo(["example.com:443:127.0.0.1:8443", "::[::1]:", "[::1]:80::8080", ":443:b.example:"]).get()
        #expect(parsed == [
            ConnectToEntry(host: "example.com", port: 443, target: "127.0.0.1", targetPort: 8443),
            ConnectToEntry(host: nil, port: nil, target: "[::1]", targetPort: nil),
            ConnectToEntry(host: "[::1]", port: 80, target: nil, targetPort: 8080),
            ConnectToEntry(host: nil, port: 443, target: "b.example", targetPort: nil),
        ])
    }

    @Test func badConnectToEntriesAreRefusedWithTheReason() {
        #expect(connectToProblem(["example.com:443:127.0.0.1"])?.contains("four parts") == true)
        #expect(connectToProblem(["example.com:443:127.0.0.1:80:9"])?.contains("more than four parts") == true)
        #expect(connectToProblem(["example.com:0:127.0.0.1:80"])?.contains("the port '0'") == true)
        #expect(connectToProblem(["example.com:443:127.0.0.1:65536"])?.contains("'65536'") == true)
        #expect(connectToProblem(["example.com:443:[::1:80"])?.contains("'[' without its ']'") == true)
        #expect(connectToProblem(["example.com:443:[nothere]:80"])?.contains("not an IPv6 address in brackets") == true)
        #expect(connectToProblem(["exa/mple:443:a:80"]) != nil)
        #expect(connectToProblem(["a:1:b:2\n"])?.contains("CR, LF or NUL") == true)
    }

    @Test func libcurlGetsConnectToLinesAndTheAliasesResolveOnly() throws {
        let resolve = try RouteEntries.resolve(["*:443:127.0.0.3", "example.com:443:127.0.0.1,::1", "b.example:8443:127.0.0.2"]).get()
        let connectTo = try RouteEntries.connectTo(["a.example:443:b.example:8443", "c.example:80::"]).get()
        let lines = RouteEntries.curlLines(resolve: resolve, connectTo: connectTo)
        let any = resolve[0].alias, example = resolve[1].alias, b = resolve[2].alias
        #expect(lines.connectTo == [
            "a.example:443:\(b):8443", "c.example:80::",
            "example.com:443:\(example):443", "b.example:8443:\(b):8443", ":443:\(any):443",
        ])
        #expect(lines.resolve == ["\(b):8443:127.0.0.2", "\(example):443:127.0.0.1,::1", "\(any):443:127.0.0.3"])
        // No real name reaches libcurl's DNS cache, which every request shares.
        #expect(lines.resolve.allSatisfy { $0.hasPrefix("r") && $0.contains(".resolve.invalid:") })
        #expect(example != any && example.count == "r".count + 16 + ".resolve.invalid".count)
        #expect(RouteEntries.readable("Failed to connect to \(example) port 443", resolve: resolve) == "Failed to connect to 127.0.0.1,::1 port 443")
    }

    @Test func unixSocketPathsFitSunPath() {
        #expect(RouteEntries.unixSocketProblem("/run/x.sock") == nil)
        #expect(RouteEntries.unixSocketProblem("@name") == nil)
        #expect(RouteEntries.unixSocketProblem("/" + String(repeating: "s", count: 106)) == nil)
        #expect(RouteEntries.unixSocketProblem("/" + String(repeating: "s", count: 107)) == "the Unix socket path '/\(String(repeating: "s", count: 107))' is 108 bytes: at most 107 fit")
        #expect(RouteEntries.unixSocketProblem("@" + String(repeating: "n", count: 108))?.contains("name") == true)
        #expect(RouteEntries.unixSocketProblem("") == "the Unix socket path is empty")
        #expect(RouteEntries.unixSocketProblem("@") == "the abstract Unix socket name after '@' is empty")
        #expect(RouteEntries.unixSocketProblem("/tmp/a\nb") == "the Unix socket path '/tmp/a\\nb' contains CR, LF or NUL")
    }

    @Test func interfacesAreNamesOrAddresses() throws {
        #expect(try RouteEntries.interface("lo").get() == "if!lo")
        #expect(try RouteEntries.interface("if!eth0").get() == "if!eth0")
        #expect(try RouteEntries.interface("127.0.0.1").get() == "127.0.0.1")
        #expect(try RouteEntries.interface("::1").get() == "::1")
        for bad in ["", "if!", "a b", "a/b", "host!example.com", "host!a.b", String(repeating: "i", count: 16), "..", "lo\r\n"] {
            #expect(throws: ReadableFile.Problem.self, "\(bad)") { try RouteEntries.interface(bad).get() }
        }
    }

    @Test func serviceNamesAreOneWord() {
        #expect(RouteEntries.serviceNameProblem("HTTP") == nil)
        for bad in ["", "HTTP/host", "a@b", "a b", String(repeating: "s", count: 256), "HTTP\r\n"] {
            #expect(RouteEntries.serviceNameProblem(bad) != nil, "\(bad)")
        }
    }
}
