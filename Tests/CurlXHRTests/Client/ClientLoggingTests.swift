#if Logging
import CurlXHR
@testable import CurlXHRClient
import Foundation
import InMemoryLogging
import Logging
import Testing

/// The `Logging` trait: each call's lines in swift-log, with its request id, its events in
/// order and its end, never a secret — against the fault server, recorded by swift-log's
/// `InMemoryLogHandler`.
@Suite(.ownThreads) struct ClientLoggingTests {
    let env: TestEnvironment
    let client: HttpClient
    init() throws { (env, client) = try faultServerClient() }

    /// `client` logging to a fresh in-memory handler at `level`.
    static func logged(_ client: HttpClient, level: Logger.Level = .debug) -> (HttpClient, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = level
        return (client.logging(to: logger), handler)
    }

    /// The entries once the one with `http.event` `done` is among them (events come on the
    /// request's callback queue, and may come after the call returned), or after 2 s without.
    static func entriesAfterDone(_ handler: InMemoryLogHandler) async throws -> [InMemoryLogHandler.Entry] {
        for _ in 0..<80 {
            if handler.entries.contains(where: { $0.metadata["http.event"] == "done" }) { return handler.entries }
            try await Task.sleep(for: .milliseconds(25))
        }
        return handler.entries
    }

    static func events(_ entries: [InMemoryLogHandler.Entry]) -> [String] {
        entries.compactMap { $0.metadata["http.event"].map { "\($0)" } }
    }

    /// Every text a line shows: its message and its metadata's values.
    static func texts(_ entries: [InMemoryLogHandler.Entry]) -> [String] {
        entries.flatMap { entry in ["\(entry.message)"] + entry.metadata.values.map { "\($0)" } }
    }

    @Test func aCallLogsItsEventsInOrderAndItsEndWithOneRequestID() async throws {
        let (client, handler) = Self.logged(client)
        let answer = try await client.invoke("GET", path: "echo", as: EchoedRequest.self)
        #expect(answer.method == "GET")
        let entries = try await Self.entriesAfterDone(handler)
        let ids = Set(entries.map { $0.metadata["http.request.id"].map { "\($0)" } ?? "none" })
        #expect(ids.count == 1)
        let id = try #require(ids.first)
        #expect(id.count == 12 && id.allSatisfy(\.isHexDigit), "\(id)")
        // The events of its send (response(), which every call uses), in order.
        let events = Self.events(entries)
        #expect(events.first == "started" && events.last == "done", "\(events)")
        let connected = try #require(events.firstIndex(of: "connected"), "\(events)")
        let sent = try #require(events.firstIndex(of: "requestSent"), "\(events)")
        #expect(connected < sent)
        let end = try #require(entries.first { $0.metadata["http.response.status_code"] != nil })
        #expect(end.level == .debug)
        #expect(end.metadata["http.response.status_code"] == "200" && end.metadata["http.request.method"] == "GET")
        #expect("\(end.message)".hasPrefix("GET \(try env.faultURL)/echo: 200 in "), "\(end.message)")
        // Another call: another id.
        try await client.invoke("GET", path: "echo")
        _ = try await Self.entriesAfterDone(handler)
        #expect(Set(handler.entries.compactMap { $0.metadata["http.request.id"].map { "\($0)" } }).count == 2)
    }

