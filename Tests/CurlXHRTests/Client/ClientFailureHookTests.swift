import CurlXHR
import CurlXHRClient
import Foundation
import Testing

/// Hermod's `didReceiveErrorInResponse`: ``HttpClient/onFailure`` sees every failed call once,
/// with the error its caller gets, decoding failures included, in every way of calling.
@Suite(.ownThreads) struct ClientFailureHookTests {
    let env: TestEnvironment
    let client: HttpClient
    init() throws { (env, client) = try faultServerClient() }

    struct Item: Decodable, Sendable { var id: Int; var name: String }

    /// The failures a client's hook saw, and the client.
    func watched(_ client: HttpClient) -> (HttpClient, Locked<[HttpClient.Failure]>) {
        let seen = Locked<[HttpClient.Failure]>([])
        var client = client
        client.onFailure = { failure in seen.withLock { $0.append(failure) } }
        return (client, seen)
    }

    /// The one failure `seen` holds, checked to carry `error`.
    static func only(_ seen: Locked<[HttpClient.Failure]>, is error: HttpClientError?,
                     sourceLocation: SourceLocation = #_sourceLocation) -> HttpClient.Failure? {
        let failures = seen.withLock { $0 }
        #expect(failures.count == 1, "\(failures.map(\.error))", sourceLocation: sourceLocation)
        guard let failure = failures.first, let error else { return nil }
        #expect(failure.error.description == error.description, sourceLocation: sourceLocation)
        return failure
    }

    @Test func a500ReachesTheHookOnceWithItsResponse() async throws {
        let (client, seen) = watched(client)
        let error = await clientError { () async throws(HttpClientError) -> Item in
            try await client.invoke("GET", path: "respond", arguments: [("status", 500), ("type", "text/plain"), ("body", "boom")])
        }
        guard case .status(500, .text("boom"))? = error else { Issue.record("\(String(describing: error))"); return }
        let failure = try #require(Self.only(seen, is: error))
        #expect(failure.response?.status == 500 && failure.response?.body == Data("boom".utf8))
        #expect(failure.request?.method == "GET" && failure.request?.url.hasSuffix("/respond?status=500&type=text%2Fplain&body=boom") == true)
    }

    @Test func aTransferFailureReachesTheHookOnce() async throws {
        let (client, seen) = watched(HttpClient(baseURL: "http://127.0.0.1:1"))
        let error = await clientError { try await client.invoke("GET", path: "items") }
        guard case .transfer(let failed)? = error, failed.failureKind == .connection else { Issue.record("\(String(describing: error))"); return }
        let failure = try #require(Self.only(seen, is: error))
        #expect(failure.response == nil && failure.request?.url == "http://127.0.0.1:1/items")
    }

    @Test func aBodyThatDoesNotDecodeReachesTheHookOnce() async throws {
        struct Seen: HttpClientMiddleware {
            let statuses: Locked<[Int]>
            func intercept(_ request: HttpClientRequest,
                           next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
                let response = try await next(request)
                statuses.withLock { $0.append(response.status) }
                return response
            }
        }
        let statuses = Locked<[Int]>([])
        var plain = client
        plain.middlewares = [Seen(statuses: statuses)]
        let (client, seen) = watched(plain)
        let error = await clientError { () async throws(HttpClientError) -> Item in
            try await client.invoke("GET", path: "respond", arguments: [("type", "application/json"), ("body", #"{"id": "seven"}"#)])
        }
        guard case .decoding(_, let body)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(body == Data(#"{"id": "seven"}"#.utf8))
        #expect(statuses.withLock { $0 } == [200], "the middleware saw a success")
        let failure = try #require(Self.only(seen, is: error))
        #expect(failure.response?.status == 200)
    }

    @Test func everyWayOfCallingReachesTheHookOnce() async throws {
        let (client, seen) = watched(client)
        let arguments: [(String, HttpClient.Argument)] = [("type", "application/json"), ("body", "[1, 2]")]
        let completed = await withCheckedContinuation { continuation in
            client.invoke("GET", path: "respond", arguments: arguments, queue: .global()) { (result: Result<Item, HttpClientError>) in
                continuation.resume(returning: result)
            }
        }
        guard case .failure(let completionError) = completed else { Issue.record("\(completed)"); return }
        _ = Self.only(seen, is: completionError)
        seen.withLock { $0 = [] }
        let blocking = await onWorkerThread { () throws(HttpClientError) -> Item in
            try client.invokeSync("GET", path: "respond", arguments: arguments)
        }
        guard case .failure(let syncError) = blocking else { Issue.record("\(blocking)"); return }
        _ = Self.only(seen, is: syncError)
        seen.withLock { $0 = [] }
        let encoding = await clientError { try await client.invoke("GET", path: "x", arguments: [("f", .file(path: "/etc/hostname"))]) }
        let failure = Self.only(seen, is: encoding)
        #expect(failure?.request == nil, "no request could be made")
        seen.withLock { $0 = [] }
        let _: ResponseContent = try await client.invoke("GET", path: "respond", arguments: [("status", 204)])
        #expect(seen.withLock { $0.isEmpty }, "a success is not seen")
    }
}
