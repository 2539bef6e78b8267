import CurlXHR
import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hermod's OAuth2 request executor as a middleware: it gets tokens from the token endpoint,
/// sends one with every call of the client, renews it ahead of its expiry and once when the
/// server refuses it, and keeps it across runs.
///
/// ```swift
/// let oauth = OAuth2Authorizer(OAuth2Configuration(
///     tokenURL: "https://auth.example.com/o/token/", clientID: "reports", clientSecret: secret,
///     grant: .password(username: "alice", password: password), storage: .file(tokenPath)))
/// let client = HttpClient(baseURL: "https://api.example.com", middlewares: [oauth])
/// let me: Profile = try await client.invoke("GET", path: "me")
/// ```
///
/// Each call gets `Authorization: Bearer <token>` when it goes to the client's own origin
/// (``HttpClientRequest/clientBaseURL``): never to another host. A token within
/// ``OAuth2Configuration/refreshLeeway`` of its expiry is renewed before it is sent; a 401 with
/// a `Bearer` challenge renews it and sends the call once more with the new token (a second
/// 401 is the caller's answer). However many calls need a new token at once, one request goes
/// to the token endpoint (with the refresh token if there is one, else the grant) and the
/// others wait for it; when it fails (the refresh token was revoked, `invalid_grant`) every
/// waiting call fails with that ``OAuth2Error`` — through the client,
/// ``HttpClientError/authorization(_:)`` — and the refused refresh token is forgotten, never
/// sent again. Rotated refresh tokens replace the old ones at once.
///
/// The same authorizer serves any number of clients and calls, from the `async`, completion
/// handler and blocking APIs alike.
public final class OAuth2Authorizer: HttpClientMiddleware, Sendable {
    /// The configuration it was made with.
    public let configuration: OAuth2Configuration
    private let endpoint: HttpClient
    private let file: TokenFile?
    private let state: Locked<State>
    /// Held across a change of the token and the write of the file, so the file follows the
    /// changes in their order (a token fetched as a logout runs never reaches the disk).
    private let storeLock = Locked(())

    private struct State {
        var schedule: TokenSchedule
        var nextWaiter = 0
        /// Waiting calls, by waiter.
        var continuations: [Int: CheckedContinuation<TokenSchedule.Outcome, Never>] = [:]
        /// Outcomes that came before their call started to wait.
        var early: [Int: TokenSchedule.Outcome] = [:]
        /// `Bearer <token>` of a generation, made once for all its calls.
        var header: (generation: Int, entry: HeaderFieldList.Entry)?
    }

    /// An authorizer for `configuration`; with ``OAuth2Configuration/Storage/file(_:)``, the
    /// token kept there (for the same token endpoint and client ID) is used first.
    ///
    /// - Parameters:
    ///   - configuration: the token endpoint, client, grant and storage.
    ///   - configure: sets up each `HttpRequest` to the token and revocation endpoints (a CA
    ///     file, a proxy…), as ``HttpClient/configure`` does for calls; it runs after
    ///     ``OAuth2Configuration/endpointTimeout`` is applied, so its own timeouts win.
    public init(_ configuration: OAuth2Configuration, configure: (@Sendable (HttpRequest) -> Void)? = nil) {
        self.configuration = configuration
        let timeout = configuration.endpointTimeout
        endpoint = HttpClient(baseURL: configuration.tokenURL) { request in
            if timeout > 0 { request.setTimeouts(total: timeout) }
            configure?(request)
        }
        if case .file(let path) = configuration.storage {
            file = TokenFile(path: path, tokenURL: configuration.tokenURL, clientID: configuration.clientID)
        } else {
            file = nil
        }
        let leeway = configuration.refreshLeeway
        let seconds = Double(leeway.components.seconds) + Double(leeway.components.attoseconds) / 1e18
        state = Locked(State(schedule: TokenSchedule(stored: file?.load(), grant: configuration.grant, leeway: seconds)))
    }

    /// The token kept now, if any (it may be due for renewal).
    public var currentToken: OAuth2Token? {
        state.withLock { $0.schedule.isLoggedOut ? nil : $0.schedule.token.flatMap { $0.accessToken.isEmpty ? nil : $0 } }
    }

    /// A valid access token, fetched or renewed first if need be: for requests made without an
    /// ``HttpClient``, such as an `HttpRequest` of its own.
    public func accessToken() async throws(OAuth2Error) -> String {
        try await token(refusing: nil).token.accessToken
    }

