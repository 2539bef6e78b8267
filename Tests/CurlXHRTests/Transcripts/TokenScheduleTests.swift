@testable import CurlXHRClient
import Testing

/// ``TokenSchedule`` as transcripts: calls needing a token, 401s, fetch ends, cancellations and
/// a logout, one by one, and what each decides. Waiters are numbers; time is seconds.
@Suite(.ownThreads) struct TokenScheduleTests {
    typealias Schedule = TokenSchedule

    func token(_ name: String, refresh: String? = nil, expiresAt: Double? = 100, lifetime: Double? = 100) -> OAuth2Token {
        OAuth2Token(accessToken: name, refreshToken: refresh, expiresAt: expiresAt, lifetime: lifetime)
    }

    func say(_ decision: Schedule.Decision) -> String {
        switch decision {
        case .send(let token, let generation): "send \(token.accessToken) (\(generation))"
        case .wait(nil): "wait"
        case .wait(let order?):
            switch order.fetch {
            case .grant: "wait, start fetch \(order.number): grant"
            case .refresh(let refresh): "wait, start fetch \(order.number): refresh \(refresh)"
            }
        case .fail(let error): "fail: \(error)"
        }
    }

    func say(_ woken: [(Schedule.Waiter, Schedule.Outcome)]) -> [String] {
        woken.map { waiter, outcome in
            switch outcome {
            case .token(let token, let generation): "\(waiter): \(token.accessToken) (\(generation))"
            case .failure(let error): "\(waiter): \(error)"
            }
        }
    }

