import CurlXHR
@testable import CurlXHRClient
import Foundation
import Testing

/// ``OAuth2Authorizer`` against django-oauth-toolkit (tokens live 2 s, refresh tokens rotate):
/// one token request for many calls, the stored token used after a restart, a revoked refresh
/// token failing every waiting call, the token file's mode and its removal at logout. One test
/// at a time: the server's counts are for the whole server.
@Suite(.serialized, .ownThreads) struct OAuth2Tests {
    let env: TestEnvironment
    let user: String
    let lifetime: Double
    init() throws {
        env = try TestEnvironment.get()
        user = try env["TESTENV_USER"]
        lifetime = Double(try env.oauth2AccessTokenSeconds)
    }

    /// What the server counted since the last reset.
    struct Stats: Decodable {
        var token_posts: Int
        var grants: [String: Int]
        var token_errors: Int
        var resource_401: Int
        var resource_200: Int
    }

    /// What the resource answers to a valid token.
    struct Me: Decodable, Sendable {
        var user: String?
        var client_id: String
        var token_suffix: String
    }

    func stats() throws -> Stats {
        let (request, body) = fetchSync("GET", try env.oauth2StatsURL)
        try #require(request.getStatus() == 200)
        return try JSONDecoder().decode(Stats.self, from: body)
    }

    func resetStats() throws {
        let (request, _) = fetchSync("POST", try env.oauth2StatsResetURL)
        try #require(request.getStatus() == 200)
    }

    /// The password client's configuration. `renewedLifetime`: a token endpoint whose refreshed
    /// tokens live that many seconds, so that calls a loaded machine spreads out still share
    /// the one renewal they are counted for.
    func passwordGrant(storage: OAuth2Configuration.Storage = .memory, renewedLifetime: Int? = nil) throws -> OAuth2Configuration {
        let tokenURL = try renewedLifetime.map { try env.oauth2URL + "/o/token-refreshed/\($0)/" } ?? env.oauth2TokenURL
        return OAuth2Configuration(tokenURL: tokenURL, clientID: try env.oauth2PasswordClientID,
                            clientSecret: try env.oauth2PasswordClientSecret,
                            grant: .password(username: try env["TESTENV_USER"], password: try env["TESTENV_PASSWORD"]),
                            storage: storage, revocationURL: try env.oauth2RevokeURL)
    }

    func client(_ authorizer: OAuth2Authorizer) throws -> HttpClient {
        HttpClient(baseURL: try env.oauth2URL, middlewares: [authorizer])
    }

    /// Rewrites a token file so that its token seems good for an hour more to a client.
    func sayTheStoredTokenExpiresInAnHour(_ path: String) throws {
        var stored = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var token = try #require(stored["token"] as? [String: Any])
        token["expires_at"] = Date().timeIntervalSince1970 + 3600
        stored["token"] = token
        try JSONSerialization.data(withJSONObject: stored).write(to: URL(fileURLWithPath: path))
    }

    /// Sleeps until a token fetched now has expired at the server.
    func waitForExpiry() {
        Thread.sleep(forTimeInterval: lifetime + 0.3)
    }

