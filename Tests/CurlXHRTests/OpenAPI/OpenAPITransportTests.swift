import CurlXHR
import CurlXHROpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The client generated from `Tests/OpenAPI/openapi.yaml` (in `Generated/`) running on
/// ``CurlXHRTransport``: against the fault server directly, and through squid with NTLM proxy
/// authentication.
@Suite(.ownThreads) struct OpenAPITransportTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    var proxyUser: String { get throws { try env["TESTENV_PROXY_USER"] } }
    var proxyPassword: String { get throws { try env["TESTENV_PROXY_PASSWORD"] } }

    /// A generated client over a CurlXHR transport for the fault server.
    func client(_ configuration: CurlXHRTransport.Configuration = .init(), serverURL: String? = nil) throws -> Client {
        let url = try #require(URL(string: try serverURL ?? env.faultURL))
        var configuration = configuration
        if configuration.timeouts == .init() { configuration.timeouts = .init(total: 20) }
        return Client(serverURL: url, transport: CurlXHRTransport(configuration: configuration))
    }

    /// The transport through squid's NTLM port, as `user` with `password`.
    func ntlmProxy(password: String? = nil) throws -> CurlXHRTransport.Configuration {
        let port = try #require(Int(try env["TESTENV_PROXY_NTLM_PORT"]))
        return .init(proxy: .init(host: "127.0.0.1", port: port,
                                  credentials: .init(user: try proxyUser, password: try password ?? proxyPassword, scheme: .ntlm)))
    }

    /// The first value of the header `name` the server received (case-insensitive).
    func header(_ name: String, in echo: Components.Schemas.EchoedRequest) -> String? {
        echo.headers.first { $0.first?.lowercased() == name.lowercased() }.flatMap { $0.count > 1 ? $0[1] : nil }
    }

    func getItem(_ client: Client, id: String, tag: String?) async throws -> Components.Schemas.EchoedRequest {
        let output = try await client.getItem(path: .init(itemId: id), query: .init(tag: tag))
        return try output.ok.body.json
    }

    func createThing(_ client: Client, _ thing: Components.Schemas.Thing) async throws -> Components.Schemas.EchoedRequest {
        try await client.createThing(body: .json(thing)).ok.body.json
    }

    // MARK: Directly

    @Test func getWithAPathParameterDecodesTheJSONResponse() async throws {
        let echo = try await getItem(try client(), id: "item 42", tag: "a&b")
        #expect(echo.method == "GET")
        #expect(echo.path == "/echo/items/item%2042")
        #expect(echo.query == [["tag", "a&b"]])
        #expect(header("Accept", in: echo) == "application/json")
        #expect(header("Proxy-Authorization", in: echo) == nil)
        #expect(header("X-Squid-User", in: echo) == nil, "no proxy was configured")
    }

    @Test func postSendsTheJSONBodyAndDecodesItsEcho() async throws {
        let thing = Components.Schemas.Thing(name: "widget ü", count: 3, tags: ["x", "y"])
        let echo = try await createThing(try client(), thing)
        #expect(echo.method == "POST")
        #expect(echo.path == "/echo/things")
        #expect(header("Content-Type", in: echo)?.hasPrefix("application/json") == true)
        #expect(echo.bodyLength == echo.body.utf8.count)
        #expect(try JSONDecoder().decode(Components.Schemas.Thing.self, from: Data(echo.body.utf8)) == thing)
    }

    @Test func statusesMapToTheDocumentedOutputs() async throws {
        let client = try client()
        let found = try await client.respond(query: .init(status: 200, _type: "application/json", body: #"{"message":"here"}"#))
        #expect(try found.ok.body.json.message == "here")

        let missing = try await client.respond(query: .init(status: 404, _type: "application/json", body: #"{"message":"no such thing"}"#))
        guard case .notFound(let notFound) = missing else {
            Issue.record("404 gave \(missing)")
            return
        }
        #expect(try notFound.body.json.message == "no such thing")

        let unavailable = try await client.respond(query: .init(status: 503, _type: "text/plain", body: "try later"))
        guard case .undocumented(statusCode: let status, let payload) = unavailable else {
            Issue.record("503 gave \(unavailable)")
            return
        }
        #expect(status == 503)
        let text = try await String(collecting: try #require(payload.body), upTo: 1024)
        #expect(text == "try later")
    }

    @Test func theConfigureHookSeesEveryRequest() async throws {
        let echo = try await getItem(try client(.init(configure: { request in
            request.setRequestHeader("X-From-Hook", value: "yes")
        })), id: "1", tag: nil)
        #expect(header("X-From-Hook", in: echo) == "yes")
        #expect(echo.query == [])
    }

    @Test func aTransferFailureIsTheCauseOfTheClientError() async throws {
        // A port nothing listens on: connection refused.
        let client = try client(serverURL: "http://127.0.0.1:1")
        do {
            _ = try await client.getItem(path: .init(itemId: "1"))
            Issue.record("a request to a closed port succeeded")
        } catch let error as ClientError {
            let cause = try #require(error.underlyingError as? HttpRequestError, "\(error)")
            #expect(cause.code == .transferFailed)
            #expect(cause.failureKind == .connection, "\(cause)")
            #expect(error.operationID == "getItem")
        }
    }

    @Test func aRequestBodyOverTheLimitIsRefused() async throws {
        let client = try client(.init(requestBodyLimit: 16))
        do {
            _ = try await client.createThing(body: .json(.init(name: String(repeating: "x", count: 100), count: 1)))
            Issue.record("a body over the limit was sent")
        } catch let error as ClientError {
            #expect(!(error.underlyingError is HttpRequestError), "\(error)")
            #expect("\(error.underlyingError)".contains("16"), "\(error.underlyingError)")
        }
        // Within the limit the same transport setup sends it.
        let echo = try await createThing(try self.client(.init(requestBodyLimit: 1024)), .init(name: "small", count: 1))
        #expect(echo.bodyLength > 0)
    }

    /// The transport itself: the response body streams with the length the head announces;
    /// HEAD has none.
    @Test func theResponseBodyHasItsAnnouncedLength() async throws {
        let transport = CurlXHRTransport(configuration: .init(timeouts: .init(total: 20)))
        let base = try #require(URL(string: try env.faultURL))
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/respond?status=201&type=text/plain&body=hello")
        let (response, body) = try await transport.send(request, body: nil, baseURL: base, operationID: "raw")
        #expect(response.status.code == 201)
        #expect(response.headerFields[.contentType] == "text/plain")
        let received = try #require(body)
        #expect(received.length == .known(5))
        #expect(try await String(collecting: received, upTo: 100) == "hello")

        let head = HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/echo/x")
        let (headResponse, headBody) = try await transport.send(head, body: nil, baseURL: base, operationID: "raw")
        #expect(headResponse.status == .ok)
        #expect(headBody == nil)
    }

    /// The caller's fields go as `setRequestHeader` sends them (a repeated name joined by
    /// ", "); a `Content-Length` or `Transfer-Encoding` of the caller's is left out and the
    /// body's own length sent.
    @Test func theCallersFieldsGoAndTheBodysLengthIsTheLibrarys() async throws {
        let transport = CurlXHRTransport(configuration: .init(timeouts: .init(total: 20)))
        let base = try #require(URL(string: try env.faultURL))
        let tag = try #require(HTTPField.Name("X-Tag"))
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo/fields",
                                  headerFields: [tag: "a", tag: "b", .contentLength: "999", .transferEncoding: "chunked",
                                                 .contentType: "text/plain"])
        let (response, body) = try await transport.send(request, body: HTTPBody("hello"), baseURL: base, operationID: "raw")
        #expect(response.status == .ok)
        let received = try #require(body)
        let echo = try JSONDecoder().decode(Components.Schemas.EchoedRequest.self, from: try await Data(collecting: received, upTo: 1 << 20))
        #expect(echo.bodyLength == 5 && header("Content-Length", in: echo) == "5", "\(echo.headers)")
        #expect(header("Transfer-Encoding", in: echo) == nil)
        #expect(header("X-Tag", in: echo) == "a, b", "\(echo.headers)")
    }

    // MARK: Through squid with NTLM proxy authentication

    @Test func callsSucceedThroughTheNTLMProxy() async throws {
        let client = try client(try ntlmProxy())
        let marker = UUID().uuidString
        let echo = try await getItem(client, id: "via-proxy", tag: marker)
        #expect(echo.path == "/echo/items/via-proxy")
        #expect(echo.query == [["tag", marker]])
        // squid forwarded it (Via) for the user it authenticated with NTLM (X-Squid-User),
        // and kept the proxy credentials to itself.
        #expect(header("Via", in: echo)?.contains("squid") == true, "\(echo.headers)")
        #expect(header("X-Squid-User", in: echo)?.contains(try proxyUser) == true, "\(echo.headers)")
        #expect(header("Proxy-Authorization", in: echo) == nil)

        let thing = Components.Schemas.Thing(name: "through squid", count: 7, tags: [marker])
        let posted = try await createThing(client, thing)
        #expect(try JSONDecoder().decode(Components.Schemas.Thing.self, from: Data(posted.body.utf8)) == thing)
        #expect(header("X-Squid-User", in: posted)?.contains(try proxyUser) == true, "\(posted.headers)")

        let missing = try await client.respond(query: .init(status: 404, _type: "application/json", body: #"{"message":"gone"}"#))
        #expect(try missing.notFound.body.json.message == "gone")
    }

    @Test func theProxyRefusesAWrongPasswordAndNoCredentials() async throws {
        let wrong = try await client(try ntlmProxy(password: "wrong-password")).getItem(path: .init(itemId: "1"))
        guard case .undocumented(statusCode: let status, _) = wrong else {
            Issue.record("a wrong proxy password gave \(wrong)")
            return
        }
        #expect(status == 407)

        var anonymous = try ntlmProxy()
        anonymous.proxy?.credentials = nil
        let none = try await client(anonymous).getItem(path: .init(itemId: "1"))
        guard case .undocumented(statusCode: let noneStatus, _) = none else {
            Issue.record("no proxy credentials gave \(none)")
            return
        }
        #expect(noneStatus == 407)
    }
}