    /// A call's log watching a send that reports its events (a synchronous one): a `.debug`
    /// line for each, in order, with the call's request id, a redirect's password `REDACTED`.
    @Test func theEventsOfASendAreLoggedInOrder() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .debug
        let log = try #require(CallLog(logger, secrets: CallSecrets()))
        let http = HttpRequest()
        let target = "http://carol:redirect-pass-6a0d@127.0.0.1:1/elsewhere"
        #expect(http.open("GET", url: try env.faultURL + "/redirect/to?code=302&url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                          async: false))
        // A connection of its own: one kept from another test may be found dead, and libcurl
        // then reports it and the new one it opens instead (two `connected`).
        http.close()
        log.watch(http)
        _ = http.send(timeout: 10)  // the redirect leads to a closed port
        let entries = try await Self.entriesAfterDone(handler)
        let events = Self.events(entries)
        #expect(events.first == "started" && events.last == "done", "\(events)")
        #expect(events.starts(with: ["started", "connected", "requestSent", "redirect"]), "\(events)")
        #expect(entries.allSatisfy { $0.level == .debug && $0.metadata["http.request.id"] == log.logger[metadataKey: "http.request.id"] })
        #expect(!Self.texts(entries).contains { $0.contains("redirect-pass-6a0d") })
    }

    @Test func aStatusOtherThan2xxAndAFailedTransferAreWarnings() async throws {
        let (client, handler) = Self.logged(client, level: .info)
        _ = await clientError { try await client.invoke("GET", path: "respond", arguments: [("status", 500)]) }
        let (refused, refusedLog) = Self.logged(HttpClient(baseURL: "http://127.0.0.1:1"), level: .info)
        _ = await clientError { try await refused.invoke("GET", path: "items") }
        // At .info neither events nor a 2xx end line are logged: one warning a call.
        let status = try #require(handler.entries.only)
        #expect(status.level == .warning && status.metadata["http.response.status_code"] == "500")
        let failure = try #require(refusedLog.entries.only)
        #expect(failure.level == .warning && failure.metadata["error.type"] == "connection", "\(failure.metadata)")
        #expect("\(failure.message)".hasPrefix("GET http://127.0.0.1:1/items failed: "), "\(failure.message)")
    }

    @Test func theDefaultLoggerLogsNothing() async throws {
        #expect(HttpClient(baseURL: "http://127.0.0.1:1").logger.logLevel == .critical)
        #expect(client.logger.label == "CurlXHRClient")
    }

    @Test func noLineHoldsAPasswordATokenOrACookie() async throws {
        let secrets = ["client-pass-5e3f", "bearer-tok-8c1d", "cookie-val-77aa", "url-pass-0b9e", "query-tok-4d2c"]
        var client = client
        client.user = "alice"
        client.password = secrets[0]
        let (logged, handler) = Self.logged(client)
        let fields: HTTPFields = [.authorization: "Bearer \(secrets[1])", .cookie: "session=\(secrets[2])"]
        let echoed = try await logged.invoke("GET", path: "echo", headerFields: fields, as: EchoedRequest.self)
        #expect(echoed.header("Authorization") == "Bearer \(secrets[1])")
        _ = try await Self.entriesAfterDone(handler)
        // A password in the URL and a token in its query, a 500 and a refused connection.
        let faultHost = try env.faultURL.replacingOccurrences(of: "http://", with: "")
        _ = await clientError {
            try await logged.invoke("GET", path: "http://bob:\(secrets[3])@\(faultHost)/respond?status=500&access_token=\(secrets[4])")
        }
        _ = await clientError {
            try await logged.invoke("GET", path: "http://bob:\(secrets[3])@127.0.0.1:1/x?access_token=\(secrets[4])", headerFields: fields)
        }
        let texts = Self.texts(handler.entries)
        for secret in secrets {
            #expect(!texts.contains { $0.contains(secret) }, "\(secret) logged: \(texts.filter { $0.contains(secret) })")
        }
        #expect(texts.contains { $0.contains("http://REDACTED:REDACTED@127.0.0.1:1/x?access_token=REDACTED") }, "\(texts)")
    }

    /// An OAuth2 token is a secret of each call that sends it, whichever way it goes: set on
    /// the request by the authorizer's intercept (the first call), or sent beside it when the
    /// authorizer is the client's one middleware and has it at hand (the next): a URL that
    /// carries it is logged with `[redacted]`.
    @Test func anOAuth2TokenIsNeverLoggedWhicheverWayItIsSent() async throws {
        // A token endpoint of the fault server's (not the OAuth2 server, whose counts another
        // suite checks), with a token that lives an hour: at hand for the second call.
        let answer = #"{"access_token":"tok-5b7e9a1c","token_type":"Bearer","expires_in":3600}"#
        let authorizer = OAuth2Authorizer(OAuth2Configuration(
            tokenURL: try env.faultURL + "/respond?type=application/json&body=" + answer.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
            clientID: "logging-test", grant: .clientCredentials))
        let (client, handler) = Self.logged(HttpClient(baseURL: try env.faultURL, middlewares: [authorizer]))
        let token = try await authorizer.accessToken()
        for _ in 0..<2 {
            let echo: EchoedRequest = try await client.invoke("GET", path: "echo", arguments: [("t", .string(token))])
            #expect(echo.header("Authorization") == "Bearer \(token)")
        }
        let texts = Self.texts(try await Self.entriesAfterDone(handler))
        // Each call's end line: its message and its `url.full`.
        #expect(texts.filter { $0.contains("/echo?t=[redacted]") }.count >= 4, "\(texts)")
        #expect(!texts.contains { $0.contains(token) }, "\(texts.filter { $0.contains(token) })")
    }

    @Test func aHeaderWithCRLFIsRefusedAndItsValueNeverLogged() async throws {
        /// Sets a field HTTPFields cannot hold: the transfer refuses it.
        struct Smuggler: HttpClientMiddleware {
            func intercept(_ request: HttpClientRequest,
                           next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
                var request = request
                request.setHeader("Authorization", value: "Bearer smuggled-tok-91f2\r\nX-Injected: yes")
                return try await next(request)
            }
        }
        var client = client
        client.middlewares = [Smuggler()]
        let (logged, handler) = Self.logged(client)
        let error = await clientError { try await logged.invoke("GET", path: "echo") }
        guard case .transfer(let refused)? = error, refused.code == .invalidArgument else { Issue.record("\(String(describing: error))"); return }
        let end = try #require(handler.entries.only)
        #expect(end.level == .warning)
        #expect(!Self.texts(handler.entries).contains { $0.contains("smuggled-tok-91f2") || $0.contains("X-Injected") })
        // A CR or LF in the URL is refused by open, whose text names the URL: not its password.
        let faultHost = try env.faultURL.replacingOccurrences(of: "http://", with: "")
        _ = await clientError { try await logged.invoke("GET", path: "http://bob:crlf-pass-31c7@\(faultHost)/echo\r\nX-Injected: yes") }
        #expect(handler.entries.count == 2)
        #expect(!Self.texts(handler.entries).contains { $0.contains("crlf-pass-31c7") }, "\(Self.texts(handler.entries))")
    }
}

extension Array {
    /// The one element, or nil when there are none or more.
    var only: Element? { count == 1 ? first : nil }
}
#endif
