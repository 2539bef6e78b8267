import CurlXHR
import CurlXHRClient
import Foundation
import Synchronization
import Testing

/// Middleware around `HttpClient`'s calls: order, headers the server sees, a retry after a
/// 401 with a refreshed token, short cuts and errors.
@Suite(.ownThreads) struct ClientMiddlewareTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Logs what it sees on the way in and out.
    struct Logging: HttpClientMiddleware {
        let name: String
        let log: Log

        func intercept(_ request: HttpClientRequest,
                       next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
            log.append("\(name)> \(request.method) \(request.header("X-Outer") ?? "-")")
            var request = request
            request.setHeader("X-\(name)", value: "seen")
            let response = try await next(request)
            log.append("<\(name) \(response.status)")
            return response
        }
    }

    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func middlewaresRunInOrderOutermostFirstAndTheServerSeesTheirHeaders() async throws {
        let log = Log()
        let client = HttpClient(baseURL: try env.faultURL, middlewares: [
            AddHeader(name: "X-Outer", value: "1"), Logging(name: "A", log: log), Logging(name: "B", log: log),
        ])
        let echo: EchoedRequest = try await client.invoke("GET", path: "echo", arguments: [("q", 1)])
        #expect(log.all == ["A> GET 1", "B> GET 1", "<B 200", "<A 200"])
        #expect(echo.header("X-Outer") == "1" && echo.header("X-A") == "seen" && echo.header("X-B") == "seen")
        #expect(echo.target == "/echo?q=1")
    }

    @Test func aMiddlewareSeesEveryStatusAndTheBody() async throws {
        let log = Log()
        let client = HttpClient(baseURL: try env.faultURL, middlewares: [Logging(name: "A", log: log)])
        let error = await clientError {
            try await client.invoke("GET", path: "respond", arguments: [("status", 404), ("type", "text/plain"), ("body", "no")])
        }
        guard case .status(404, .text("no"))? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(log.all == ["A> GET -", "<A 404"], "the 404 went through the middleware before it became an error")
    }

    /// Tokens of an OAuth-like server: the current one, and a refresh that gives the next.
    actor Tokens {
        private(set) var current: String
        private var upcoming: [String]
        private(set) var refreshes = 0

        init(_ current: String, then upcoming: [String]) {
            self.current = current
            self.upcoming = upcoming
        }

        func refresh() -> String {
            refreshes += 1
            current = upcoming.isEmpty ? current : upcoming.removeFirst()
            return current
        }
    }

    /// Sends the current token; after a 401, refreshes it and tries once more.
    struct BearerToken: HttpClientMiddleware {
        let tokens: Tokens

        func intercept(_ request: HttpClientRequest,
                       next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
            var request = request
            request.setHeader("Authorization", value: "Bearer \(await tokens.current)")
            let response = try await next(request)
            guard response.status == 401, response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true else { return response }
            request.setHeader("Authorization", value: "Bearer \(await tokens.refresh())")
            return try await next(request)
        }
    }

    struct Attempts: Decodable { var attempts: [String?] }

    @Test func aMiddlewareRetriesOnceAfterA401WithAFreshToken() async throws {
        let tokens = Tokens("stale", then: ["fresh"])
        let client = HttpClient(baseURL: try env.faultURL, middlewares: [BearerToken(tokens: tokens)])
        let key = UUID().uuidString
        let seen: Attempts = try await client.invoke("GET", path: "bearer", arguments: [("token", "fresh"), ("key", .string(key))])
        #expect(seen.attempts == ["Bearer stale", "Bearer fresh"], "the server saw both requests")
        #expect(await tokens.refreshes == 1)
        // The fresh token stays: the next call needs no retry.
        let again: Attempts = try await client.invoke("GET", path: "bearer", arguments: [("token", "fresh"), ("key", .string(key))])
        #expect(again.attempts == ["Bearer stale", "Bearer fresh", "Bearer fresh"])
        #expect(await tokens.refreshes == 1)
    }

    @Test func aRefreshThatDoesNotHelpEndsInThe401() async throws {
        let tokens = Tokens("stale", then: ["still-wrong", "right"])
        let client = HttpClient(baseURL: try env.faultURL, middlewares: [BearerToken(tokens: tokens)])
        let key = UUID().uuidString
        let error = await clientError {
            try await client.invoke("GET", path: "bearer", arguments: [("token", "right"), ("key", .string(key))])
        }
        guard case .status(401, .json(let body))? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(body == ["error": "invalid_token"])
        #expect(await tokens.refreshes == 1, "one retry, not more")
        // The server saw exactly two attempts before this one.
        let seen: Attempts = try await HttpClient(baseURL: try env.faultURL)
            .invoke("GET", path: "bearer", arguments: [("token", "right"), ("key", .string(key))], headerFields: [.authorization: "Bearer right"])
        #expect(seen.attempts == ["Bearer stale", "Bearer still-wrong", "Bearer right"])
    }

    /// Answers from memory without a transfer.
    struct Canned: HttpClientMiddleware {
        func intercept(_ request: HttpClientRequest,
                       next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
            guard request.url.hasSuffix("/canned") else { return try await next(request) }
            return HttpClientResponse(status: 200, headerFields: [.contentType: "application/json"], body: Data(#"{"id": 1}"#.utf8))
        }
    }

    struct Failing: HttpClientMiddleware {
        struct Refused: Error {}
        func intercept(_ request: HttpClientRequest,
                       next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
            throw Refused()
        }
    }

    @Test func aMiddlewareMayAnswerItselfOrFail() async throws {
        let client = HttpClient(baseURL: "http://127.0.0.1:1", middlewares: [Canned()])
        #expect(try await client.invoke("GET", path: "canned") == .json(["id": 1]), "no connection was tried")
        let failing = HttpClient(baseURL: try env.faultURL, middlewares: [Failing()])
        let error = await clientError { try await failing.invoke("GET", path: "echo") }
        guard case .middleware(let underlying)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(underlying is Failing.Refused)
    }

    @Test func aMiddlewareSeesTheEncodedRequest() async throws {
        struct Inspect: HttpClientMiddleware {
            let record: @Sendable (HttpClientRequest) -> Void
            func intercept(_ request: HttpClientRequest,
                           next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
                record(request)
                return try await next(request)
            }
        }
        let log = Log()
        let client = HttpClient(baseURL: try env.faultURL, headerFields: [try #require(HTTPField.Name("X-Default")): "d"], middlewares: [Inspect { request in
            guard case .data(let body) = request.body else { log.append("no data"); return }
            log.append("\(request.method) \(request.url) \(request.header("Content-Type") ?? "-") \(request.header("x-default") ?? "-") \(String(decoding: body, as: UTF8.self))")
        }])
        let _: EchoedRequest = try await client.invoke("post", path: "echo", arguments: [("a", "x y")])
        #expect(log.all == ["POST \(try env.faultURL)/echo application/x-www-form-urlencoded d a=x+y"])
    }
}
