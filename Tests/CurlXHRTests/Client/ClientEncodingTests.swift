import CurlXHR
@testable import CurlXHRClient
import Foundation
import Testing

/// `HttpClient`'s requests as the fault server received them: HTTP-RPC's rules for where the
/// arguments go and how they are encoded, the bodies, and the base URL, API path, default
/// headers, credentials and `configure`.
@Suite(.ownThreads) struct ClientEncodingTests {
    let env: TestEnvironment
    let client: HttpClient
    init() throws {
        env = try TestEnvironment.get()
        client = HttpClient(baseURL: try env.faultURL)
    }

    /// Values with UTF-8, reserved characters, a number, a double, a boolean and an array.
    static let arguments: [(String, HttpClient.Argument)] = [
        ("name", "Zoë & Æsir"), ("q", "a+b=c/d?e#f%"), ("n", 42), ("x", 2.5), ("ok", true),
        ("tag", ["red", "blue green"]), ("empty", ""),
        ("when", .date(Date(timeIntervalSince1970: 1_700_000_000.1239))),
    ]
    /// How they are encoded, in the query string and in a form body alike.
    static let encoded = "name=Zo%C3%AB+%26+%C3%86sir&q=a%2Bb%3Dc%2Fd%3Fe%23f%25&n=42&x=2.5&ok=true&tag=red&tag=blue+green&empty=&when=1700000000123"
    /// The pairs the server decodes from them.
    static let decoded = [["name", "Zoë & Æsir"], ["q", "a+b=c/d?e#f%"], ["n", "42"], ["x", "2.5"], ["ok", "true"],
                          ["tag", "red"], ["tag", "blue green"], ["empty", ""], ["when", "1700000000123"]]

