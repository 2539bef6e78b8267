import CurlXHR
@testable import CurlXHRClient
import Foundation
import Testing

/// HTTP-RPC's encodings chosen per client or per call: the decision alone (``ArgumentPlacement``),
/// then what the fault server received.
@Suite(.ownThreads) struct ClientArgumentEncodingTests {
    typealias Encoding = HttpClient.ArgumentEncoding

    static func place(_ method: String, body: Bool = false, files: Bool = false, call: Encoding? = nil,
                      contentType: String? = nil, client: Encoding = .automatic) -> ArgumentPlacement? {
        try? ArgumentPlacement.decide(method: method, hasBody: body, hasFiles: files, call: call,
                                      contentType: contentType, client: client)
    }

    @Test func theDefaultIsHTTPRPCsRule() {
        for method in ["GET", "DELETE", "HEAD", "OPTIONS", "REPORT"] { #expect(Self.place(method) == .query, "\(method)") }
        for method in ["POST", "PUT", "PATCH"] {
            #expect(Self.place(method) == .form)
            #expect(Self.place(method, files: true) == .multipart)
            #expect(Self.place(method, body: true) == .query)
        }
    }

    @Test func aClientsEncodingAppliesToPostPutAndPatchWithoutABody() {
        for encoding in Encoding.allCases {
            for method in ["GET", "DELETE"] { #expect(Self.place(method, client: encoding) == .query) }
            #expect(Self.place("POST", body: true, client: encoding) == .query, "an explicit body wins")
        }
        #expect(Self.place("POST", client: .multipart) == .multipart, "HTTP-RPC's POST: plain values too")
        #expect(Self.place("PUT", client: .json) == .json)
        #expect(Self.place("PATCH", client: .query) == .query)
        #expect(Self.place("POST", client: .form) == .form)
        #expect(Self.place("POST", files: true, client: .form) == .multipart, "a urlencoded form cannot carry a file")
    }

    @Test func aCallsEncodingWinsForAnyMethod() {
        #expect(Self.place("GET", call: .form) == .form)
        #expect(Self.place("DELETE", call: .json) == .json)
        #expect(Self.place("POST", call: .query, client: .multipart) == .query)
        #expect(Self.place("PUT", call: .multipart, contentType: "application/json") == .multipart)
        #expect(Self.place("POST", call: .automatic, client: .multipart) == .form, "automatic is HTTP-RPC's rule, not the client's")
        #expect(Self.place("GET", call: .automatic) == .query)
        #expect(Self.place("POST", body: true, call: .query) == .query)
    }

    @Test func aContentTypeAmongTheHeadersNamesTheEncoding() {
        #expect(Self.place("POST", contentType: "multipart/form-data") == .multipart)
        #expect(Self.place("POST", contentType: "Multipart/Form-Data; charset=utf-8", client: .json) == .multipart)
        #expect(Self.place("PUT", contentType: "application/json") == .json)
        #expect(Self.place("PATCH", contentType: "application/merge-patch+json") == .json)
        #expect(Self.place("POST", contentType: "application/x-www-form-urlencoded", client: .multipart) == .form)
        #expect(Self.place("POST", contentType: "text/plain", client: .multipart) == .multipart, "other types say nothing")
        #expect(Self.place("GET", contentType: "multipart/form-data") == .query, "only for POST, PUT and PATCH")
    }

    @Test func impossibleChoicesFailTheCall() {
        for (call, body, files) in [(Encoding.json, false, true), (.form, true, false), (.multipart, true, false), (.json, true, false)] {
            #expect(throws: HttpClientError.self, "\(call) body \(body) files \(files)") {
                try ArgumentPlacement.decide(method: "POST", hasBody: body, hasFiles: files, call: call, contentType: nil, client: .automatic)
            }
        }
        #expect(throws: HttpClientError.self) {
            try ArgumentPlacement.decide(method: "PUT", hasBody: false, hasFiles: true, call: nil, contentType: nil, client: .json)
        }
    }

    @Test func argumentsAsAJSONObjectKeepTheirOrderAndTypes() throws {
        let data = try ArgumentPlacement.jsonObject([
            ("name", "Zoë \"q\"\n"), ("n", 42), ("x", 2.5), ("ok", false), ("tag", ["a", 1, ["b"]]),
            ("when", .date(Date(timeIntervalSince1970: 1_700_000_000.1239))), ("big", .int(Int.max)),
        ])
        #expect(String(decoding: data, as: UTF8.self)
                == #"{"name":"Zoë \"q\"\n","n":42,"x":2.5,"ok":false,"tag":["a",1,["b"]],"when":1700000000123,"big":9223372036854775807}"#)
        #expect(throws: HttpClientError.self) { try ArgumentPlacement.jsonObject([("a", 1), ("a", 2)]) }
        #expect(throws: HttpClientError.self) { try ArgumentPlacement.jsonObject([("a", .double(.nan))]) }
    }

    // MARK: On the wire

    let env: TestEnvironment
    let client: HttpClient
    init() throws { (env, client) = try faultServerClient() }

    @Test func aCallAsksForMultipartWithPlainValues() async throws {
        let form: ReceivedForm = try await client.invoke("POST", path: "multipart", arguments: [("title", "Zoë"), ("n", 3), ("tag", ["a", "bb"])],
                                                         encoding: .multipart)
        #expect(form.parts.map(\.name) == ["title", "n", "tag", "tag"])
        #expect(form.parts.map(\.size) == ["Zoë".utf8.count, 1, 1, 2])
        #expect(form.parts.allSatisfy { $0.filename == nil })
    }