    /// A new access token after the server refused `refused` (a 401 with a `Bearer`
    /// challenge): the refused token is not given again. Callers refusing the same token at
    /// once share one request to the token endpoint; a token that was already replaced gives
    /// its replacement at once.
    ///
    /// ```swift
    /// var token = try await oauth.accessToken()
    /// var response = try await request(with: token)
    /// if response.status == 401 {
    ///     token = try await oauth.accessToken(refusing: token)
    ///     response = try await request(with: token)
    /// }
    /// ```
    public func accessToken(refusing refused: String) async throws(OAuth2Error) -> String {
        let generation = state.withLock { state -> Int in
            // A token that is not the one kept was replaced already: any older generation.
            state.schedule.token?.accessToken == refused ? state.schedule.generation : -1
        }
        return try await token(refusing: generation).token.accessToken
    }

    /// Ends the session: the refresh token (else the access token) is revoked at
    /// ``OAuth2Configuration/revocationURL`` when there is one, the tokens are forgotten and
    /// the token file removed; calls waiting for a token and every later call fail with
    /// ``OAuth2Error/loggedOut``. Throws when the revocation failed — the tokens are gone from
    /// here all the same.
    public func logout() async throws(OAuth2Error) {
        let (woken, kept) = storeLock.withLock { _ in
            let ended = state.withLock { $0.schedule.logout() }
            file?.save(nil)
            return ended
        }
        resume(woken)
        if let url = configuration.revocationURL, let kept, !kept.accessToken.isEmpty || kept.refreshToken != nil {
            var form: [UInt8] = []
            if let refresh = kept.refreshToken {
                FormEncoding.append("token", value: refresh, to: &form)
                FormEncoding.append("token_type_hint", value: "refresh_token", to: &form)
            } else {
                FormEncoding.append("token", value: kept.accessToken, to: &form)
                FormEncoding.append("token_type_hint", value: "access_token", to: &form)
            }
            let response = try await post(form, to: url)
            guard response.status == 200 else { throw Self.failure(of: response) }
        }
    }

    /// Sends `request` with the token when it goes to the client's own origin (else as it is),
    /// and once more with a new token when the server answers 401 with a Bearer challenge.
    public func intercept(_ request: HttpClientRequest,
                          next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
        guard request.isToClientOrigin else { return try await next(request) }
        var request = request
        // A token at hand whose field was made already: no wait, no suspension point.
        let first: (entry: HeaderFieldList.Entry, generation: Int)
        if let ready = readyHeader() {
            first = ready
        } else {
            let token = try await token(refusing: nil)
            first = (header(for: token), token.generation)
        }
        request.setField(first.entry)
        return try await answer(try await next(request), to: request, sentWith: first.generation, next: next)
    }

    /// The token's field and generation when a call to the client's origin can have it now,
    /// without waiting, as a field `HTTPFields` holds: the client's pipeline then sends the
    /// call itself, without the frames of ``intercept(_:next:)`` (nil: it calls `intercept`).
    func readyField(for request: HttpClientRequest) -> (entry: HeaderFieldList.Entry, generation: Int)? {
        guard request.isToClientOrigin, let ready = readyHeader(), !ready.entry.fields.isEmpty else { return nil }
        return ready
    }

    /// `response` to `request`, sent with the token of `generation`: itself, or, after a 401
    /// with a Bearer challenge, the response to the request sent once more with a new token.
    func answer(_ response: HttpClientResponse, to request: HttpClientRequest, sentWith generation: Int,
                next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
        guard response.status == 401, Self.challengesBearer(response) else { return response }
        var request = request
        request.setField(header(for: try await token(refusing: generation)))
        return try await next(request)
    }

    /// `Authorization: Bearer <token>`, checked once and kept for the token's generation.
    private func header(for token: (token: OAuth2Token, generation: Int)) -> HeaderFieldList.Entry {
        state.withLock { state in
            if let header = state.header, header.generation == token.generation { return header.entry }
            let entry = HeaderFieldList.Entry(.authorization, "Bearer " + token.token.accessToken)
            state.header = (token.generation, entry)
            return entry
        }
    }

    /// Whether a response's `WWW-Authenticate` fields hold a `Bearer` challenge.
    static func challengesBearer(_ response: HttpClientResponse) -> Bool {
        response.headerFields[values: .wwwAuthenticate].contains { challengesBearer($0) }
    }

    /// Whether a `WWW-Authenticate` value holds a `Bearer` challenge: with a 401, the server
    /// refuses the token it was sent (then ask ``accessToken(refusing:)`` for a new one).
    public static func challengesBearer(_ wwwAuthenticate: String) -> Bool {
        wwwAuthenticate.split(separator: ",").contains { $0.trimmingPrefix(" ").lowercased().hasPrefix("bearer") }
    }

