import CurlXHR
import CurlXHRClient
import Foundation
import Testing

/// Responses decoded by their `Content-Type`, and the typed errors: statuses with their
/// decoded bodies, failed transfers, bodies that do not decode.
@Suite(.ownThreads) struct ClientDecodingTests {
    let env: TestEnvironment
    let client: HttpClient
    init() throws {
        env = try TestEnvironment.get()
        client = HttpClient(baseURL: try env.faultURL)
    }

    /// The fault server's `/respond`: `status` with `type` and `body`.
    static func answer(_ status: Int = 200, type: String?, body: String = "") -> [(String, HttpClient.Argument)] {
        [("status", .int(status)), ("body", .string(body))] + (type.map { [("type", .string($0))] } ?? [])
    }

    struct Item: Decodable, Sendable, Equatable {
        var id: Int
        var name: String
        var tags: [String]
    }

    static let itemJSON = #"{"id": 7, "name": "Zoë", "tags": ["a", "b"]}"#

    @Test(arguments: ["application/json", "application/json; charset=utf-8", "application/vnd.item+json", "APPLICATION/JSON"])
    func jsonDecodesIntoDecodableTypes(type: String) async throws {
        let item: Item = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: type, body: Self.itemJSON))
        #expect(item == Item(id: 7, name: "Zoë", tags: ["a", "b"]))
        let optional: Item? = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: type, body: Self.itemJSON))
        #expect(optional == item)
        let content = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: type, body: Self.itemJSON))
        #expect(content == .json(["id": 7, "name": "Zoë", "tags": ["a", "b"]]))
        let null: Item? = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: type, body: "null"))
        #expect(null == nil)
        let value: JSONValue = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: type, body: Self.itemJSON))
        #expect(value["tags"]?[1]?.stringValue == "b" && value["id"]?.intValue == 7)
    }

    @Test func theClientsDecoderDecodesJSON() async throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let client = HttpClient(baseURL: try env.faultURL, decoder: decoder)
        struct Person: Decodable, Equatable { var firstName: String }
        let person: Person = try await client.invoke("GET", path: "respond",
                                                     arguments: Self.answer(type: "application/json", body: #"{"first_name": "Ada"}"#))
        #expect(person == Person(firstName: "Ada"))
    }

    @Test func textIsAStringInItsCharset() async throws {
        let utf8: String = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "text/plain", body: "Zoë ✓"))
        #expect(utf8 == "Zoë ✓")
        // The server encodes the body in ISO-8859-1: "Zoë" is 3 bytes.
        let latin1 = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "text/html; charset=ISO-8859-1", body: "Zoë"))
        #expect(latin1 == .text("Zoë"))
        let csv = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "text/csv", body: "a,b\n1,2\n"))
        #expect(csv == .text("a,b\n1,2\n"))
        let optional: String? = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "text/plain", body: "maybe"))
        #expect(optional == "maybe")
        // Any body as a String, JSON's too.
        let json: String = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "application/json", body: "[1]"))
        #expect(json == "[1]")
    }

    @Test func otherTypesAreData() async throws {
        let content = try await client.invoke("GET", path: "bytes", arguments: [("n", 100_000)])
        #expect(content == .data(Pattern.bytes(100_000)))
        let data: Data = try await client.invoke("GET", path: "bytes", arguments: [("n", 5000)])
        #expect(data == Pattern.bytes(5000))
        let optional: Data? = try await client.invoke("GET", path: "bytes", arguments: [("n", 10)])
        #expect(optional == Pattern.bytes(10))
        let untyped = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: nil, body: "raw"))
        #expect(untyped == .data(Data("raw".utf8)), "no Content-Type: data")
        let image = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "image/png", body: "png"))
        #expect(image == .data(Data("png".utf8)))
    }

    @Test func noContentIsEmpty() async throws {
        let noContent = Self.answer(204, type: "application/json", body: Self.itemJSON)
        #expect(try await client.invoke("DELETE", path: "respond", arguments: noContent) == .empty)
        let optional: Item? = try await client.invoke("DELETE", path: "respond", arguments: noContent)
        #expect(optional == nil)
        let empty: HttpClient.Empty = try await client.invoke("DELETE", path: "respond", arguments: noContent)
        #expect(empty == HttpClient.Empty())
        let text: String = try await client.invoke("DELETE", path: "respond", arguments: noContent)
        #expect(text == "")
        // HEAD: a head, no body.
        #expect(try await client.invoke("HEAD", path: "respond", arguments: Self.answer(type: "application/json", body: "{}")) == .empty)
        // Empty ignores a body it is given, too.
        let ignored: HttpClient.Empty = try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "text/plain", body: "x"))
        #expect(ignored == HttpClient.Empty())
        // A type that cannot be empty cannot decode an empty body.
        let error = await clientError { () async throws(HttpClientError) -> Item in
            try await client.invoke("DELETE", path: "respond", arguments: noContent)
        }
        guard case .decoding(_, let body)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(body.isEmpty)
    }

    @Test func errorStatusesCarryTheirDecodedBody() async throws {
        let notFound = await clientError {
            try await client.invoke("GET", path: "respond",
                                    arguments: Self.answer(404, type: "application/json", body: #"{"error": "no such item", "id": 7}"#))
        }
        guard case .status(let code, let body)? = notFound else { Issue.record("\(String(describing: notFound))"); return }
        #expect(code == 404 && body == .json(["error": "no such item", "id": 7]))
        #expect("\(notFound!)".contains("404"))

        let invalid = await clientError { () async throws(HttpClientError) -> Item in
            try await client.invoke("GET", path: "respond", arguments: Self.answer(
                422, type: "application/problem+json", body: #"{"title": "invalid", "errors": [{"field": "name"}]}"#))
        }
        guard case .status(422, .json(let problem))? = invalid else { Issue.record("\(String(describing: invalid))"); return }
        #expect(problem["errors"]?[0]?["field"] == "name")

        let failing = await clientError {
            try await client.invoke("GET", path: "respond", arguments: Self.answer(500, type: "text/plain", body: "boom"))
        }
        guard case .status(500, .text("boom"))? = failing else { Issue.record("\(String(describing: failing))"); return }

        // A JSON error body that is not JSON stays as it came.
        let broken = await clientError {
            try await client.invoke("GET", path: "respond", arguments: Self.answer(503, type: "application/json", body: "<html>"))
        }
        guard case .status(503, .data(Data("<html>".utf8)))? = broken else { Issue.record("\(String(describing: broken))"); return }
    }

    @Test func aRefusedConnectionIsATransferError() async throws {
        let client = HttpClient(baseURL: "http://127.0.0.1:1")
        let error = await clientError { try await client.invoke("GET", path: "items") }
        guard case .transfer(let failure)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.code == .transferFailed && failure.failureKind == .connection, "\(failure)")
    }

    @Test func aRequestHttpRequestRefusesIsATransferError() async throws {
        let error = await clientError { try await HttpClient(baseURL: "ftp://127.0.0.1").invoke("GET", path: "x") }
        guard case .transfer(let refusal)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(refusal.code == .invalidArgument, "\(refusal)")
        // A field set as text that would split the request, or whose name is no token, is
        // refused with HttpRequest's reason: the call fails before anything is sent.
        struct SetsHeader: HttpClientMiddleware {
            let name: String, value: String
            func intercept(_ request: HttpClientRequest,
                           next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
                var request = request
                request.setHeader(name, value: value)
                return try await next(request)
            }
        }
        for (name, value) in [("X-Bad", "a\r\nInjected: yes"), ("X-Bad", "a\0b"), ("Bad Name", "x"), ("", "x")] {
            var refusing = client
            refusing.middlewares = [SetsHeader(name: name, value: value)]
            let badHeader = await clientError { try await refusing.invoke("GET", path: "echo") }
            guard case .transfer(let headerRefusal)? = badHeader else { Issue.record("\(name.debugDescription): \(String(describing: badHeader))"); continue }
            #expect(headerRefusal.code == .invalidArgument, "\(name.debugDescription): \(headerRefusal)")
        }
        // HTTPFields cannot hold CR, LF or NUL: it makes them spaces, so nothing is injected.
        let legalized: EchoedRequest = try await client.invoke("GET", path: "echo",
                                                               headerFields: [try #require(HTTPField.Name("X-Bad")): "a\r\nInjected: yes"])
        #expect(legalized.headers(named: "X-Bad") == ["a  Injected: yes"])
        #expect(legalized.headers(named: "Injected").isEmpty)
    }

    @Test func malformedJSONIsADecodingErrorWithTheBody() async throws {
        let malformed = #"{"id": 7, "name": "#
        let typed = await clientError { () async throws(HttpClientError) -> Item in
            try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "application/json", body: malformed))
        }
        guard case .decoding(let underlying, let body)? = typed else { Issue.record("\(String(describing: typed))"); return }
        #expect(underlying is DecodingError && body == Data(malformed.utf8))
        let untyped = await clientError {
            try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "application/json", body: malformed))
        }
        guard case .decoding(_, Data(malformed.utf8))? = untyped else { Issue.record("\(String(describing: untyped))"); return }
        // Well-formed JSON of another shape.
        let mismatch = await clientError { () async throws(HttpClientError) -> Item in
            try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "application/json", body: #"{"id": "seven"}"#))
        }
        guard case .decoding(let typeMismatch, _)? = mismatch else { Issue.record("\(String(describing: mismatch))"); return }
        #expect(typeMismatch is DecodingError)
        // HTML is not decoded as JSON, nor invalid UTF-8 as text.
        let html = await clientError { () async throws(HttpClientError) -> Item in
            try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "text/html", body: "<p>"))
        }
        guard case .decoding? = html else { Issue.record("\(String(describing: html))"); return }
        // Bytes that are not UTF-8 (ISO-8859-1's "ë") in a body whose type says UTF-8.
        let notUTF8 = await clientError { () async throws(HttpClientError) -> String in
            try await client.invoke("GET", path: "respond", arguments: Self.answer(type: "text/plain", body: "Zoë") + [("encoding", "latin-1")])
        }
        guard case .decoding(_, let bytes)? = notUTF8 else { Issue.record("\(String(describing: notUTF8))"); return }
        #expect(bytes == Data([0x5A, 0x6F, 0xEB]))
    }

    @Test func aBodyBeyondTheLimitFailsTheCall() async throws {
        var client = client
        client.maxResponseSize = 1000
        let error = await clientError { try await client.invoke("GET", path: "bytes", arguments: [("n", 5000)]) }
        guard case .transfer(let failure)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.code == .tooLarge)
    }
}