    @Test func aClientsMultipartAndAMultipartContentTypeMakeMultipart() async throws {
        var multipart = client
        multipart.argumentEncoding = .multipart
        let echo: EchoedRequest = try await multipart.invoke("POST", path: "echo", arguments: [("a", "1")])
        #expect(echo.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true, "\(echo.headers)")
        #expect(echo.body.contains(#"Content-Disposition: form-data; name="a""#))
        let asked: EchoedRequest = try await client.invoke("POST", path: "echo", arguments: [("a", "1")],
                                                           headerFields: [.contentType: "multipart/form-data"])
        #expect(asked.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true, "no longer urlencoded")
        let fetched: EchoedRequest = try await multipart.invoke("GET", path: "echo", arguments: [("a", "1")])
        #expect(fetched.target == "/echo?a=1" && fetched.bodyLength == 0, "GET keeps the query string")
    }

    @Test(arguments: ["PUT", "PATCH"])
    func putAndPatchSendTheArgumentsAsJSON(method: String) async throws {
        let echo: EchoedRequest = try await client.invoke(method, path: "echo", arguments: [("name", "Zoë"), ("n", 2), ("ok", true), ("tag", ["a", "b"])],
                                                          encoding: .json)
        #expect(echo.method == method && echo.target == "/echo")
        #expect(echo.header("Content-Type") == "application/json")
        #expect(echo.body == #"{"name":"Zoë","n":2,"ok":true,"tag":["a","b"]}"#)
        var json = client
        json.argumentEncoding = .json
        let viaClient: EchoedRequest = try await json.invoke(method, path: "echo", arguments: [("n", 2)],
                                                             headerFields: [.contentType: "application/merge-patch+json"])
        #expect(viaClient.body == #"{"n":2}"#)
        #expect(viaClient.header("Content-Type") == "application/merge-patch+json", "the caller's JSON type stays")
    }

    @Test(arguments: ["PUT", "PATCH", "POST"])
    func anyMethodCanSendTheArgumentsInTheQueryString(method: String) async throws {
        let echo: EchoedRequest = try await client.invoke(method, path: "echo", arguments: [("name", "Zoë & co"), ("tag", ["a", "b"])],
                                                          encoding: .query)
        #expect(echo.target == "/echo?name=Zo%C3%AB+%26+co&tag=a&tag=b")
        #expect(echo.bodyLength == 0 && echo.header("Content-Type") == nil)
        var query = client
        query.argumentEncoding = .query
        let viaClient: EchoedRequest = try await query.invoke(method, path: "echo", arguments: [("n", 1)])
        #expect(viaClient.target == "/echo?n=1" && viaClient.bodyLength == 0)
    }

    @Test func aMultipartCallWithoutArgumentsSendsNoBody() async throws {
        let echo: EchoedRequest = try await client.invoke("POST", path: "echo", encoding: .multipart)
        #expect(echo.method == "POST" && echo.bodyLength == 0 && echo.header("Content-Type") == nil, "\(echo.headers)")
    }

    @Test func aGetCanSendAForm() async throws {
        let echo: EchoedRequest = try await client.invoke("GET", path: "echo", arguments: [("a", "b c")], encoding: .form)
        #expect(echo.target == "/echo" && echo.body == "a=b+c")
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func theDefaultsStayForEveryWayOfCalling() async throws {
        let echo: EchoedRequest = try await client.invoke("PUT", path: "echo", arguments: [("a", 1)])
        #expect(echo.body == "a=1" && echo.header("Content-Type") == "application/x-www-form-urlencoded")
        let client = client
        let sync = await onWorkerThread { () throws(HttpClientError) -> EchoedRequest in
            try client.invokeSync("PATCH", path: "echo", arguments: [("a", 1)], encoding: .json)
        }
        #expect(try sync.get().body == #"{"a":1}"#)
        let completed = await withCheckedContinuation { continuation in
            client.invoke("POST", path: "echo", arguments: [("a", 1)], encoding: .query) { (result: Result<EchoedRequest, HttpClientError>) in
                continuation.resume(returning: result)
            }
        }
        #expect(try completed.get().target == "/echo?a=1")
    }

    @Test func aRepeatedKeyOrAFileCannotGoInJSON() async throws {
        let repeated = await clientError { try await client.invoke("PUT", path: "echo", arguments: [("a", 1), ("a", 2)], encoding: .json) }
        guard case .encoding(let problem)? = repeated else { Issue.record("\(String(describing: repeated))"); return }
        #expect("\(problem)".contains("'a'"))
        let file = await clientError {
            try await client.invoke("PUT", path: "echo", arguments: [("f", .file(path: "/etc/hostname"))], encoding: .json)
        }
        guard case .encoding? = file else { Issue.record("\(String(describing: file))"); return }
        let withBody = await clientError {
            try await client.invoke("PUT", path: "echo", arguments: [("a", 1)], body: .data(Data(), contentType: "x/y"), encoding: .multipart)
        }
        guard case .encoding? = withBody else { Issue.record("\(String(describing: withBody))"); return }
    }
}
