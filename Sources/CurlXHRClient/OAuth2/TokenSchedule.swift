/// The decisions of an ``OAuth2Authorizer``, as a value: which token a call sends, when a
/// token is fetched, and who waits for it. Time comes in with each event and fetches go out as
/// decisions, so the whole policy is tested event by event, without a server.
///
/// One fetch at a time: a call that finds the token due (or refused by the server) starts a
/// fetch and waits; every call that comes while it runs waits too, and all of them are woken
/// by its end, with the new token or with its error. A call is refused at most once: it sends
/// the token it was woken with, and a second 401 is the caller's.
struct TokenSchedule: Sendable {
    typealias Waiter = Int

    /// What a fetch asks the token endpoint for.
    enum Fetch: Equatable, Sendable {
        /// The configured grant (client credentials or password).
        case grant
        /// A new token for this refresh token.
        case refresh(String)
    }

    /// A fetch to start; its number identifies its end.
    struct FetchOrder: Equatable, Sendable {
        let number: Int
        let fetch: Fetch
    }

    /// What a call does now.
    enum Decision: Equatable, Sendable {
        /// Send this token (of this generation: say it when the server refuses it).
        case send(OAuth2Token, generation: Int)
        /// Wait for the running fetch; when `start` is set, the caller starts it.
        case wait(start: FetchOrder?)
        /// Fail.
        case fail(OAuth2Error)
    }

    /// What a waiting call is woken with.
    enum Outcome: Equatable, Sendable {
        case token(OAuth2Token, generation: Int)
        case failure(OAuth2Error)
    }

    /// Whether a fetch may use the configured grant (not when only a refresh token was given).
    let canGrant: Bool
    /// ``OAuth2Configuration/refreshLeeway`` in seconds.
    let leeway: Double
    /// The token kept, if any.
    private(set) var token: OAuth2Token?
    /// Counts the tokens kept; a call says which one the server refused.
    private(set) var generation = 0
    /// The fetch running, if any.
    private(set) var running: FetchOrder?
    /// The calls waiting for it, in arrival order.
    private(set) var waiters: [Waiter] = []
    /// Fetches started so far.
    private(set) var fetches = 0
    /// After ``logout()``: every call fails.
    private(set) var isLoggedOut = false
    /// Whether the server refused the kept token (it is not sent again).
    private var isRefused = false
    /// The endpoint's rejection that ended the last fetch, with the generation it began.
    private var rejection: (generation: Int, error: OAuth2Error)?

    /// A schedule starting from `stored` (a token kept from an earlier run) or, for a
    /// refresh-token grant, from that refresh token.
    init(stored: OAuth2Token?, grant: OAuth2Configuration.Grant, leeway: Double) {
        self.leeway = leeway
        if case .refreshToken(let refresh) = grant {
            canGrant = false
            // No access token yet: due at once, renewed with the refresh token.
            token = stored ?? OAuth2Token(accessToken: "", refreshToken: refresh, expiresAt: 0)
        } else {
            canGrant = true
            token = stored
        }
    }

    /// A call needs a token at `now`.
    mutating func tokenNeeded(by waiter: Waiter, now: Double) -> Decision {
        if isLoggedOut { return .fail(.loggedOut) }
        if running != nil {
            waiters.append(waiter)
            return .wait(start: nil)
        }
        if let token, readyGeneration(now: now) != nil { return .send(token, generation: generation) }
        return startFetch(for: waiter)
    }

    /// The generation of the token a call needing one at `now` is sent at once (as
    /// ``tokenNeeded(by:now:)`` would decide, without a waiter); `nil` when that call would
    /// wait or fail.
    func readyGeneration(now: Double) -> Int? {
        guard !isLoggedOut, running == nil, let token, !isRefused, !token.accessToken.isEmpty,
              !token.isDue(at: now, leeway: leeway) else { return nil }
        return generation
    }

    /// The server answered a call's request, sent with the token of `used`, with a 401 and a
    /// Bearer challenge.
    mutating func refused(_ used: Int, by waiter: Waiter, now: Double) -> Decision {
        if isLoggedOut { return .fail(.loggedOut) }
        // The renewal this refusal asks for was tried and rejected: its error, not a new grant.
        if running == nil, used < generation, let rejection, rejection.generation == generation {
            return .fail(rejection.error)
        }
        // A newer token (or the fetch of one) is there already: that one, not another fetch.
        if running != nil || used != generation { return tokenNeeded(by: waiter, now: now) }
        isRefused = true
        return startFetch(for: waiter)
    }

    private mutating func startFetch(for waiter: Waiter) -> Decision {
        let fetch: Fetch
        if let refresh = token?.refreshToken {
            fetch = .refresh(refresh)
        } else if canGrant {
            fetch = .grant
        } else {
            return .fail(.noGrant)
        }
        fetches += 1
        let order = FetchOrder(number: fetches, fetch: fetch)
        running = order
        waiters.append(waiter)
        return .wait(start: order)
    }

    /// Fetch `number` brought `new`: it is kept, and every waiter sends it. Nothing when that
    /// fetch no longer counts (a logout came first).
    mutating func fetched(_ number: Int, token new: OAuth2Token) -> [(Waiter, Outcome)] {
        guard running?.number == number else { return [] }
        running = nil
        token = new
        generation += 1
        isRefused = false
        rejection = nil
        return wakeAll(with: .token(new, generation: generation))
    }

    /// Fetch `number` failed: every waiter fails with `error`. A token the endpoint rejected
    /// (its refresh token) is forgotten, never sent again, and a call refused with it later
    /// fails with the same error; a new call starts from the grant. After a failure to reach
    /// the endpoint the token is kept, and the next call fetches again.
    mutating func fetchFailed(_ number: Int, error: OAuth2Error) -> [(Waiter, Outcome)] {
        guard running?.number == number else { return [] }
        running = nil
        if case .rejected = error {
            token = nil
            generation += 1
            isRefused = false
            rejection = (generation, error)
        }
        return wakeAll(with: .failure(error))
    }

    /// A waiting call gave up (its task was cancelled): it is no longer woken. The fetch goes
    /// on for the others, and its token is kept. Whether it was waiting.
    mutating func withdraw(_ waiter: Waiter) -> Bool {
        guard let index = waiters.firstIndex(of: waiter) else { return false }
        waiters.remove(at: index)
        return true
    }

    /// Ends the session: the token is forgotten, a running fetch no longer counts, every
    /// waiter and every later call fails with ``OAuth2Error/loggedOut``. Returns the waiters
    /// and the token that was kept (to revoke).
    mutating func logout() -> (woken: [(Waiter, Outcome)], token: OAuth2Token?) {
        let kept = token
        isLoggedOut = true
        token = nil
        running = nil
        generation += 1
        return (wakeAll(with: .failure(.loggedOut)), kept)
    }

    private mutating func wakeAll(with outcome: Outcome) -> [(Waiter, Outcome)] {
        let woken = waiters.map { ($0, outcome) }
        waiters.removeAll()
        return woken
    }
}
