@testable import CurlXHR
import Foundation
import Testing

/// ``BodyStreamState`` as transcripts: events of the transfer and of the consumer, one by one,
/// and what each decides. Waiters are numbers.
@Suite(.ownThreads) struct BodyStreamStateTests {
    typealias State = BodyStreamState<Int, Int>

    func chunk(_ count: Int) -> Data { Data(repeating: 7, count: count) }

    /// What a consumer's request for the next chunk got, as text.
    func take(_ state: inout State, parking waiter: Int? = nil) -> String {
        switch state.next(waiter) {
        case .chunk(let data, let resume): "chunk \(data.count)\(resume ? " resume" : "")"
        case .end(let end): "end \(describe(end))"
        case .wait: "wait"
        }
    }

    func intake(_ state: inout State, _ count: Int) -> String {
        switch state.bodyArrives(count: count) {
        case .keep:
            return state.keep(chunk(count)) ? "keep, wake" : "keep"
        case .pause: return "pause"
        case .refuse: return "refuse"
        }
    }

    func describe(_ end: State.End) -> String {
        if case .failed(let failure) = end { "failed: \(failure.text)" } else { "\(end)" }
    }

    /// What a wake hands out, as text.
    func wake(_ state: inout State) -> String {
        let woken = state.wake()
        var parts: [String] = []
        if let (waiter, take) = woken.head {
            if case .end(let end) = take { parts.append("head waiter \(waiter): end \(describe(end))") } else { parts.append("head waiter \(waiter): \(take)") }
        }
        if let (waiter, take) = woken.body {
            switch take {
            case .chunk(let data, let resume): parts.append("body waiter \(waiter): chunk \(data.count)\(resume ? " resume" : "")")
            case .end(let end): parts.append("body waiter \(waiter): end \(describe(end))")
            case .wait: parts.append("body waiter \(waiter): wait")
            }
        }
        return parts.isEmpty ? "nobody" : parts.joined(separator: "; ")
    }

    @Test func theHeadWakesItsWaiterOrWaitsForOne() {
        var early = State(pauseAt: 100)
        #expect(early.awaitHead(1) == .wait)
        let wakesForHead = early.headArrives()
        #expect(wakesForHead, "a waiter: wake")
        #expect(wake(&early) == "head waiter 1: head")
        #expect(early.headArrives() == false, "one head a stream")
        #expect(wake(&early) == "nobody")

        var late = State(pauseAt: 100)
        #expect(late.headArrives() == false, "no waiter: no wake")
        #expect(late.awaitHead(1) == .head)
    }

    @Test func newsOfOneRoundWakesTheConsumerOnce() {
        // A small response: head, body and end in one round of the engine.
        var state = State(pauseAt: 100)
        #expect(state.awaitHead(1) == .wait)
        let wakesOnce = state.headArrives()
        #expect(wakesOnce)
        #expect(intake(&state, 10) == "keep", "a wake is due already")
        #expect(state.transferEnds(.complete) == false)
        #expect(wake(&state) == "head waiter 1: head")
        // The consumer finds the rest without parking.
        #expect(take(&state) == "chunk 10")
        #expect(take(&state) == "end complete")
    }

    @Test func bytesWakeAParkedConsumerAndAreKeptInOrder() {
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(take(&state, parking: 5) == "wait")
        #expect(intake(&state, 10) == "keep, wake")
        #expect(intake(&state, 20) == "keep")
        #expect(wake(&state) == "body waiter 5: chunk 10")
        #expect(intake(&state, 30) == "keep")
        #expect(state.keptBytes == 50)
        #expect(take(&state) == "chunk 20")
        #expect(take(&state) == "chunk 30")
        #expect(take(&state) == "wait")
        #expect(wake(&state) == "nobody", "nothing parked")
    }