    /// `setHeader` replaces every field of the name (case aside), `nil` removes them, and a
    /// later valid value replaces one that would have been refused: what is sent is the last word.
    @Test func setHeaderReplacesRemovesAndForgetsARefusedValue() async throws {
        var request = HttpClientRequest(method: "GET", url: try env.faultURL + "/echo",
                                        headerFields: [try #require(HTTPField.Name("X-A")): "1", .accept: "a/b"])
        request.setHeader("x-a", value: "2")
        #expect(request.header("X-A") == "2" && request.headerFields.count == 2)
        request.setHeader("Accept", value: nil)
        #expect(request.header("Accept") == nil && request.headerFields.count == 1)
        request.setHeader("X-A", value: "bad\r\nInjected: 1")
        #expect(request.header("X-A") == nil, "not held as HTTPFields")
        request.setHeader("X-A", value: "3")
        struct Replay: HttpClientMiddleware {
            let request: HttpClientRequest
            func intercept(_ ignored: HttpClientRequest,
                           next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
                try await next(request)
            }
        }
        var replaying = client
        replaying.middlewares = [Replay(request: request)]
        let echo: EchoedRequest = try await replaying.invoke("GET", path: "echo")
        #expect(echo.headers(named: "X-A") == ["3"], "the refused value is forgotten")
        #expect(echo.headers(named: "Injected").isEmpty)
    }

    @Test(arguments: ["GET", "DELETE", "get"])
    func getAndDeleteSendTheArgumentsInTheQueryString(method: String) async throws {
        let echo: EchoedRequest = try await client.invoke(method, path: "echo", arguments: Self.arguments)
        #expect(echo.method == method.uppercased())
        #expect(echo.target == "/echo?" + Self.encoded)
        #expect(echo.query == Self.decoded)
        #expect(echo.bodyLength == 0 && echo.header("Content-Type") == nil, "nothing in a body")
    }

    @Test func aPathWithAQueryGetsTheArgumentsAfterIt() async throws {
        let echo: EchoedRequest = try await client.invoke("GET", path: "/echo?page=2", arguments: [("sort", "name desc")])
        #expect(echo.target == "/echo?page=2&sort=name+desc")
    }

    @Test(arguments: ["POST", "PUT", "PATCH"])
    func postPutAndPatchSendAnURLEncodedForm(method: String) async throws {
        let echo: EchoedRequest = try await client.invoke(method, path: "echo", arguments: Self.arguments)
        #expect(echo.method == method)
        #expect(echo.target == "/echo", "nothing in the query string")
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(echo.body == Self.encoded)
        #expect(echo.form == Self.decoded)
    }

    @Test func aPostWithoutArgumentsSendsAnEmptyForm() async throws {
        let echo: EchoedRequest = try await client.invoke("POST", path: "echo")
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(echo.bodyLength == 0 && echo.target == "/echo")
    }

    @Test func aFileArgumentMakesTheFormMultipart() async throws {
        let files = try ScratchFiles(env, "client-multipart")
        let note = try files.write(Data("hello, form\n".utf8), named: "note.txt")
        let blob = try files.write(Pattern.bytes(300_000), named: "data.bin")
        let first = try files.write(Data("first".utf8), named: "a.json")
        let second = try files.write(Pattern.bytes(5000, from: 7), named: "b.bin")
        let form: ReceivedForm = try await client.invoke("POST", path: "multipart", arguments: [
            ("title", "Zoë's report & more"), ("count", 3),
            ("note", .file(path: note)),
            ("blob", .file(path: blob, fileName: "renamed.bin", contentType: "application/x-test")),
            ("attachment", [.file(path: first), .file(path: second, contentType: "application/octet-stream")]),
        ])
        #expect(form.parts.map(\.name) == ["title", "count", "note", "blob", "attachment", "attachment"],
                "the values first, then the files in order")
        #expect(form.parts[0].filename == nil && form.parts[0].size == "Zoë's report & more".utf8.count)
        #expect(form.parts[1].size == 1)
        #expect(form.parts[2] == .init(name: "note", filename: "note.txt", contentType: "text/plain",
                                       size: 12, sha256: try ScratchFiles.sha256(note)))
        #expect(form.parts[3] == .init(name: "blob", filename: "renamed.bin", contentType: "application/x-test",
                                       size: 300_000, sha256: try ScratchFiles.sha256(blob)))
        let firstHash = try ScratchFiles.sha256(first)
        #expect(form.parts[4].filename == "a.json" && form.parts[4].sha256 == firstHash)
        #expect(form.parts[5] == .init(name: "attachment", filename: "b.bin", contentType: "application/octet-stream",
                                       size: 5000, sha256: try ScratchFiles.sha256(second)))
    }

    @Test func aMultipartFormIsSentWithLibcurlsBoundary() async throws {
        let files = try ScratchFiles(env, "client-multipart")
        let note = try files.write(Data("x".utf8), named: "x.txt")
        // A Content-Type among the headers would lose the boundary: it is not sent.
        let echo: EchoedRequest = try await client.invoke("PUT", path: "echo", arguments: [("a", 1), ("f", .file(path: note))],
                                                          headerFields: [.contentType: "text/plain"])
        let type = try #require(echo.header("Content-Type"))
        #expect(type.hasPrefix("multipart/form-data; boundary="), "\(type)")
        #expect(echo.body.contains(#"Content-Disposition: form-data; name="f"; filename="x.txt""#))
    }

    @Test func anArrayRepeatsItsNameInAMultipartForm() async throws {
        let files = try ScratchFiles(env, "client-multipart")
        let note = try files.write(Data("x".utf8), named: "x.txt")
        let form: ReceivedForm = try await client.invoke("POST", path: "multipart", arguments: [
            ("tag", ["a", "bb"]), ("f", .file(path: note)),
        ])
        #expect(form.parts.map(\.name) == ["tag", "tag", "f"])
        #expect(form.parts.map(\.size) == [1, 2, 1], "each value of the array its own part, in order")
    }

    struct Item: Codable, Sendable, Equatable {
        var name: String
        var tags: [String]
        var price: Double
    }

    @Test(arguments: ["POST", "PUT", "PATCH"])
    func aJSONBodyPutsTheArgumentsInTheQueryString(method: String) async throws {
        let item = Item(name: "Zoë \"quoted\"", tags: ["a", "b"], price: 9.5)
        let echo: EchoedRequest = try await client.invoke(method, path: "echo", arguments: [("dry run", true), ("tag", ["x", "y"])],
                                                          body: .json(item))
        #expect(echo.target == "/echo?dry+run=true&tag=x&tag=y")
        #expect(echo.header("Content-Type") == "application/json")
        #expect(try JSONDecoder().decode(Item.self, from: Data(echo.body.utf8)) == item)
    }

    @Test func theClientsEncoderEncodesJSONBodies() async throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys
        let client = HttpClient(baseURL: try env.faultURL, encoder: encoder)
        struct Body: Encodable, Sendable { var firstName: String; var zipCode: Int }
        let echo: EchoedRequest = try await client.invoke("POST", path: "echo", body: .json(Body(firstName: "Ada", zipCode: 12345)))
        #expect(echo.body == #"{"first_name":"Ada","zip_code":12345}"#)
    }

    @Test func aRawBodyGoesByteForByteWithItsType() async throws {
        let bytes = Pattern.bytes(70_000)
        let files = try ScratchFiles(env, "client-raw")
        let path = try files.write(bytes, named: "body.bin")
        let echo: EchoedRequest = try await client.invoke("PUT", path: "echo", arguments: [("version", 3)],
                                                          body: .data(bytes, contentType: "application/x-pattern"))
        #expect(echo.target == "/echo?version=3")
        #expect(echo.header("Content-Type") == "application/x-pattern")
        let hash = try ScratchFiles.sha256(path)
        #expect(echo.bodyLength == 70_000 && echo.bodySha256 == hash)
    }

    @Test func aFileArgumentCannotGoInAQueryString() async throws {
        for (method, body) in [("GET", nil), ("POST", HttpClient.RequestBody.data(Data("{}".utf8), contentType: "application/json"))] {
            let error = await clientError {
                try await client.invoke(method, path: "echo", arguments: [("f", .file(path: "/etc/hostname"))], body: body)
            }
            guard case .encoding? = error else { Issue.record("\(method): \(String(describing: error))"); continue }
        }
    }

    @Test func theBaseURLAPIPathAndDefaultHeadersApplyToEveryCall() async throws {
        let client = HttpClient(baseURL: try env.faultURL + "/", apiPath: "/echo/api/v2/",
                                headerFields: [try #require(HTTPField.Name("X-Api-Key")): "key-1", .accept: "application/json"])
        let echo: EchoedRequest = try await client.invoke("GET", path: "/items/7", arguments: [("expand", "owner")],
                                                          headerFields: [try #require(HTTPField.Name("X-Call")): "c1"])
        #expect(echo.target == "/echo/api/v2/items/7?expand=owner")
        #expect(echo.header("X-Api-Key") == "key-1")
        #expect(echo.header("Accept") == "application/json")
        #expect(echo.header("X-Call") == "c1")
        let posted: EchoedRequest = try await client.invoke("POST", path: "items/", arguments: [("name", "x")])
        #expect(posted.target == "/echo/api/v2/items/", "a trailing slash of the path stays")
        #expect(posted.header("X-Api-Key") == "key-1")
    }

    /// The client's and the call's fields reach the server as `setRequestHeader` sends them:
    /// a repeated name as one field joined by ", ", a value without its outer white space; and
    /// `Content-Length` or `Transfer-Encoding` fail the call, with the reason.
    @Test func fieldsGoAsTheCoreSendsThemAndTheBodysOwnAreRefused() async throws {
        let tag = try #require(HTTPField.Name("X-Tag"))
        let client = HttpClient(baseURL: try env.faultURL, headerFields: [tag: "a"])
        let echo: EchoedRequest = try await client.invoke("GET", path: "echo",
                                                          headerFields: [tag: "b", try #require(HTTPField.Name("X-Pad")): " padded\t"])
        #expect(echo.headers(named: "X-Tag") == ["a, b"] && echo.headers(named: "X-Pad") == ["padded"], "\(echo.headers)")
        for (name, value) in [(HTTPField.Name.contentLength, "3"), (.transferEncoding, "chunked")] {
            let refused = await clientError {
                try await client.invoke("POST", path: "echo", body: .data(Data("abc".utf8), contentType: "text/plain"),
                                        headerFields: [name: value])
            }
            guard case .transfer(let error)? = refused, error.code == .invalidArgument else {
                Issue.record("\(name): \(String(describing: refused))")
                continue
            }
            #expect(error.message == "\(name.rawName) is set by the library from the body")
        }
    }

    @Test func urlsJoinWithOneSlash() {
        let plain = HttpClient(baseURL: "https://api.example.com")
        #expect(plain.url(for: "items") == "https://api.example.com/items")
        #expect(plain.url(for: "") == "https://api.example.com")
        let api = HttpClient(baseURL: "https://api.example.com//", apiPath: "//v2//")
        #expect(api.url(for: "//items/7/") == "https://api.example.com/v2/items/7/")
        #expect(api.url(for: "") == "https://api.example.com/v2")
        #expect(api.url(for: "HTTPS://other.example/x") == "HTTPS://other.example/x", "absolute URLs stay")
        let prefixed = HttpClient(baseURL: "http://127.0.0.1:8080/root", apiPath: "api")
        #expect(prefixed.url(for: "a?b=c") == "http://127.0.0.1:8080/root/api/a?b=c")
        var changed = prefixed
        changed.baseURL = "https://other.example/"
        #expect(changed.url(for: "/x") == "https://other.example/api/x", "a new base URL is used")
        changed.apiPath = ""
        #expect(changed.url(for: "x") == "https://other.example/x", "a new API path too")
        #expect(changed.url(for: "http:/x") == "https://other.example/http:/x", "not an absolute URL")
        #expect(changed.url(for: "http\u{1A}//x") == "https://other.example/http\u{1A}//x")
        #expect(changed.url(for: "hTtP://x") == "hTtP://x")
        #expect(changed.url(for: "é/x") == "https://other.example/é/x")
    }

    /// The URLs a client made are remembered for its next calls (MadeURLs), shared by its
    /// copies: a copy with another base URL or API path never gets the other's, and a path
    /// beyond the ones remembered is made again.
    @Test func rememberedURLsFollowTheirClient() {
        let first = HttpClient(baseURL: "https://a.example", apiPath: "v1")
        #expect(first.url(for: "items") == "https://a.example/v1/items")
        var second = first
        second.baseURL = "https://b.example"
        #expect(second.url(for: "items") == "https://b.example/v1/items")
        #expect(first.url(for: "items") == "https://a.example/v1/items", "the first client's own again")
        second.apiPath = "v2"
        #expect(second.url(for: "items") == "https://b.example/v2/items")
        for round in 0..<2 {
            for n in 0..<(3 * MadeURLs.capacity) {
                #expect(first.url(for: "p\(n)") == "https://a.example/v1/p\(n)", "round \(round)")
                #expect(second.url(for: "p\(n)") == "https://b.example/v2/p\(n)", "round \(round)")
            }
        }
        #expect(first.url(for: "items") == "https://a.example/v1/items")
    }

    /// A client uses the requests of its finished calls again (RequestPool): nothing of a call
    /// reaches the next one, whose method, headers, body, credentials and form are its own.
    @Test func aCallCarriesNothingOfTheCallBefore() async throws {
        let client = HttpClient(baseURL: try env.faultURL, user: "alice", password: "s3cret", auth: "basic")
        let marked = HTTPFields([HTTPField(name: try #require(HTTPField.Name("X-Once")), value: "1")])
        for round in 0..<3 {
            let first: EchoedRequest = try await client.invoke("POST", path: "echo", body: .data(Data("abc".utf8), contentType: "text/plain"),
                                                               headerFields: marked)
            #expect(first.method == "POST" && first.header("X-Once") == "1" && first.body == "abc", "round \(round)")
            #expect(first.header("Authorization") != nil, "the client's credentials on its own server")
            let plain: EchoedRequest = try await client.invoke("GET", path: "echo", arguments: [("n", .int(round))])
            #expect(plain.method == "GET" && plain.header("X-Once") == nil && plain.bodyLength == 0 && plain.header("Content-Type") == nil,
                    "round \(round): \(plain.headers)")
            #expect(plain.query == [["n", "\(round)"]])
            // An absolute URL elsewhere: the request used again carries no credentials there.
            let elsewhere = try env.faultURL.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            let other: EchoedRequest = try await client.invoke("GET", path: elsewhere + "/echo")
            #expect(other.header("Authorization") == nil, "round \(round): \(other.headers)")
        }
        let form: ReceivedForm = try await client.invoke("POST", path: "multipart", arguments: [("a", "1")], encoding: .multipart)
        #expect(form.parts.map(\.name) == ["a"])
        let after: EchoedRequest = try await client.invoke("PUT", path: "echo")
        #expect(after.method == "PUT" && after.bodyLength == 0 && after.header("Content-Type") != "multipart/form-data",
                "\(after.headers)")
    }

    /// A call's URL made from a path is on the client's origin (its credentials and token go
    /// there) until a middleware changes it; an absolute URL is compared.
    @Test func aCallsURLIsOnTheClientsOriginUntilChanged() throws {
        let client = HttpClient(baseURL: "https://api.example.com:8443/root", apiPath: "v2")
        func made(_ path: String) throws -> HttpClientRequest {
            try client.makeRequest("GET", path: path, arguments: [("a", "b")], body: nil, encoding: nil, headers: HeaderFieldList(HTTPFields()))
        }
        var request = try made("@evil.example/x")
        #expect(request.url == "https://api.example.com:8443/root/v2/@evil.example/x?a=b")
        #expect(request.isToClientOrigin)
        request.url = "https://evil.example/x"
        #expect(!request.isToClientOrigin, "a middleware's new URL is compared")
        request.url = "HTTPS://API.example.com:8443/other"
        #expect(request.isToClientOrigin)
        #expect(try !made("https://api.example.com:9443/x").isToClientOrigin, "another port")
        #expect(try made("https://api.example.com:8443/y").isToClientOrigin)
        #expect(try !made("http://api.example.com:8443/y").isToClientOrigin, "another scheme")
        var rebased = try made("x")
        rebased.clientBaseURL = "https://other.example"
        #expect(!rebased.isToClientOrigin, "a middleware's new base URL is compared")
    }

    @Test func credentialsAndConfigureReachTheRequest() async throws {
        let client = HttpClient(baseURL: try env.faultURL, user: "alice", password: "s3cret", auth: "basic") { request in
            request.disableContentDecoding()
            request.setRequestHeader("X-Configured", value: "yes")
        }
        let echo: EchoedRequest = try await client.invoke("GET", path: "echo")
        #expect(echo.header("Authorization") == "Basic " + Data("alice:s3cret".utf8).base64EncodedString())
        #expect(echo.header("X-Configured") == "yes")
        #expect(echo.header("Accept-Encoding") == nil, "disableContentDecoding() applied")
        // An absolute URL on the same server keeps the credentials; on another host it does not.
        let absolute: EchoedRequest = try await client.invoke("GET", path: try env.faultURL + "/echo")
        #expect(absolute.header("Authorization") != nil)
        let elsewhere = try env.faultURL.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/echo"
        let other: EchoedRequest = try await client.invoke("GET", path: elsewhere)
        #expect(other.header("Authorization") == nil, "the client's credentials went to another host")
        let plain: EchoedRequest = try await HttpClient(baseURL: try env.faultURL).invoke("GET", path: "echo")
        #expect(plain.header("Accept-Encoding") != nil && plain.header("Authorization") == nil)
    }
}