    // MARK: Waiting for a token

    /// A token to send, and its generation (for ``TokenSchedule/refused(_:by:now:)``).
    private func token(refusing refused: Int?) async throws(OAuth2Error) -> (token: OAuth2Token, generation: Int) {
        let (waiter, decision) = decide(refusing: refused)
        if case .send(let token, let generation) = decision { return (token, generation) }
        return try await wait(waiter, decision)
    }

    /// The schedule's decision for a call that needs a token (after a refusal of the
    /// generation `refused`), with the call's waiter number.
    private func decide(refusing refused: Int?) -> (TokenSchedule.Waiter, TokenSchedule.Decision) {
        let now = Date().timeIntervalSince1970
        return state.withLock { state in
            state.nextWaiter += 1
            let waiter = state.nextWaiter
            let decision = refused.map { state.schedule.refused($0, by: waiter, now: now) }
                ?? state.schedule.tokenNeeded(by: waiter, now: now)
            return (waiter, decision)
        }
    }

    /// The `Authorization` field and generation of the token a call sends now without
    /// waiting, when that field was made already (by ``header(for:)``).
    private func readyHeader() -> (entry: HeaderFieldList.Entry, generation: Int)? {
        let now = Date().timeIntervalSince1970
        return state.withLock { state in
            guard let generation = state.schedule.readyGeneration(now: now), let header = state.header,
                  header.generation == generation else { return nil }
            return (header.entry, generation)
        }
    }

