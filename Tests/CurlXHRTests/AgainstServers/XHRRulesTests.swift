@testable import CurlXHR
import Foundation
import Testing

/// Where GDHttpRequest says "based on the XHR standard" and is silent, the WHATWG
/// XMLHttpRequest and Fetch rules hold: which 3xx are redirects, what a redirect does to the
/// method, body and headers, which methods are upper-cased, how a non-ASCII URL goes out, a
/// second open, and the default User-Agent. Checked against what the fault server received.
@Suite(.ownThreads) struct XHRRulesTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// `/redirect/to` answering `code` with a Location that leads to `/record?marker`.
    func redirect(_ code: Int, marker: String) throws -> String {
        let target = "/record?marker=\(marker)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try env.faultURL + "/redirect/to?code=\(code)&url=\(target)"
    }

    @Test(arguments: [300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 350, 399])
    func onlyFiveCodesAreRedirects(code: Int) throws {
        let marker = UUID().uuidString
        let (request, body) = fetchSync("GET", try redirect(code, marker: marker))
        if [301, 302, 303, 307, 308].contains(code) {
            #expect(request.getStatus() == 200, "\(code) is followed")
            let echo = try Echo(body)
            #expect((echo.json["path"] as? String)?.contains(marker) == true)
            #expect(request.getMetrics().redirectCount == 1)
            #expect(request.getMetrics().effectiveURL?.contains("/record?marker=\(marker)") == true)
        } else {
            #expect(request.getStatus() == code, "\(code) comes back as it is")
            #expect(request.getResponseHeader("Location")?.contains(marker) == true)
            #expect(String(decoding: body, as: UTF8.self) == (code == 304 ? "" : "moved"), "with its own body")
            #expect(request.getMetrics().redirectCount == 0)
        }
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectedPostKeepsOrLosesItsBodyAndItsHeadersTogether(code: Int) throws {
        let marker = UUID().uuidString
        let body = Data(#"{"a":1}"#.utf8)
        let (request, received) = fetchAsync("POST", try redirect(code, marker: marker), body: body) { request in
            #expect(request.setRequestHeader("Content-Type", value: "application/json"))
            #expect(request.setRequestHeader("Content-Language", value: "en"))
            #expect(request.setRequestHeader("X-Other", value: "kept"))
        }
        #expect(request.getStatus() == 200)
        let echo = try Echo(received.body)
        #expect(echo.header("X-Other") == "kept", "other headers always go")
        if code == 307 || code == 308 {
            #expect(echo.method == "POST")
            #expect(echo.bodyLength == body.count)
            #expect(echo.header("Content-Type") == "application/json")
            #expect(echo.header("Content-Language") == "en")
        } else {
            #expect(echo.method == "GET", "\(code) turns a POST into a GET")
            #expect(echo.bodyLength == 0)
            #expect(echo.header("Content-Type") == nil, "the body's headers go with the body")
            #expect(echo.header("Content-Language") == nil)
            #expect(echo.header("Content-Length") == nil)
        }
    }

    @Test func a303TurnsAPutIntoAGetAnd301KeepsIt() throws {
        let seeOther = try Echo(fetchSync("PUT", try redirect(303, marker: UUID().uuidString), body: Data("x".utf8)).1)
        #expect(seeOther.method == "GET")
        #expect(seeOther.bodyLength == 0)
        let moved = try Echo(fetchSync("PUT", try redirect(301, marker: UUID().uuidString), body: Data("xyz".utf8)).1)
        #expect(moved.method == "PUT", "301 changes only a POST")
        #expect(moved.bodyLength == 3)
        let head = fetchSync("HEAD", try redirect(303, marker: UUID().uuidString)).0
        #expect(head.getStatus() == 200, "a HEAD stays a HEAD")
    }

    @Test func aStreamedFileIsSentAgainWholeAfterA307() throws {
        let bytes = Pattern.bytes(200_000)
        let path = NSTemporaryDirectory() + "redirect-upload-\(UUID().uuidString)"
        try bytes.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let request = HttpRequest()
        #expect(request.open("PUT", url: try redirect(307, marker: UUID().uuidString)))
        #expect(request.sendWithFile(path))
        let echo = try Echo(request.getReceiveBuffer())
        #expect(echo.method == "PUT")
        #expect(echo.bodyLength == bytes.count, "the file is sent again from its start")
    }

    @Test func credentialsComeBackAtTheirOwnOrigin() throws {
        let marker = UUID().uuidString
        let port = try env["TESTENV_FAULT_PORT"]
        // 127.0.0.1 → localhost (another origin: no credentials) → 127.0.0.1 (the first origin: again).
        let back = "http://127.0.0.1:\(port)/record?marker=\(marker)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let away = "http://localhost:\(port)/redirect/to?code=302&url=\(back)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let start = "http://127.0.0.1:\(port)/redirect/to?code=307&url=\(away)"
        let (request, body) = fetchSync("GET", start) { request in
            #expect(request.open("GET", url: start, user: "carol", password: "pw"))
            #expect(request.setRequestHeader("Cookie", value: "session=secret"))
        }
        #expect(request.getStatus() == 200)
        #expect(request.getMetrics().redirectCount == 2)
        let echo = try Echo(body)
        #expect(echo.header("Authorization") == "Basic " + Data("carol:pw".utf8).base64EncodedString())
        let foreign = "http://localhost:\(port)/record?foreign=\(marker)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let (_, foreignBody) = fetchSync("GET", "http://127.0.0.1:\(port)/redirect/to?code=308&url=\(foreign)") { request in
            #expect(request.open("GET", url: "http://127.0.0.1:\(port)/redirect/to?code=308&url=\(foreign)", user: "carol", password: "pw"))
            #expect(request.setRequestHeader("Cookie", value: "session=secret"))
            #expect(request.setRequestHeader("Authorization", value: "Bearer token"))
        }
        let foreignEcho = try Echo(foreignBody)
        #expect(foreignEcho.header("Authorization") == nil, "no credentials to another origin")
        #expect(foreignEcho.header("Cookie") == nil, "no caller-set Cookie field to another origin")
    }

    @Test func onlySixMethodsAreUpperCased() throws {
        for (given, sent) in [("patCH", "patCH"), ("delete", "DELETE"), ("options", "OPTIONS"), ("pUt", "PUT"),
                              ("get", "GET"), ("post", "POST"), ("head", "HEAD"), ("PATCH", "PATCH"), ("propfind", "propfind")] {
            let marker = UUID().uuidString
            let request = fetchSync(given, try env.faultURL + "/record?method=\(marker)").0
            #expect(request.getStatus() == 200, "\(given)")
            let records = try #require(try JSONSerialization.jsonObject(with: fetchSync("GET", try env.faultURL + "/recorded").1) as? [[String: Any]])
            let record = try #require(records.last { ($0["path"] as? String)?.contains(marker) == true }, "\(given)")
            #expect(record["method"] as? String == sent, "\(given) goes out as \(sent)")
        }
    }

    @Test func aNonASCIIPathAndQueryArePercentEncodedAsUTF8() throws {
        let marker = UUID().uuidString
        let (request, body) = fetchSync("GET", try env.faultURL + "/record/straße?q=ß&m=\(marker)#fragmentü")
        #expect(request.getStatus() == 200)
        let path = try #require(try Echo(body).json["path"] as? String)
        #expect(path == "/record/stra%C3%9Fe?q=%C3%9F&m=\(marker)")
        #expect(MessageValidation.percentEncodingNonASCII("http://h/a b") == "http://h/a b", "ASCII is left as it is")
        #expect(MessageValidation.percentEncodingNonASCII("https://bücher.example/ü?ü") == "https://bücher.example/%C3%BC?%C3%BC",
                "the host is left to libcurl")
    }

    @Test func aSecondOpenReportsNoSecondOpened() throws {
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/status?code=200", async: true))
        #expect(request.open("GET", url: try env.faultURL + "/status?code=201", async: true))
        #expect(request.getState() == .opened)
        #expect(request.send())
        #expect(recorder.waitForDone())
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .loading, .done])
        #expect(request.getStatus() == 201, "the second open's URL; status text: \(request.getStatusText() ?? "")")
        // From DONE, open reports OPENED again.
        #expect(request.open("GET", url: try env.faultURL + "/status?code=202", async: true))
        Thread.sleep(forTimeInterval: 0.2)
        #expect(recorder.result.states.filter { $0 == .opened }.count == 2)
    }

    @Test func aDefaultUserAgentGoesUnlessOneIsSet() throws {
        let ours = try Echo(fetchSync("GET", try env.faultURL + "/record?ua=1").1).header("User-Agent") ?? ""
        let header = try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent("CSupport/CurlXHRHeader/include/curlxhr.h"), encoding: .utf8)
        let version = try #require(header.split(separator: "\n").first { $0.hasPrefix("#define CURLXHR_VERSION \"") })
            .split(separator: "\"")[1]
        #expect(ours.hasPrefix("CurlXHR/\(version) "), "\(ours): the version of curlxhr.h")
        #expect(ours.contains(" libcurl/7.") || ours.contains(" libcurl/8."), "\(ours)")
        let theirs = try Echo(fetchSync("GET", try env.faultURL + "/record?ua=2") {
            #expect($0.setRequestHeader("User-Agent", value: "Porter/1.0"))
        }.1)
        #expect(theirs.header("User-Agent") == "Porter/1.0")
    }

    @Test func metricsSayWhatTheSendMeasured() throws {
        let request = HttpRequest()
        #expect(request.getMetrics() == HttpRequest.Metrics())
        #expect(request.open("GET", url: try env.faultURL + "/redirect/chain?n=3"))
        #expect(request.send())
        let metrics = request.getMetrics()
        #expect(metrics.httpVersion == "HTTP/1.1")
        #expect(metrics.redirectCount == 3)
        #expect(metrics.effectiveURL?.hasSuffix("/redirect/chain?n=0") == true, "\(metrics.effectiveURL ?? "")")
        let total = try #require(metrics.totalTime)
        let start = try #require(metrics.startTransferTime)
        #expect(total > 0 && start > 0 && start <= total)
        #expect(request.open("GET", url: try env.faultURL + "/status?code=200"))
        #expect(request.getMetrics() == HttpRequest.Metrics(), "open forgets them")
        let https = fetchSync("GET", try env.httpsURL + "/files/100b") { #expect($0.setCACertificateFile(try! env.caFile)) }.0
        #expect(https.getMetrics().httpVersion == "HTTP/1.1", "the HTTPS port offers HTTP/1.1 only")
        let h2 = fetchSync("GET", try env["TESTENV_HTTPS_H2_URL"] + "/files/100b") { #expect($0.setCACertificateFile(try! env.caFile)) }
        #expect(h2.0.getStatus() == 200, "\(h2.0.getStatusText() ?? "")")
        #expect(h2.0.getMetrics().httpVersion == "HTTP/2", "HTTP/2 through ALPN where the server offers it")
        #expect(h2.1.count == 100)
        let pinned = fetchSync("GET", http11Name(try env["TESTENV_HTTPS_H2_URL"] + "/files/100b")) {
            #expect($0.setCACertificateFile(try! env.caFile))
            $0.enablePipelining = false
        }.0
        #expect(pinned.getMetrics().httpVersion == "HTTP/1.1", "enablePipelining = false keeps HTTP/1.1")
    }
}

/// The redirect rules as a pure value.
@Suite(.ownThreads) struct RedirectStepTests {
    @Test func methodsAndBodies() {
        #expect(RedirectStep(status: 301, method: "POST", crossOrigin: false) == RedirectStep(status: 302, method: "POST", crossOrigin: false))
        #expect(RedirectStep(status: 301, method: "POST", crossOrigin: false).method == "GET")
        #expect(RedirectStep(status: 302, method: "PUT", crossOrigin: false).method == "PUT")
        #expect(RedirectStep(status: 303, method: "DELETE", crossOrigin: false).method == "GET")
        #expect(RedirectStep(status: 303, method: "HEAD", crossOrigin: false).method == "HEAD")
        #expect(RedirectStep(status: 307, method: "POST", crossOrigin: false).keepsBody)
        #expect(!RedirectStep(status: 303, method: "POST", crossOrigin: false).keepsBody)
        let away = RedirectStep(status: 308, method: "POST", crossOrigin: true)
        #expect(!away.sends("authorization") && !away.sends("Cookie") && away.sends("Content-Type"))
        #expect(!RedirectStep(status: 302, method: "POST", crossOrigin: false).sends("content-type"))
        #expect(HTTPURL("http://A.example/x")?.origin == HTTPURL("http://a.example:80/y")?.origin)
        #expect(HTTPURL("http://a.example/")?.origin != HTTPURL("https://a.example/")?.origin)
        #expect(HTTPURL("http://a.example/")?.origin != HTTPURL("http://a.example:8080/")?.origin)
        #expect(HTTPURL.sameOrigin("HTTP://A.example/x", "http://a.example/y"), "told by the bytes, case aside")
        #expect(HTTPURL.sameOrigin("http://a.example:80/x", "http://a.example/y"), "told by parsing: the default port")
        #expect(HTTPURL.sameOrigin("http://u:p@a.example/x", "http://a.example/y"), "a user name is no part of the origin")
        #expect(!HTTPURL.sameOrigin("http://a.example.evil/", "http://a.example/"))
        #expect(!HTTPURL.sameOrigin("http://a.example\\@b.example/", "http://b.example/"), "a URL open refuses has no origin")
        #expect(!HTTPURL.sameOrigin("not a url", "not a url"))
        #expect(HTTPURL.sameOrigin("http://a.example/x?y", "http://a.example/"))
        #expect(HTTPURL.sameOrigin("http://A.example:80/x", "http://a.example/q"), "parsed when the bytes differ")
        #expect(!HTTPURL.sameOrigin("http://a.example.evil/x", "http://a.example/"))
        #expect(!HTTPURL.sameOrigin("http://a.example@evil/x", "http://a.example/"))
        #expect(!HTTPURL.sameOrigin("https://a.example/", "http://a.example/"))
        #expect(!HTTPURL.sameOrigin("http://a.example:81/", "http://a.example/"))
    }
}
