@testable import CurlXHR
import Foundation
import Testing

/// ``BodyStreamState`` as transcripts: events of the transfer and of the consumer, one by one,
/// and what each decides. Waiters are numbers.
@Suite struct BodyStreamStateTests {
    typealias State = BodyStreamState<Int, Int>

    func chunk(_ count: Int) -> Data { Data(repeating: 7, count: count) }

    /// What a consumer's request for the next chunk got, as text.
    func take(_ state: inout State, parking waiter: Int? = nil) -> String {
        switch state.next(waiter) {
        case .chunk(let data, let resume): "chunk \(data.count)\(resume ? " resume" : "")"
        case .end(.failed(let failure)): "end failed: \(failure.text)"
        case .end(let end): "end \(end)"
        case .wait: "wait"
        }
    }

    func intake(_ state: inout State, _ count: Int) -> String {
        switch state.bodyArrives(count: count) {
        case .deliver(let waiter): return "deliver to \(waiter)"
        case .keep:
            state.keep(chunk(count))
            return "keep"
        case .pause: return "pause"
        case .refuse: return "refuse"
        }
    }

    @Test func theHeadGoesToTheWaiterOrWaitsForOne() {
        var early = State(pauseAt: 100)
        #expect(early.awaitHead(1) == .wait)
        #expect(early.headArrives() == 1)
        #expect(early.headArrives() == nil, "one head a stream")

        var late = State(pauseAt: 100)
        #expect(late.headArrives() == nil)
        #expect(late.awaitHead(1) == .head)
    }

    @Test func bytesGoStraightToAWaitingConsumerElseAreKeptInOrder() {
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(take(&state, parking: 5) == "wait")
        #expect(intake(&state, 10) == "deliver to 5")
        #expect(intake(&state, 20) == "keep")
        #expect(intake(&state, 30) == "keep")
        #expect(state.keptBytes == 50)
        #expect(take(&state) == "chunk 20")
        #expect(take(&state) == "chunk 30")
        #expect(take(&state) == "wait")
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
        #expect(state.transferEnds(.complete).body == nil)
        #expect(take(&state) == "chunk 10")
        #expect(take(&state) == "end complete")
        #expect(take(&state) == "end complete", "and stays")
    }

    @Test func aFailureAfterTheHeadReachesTheConsumerAfterTheBytesThatCame() {
        let failure = TransferFailure(kind: .connection, text: "reset")
        var state = State(pauseAt: 100)
        _ = state.headArrives()
        #expect(intake(&state, 10) == "keep")
        #expect(state.transferEnds(.failed(failure)).head == nil)
        #expect(take(&state) == "chunk 10")
        #expect(take(&state) == "end failed: reset")
    }

    @Test func aFailureBeforeTheHeadGoesToTheHeadWaiter() {
        let failure = TransferFailure(kind: .dns, text: "no such host")
        var state = State(pauseAt: 100)
        #expect(state.awaitHead(3) == .wait)
        let waiters = state.transferEnds(.failed(failure))
        #expect(waiters.head == 3 && waiters.body == nil)
        #expect(state.awaitHead(4) == .end(.failed(failure)))
    }

    @Test func anEndWithoutAHeadCompletesTheHeadWaiter() {
        // The engine ended the send with a status and no head reported (a fallback status).
        var state = State(pauseAt: 100)
        #expect(state.awaitHead(3) == .wait)
        #expect(state.transferEnds(.complete).head == 3)
        #expect(state.awaitHead(4) == .head)
    }

    @Test func cancellingWhileWaitingForTheHeadStopsTheTransferAndTellsTheWaiter() {
        var state = State(pauseAt: 100)
        #expect(state.awaitHead(1) == .wait)
        let cancelled = state.cancel()
        #expect(cancelled.stopsTransfer && cancelled.head == 1 && cancelled.body == nil)
        #expect(state.headArrives() == nil, "a head after the cancel goes nowhere")
        #expect(intake(&state, 10) == "refuse")
        let after = state.transferEnds(.complete)
        #expect(after.head == nil && after.body == nil)
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
}
