@testable import CurlXHR
import Testing

/// The headers and idle clocks as a transcript: what the engine observes round by round, at
/// which millisecond, and what the clock decides.
@Suite(.ownThreads) struct PhaseClockTests {
    typealias Seen = PhaseClock.Observation

    func seen(_ bytes: Int64, sent: Bool = false, heads: Int = 0, reported: Bool = false) -> Seen {
        Seen(bytesMoved: bytes, requestSent: sent, headsSeen: heads, headReported: reported)
    }

    @Test func idleCountsFromTheLastRoundThatSawBytesMove() {
        var clock = PhaseClock(headers: 0, idle: 1000, startedAt: 0)
        #expect(clock.deadline == 1000, "the start counts as a byte")
        #expect(clock.observe(seen(0), at: 400) == nil)
        #expect(clock.observe(seen(120, sent: true), at: 600) == nil)
        #expect(clock.deadline == 1600)
        #expect(clock.observe(seen(120, sent: true), at: 1599) == nil)
        #expect(clock.observe(seen(500, sent: true, heads: 1, reported: true), at: 1599) == nil)
        #expect(clock.observe(seen(500, sent: true, heads: 1, reported: true), at: 2599) == .idle)
    }

    @Test func headersCountFromTheRequestSentToTheReportedHead() {
        var clock = PhaseClock(headers: 500, idle: 0, startedAt: 0)
        #expect(clock.deadline == nil, "nothing awaited before the request is out")
        #expect(clock.observe(seen(80), at: 3000) == nil, "an upload still going: not yet")
        #expect(clock.observe(seen(900, sent: true), at: 3100) == nil)
        #expect(clock.deadline == 3600)
        #expect(clock.observe(seen(900, sent: true), at: 3599) == nil)
        #expect(clock.observe(seen(900, sent: true), at: 3600) == .header)
    }

    @Test func anIntermediateHeadStartsTheHeadersClockAgainAndTheReportedOneStopsIt() {
        var clock = PhaseClock(headers: 500, idle: 0, startedAt: 0)
        #expect(clock.observe(seen(100, sent: true), at: 10) == nil)
        // A 401 libcurl answers: held back, not reported.
        #expect(clock.observe(seen(300, sent: true, heads: 1), at: 400) == nil)
        #expect(clock.deadline == 900)
        #expect(clock.observe(seen(300, sent: true, heads: 1), at: 899) == nil)
        #expect(clock.observe(seen(600, sent: true, heads: 2, reported: true), at: 899) == nil)
        #expect(clock.deadline == nil)
        #expect(clock.observe(seen(600, sent: true, heads: 2, reported: true), at: 100_000) == nil, "the body may take its time")
    }

    @Test func theNearerOfTheTwoDeadlinesComesFirst() {
        var clock = PhaseClock(headers: 300, idle: 1000, startedAt: 0)
        #expect(clock.observe(seen(50, sent: true), at: 100) == nil)
        #expect(clock.deadline == 400)
        #expect(clock.observe(seen(50, sent: true), at: 400) == .header)
        var idleFirst = PhaseClock(headers: 5000, idle: 200, startedAt: 0)
        #expect(idleFirst.observe(seen(50, sent: true), at: 100) == nil)
        #expect(idleFirst.deadline == 300)
        #expect(idleFirst.observe(seen(50, sent: true), at: 300) == .idle)
    }

    @Test func limitsAndTheirTexts() {
        #expect(Timeouts.problem(connect: 0, headers: 1, idle: 2, total: 3) == nil)
        #expect(Timeouts.problem(connect: -1, headers: 0, idle: 0, total: 0)?.contains("connect") == true)
        #expect(Timeouts.problem(connect: 0, headers: .nan, idle: 0, total: 0)?.contains("headers") == true)
        #expect(Timeouts.milliseconds(0) == 0)
        #expect(Timeouts.milliseconds(0.0001) == 1, "a limit never becomes none")
        #expect(Timeouts.milliseconds(1.5) == 1500)
        #expect(Timeouts.text(.idle, after: 1.5).hasPrefix("idle timeout"))
        #expect(Timeouts.text(.connect, after: 2).contains("2 s"))
        #expect(!Timeouts().needsPhaseClock)
        #expect(Timeouts(connect: 1, total: 1).needsPhaseClock == false)
        #expect(Timeouts(idle: 1).needsPhaseClock)
    }

    @Test func aBodyPausedForItsConsumerIsNotIdle() {
        var clock = PhaseClock(headers: 0, idle: 500, startedAt: 0)
        #expect(clock.observe(seen(1000, sent: true, heads: 1, reported: true), at: 100) == nil)
        var paused = seen(1000, sent: true, heads: 1, reported: true)
        paused.paused = true
        #expect(clock.observe(paused, at: 700) == nil, "the library paused it: the consumer is behind")
        #expect(clock.observe(paused, at: 1500) == nil)
        #expect(clock.observe(seen(1000, sent: true, heads: 1, reported: true), at: 1999) == nil)
        #expect(clock.observe(seen(1000, sent: true, heads: 1, reported: true), at: 2000) == .idle, "resumed, and then silent")
    }
}
