@testable import CurlXHR
import Foundation
import Testing

/// Automatic in-memory cookies shared by every request of the process (libcurl's engine).
/// Serialized because clearCookies empties the one jar.
@Suite(.serialized, .ownThreads) struct CookieTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func cookieSent(to url: String, configure: (HttpRequest) -> Void = { _ in }) throws -> String? {
        let (request, body) = fetchSync("GET", url, configure: configure)
        #expect(request.getStatus() == 200)
        return try Echo(body).header("Cookie")
    }

    @Test func aCookieSetByOneRequestIsSentByTheNext() throws {
        let name = "c\(UUID().uuidString.prefix(8))"
        let set = fetchSync("GET", try env.httpURL + "/echo/a?set_cookie=\(name)=v1;%20Path=/echo/a").0
        #expect(set.getResponseHeader("Set-Cookie")?.hasPrefix("\(name)=v1") == true)
        #expect(try cookieSent(to: try env.httpURL + "/echo/a/x")?.contains("\(name)=v1") == true)
        // Asynchronous requests share the same jar.
        let (_, seen) = fetchAsync("GET", try env.httpURL + "/echo/a/async")
        #expect(try Echo(seen.body).header("Cookie")?.contains("\(name)=v1") == true)
        // Not to another path, nor to another host.
        #expect(try cookieSent(to: try env.httpURL + "/echo/b")?.contains(name) != true)
        let otherHost = try env.httpURL.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/echo/a"
        #expect(try cookieSent(to: otherHost)?.contains(name) != true)
    }

    @Test func disableCookieHandlingNeitherSendsNorStores() throws {
        let name = "d\(UUID().uuidString.prefix(8))"
        let noStore: (HttpRequest) -> Void = { #expect($0.disableCookieHandling()) }
        _ = fetchSync("GET", try env.httpURL + "/echo?set_cookie=\(name)=v;%20Path=/", configure: noStore)
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) != true, "nothing was stored")
        _ = fetchSync("GET", try env.httpURL + "/echo?set_cookie=\(name)=v;%20Path=/")
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) == true)
        #expect(try cookieSent(to: try env.httpURL + "/echo", configure: noStore)?.contains(name) != true, "nothing is sent")
    }

    @Test(.alone) func clearCookiesEmptiesTheJar() throws {
        let name = "e\(UUID().uuidString.prefix(8))"
        _ = fetchSync("GET", try env.httpURL + "/echo?set_cookie=\(name)=v;%20Path=/")
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) == true)
        HttpRequest().clearCookies(includePersistentStore: false)
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) != true)
    }
}