    /// Makes `count` calls at once; each one's result. With `delay`, the server holds each
    /// call that long before it checks the token.
    func concurrentCalls(_ count: Int, _ client: HttpClient, path: String = "api/me",
                         delay milliseconds: Int? = nil) async -> [Result<Me, HttpClientError>] {
        let arguments: [(String, HttpClient.Argument)] = milliseconds.map { [("delay_ms", .int($0))] } ?? []
        return await withTaskGroup(of: (Int, Result<Me, HttpClientError>).self) { group in
            for index in 0..<count {
                group.addTask {
                    do throws(HttpClientError) {
                        return (index, .success(try await client.invoke("GET", path: path, arguments: arguments, as: Me.self)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [(Int, Result<Me, HttpClientError>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    @Test func twentyConcurrentCallsAfterExpiryMakeOneTokenRequestAndAllSucceed() async throws {
        let authorizer = OAuth2Authorizer(try passwordGrant(renewedLifetime: 120))
        let client = try client(authorizer)
        // The grant alone: a first call to the resource could, on a starved machine, arrive after
        // the 2-second token expired and be renewed already.
        try resetStats()
        _ = try await authorizer.accessToken()
        let granted = try stats()
        #expect(granted.token_posts == 1 && granted.grants["password"] == 1)
        let firstToken = try #require(authorizer.currentToken)
        #expect(firstToken.refreshToken != nil && firstToken.lifetime == lifetime)

        waitForExpiry()
        try resetStats()
        let results = await concurrentCalls(20, client)
        let after = try stats()
        // One refresh for the twenty, which all sent the new token: no 401 at all.
        #expect(after.token_posts == 1 && after.grants["refresh_token"] == 1, "\(after)")
        #expect(after.resource_200 == 20 && after.resource_401 == 0, "\(after)")
        let suffixes = Set(results.compactMap { try? $0.get().token_suffix })
        #expect(results.allSatisfy { (try? $0.get().user) == user }, "\(results)")
        let renewed = try #require(authorizer.currentToken)
        #expect(suffixes == [String(renewed.accessToken.suffix(6))])
        // Rotation: the new refresh token replaced the old one.
        #expect(renewed.refreshToken != nil && renewed.refreshToken != firstToken.refreshToken)
    }

    @Test func callsTheServerRefusesRenewTheTokenOnceAndAreSentAgain() async throws {
        // A token this side still takes for valid, but the server no longer does: stored with
        // an expiry an hour away, used after the server's two seconds.
        let path = try env.scratchPath("oauth2-refused") + "/tokens.json"
        let fetcher = OAuth2Authorizer(try passwordGrant(storage: .file(path), renewedLifetime: 120))
        _ = try await fetcher.accessToken()
        waitForExpiry()
        try sayTheStoredTokenExpiresInAnHour(path)

        let authorizer = OAuth2Authorizer(try passwordGrant(storage: .file(path), renewedLifetime: 120))
        try resetStats()
        // Held by the server for 1.5 s: all twelve are sent before the first refusal comes back.
        let results = await concurrentCalls(12, try client(authorizer), delay: 1500)
        let after = try stats()
        #expect(results.allSatisfy { (try? $0.get().user) == user }, "\(results)")
        // Every call was refused once; one refresh served them all, and each was sent again.
        #expect(after.resource_401 == 12 && after.resource_200 == 12, "\(after)")
        #expect(after.token_posts == 1 && after.grants["refresh_token"] == 1, "\(after)")
    }

    /// A call refused with a Bearer challenge while the token is at hand (sent without the
    /// middleware chain, the authorizer being the client's one middleware) gets one new token
    /// and is sent once more, and no more: the fault server's `/bearer` takes only the token
    /// its query names, and says which tokens each try carried.
    @Test func aCallRefusedWithTheTokenAtHandIsSentOnceMoreWithANewToken() async throws {
        struct Attempts: Decodable { var attempts: [String?] }
        // A token this side takes for valid for an hour (the fault server checks it, not the
        // OAuth2 server): at hand for every call, however slow the machine.
        let path = try env.scratchPath("oauth2-at-hand") + "/tokens.json"
        _ = try await OAuth2Authorizer(try passwordGrant(storage: .file(path))).accessToken()
        try sayTheStoredTokenExpiresInAnHour(path)
        let authorizer = OAuth2Authorizer(try passwordGrant(storage: .file(path), renewedLifetime: 120))
        let client = HttpClient(baseURL: try env.faultURL, middlewares: [authorizer])
        let token = try await authorizer.accessToken()
        let key = "oauth2-\(UUID().uuidString)"
        // Taken: the token's field is made, and at hand for the next calls.
        let taken: Attempts = try await client.invoke("GET", path: "bearer", arguments: [("token", .string(token)), ("key", .string(key + "-taken"))])
        #expect(taken.attempts == ["Bearer \(token)"])
        var toOwnOrigin = HttpClientRequest(method: "GET", url: try env.faultURL + "/bearer")
        toOwnOrigin.clientBaseURL = try env.faultURL
        #expect(authorizer.readyField(for: toOwnOrigin) != nil, "the next calls go without the middleware chain")
        // A call's own Authorization gives way to the token's (not joined with it).
        let replaced: Attempts = try await client.invoke("GET", path: "bearer", arguments: [("token", .string(token)), ("key", .string(key + "-own"))],
                                                         headerFields: [.authorization: "Basic eDp5"])
        #expect(replaced.attempts == ["Bearer \(token)"])
        // Another origin (the same server named otherwise) gets no token, at hand as it is.
        let otherOrigin = try env.faultURL.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let elsewhere: EchoedRequest = try await client.invoke("GET", path: otherOrigin + "/echo")
        #expect(elsewhere.header("Authorization") == nil)
        let refused = await clientError {
            try await client.invoke("GET", path: "bearer", arguments: [("token", "another"), ("key", .string(key))])
        }
        guard case .status(code: 401, _)? = refused else { Issue.record("\(String(describing: refused))"); return }
        let renewed = try #require(authorizer.currentToken?.accessToken)
        #expect(renewed != token)
        let probe = HttpClient(baseURL: try env.faultURL, headerFields: [.authorization: "Bearer probe"])
        let seen: Attempts = try await probe.invoke("GET", path: "bearer", arguments: [("token", "probe"), ("key", .string(key))])
        #expect(seen.attempts == ["Bearer \(token)", "Bearer \(renewed)", "Bearer probe"])
    }

    @Test func aRestartUsesTheStoredTokenWithoutANewGrant() async throws {
        let path = try env.scratchPath("oauth2-restart") + "/tokens.json"
        try resetStats()
        let before = OAuth2Authorizer(try passwordGrant(storage: .file(path)))
        let first: Me = try await (try client(before)).invoke("GET", path: "api/me")
        #expect(try stats().grants["password"] == 1)

        // The program starts again: a new authorizer on the same file.
        let after = OAuth2Authorizer(try passwordGrant(storage: .file(path)))
        #expect(after.currentToken == before.currentToken)
        let second: Me = try await (try client(after)).invoke("GET", path: "api/me")
        #expect(second.user == user)
        let counted = try stats()
        #expect(counted.grants["password"] == 1, "no second grant: \(counted)")
        // Within the token's two seconds the stored token itself is sent (under a slow run,
        // its refresh token renews it instead: still no grant).
        if counted.token_posts == 1 { #expect(second.token_suffix == first.token_suffix) }

        // Once expired, the restarted program renews it with the stored refresh token.
        waitForExpiry()
        let third = OAuth2Authorizer(try passwordGrant(storage: .file(path)))
        let renewed: Me = try await (try client(third)).invoke("GET", path: "api/me")
        #expect(renewed.user == user && renewed.token_suffix != first.token_suffix)
        let final = try stats()
        #expect(final.grants["password"] == 1 && final.grants["refresh_token"]! >= 1, "\(final)")
    }

    @Test func twoProgramsSharingATokenFileNeverSpendEachOthersRefreshToken() async throws {
        let path = try env.scratchPath("oauth2-shared") + "/tokens.json"
        let configuration = try passwordGrant(storage: .file(path), renewedLifetime: 120)
        _ = try await OAuth2Authorizer(configuration).accessToken()
        waitForExpiry()
        // Two programs start with the same expired token and its refresh token.
        let one = OAuth2Authorizer(configuration), other = OAuth2Authorizer(configuration)
        try resetStats()
        let first: Me = try await (try client(one)).invoke("GET", path: "api/me")
        // The other's refresh token was rotated by the first: it takes the stored tokens
        // rather than send it (which the server would refuse, ending both sessions).
        let second: Me = try await (try client(other)).invoke("GET", path: "api/me")
        #expect(first.user == user && second.user == user && second.token_suffix == first.token_suffix)
        let counted = try stats()
        #expect(counted.token_posts == 1 && counted.token_errors == 0, "\(counted)")
        #expect(other.currentToken == one.currentToken)
    }

    @Test func aRevokedRefreshTokenFailsEveryWaitingCallWithTheTypedError() async throws {
        let path = try env.scratchPath("oauth2-revoked") + "/tokens.json"
        let authorizer = OAuth2Authorizer(try passwordGrant(storage: .file(path)))
        let client = try client(authorizer)
        _ = try await client.invoke("GET", path: "api/me", as: Me.self)
        let refresh = try #require(authorizer.currentToken?.refreshToken)
        // Revoked at the server (its access token with it), as an administrator would.
        let revoker = HttpClient(baseURL: try env.oauth2URL, user: try env.oauth2PasswordClientID,
                                 password: try env.oauth2PasswordClientSecret)
        _ = try await revoker.invoke("POST", path: "o/revoke_token/", arguments: [("token", .string(refresh)),
                                                                                  ("token_type_hint", "refresh_token")])
        try resetStats()
        let results = await concurrentCalls(10, client)
        for result in results {
            guard case .failure(.authorization(.rejected(let status, let error, _))) = result else {
                Issue.record("expected invalid_grant, got \(result)")
                continue
            }
            #expect(status == 400 && error == "invalid_grant")
        }
        let after = try stats()
        // One refresh, refused; no loop, and no password grant behind the callers' backs.
        #expect(after.token_posts == 1 && after.grants["refresh_token"] == 1 && after.grants["password"] == 0, "\(after)")
        // The refused refresh token is gone, from memory and from the file.
        #expect(authorizer.currentToken == nil)
        #expect(!FileManager.default.fileExists(atPath: path))

        // A new call starts again from the grant.
        let again: Me = try await client.invoke("GET", path: "api/me")
        let regranted = try stats()
        #expect(again.user == user && regranted.grants["password"] == 1)
    }

    @Test func theTokenFileIsPrivateAndLogoutRevokesAndRemovesIt() async throws {
        let path = try env.scratchPath("oauth2-logout") + "/tokens.json"
        let authorizer = OAuth2Authorizer(try passwordGrant(storage: .file(path)))
        let client = try client(authorizer)
        _ = try await client.invoke("GET", path: "api/me", as: Me.self)
        let token = try #require(authorizer.currentToken)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(token.accessToken) && text.contains(token.refreshToken!))

        try await authorizer.logout()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(authorizer.currentToken == nil)
        let afterLogout = await concurrentCalls(1, client)
        guard case .failure(.authorization(.loggedOut)) = afterLogout[0] else {
            Issue.record("a call after the logout: \(afterLogout[0])")
            return
        }
        // The revocation reached the server: the refresh token no longer refreshes.
        let endpoint = HttpClient(baseURL: try env.oauth2URL, user: try env.oauth2PasswordClientID,
                                  password: try env.oauth2PasswordClientSecret)
        let refreshed: Result<ResponseContent, HttpClientError>
        do throws(HttpClientError) {
            refreshed = .success(try await endpoint.invoke("POST", path: "o/token/", arguments: [
                ("grant_type", "refresh_token"), ("refresh_token", .string(token.refreshToken!)),
            ]))
        } catch {
            refreshed = .failure(error)
        }
        guard case .failure(.status(400, _)) = refreshed else {
            Issue.record("the refresh token after the logout: \(refreshed)")
            return
        }
    }

    @Test func clientCredentialsWithTheSecretInTheFormFields() async throws {
        let configuration = OAuth2Configuration(tokenURL: try env.oauth2TokenURL, clientID: try env.oauth2ServiceClientID,
                                                clientSecret: try env.oauth2ServiceClientSecret,
                                                clientAuthentication: .formFields, grant: .clientCredentials)
        let authorizer = OAuth2Authorizer(configuration)
        let me: Me = try await (try client(authorizer)).invoke("GET", path: "api/me")
        let serviceID = try env.oauth2ServiceClientID
        #expect(me.user == nil && me.client_id == serviceID)
        #expect(authorizer.currentToken?.refreshToken == nil)

        // The wrong secret: the endpoint's own error, typed.
        var wrong = configuration
        wrong.clientSecret = "not-the-secret"
        let refused: Result<String, OAuth2Error>
        do throws(OAuth2Error) {
            refused = .success(try await OAuth2Authorizer(wrong).accessToken())
        } catch {
            refused = .failure(error)
        }
        guard case .failure(.rejected(401, "invalid_client", _)) = refused else {
            Issue.record("a wrong secret: \(refused)")
            return
        }
    }

    @Test func theCompletionHandlerAndBlockingCallsUseTheTokenToo() async throws {
        let authorizer = OAuth2Authorizer(try passwordGrant())
        let client = try client(authorizer)
        try resetStats()
        let queue = DispatchQueue(label: "oauth2-test-completions")
        let viaHandler: Result<Me, HttpClientError> = await withCheckedContinuation { continuation in
            client.invoke("GET", path: "api/me", as: Me.self, queue: queue) { result in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(returning: result)
            }
        }
        #expect((try? viaHandler.get().user) == user)
        // From a worker thread, blocking.
        let viaThread: Result<Me, HttpClientError> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: Result { () throws(HttpClientError) in try client.invokeSync("GET", path: "api/me", as: Me.self) })
            }
        }
        #expect((try? viaThread.get().user) == user)
        // One grant for both (a starved run may renew the 2-second token in between, never grant again).
        #expect(try stats().grants["password"] == 1)
    }

    @Test func anHttpRequestOfItsOwnGetsATokenAndOneNewTokenAfterA401() async throws {
        let authorizer = OAuth2Authorizer(try passwordGrant(renewedLifetime: 120))
        let resource = try env.oauth2ResourceURL
        func status(with token: String) -> Int {
            fetchSync("GET", resource) { $0.setRequestHeader("Authorization", value: "Bearer \(token)") }.0.getStatus()
        }
        let first = try await authorizer.accessToken()
        #expect(status(with: first) == 200)
        waitForExpiry()
        #expect(status(with: first) == 401)
        try resetStats()
        // Two requests refused with the same token: one fetch, one new token for both.
        async let one = authorizer.accessToken(refusing: first)
        async let other = authorizer.accessToken(refusing: first)
        let (renewed, alsoRenewed) = try await (one, other)
        #expect(renewed == alsoRenewed && renewed != first)
        #expect(status(with: renewed) == 200)
        // The old token refused again, later: its replacement, without a fetch.
        let again = try await authorizer.accessToken(refusing: first)
        #expect(again == renewed)
        let counted = try stats()
        #expect(counted.token_posts == 1 && counted.grants["refresh_token"] == 1, "\(counted)")
    }

    @Test func fromCTheTokenIsSetOnRequestsRenewedOnceForManyThreadsAndDroppedWhenRevoked() throws {
        let c = try CAPITests()
        let program = try c.build("Tests/C/oauth2_test.c")
        let directory = try env.scratchPath("oauth2-c")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        c.expectAllPassed(try c.run(program, [try env.oauth2URL, try env.oauth2PasswordClientID, try env.oauth2PasswordClientSecret,
                                              user, try env["TESTENV_PASSWORD"], "\(lifetime)", directory]))
    }

    @Test func xhrKeepsItsTokenAcrossRunsAndSendsARefusedRequestOnceMore() throws {
        let path = try env.scratchPath("oauth2-xhr") + "/tokens.json"
        let resource = try env.oauth2ResourceURL
        let oauth = ["--oauth2-token-url", try env.oauth2TokenURL,
                     "--oauth2-client", "\(try env.oauth2PasswordClientID):\(try env.oauth2PasswordClientSecret)",
                     "--oauth2-user", "\(user):\(try env["TESTENV_PASSWORD"])", "--oauth2-token-file", path]
        func xhr(_ arguments: [String]) throws -> XHRToolTests.Run {
            try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), arguments)
        }
        try resetStats()
        let first = try xhr(["-s"] + oauth + [resource])
        #expect(first.status == 0 && first.text.contains("\"user\": \"\(user)\""), "\(first.text) \(first.stderr)")
        // The next run uses the stored tokens: no second password grant (the access token,
        // or, when the run starts after its 2 s are nearly up, the stored refresh token).
        let second = try xhr(["-s"] + oauth + [resource])
        #expect(second.status == 0)
        let afterTwo = try stats()
        #expect(afterTwo.grants["password"] == 1 && afterTwo.token_posts == 1 + (afterTwo.grants["refresh_token"] ?? 0), "\(afterTwo)")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // A token the file says is good for an hour, which the server no longer takes: the
        // 401 is dropped, and the request goes again with a renewed token.
        waitForExpiry()
        try sayTheStoredTokenExpiresInAnHour(path)
        try resetStats()
        let third = try xhr(["-s", "-i"] + oauth + [resource])
        #expect(third.status == 0 && third.text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(third.text)")
        #expect(third.text.components(separatedBy: "HTTP/1.1 ").count == 2, "one response printed: \(third.text)")
        let afterRefusal = try stats()
        #expect(afterRefusal.resource_401 == 1 && afterRefusal.resource_200 == 1 && afterRefusal.grants["refresh_token"] == 1,
                "\(afterRefusal)")

        // A token given as it is; no token to be had: exit 67 and the endpoint's reason.
        let renewed = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])?["token"]
            as? [String: Any])["access_token"] as? String
        let given = try xhr(["-s", "--oauth2-bearer", try #require(renewed), resource])
        #expect(given.status == 0 && given.text.contains("\"user\": \"\(user)\""), "\(given.text)")
        let wrongSecret = try xhr(["-sS", "--oauth2-token-url", try env.oauth2TokenURL,
                                   "--oauth2-client", "\(try env.oauth2PasswordClientID):wrong", resource])
        #expect(wrongSecret.status == 67 && wrongSecret.stderr.contains("invalid_client"), "\(wrongSecret.stderr)")
    }

    @Test func aTokenEndpointThatNeverAnswersFailsTheCallsAtItsTimeout() async throws {
        // The fault server holds this "token endpoint" for a minute.
        var configuration = try passwordGrant()
        configuration.tokenURL = try env.faultURL + "/record?delay_ms=60000"
        configuration.endpointTimeout = 1
        let results = await concurrentCalls(3, try client(OAuth2Authorizer(configuration)))
        for result in results {
            guard case .failure(.authorization(.tokenEndpoint(let reason))) = result else {
                Issue.record("expected the endpoint's timeout, got \(result)")
                continue
            }
            #expect(reason.lowercased().contains("timeout") || reason.contains("timed out"), "\(reason)")
        }
    }

    /// A token endpoint that lies, giving a token with CR and LF in it: the field is never
    /// sent (no header injected); every call fails with the reason, and again with the same
    /// token.
    @Test func aTokenWithCRLFIsNeverSentAsAField() async throws {
        var configuration = try passwordGrant()
        let token = #"{"access_token":"t1\r\nX-Injected: 1","token_type":"Bearer","expires_in":3600}"#
        configuration.tokenURL = try env.faultURL + "/respond?type=application/json&body="
            + token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let client = try client(OAuth2Authorizer(configuration))
        for _ in 0..<2 {
            let failure = await clientError { () async throws -> EchoedRequest in try await client.invoke("GET", path: "echo") }
            guard case .transfer(let error)? = failure, error.code == .invalidArgument else {
                Issue.record("\(String(describing: failure))")
                continue
            }
            #expect(error.message.contains("CR, LF or NUL"), "\(error.message)")
        }
    }

    @Test func theTokenGoesOnlyToTheClientsOrigin() async throws {
        let authorizer = OAuth2Authorizer(try passwordGrant())
        let client = try client(authorizer)
        let echoed: EchoedRequest = try await client.invoke("GET", path: try env.faultURL + "/echo")
        #expect(echoed.header("Authorization") == nil)
        // The call to another origin needed no token: none was fetched.
        #expect(authorizer.currentToken == nil)
    }
}