    @Test func aConsumerBehindPausesTheTransferUntilItCatchesUp() {
        var state = State(pauseAt: 100, resumeAt: 40)
        _ = state.headArrives()
        for _ in 0..<4 { #expect(intake(&state, 30) == "keep") }
        // 120 kept, at least pauseAt: the next bytes are not taken, the transfer pauses.
        #expect(intake(&state, 30) == "pause")
        #expect(state.isPaused)
        #expect(take(&state) == "chunk 30")  // 90 left
        #expect(take(&state) == "chunk 30")  // 60 left
        #expect(take(&state) == "chunk 30 resume", "40 or less left: resume")
        #expect(!state.isPaused)
        #expect(take(&state) == "chunk 30")
        #expect(take(&state) == "wait")
    }

    @Test func theEndComesAfterTheKeptBytes() {
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(intake(&state, 10) == "keep")
        #expect(state.transferEnds(.complete) == false, "nobody parked")
        #expect(take(&state) == "chunk 10")
        #expect(take(&state) == "end complete")
        #expect(take(&state) == "end complete", "and stays")
    }

    @Test func aFailureAfterTheHeadReachesTheConsumerAfterTheBytesThatCame() {
        let failure = TransferFailure(kind: .connection, text: "reset")
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(intake(&state, 10) == "keep")
        #expect(take(&state, parking: 2) == "chunk 10")
        #expect(take(&state, parking: 2) == "wait")
        let wakesReader = state.transferEnds(.failed(failure))
        #expect(wakesReader)
        #expect(wake(&state) == "body waiter 2: end failed: reset")
        #expect(take(&state) == "end failed: reset")
    }

    @Test func aFailureBeforeTheHeadGoesToTheHeadWaiter() {
        let failure = TransferFailure(kind: .dns, text: "no such host")
        var state = State(pauseAt: 100)
        #expect(state.awaitHead(3) == .wait)
        let wakesHeadWaiter = state.transferEnds(.failed(failure))
        #expect(wakesHeadWaiter)
        #expect(wake(&state) == "head waiter 3: end failed: no such host")
        #expect(state.awaitHead(4) == .end(.failed(failure)))
    }

    @Test func anEndWithoutAHeadCompletesTheHeadWaiter() {
        // The engine ended the send with a status and no head reported (a fallback status).
        var state = State(pauseAt: 100)
        #expect(state.awaitHead(3) == .wait)
        let wakesAtEnd = state.transferEnds(.complete)
        #expect(wakesAtEnd)
        #expect(wake(&state) == "head waiter 3: head")
        #expect(state.awaitHead(4) == .head)
    }

    @Test func cancellingWhileWaitingForTheHeadStopsTheTransferAndTellsTheWaiter() {
        var state = State(pauseAt: 100)
        #expect(state.awaitHead(1) == .wait)
        let cancelled = state.cancel()
        #expect(cancelled.stopsTransfer && cancelled.head == 1 && cancelled.body == nil)
        #expect(state.headArrives() == false, "a head after the cancel wakes nobody")
        #expect(state.awaitHead(2) == .end(.cancelled))
        #expect(intake(&state, 10) == "refuse")
        #expect(state.transferEnds(.complete) == false)
        #expect(state.end == .cancelled, "the transfer's end does not undo the cancel")
    }

    @Test func cancellingMidBodyDropsKeptBytesAndRefusesMore() {
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(intake(&state, 60) == "keep")
        #expect(intake(&state, 60) == "keep")
        #expect(intake(&state, 60) == "pause")
        let cancelled = state.cancel()
        #expect(cancelled.stopsTransfer && cancelled.body == nil)
        #expect(state.keptBytes == 0 && !state.isPaused)
        #expect(take(&state) == "end cancelled")
        #expect(intake(&state, 10) == "refuse")
        #expect(state.cancel().stopsTransfer == false, "a second cancel does nothing")
    }

    @Test func cancellingAWaitingConsumerWakesIt() {
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(take(&state, parking: 9) == "wait")
        #expect(state.cancel().body == 9)
    }

    @Test func aCancelAfterTheEndChangesNothing() {
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(intake(&state, 10) == "keep")
        _ = state.transferEnds(.complete)
        #expect(state.cancel().stopsTransfer == false)
        #expect(take(&state) == "chunk 10", "the bytes that came stay readable")
        #expect(take(&state) == "end complete")
    }

    @Test func manyChunksTakenOneByOneKeepTheirOrder() {
        var state = State(pauseAt: 1 << 20)
        _ = state.headArrives()
        for size in 1...300 { #expect(intake(&state, size) == "keep") }
        for size in 1...300 { #expect(take(&state) == "chunk \(size)") }
        #expect(state.keptBytes == 0)
    }

    /// A stream reused for its request's next response starts as new, whatever the last one
    /// left: its end, kept chunks, a pause, a parked waiter.
    @Test func aResetStreamStartsAsNew() {
        var state = State(pauseAt: 10, resumeAt: 4)
        #expect(state.awaitHead(1) == .wait)
        _ = state.headArrives()
        #expect(wake(&state) == "head waiter 1: head")
        #expect(intake(&state, 10) == "keep")
        #expect(intake(&state, 5) == "pause")
        _ = state.transferEnds(.failed(TransferFailure(kind: .other, text: "gone")))
        state.reset()
        #expect(!state.headArrived && state.end == nil && state.keptBytes == 0 && !state.isPaused && !state.wakeIsDue)
        #expect(state.pauseAt == 10 && state.resumeAt == 4)
        #expect(take(&state, parking: 2) == "wait")
        #expect(state.awaitHead(3) == .wait)
        let wakesForHead = state.headArrives()
        #expect(wakesForHead)
        #expect(wake(&state) == "head waiter 3: head")
        #expect(intake(&state, 3) == "keep, wake")
        #expect(wake(&state) == "body waiter 2: chunk 3")
        let wakesForEnd = state.transferEnds(.complete)
        #expect(!wakesForEnd, "nobody waits")
        #expect(take(&state) == "end complete")
    }
}