    /// Carries out `decision` for `waiter`: a token, a failure, or a wait for a fetch (started
    /// here when the decision orders it).
    private func wait(_ waiter: TokenSchedule.Waiter, _ decision: TokenSchedule.Decision) async throws(OAuth2Error) -> (token: OAuth2Token, generation: Int) {
        switch decision {
        case .send(let token, let generation):
            return (token, generation)
        case .fail(let error):
            throw error
        case .wait(let start):
            if let start {
                // Not in the caller's task: cancelling that call must not stop the others' token.
                Task.detached { await self.run(start) }
            }
            let outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let early = state.withLock { state -> TokenSchedule.Outcome? in
                        if let early = state.early.removeValue(forKey: waiter) { return early }
                        state.continuations[waiter] = continuation
                        return nil
                    }
                    if let early { continuation.resume(returning: early) }
                }
            } onCancel: {
                let withdrawn = state.withLock { $0.schedule.withdraw(waiter) }
                if withdrawn { resume([(waiter, .failure(.cancelled))]) }
            }
            switch outcome {
            case .token(let token, let generation): return (token, generation)
            case .failure(let error): throw error
            }
        }
    }

    private func resume(_ woken: [(TokenSchedule.Waiter, TokenSchedule.Outcome)]) {
        guard !woken.isEmpty else { return }
        let ready = state.withLock { state in
            woken.compactMap { waiter, outcome -> (CheckedContinuation<TokenSchedule.Outcome, Never>, TokenSchedule.Outcome)? in
                guard let continuation = state.continuations.removeValue(forKey: waiter) else {
                    state.early[waiter] = outcome
                    return nil
                }
                return (continuation, outcome)
            }
        }
        for (continuation, outcome) in ready { continuation.resume(returning: outcome) }
    }

    // MARK: The token endpoint

    /// Runs a fetch the schedule ordered, keeps its token, and wakes the waiters.
    private func run(_ order: TokenSchedule.FetchOrder) async {
        let result: Result<OAuth2Token, OAuth2Error>
        do throws(OAuth2Error) {
            result = .success(try await renew(order.fetch))
        } catch {
            result = .failure(error)
        }
        let woken = storeLock.withLock { _ in
            let (woken, kept) = state.withLock { state in
                let before = state.schedule.token
                let woken: [(TokenSchedule.Waiter, TokenSchedule.Outcome)]
                switch result {
                case .success(let token): woken = state.schedule.fetched(order.number, token: token)
                case .failure(let error): woken = state.schedule.fetchFailed(order.number, error: error)
                }
                return (woken, state.schedule.token == before ? nil : Optional(state.schedule.token))
            }
            if let kept { file?.save(kept) }
            return woken
        }
        resume(woken)
    }

    /// A new token for `fetch`. With a token file other processes share: a refresh token
    /// another process rotated is never sent (the endpoint would refuse it, and that would end
    /// the other's session too); the tokens it stored are taken instead, or renewed with its
    /// new refresh token when they are due themselves.
    private func renew(_ fetch: TokenSchedule.Fetch) async throws(OAuth2Error) -> OAuth2Token {
        switch storedRotation(of: fetch) {
        case .some(.use(let stored)): return stored
        case .some(.refresh(let newer)): return try await self.fetch(.refresh(newer))
        case nil: break
        }
        do {
            return try await self.fetch(fetch)
        } catch .rejected(let status, let error, let description) {
            // Rotated by another process between the look at the file and the request?
            switch storedRotation(of: fetch) {
            case .some(.use(let stored)): return stored
            case .some(.refresh(let newer)): return try await self.fetch(.refresh(newer))
            case nil: throw .rejected(status: status, error: error, description: description)
            }
        }
    }

    private enum StoredRotation {
        case use(OAuth2Token)
        case refresh(String)
    }

    /// What the token file holds when another process replaced the refresh token `fetch` would
    /// send: its token if it is not due, else its refresh token. `nil` otherwise.
    private func storedRotation(of fetch: TokenSchedule.Fetch) -> StoredRotation? {
        guard case .refresh(let sent) = fetch, let stored = file?.load(), let newer = stored.refreshToken, newer != sent else {
            return nil
        }
        let leeway = state.withLock { $0.schedule.leeway }
        return stored.isDue(at: Date().timeIntervalSince1970, leeway: leeway) ? .refresh(newer) : .use(stored)
    }

    /// Asks the token endpoint for a token.
    private func fetch(_ fetch: TokenSchedule.Fetch) async throws(OAuth2Error) -> OAuth2Token {
        var form: [UInt8] = []
        let previousRefreshToken: String?
        switch fetch {
        case .refresh(let refresh):
            FormEncoding.append("grant_type", value: "refresh_token", to: &form)
            FormEncoding.append("refresh_token", value: refresh, to: &form)
            previousRefreshToken = refresh
        case .grant:
            switch configuration.grant {
            case .clientCredentials:
                FormEncoding.append("grant_type", value: "client_credentials", to: &form)
            case .password(let username, let password):
                FormEncoding.append("grant_type", value: "password", to: &form)
                FormEncoding.append("username", value: username, to: &form)
                FormEncoding.append("password", value: password, to: &form)
            case .refreshToken:
                throw .noGrant  // never ordered: the schedule knows this grant cannot fetch
            }
            if let scope = configuration.scope { FormEncoding.append("scope", value: scope, to: &form) }
            previousRefreshToken = nil
        }
        let issued = Date().timeIntervalSince1970
        let response = try await post(form, to: configuration.tokenURL)
        guard response.status == 200 else { throw Self.failure(of: response) }
        do {
            let answer = try JSONDecoder().decode(TokenResponse.self, from: response.body)
            guard !answer.access_token.isEmpty else { throw OAuth2Error.tokenEndpoint("an empty access_token") }
            return answer.token(at: issued, previousRefreshToken: previousRefreshToken)
        } catch {
            throw .tokenEndpoint("the answer is not a token response (\(error)): \(Self.excerpt(response.body))")
        }
    }

    /// POSTs a form to an endpoint of the authorization server, authenticated as the client.
    private func post(_ form: [UInt8], to url: String) async throws(OAuth2Error) -> HttpClientResponse {
        var form = form
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .accept: "application/json"]
        switch (configuration.clientSecret, configuration.clientAuthentication) {
        case (let secret?, .basic):
            // RFC 6749, 2.3.1: each form-encoded, then joined and base64-encoded.
            var pair: [UInt8] = []
            FormEncoding.append(configuration.clientID, to: &pair)
            pair.append(UInt8(ascii: ":"))
            FormEncoding.append(secret, to: &pair)
            headers[.authorization] = "Basic " + Data(pair).base64EncodedString()
        case (let secret?, .formFields):
            FormEncoding.append("client_id", value: configuration.clientID, to: &form)
            FormEncoding.append("client_secret", value: secret, to: &form)
        case (nil, _):
            FormEncoding.append("client_id", value: configuration.clientID, to: &form)
        }
        let request = HttpClientRequest(method: "POST", url: url, headerFields: headers, body: .data(Data(form)), clientBaseURL: url)
        do {
            return try await endpoint.send(request)
        } catch .cancelled {
            throw .cancelled
        } catch {
            throw .tokenEndpoint(error.description)
        }
    }

    /// The error an endpoint's answer other than 200 stands for.
    private static func failure(of response: HttpClientResponse) -> OAuth2Error {
        if let answer = try? JSONDecoder().decode(TokenErrorResponse.self, from: response.body) {
            return .rejected(status: response.status, error: answer.error, description: answer.error_description)
        }
        return .tokenEndpoint("HTTP status \(response.status): \(excerpt(response.body))")
    }

    private static func excerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return body.count > 200 ? text + "…" : text
    }
}