    @Test func twentyCallsAfterExpiryMakeOneRefreshAndAllSendItsToken() {
        var schedule = Schedule(stored: token("a1", refresh: "r1"), grant: .clientCredentials, leeway: 30)
        // readyGeneration says, without a waiter, what tokenNeeded decides: send at once, or not.
        #expect(schedule.readyGeneration(now: 10) == 0)
        let step1 = say(schedule.tokenNeeded(by: 1, now: 10))
        #expect(step1 == "send a1 (0)")
        // At 200 the token expired: the first call starts the refresh, nineteen wait for it.
        #expect(schedule.readyGeneration(now: 200) == nil)
        let step2 = say(schedule.tokenNeeded(by: 2, now: 200))
        #expect(step2 == "wait, start fetch 1: refresh r1")
        #expect(schedule.readyGeneration(now: 10) == nil, "a fetch runs: the calls wait for it")
        for waiter in 3...21 { let step3 = say(schedule.tokenNeeded(by: waiter, now: 200)); #expect(step3 == "wait") }
        #expect(schedule.fetches == 1)
        let woken = say(schedule.fetched(1, token: token("a2", refresh: "r2", expiresAt: 300)))
        #expect(woken == (2...21).map { "\($0): a2 (1)" })
        #expect(schedule.waiters.isEmpty && schedule.token?.refreshToken == "r2")
        #expect(schedule.readyGeneration(now: 201) == 1)
        let step4 = say(schedule.tokenNeeded(by: 22, now: 201))
        #expect(step4 == "send a2 (1)")
    }

    @Test func aTokenIsRenewedWithinTheLeewayOrAQuarterOfItsLifetime() {
        // Lifetime 100 s: a quarter of it (25 s) is shorter than the leeway (30 s).
        var schedule = Schedule(stored: token("a1", refresh: "r1", expiresAt: 100, lifetime: 100), grant: .clientCredentials, leeway: 30)
        let step5 = say(schedule.tokenNeeded(by: 1, now: 74))
        #expect(step5 == "send a1 (0)")
        let step6 = say(schedule.tokenNeeded(by: 2, now: 75))
        #expect(step6 == "wait, start fetch 1: refresh r1")
        // A 2-second token with a 30-second leeway is sent for its first 1.5 seconds.
        var short = Schedule(stored: token("b1", refresh: "s1", expiresAt: 2, lifetime: 2), grant: .clientCredentials, leeway: 30)
        let step7 = say(short.tokenNeeded(by: 1, now: 1.4))
        #expect(step7 == "send b1 (0)")
        let step8 = say(short.tokenNeeded(by: 2, now: 1.5))
        #expect(step8 == "wait, start fetch 1: refresh s1")
        // A token without an expiry is sent until the server refuses it.
        var open = Schedule(stored: token("c1", expiresAt: nil, lifetime: nil), grant: .clientCredentials, leeway: 30)
        let step9 = say(open.tokenNeeded(by: 1, now: 1e9))
        #expect(step9 == "send c1 (0)")
    }

    @Test func aRefusedTokenIsRenewedOnceForAllTheCallsItFailed() {
        var schedule = Schedule(stored: token("a1", refresh: "r1"), grant: .clientCredentials, leeway: 0)
        for waiter in 1...3 { #expect(say(schedule.tokenNeeded(by: waiter, now: 1)) == "send a1 (0)") }
        // All three come back with a 401: the first starts the refresh, the others wait for it.
        let step10 = say(schedule.refused(0, by: 1, now: 2))
        #expect(step10 == "wait, start fetch 1: refresh r1")
        #expect(schedule.readyGeneration(now: 2) == nil, "a refused token is not ready")
        let step11 = say(schedule.refused(0, by: 2, now: 2))
        #expect(step11 == "wait")
        // A call needing a token now waits too: the refused one is not sent again.
        let step12 = say(schedule.tokenNeeded(by: 4, now: 2))
        #expect(step12 == "wait")
        let step13 = say(schedule.fetched(1, token: token("a2", refresh: "r2")))
        #expect(step13 == ["1: a2 (1)", "2: a2 (1)", "4: a2 (1)"])
        // The third 401 comes after the new token: that token, not another fetch.
        let step14 = say(schedule.refused(0, by: 3, now: 3))
        #expect(step14 == "send a2 (1)")
        #expect(schedule.fetches == 1)
        // When the new token is refused too, one more fetch: never a loop within a call (the
        // authorizer retries a call once), but a refused token is never sent again.
        let step15 = say(schedule.refused(1, by: 5, now: 4))
        #expect(step15 == "wait, start fetch 2: refresh r2")
    }

    @Test func aRejectedRefreshFailsEveryWaiterAndIsNeverSentAgain() {
        var schedule = Schedule(stored: token("a1", refresh: "r1", expiresAt: 0), grant: .password(username: "u", password: "p"), leeway: 0)
        let step16 = say(schedule.tokenNeeded(by: 1, now: 5))
        #expect(step16 == "wait, start fetch 1: refresh r1")
        let step17 = say(schedule.tokenNeeded(by: 2, now: 5))
        #expect(step17 == "wait")
        let rejected = OAuth2Error.rejected(status: 400, error: "invalid_grant", description: nil)
        let step18 = say(schedule.fetchFailed(1, error: rejected))
        #expect(step18 == ["1: \(rejected)", "2: \(rejected)"])
        #expect(schedule.token == nil)
        // A call whose 401 comes after the rejection fails the same way: no new grant for it.
        let late = say(schedule.refused(0, by: 4, now: 6))
        #expect(late == "fail: \(rejected)")
        // A new call starts again from the grant: the refused refresh token is gone.
        let step19 = say(schedule.tokenNeeded(by: 3, now: 6))
        #expect(step19 == "wait, start fetch 2: grant")
    }

    @Test func withOnlyARefreshTokenARejectionLeavesNoWayToAToken() {
        var schedule = Schedule(stored: nil, grant: .refreshToken("r0"), leeway: 0)
        let step20 = say(schedule.tokenNeeded(by: 1, now: 0))
        #expect(step20 == "wait, start fetch 1: refresh r0")
        let step21 = say(schedule.fetched(1, token: token("a1", refresh: "r1")))
        #expect(step21 == ["1: a1 (1)"])
        let step22 = say(schedule.refused(1, by: 2, now: 1))
        #expect(step22 == "wait, start fetch 2: refresh r1")
        let rejected = OAuth2Error.rejected(status: 400, error: "invalid_grant", description: "revoked")
        let step23 = say(schedule.fetchFailed(2, error: rejected))
        #expect(step23 == ["2: \(rejected)"])
        let step24 = say(schedule.tokenNeeded(by: 3, now: 2))
        #expect(step24 == "fail: \(OAuth2Error.noGrant)")
    }

    @Test func anUnreachableEndpointFailsTheWaitersAndKeepsTheToken() {
        var schedule = Schedule(stored: token("a1", refresh: "r1", expiresAt: 10), grant: .clientCredentials, leeway: 0)
        let step25 = say(schedule.tokenNeeded(by: 1, now: 20))
        #expect(step25 == "wait, start fetch 1: refresh r1")
        let unreachable = OAuth2Error.tokenEndpoint("connection refused")
        let step26 = say(schedule.fetchFailed(1, error: unreachable))
        #expect(step26 == ["1: \(unreachable)"])
        // The refresh token may still be good: the next call tries it again.
        let step27 = say(schedule.tokenNeeded(by: 2, now: 21))
        #expect(step27 == "wait, start fetch 2: refresh r1")
    }

    @Test func aRotatedRefreshTokenReplacesTheOldOneAndAnAnswerWithoutOneKeepsIt() {
        var schedule = Schedule(stored: token("a1", refresh: "r1", expiresAt: 0), grant: .clientCredentials, leeway: 0)
        _ = schedule.tokenNeeded(by: 1, now: 1)
        _ = schedule.fetched(1, token: token("a2", refresh: "r2", expiresAt: 2))
        let step28 = say(schedule.tokenNeeded(by: 2, now: 3))
        #expect(step28 == "wait, start fetch 2: refresh r2")
        // The authorizer carries the old refresh token into an answer that has none.
        let answer = TokenResponse(access_token: "a3", token_type: "Bearer", expires_in: 10, refresh_token: nil, scope: nil)
        _ = schedule.fetched(2, token: answer.token(at: 3, previousRefreshToken: "r2"))
        #expect(schedule.token == OAuth2Token(accessToken: "a3", refreshToken: "r2", expiresAt: 13, lifetime: 10))
    }

    @Test func aCancelledWaiterIsNotWokenAndTheFetchGoesOnForTheOthers() {
        var schedule = Schedule(stored: nil, grant: .clientCredentials, leeway: 0)
        let step29 = say(schedule.tokenNeeded(by: 1, now: 0))
        #expect(step29 == "wait, start fetch 1: grant")
        let step30 = say(schedule.tokenNeeded(by: 2, now: 0))
        #expect(step30 == "wait")
        let step31 = schedule.withdraw(1)
        #expect(step31)
        let step32 = schedule.withdraw(1)
        #expect(!step32)
        let step33 = say(schedule.fetched(1, token: token("a1")))
        #expect(step33 == ["2: a1 (1)"])
        // With every waiter gone, the token is kept all the same.
        let step34 = say(schedule.tokenNeeded(by: 3, now: 1))
        #expect(step34 == "send a1 (1)")
    }

    @Test func aLogoutFailsTheWaitersDropsTheRunningFetchAndEveryLaterCall() {
        var schedule = Schedule(stored: token("a1", refresh: "r1", expiresAt: 0), grant: .clientCredentials, leeway: 0)
        let step35 = say(schedule.tokenNeeded(by: 1, now: 1))
        #expect(step35 == "wait, start fetch 1: refresh r1")
        let (woken, kept) = schedule.logout()
        #expect(say(woken) == ["1: \(OAuth2Error.loggedOut)"])
        #expect(kept?.refreshToken == "r1" && schedule.token == nil)
        // The fetch that was running ends after the logout: its token is not kept.
        let step36 = say(schedule.fetched(1, token: token("a2")))
        #expect(step36.isEmpty)
        #expect(schedule.token == nil)
        #expect(schedule.readyGeneration(now: 2) == nil)
        let step37 = say(schedule.tokenNeeded(by: 2, now: 2))
        #expect(step37 == "fail: \(OAuth2Error.loggedOut)")
        let step38 = say(schedule.refused(0, by: 3, now: 2))
        #expect(step38 == "fail: \(OAuth2Error.loggedOut)")
    }

    @Test func aStaleFetchEndIsIgnored() {
        var schedule = Schedule(stored: nil, grant: .clientCredentials, leeway: 0)
        _ = schedule.tokenNeeded(by: 1, now: 0)
        let step39 = say(schedule.fetched(7, token: token("x")))
        #expect(step39.isEmpty)
        let step40 = say(schedule.fetchFailed(7, error: .noGrant))
        #expect(step40.isEmpty)
        #expect(schedule.running?.number == 1 && schedule.waiters == [1])
    }
}