/// The persistent store: what reaches the file, what survives a process, and how processes
/// and threads share it. Child processes (the probe) stand for "the next launch"; each has
/// a store file of its own unless a test shares one on purpose.
@Suite(.serialized, .ownThreads) struct PersistentCookieTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    static func unique(_ prefix: String) -> String { "\(prefix)\(UUID().uuidString.prefix(8).lowercased())" }

    /// A fresh directory for store files.
    func storeDirectory() throws -> String {
        let path = try env.scratchPath("cookies")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The query that makes the echo CGI set each cookie (full Set-Cookie values).
    static func setting(_ cookies: [String]) -> String {
        "?" + cookies.map { "set_cookie=" + $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }.joined(separator: "&")
    }

    struct ChildResult {
        let status: Int32
        let output: String
        /// The Cookie header the echo saw, "" when none.
        let cookieSent: String
    }

    /// Runs `curlxhr-probe cookies URL STORE [action]` in a new process.
    func child(_ url: String, store: String, action: String? = nil) throws -> ChildResult {
        let result = try Shell.run(TestEnvironment.builtProduct("curlxhr-probe"), ["cookies", url, store] + (action.map { [$0] } ?? []),
                                   environment: ["CURL_CA_BUNDLE": try env.caFile])
        var cookie = ""
        if let line = result.output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
           let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
           let body = object["body"] as? String, !body.isEmpty {
            cookie = try Echo(Data(body.utf8)).header("Cookie") ?? ""
        }
        return ChildResult(status: result.status, output: result.output, cookieSent: cookie)
    }

    func storeLines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("# ") && $0 != "#" }
    }

    @Test func aPersistentCookieSurvivesSIGKILLRightAfterDoneAndASessionCookieDoesNot() throws {
        let store = try storeDirectory() + "/sub/cookies.txt"
        let persistent = Self.unique("p"), session = Self.unique("s")
        let setter = try child(try env.httpURL + "/echo" + Self.setting(["\(persistent)=kept; Max-Age=3600; Path=/", "\(session)=gone; Path=/"]),
                               store: store, action: "kill")
        #expect(setter.status == SIGKILL, "the child was to die by SIGKILL: \(setter.output)")
        var info = stat()
        #expect(stat(store, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "the store is private to the user")
        let lines = storeLines(store)
        #expect(lines.contains { $0.hasSuffix("\t\(persistent)\tkept") }, "\(lines)")
        #expect(!lines.contains { $0.contains(session) }, "session cookies never reach the disk")

        let next = try child(try env.httpURL + "/echo", store: store)
        #expect(next.status == 0, "\(next.output)")
        #expect(next.cookieSent == "\(persistent)=kept")
    }

    @Test func theNextLaunchSendsAPersistentCookieOnlyWhereItBelongs() throws {
        let store = try storeDirectory() + "/cookies.txt"
        let scoped = Self.unique("path"), secure = Self.unique("sec")
        let http = try env.httpURL, https = try env.httpsURL
        let httpLocalhost = http.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        // One cookie scoped to /echo/a on 127.0.0.1, one Secure cookie for localhost.
        _ = try child(http + "/echo/a" + Self.setting(["\(scoped)=1; Max-Age=3600; Path=/echo/a"]), store: store)
        _ = try child(https + "/echo" + Self.setting(["\(secure)=2; Max-Age=3600; Path=/; Secure"]), store: store)

        #expect(try child(http + "/echo/a/deeper", store: store).cookieSent == "\(scoped)=1")
        #expect(try child(http + "/echo/b", store: store).cookieSent == "", "another path")
        #expect(try !child(httpLocalhost + "/echo/a", store: store).cookieSent.contains(scoped), "another host")
        #expect(try child(https + "/echo", store: store).cookieSent == "\(secure)=2")
        // libcurl (like browsers) counts http://localhost as a secure context, so the
        // Secure cookie's refusal over plain http is checked for another host below.
    }

    /// A Secure cookie is withheld from plain http. Loopback hosts count as secure contexts
    /// for libcurl, so the request names another host and goes through the fault server as
    /// its proxy, which records what arrived.
    @Test func aSecureCookieIsNotSentOverPlainHTTP() throws {
        let plain = Self.unique("plain"), secure = Self.unique("secure")
        let later = Int64(Date().timeIntervalSince1970) + 3600
        #expect(CookieStore.shared.setCookie(Cookie(name: plain, value: "1", domain: "www.example.test", expires: later)))
        #expect(CookieStore.shared.setCookie(Cookie(name: secure, value: "2", domain: "www.example.test", isSecure: true, expires: later)))
        let fault = try #require(HTTPURL(try env.faultURL))
        let port = try #require(Int(try env["TESTENV_FAULT_PORT"]))
        let (request, body) = fetchSync("GET", "http://www.example.test/record") {
            #expect($0.enableHttpProxy(host: fault.host, port: port))
        }
        #expect(request.getStatus() == 200)
        let seen = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        let cookie = (seen?["headers"] as? [String: String])?["Cookie"] ?? ""
        #expect(cookie == "\(plain)=1", "the proxied request carried: \(cookie)")
        for cookie in CookieStore.shared.allCookies() where cookie.domain == "www.example.test" {
            CookieStore.shared.deleteCookie(cookie)
        }
    }

    @Test func anExpiredCookieIsNotSent() throws {
        let name = Self.unique("exp")
        let host = "127.0.0.1"
        #expect(CookieStore.shared.setCookie(Cookie(name: name, value: "soon", domain: host, path: "/", expires: Int64(Date().timeIntervalSince1970) + 1)))
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains("\(name)=soon") == true)
        Thread.sleep(forTimeInterval: 2.2)
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) != true)
        #expect(!CookieStore.shared.allCookies().contains { $0.name == name })
    }

    func cookieSent(to url: String) throws -> String? {
        let (request, body) = fetchSync("GET", url)
        #expect(request.getStatus() == 200)
        return try Echo(body).header("Cookie")
    }

    @Test func clearCookiesKeepsThePersistentStoreUnlessAsked() throws {
        let store = try storeDirectory() + "/cookies.txt"
        let name = Self.unique("c")
        let http = try env.httpURL
        _ = try child(http + "/echo" + Self.setting(["\(name)=v; Max-Age=3600; Path=/"]), store: store)
        #expect(try child(http + "/echo", store: store, action: "clear-memory").cookieSent == "", "cleared from memory")
        #expect(try child(http + "/echo", store: store).cookieSent == "\(name)=v", "back at the next launch")
        #expect(try child(http + "/echo", store: store, action: "clear-all").cookieSent == "")
        #expect(try child(http + "/echo", store: store).cookieSent == "", "gone for good")
        #expect(!storeLines(store).contains { $0.contains(name) })
    }

    @Test func disableCookieHandlingStoresNothingOnDisk() throws {
        let name = Self.unique("off")
        let (request, _) = fetchSync("GET", try env.httpURL + "/echo" + Self.setting(["\(name)=v; Max-Age=3600; Path=/"])) {
            #expect($0.disableCookieHandling())
        }
        #expect(request.getStatus() == 200)
        #expect(!storeLines(CookieStore.shared.file).contains { $0.contains(name) })
        #expect(!CookieStore.shared.allCookies().contains { $0.name == name })
    }

    @Test func twoProcessesSharingOneFileKeepEachOthersCookies() throws {
        let store = try storeDirectory() + "/cookies.txt"
        let http = try env.httpURL
        let names = (0..<8).map { _ in Self.unique("proc") }
        // Eight processes at once, each receiving a different cookie, all against one file.
        let results = Locked<[ChildResult]>([])
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            let result = try? child(http + "/echo" + Self.setting(["\(names[index])=\(index); Max-Age=3600; Path=/"]), store: store)
            if let result { results.withLock { $0.append(result) } }
        }
        #expect(results.withLock { $0.count } == names.count)
        #expect(results.withLock { $0 }.allSatisfy { $0.status == 0 })
        let lines = storeLines(store)
        for (index, name) in names.enumerated() {
            #expect(lines.contains { $0.hasSuffix("\t\(name)\t\(index)") }, "\(name) was lost: \(lines)")
        }
        // A new process sends them all.
        let sent = try child(http + "/echo", store: store).cookieSent
        #expect(names.allSatisfy { sent.contains($0) })
    }

    @Test func aDamagedStoreIsSetAsideAndReplaced() throws {
        let store = try storeDirectory() + "/cookies.txt"
        try Data([0x23, 0x20, 0x0A, 0x00, 0xFF, 0xFE] + Array("not\ta\tcookie\n".utf8)).write(to: URL(fileURLWithPath: store))
        let name = Self.unique("fresh")
        let result = try child(try env.httpURL + "/echo" + Self.setting(["\(name)=v; Max-Age=3600; Path=/"]), store: store)
        #expect(result.status == 0)
        #expect(result.output.contains("\"status\":200"), "\(result.output)")
        #expect(result.output.contains("cookie store \(store) cannot be used"), "a clear log line: \(result.output)")
        #expect(FileManager.default.fileExists(atPath: store + ".damaged"))
        #expect(storeLines(store).contains { $0.hasSuffix("\t\(name)\tv") }, "the file was replaced by a working store")
        #expect(try child(try env.httpURL + "/echo", store: store).cookieSent == "\(name)=v")
    }

    @Test func theStoreAPIListsSetsAndDeletesCookies() throws {
        let http = try env.httpURL
        let name = Self.unique("api")
        let later = Int64(Date().timeIntervalSince1970) + 3600
        let cookie = Cookie(name: name, value: "one", domain: "127.0.0.1", path: "/echo", expires: later)
        #expect(CookieStore.shared.setCookie(cookie))
        #expect(storeLines(CookieStore.shared.file).contains { $0.hasSuffix("\t\(name)\tone") }, "on disk when setCookie returns")
        #expect(CookieStore.shared.cookies(for: http + "/echo/x").contains(cookie))
        #expect(!CookieStore.shared.cookies(for: http + "/other").contains { $0.name == name })
        #expect(try cookieSent(to: http + "/echo")?.contains("\(name)=one") == true)
        // A cookie set by a response shows up with its attributes.
        let fromServer = Self.unique("srv")
        _ = fetchSync("GET", http + "/echo" + Self.setting(["\(fromServer)=x; Path=/; HttpOnly"]))
        let listed = try #require(CookieStore.shared.allCookies().first { $0.name == fromServer })
        #expect(listed.isHTTPOnly && !listed.isPersistent && listed.domain == "127.0.0.1")

        CookieStore.shared.deleteCookie(cookie)
        #expect(!CookieStore.shared.allCookies().contains { $0.name == name })
        #expect(!storeLines(CookieStore.shared.file).contains { $0.contains(name) })
        #expect(try cookieSent(to: http + "/echo")?.contains(name) != true)
        #expect(!CookieStore.shared.setCookie(Cookie(name: "bad;name", value: "v", domain: "127.0.0.1")))
        #expect(!CookieStore.shared.setCookie(Cookie(name: "n", value: "v\r\nX: y", domain: "127.0.0.1")))
    }

    @Test func sixteenThreadsSettingAndReadingCookiesLoseNone() throws {
        let http = try env.httpURL
        let names = (0..<32).map { _ in Self.unique("t") }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { thread in
            for round in 0..<2 {
                let name = names[thread * 2 + round]
                let url = http + "/echo" + Self.setting(["\(name)=\(thread); Max-Age=3600; Path=/"])
                // Even threads sync, odd threads async; then read back through the other mode.
                let setStatus = thread % 2 == 0 ? fetchSync("GET", url).0.getStatus() : fetchAsync("GET", url).0.getStatus()
                let body = thread % 2 == 0 ? fetchAsync("GET", http + "/echo").1.body : fetchSync("GET", http + "/echo").1
                let sent = (try? Echo(body).header("Cookie")) ?? nil
                if setStatus != 200 || sent?.contains("\(name)=\(thread)") != true {
                    failures.withLock { $0.append("\(name): status \(setStatus), sent \(sent ?? "nothing")") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let stored = Set(CookieStore.shared.allCookies().map(\.name))
        let onDisk = storeLines(CookieStore.shared.file).joined(separator: "\n")
        for name in names {
            #expect(stored.contains(name), "\(name) is missing from the jar")
            #expect(onDisk.contains("\t\(name)\t"), "\(name) is missing from the file")
        }
    }
}

/// The Netscape line format and the checks of setCookie, without the jar. Found by the
/// cookiefile fuzz target: they compared characters, and a combining mark after ".", "/",
/// ";", "=" or "#" makes one character with it, while libcurl and servers see the byte.
@Suite(.ownThreads) struct CookieFormatTests {
    @Test func aCombiningMarkHidesNoSeparatorFromTheChecks() {
        let mark = "\u{301}"
        #expect(Cookie(name: "n", value: "x;\(mark) admin=1", domain: "example.com").problem != nil)
        #expect(Cookie(name: "a=\(mark)b", value: "v", domain: "example.com").problem != nil)
        #expect(Cookie(name: "a;\(mark)b", value: "v", domain: "example.com").problem != nil)
        #expect(Cookie(name: "a \(mark)b", value: "v", domain: "example.com").problem != nil)
        #expect(Cookie(name: "n", value: "v", domain: ".\(mark)example.com").problem != nil)
        #expect(Cookie(name: "n", value: "v", domain: "example.com/\(mark)").problem != nil)
        #expect(Cookie(name: "n", value: "v", domain: "example.com", path: "/\(mark)a").problem == nil)
        #expect(Cookie(name: "n\(mark)", value: "v\(mark)", domain: "\(mark)example.com").problem == nil)
    }

    /// A domain that would make libcurl read the line as something else: a comment, the
    /// HttpOnly mark (another cookie than the one set), or a Set-Cookie header.
    @Test func aDomainCannotTurnTheLineIntoAnotherOne() {
        for domain in ["#HttpOnly_example.com", "#example.com", "Set-Cookie:a=b; domain=example.com", "set-cookie:x"] {
            #expect(Cookie(name: "n", value: "v", domain: domain).problem != nil, "\(domain)")
        }
        #expect(Cookie(name: "n", value: "v", domain: "set-cookie.example").problem == nil)
    }

    @Test func aLineIsReadByItsBytes() {
        let mark = "\u{353}"
        let cookie = Cookie(name: "n", value: "v", domain: "\(mark)x", includesSubdomains: true,
                            path: "/\(mark)", isHTTPOnly: true, expires: 2_000_000_000)
        #expect(cookie.netscapeLine == "#HttpOnly_.\(mark)x\tTRUE\t/\(mark)\tFALSE\t2000000000\tn\tv")
        #expect(Cookie(netscapeLine: cookie.netscapeLine) == cookie)
        #expect(Cookie(netscapeLine: "#HttpOnly_\(mark)x\tFALSE\t/\tFALSE\t0\tn\tv")?.domain == "\(mark)x")
        let file = Array("#\(mark) a comment\n.x\tTRUE\t/\tFALSE\t2000000000\tn\tv\n".utf8)
        let (cookies, damage) = CookieStore.parseStore(file, now: 1_750_000_000)
        #expect(damage == nil)
        #expect(cookies.count == 1)
    }

    /// A line that ends in several CRs loses them all when read: the store writes it back as
    /// read, and it reads the same (with one CR dropped a read, a name of CRs became empty
    /// after some writes, and the store's own file "damaged").
    @Test func aLineLosesEveryCRAtItsEnd() {
        let (cookies, damage) = CookieStore.parseStore(Array("x\tFALSE\t/\tFALSE\t2000000000\tn\tv\r\r\r\n".utf8), now: 0)
        #expect(damage == nil)
        #expect(cookies["x\t/\tn"] == "x\tFALSE\t/\tFALSE\t2000000000\tn\tv")
        #expect(CookieStore.parseStore(Array("x\tFALSE\t/\tFALSE\t2000000000\t\r\r\n".utf8), now: 0).damage != nil)
    }

    /// A domain left with a leading dot (a line "..x" without the subdomain flag) is written
    /// back as it was read, so libcurl and the reader find the same cookie in it.
    @Test func aDomainThatStartsWithADotSurvivesItsLine() throws {
        let cookie = try #require(Cookie(netscapeLine: "..x.example\tFALSE\t/\tFALSE\t2000000000\tn\tv"))
        #expect(cookie.domain == ".x.example" && !cookie.includesSubdomains)
        #expect(cookie.netscapeLine == "..x.example\tFALSE\t/\tFALSE\t2000000000\tn\tv")
        #expect(Cookie(netscapeLine: cookie.netscapeLine) == cookie)
    }
}
