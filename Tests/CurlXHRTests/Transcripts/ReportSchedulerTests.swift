import Testing
@testable import CurlXHR

/// When ready states are reported, event by event: what ``ReportScheduler`` answers to each
/// event a request feeds it, with no thread and no queue.
@Suite(.ownThreads) struct ReportSchedulerTests {
    typealias State = HttpRequest.State

    /// Takes every waiting batch as a delivery run does, as (state, open) pairs.
    static func drain(_ scheduler: inout ReportScheduler, perBatch: Int = 16) -> [[String]] {
        var batches: [[String]] = []
        while true {
            let batch = scheduler.nextBatch(upTo: perBatch)
            if batch.count == 0 { return batches }
            batches.append((0..<batch.count).map { "\(batch[$0])@\(batch.generation)" })
        }
    }

    @Test func aTypicalAsyncSendIsOneRunWithLoadingCoalesced() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        #expect(scheduler.report(.opened) == true)  // starts a run
        #expect(scheduler.isDelivering)
        #expect(scheduler.report(.sent) == false)  // joins it
        #expect(scheduler.report(.headersReceived) == false)
        #expect(scheduler.report(.loading) == false)
        #expect(scheduler.report(.loading) == false)  // coalesced: not queued again
        #expect(scheduler.report(.loading) == false)
        #expect(scheduler.report(.done) == false)
        #expect(Self.drain(&scheduler) == [["OPENED@1", "SENT@1", "HEADERS_RECEIVED@1", "LOADING@1", "DONE@1"]])
        // The empty batch ended the run: the next report starts another.
        #expect(!scheduler.isDelivering)
        #expect(scheduler.report(.done) == true)
    }

    @Test func aLoadingThatRanLetsNewerDataReportAgain() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        _ = scheduler.report(.opened)
        _ = scheduler.report(.sent)
        _ = scheduler.report(.headersReceived)
        _ = scheduler.report(.loading)
        #expect(Self.drain(&scheduler) == [["OPENED@1", "SENT@1", "HEADERS_RECEIVED@1", "LOADING@1"]])
        // More data while that LOADING callback runs: joins it, no run starts.
        #expect(scheduler.report(.loading) == false && Self.drain(&scheduler).isEmpty)
        #expect(scheduler.loadingDelivered(generation: 1) == false)  // returned; nothing paused
        // Data after it: a new LOADING.
        #expect(scheduler.report(.loading) == true)
        #expect(Self.drain(&scheduler) == [["LOADING@1"]])
    }

    @Test func aTransferPausesBehindASlowLoadingAndItsEndResumesIt() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        // No LOADING queued yet: never pauses, whatever waits.
        #expect(scheduler.pauses(unread: 10 * ReportScheduler.pauseThreshold) == false)
        _ = scheduler.report(.loading)
        #expect(scheduler.pauses(unread: ReportScheduler.pauseThreshold - 1) == false)
        #expect(scheduler.pauses(unread: ReportScheduler.pauseThreshold) == true)
        #expect(scheduler.isPaused)
        // The end of a LOADING callback of an earlier open resumes nothing.
        #expect(scheduler.loadingDelivered(generation: 0) == false && scheduler.isPaused)
        #expect(scheduler.loadingDelivered(generation: 1) == true)
        #expect(!scheduler.isPaused && !scheduler.loadingReported)
        // A transfer that ends while paused leaves nothing paused.
        _ = scheduler.report(.loading)
        #expect(scheduler.pauses(unread: ReportScheduler.pauseThreshold) == true)
        scheduler.transferEnded()
        #expect(!scheduler.isPaused)
    }

    @Test func anAbortDropsItsOwnWaitingReportsAndMakesItsTakenBatchStale() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        _ = scheduler.report(.opened)
        _ = scheduler.report(.sent)
        #expect(scheduler.nextBatch(upTo: 1).count == 1)  // OPENED is being delivered
        _ = scheduler.report(.headersReceived)
        _ = scheduler.report(.loading)
        #expect(scheduler.pauses(unread: ReportScheduler.pauseThreshold) == true)
        let discards = scheduler.discards
        scheduler.aborted()
        #expect(scheduler.discards == discards + 1)  // the OPENED batch taken is stale now
        #expect(!scheduler.isPaused && !scheduler.loadingReported)
        _ = scheduler.report(.done)
        #expect(Self.drain(&scheduler) == [["DONE@1"]])
    }

    @Test func aReopenKeepsTheEarlierOpensDoneAndStartsAFreshGeneration() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        _ = scheduler.report(.opened)
        _ = scheduler.report(.sent)
        _ = scheduler.report(.loading)
        // open() in flight: the transfer is stopped (its DONE), then a new open.
        scheduler.aborted()
        _ = scheduler.report(.done)
        scheduler.opened()
        #expect(scheduler.generation == 2 && !scheduler.loadingReported)
        _ = scheduler.report(.opened)
        _ = scheduler.report(.loading)  // not joined to open 1's (dropped) LOADING
        // Each batch holds one open's reports, oldest open first.
        #expect(Self.drain(&scheduler) == [["DONE@1"], ["OPENED@2", "LOADING@2"]])
        // An abort of open 2 drops its waiting reports; the batches taken were open 2's last,
        // so they are stale now.
        let discards = scheduler.discards
        _ = scheduler.report(.sent)
        scheduler.aborted()
        #expect(Self.drain(&scheduler).isEmpty && scheduler.discards == discards + 1)
    }

    @Test func aBatchHoldsAtLeastOneReport() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        _ = scheduler.report(.opened)
        #expect(scheduler.nextBatch(upTo: 0).count == 1)
        #expect(scheduler.nextBatch(upTo: 0).count == 0 && !scheduler.isDelivering)
    }

    @Test func aLongRunIsTakenInBatchesOfAtMostTheLimit() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        for state in [State.opened, .sent, .headersReceived] { _ = scheduler.report(state) }
        for _ in 0..<3 {
            _ = scheduler.report(.loading)
            #expect(scheduler.loadingDelivered(generation: 1) == false)  // as if it ran
        }
        #expect(Self.drain(&scheduler, perBatch: 2) == [["OPENED@1", "SENT@1"], ["HEADERS_RECEIVED@1", "LOADING@1"], ["LOADING@1", "LOADING@1"]])
    }

    @Test func reportQueueKeepsOrderWhileFilledAndEmptiedInTurns() {
        var queue = ReportQueue()
        func taken() -> [ReportQueue.Report] {
            let batch = queue.take()
            return (0..<batch.count).map { (batch[$0], batch.generation) }
        }
        #expect(queue.isEmpty && taken().isEmpty)
        queue.append(.opened, generation: 1)
        queue.append(.sent, generation: 1)
        #expect(taken().elementsEqual([(.opened, 1), (.sent, 1)], by: ==))
        queue.append(.headersReceived, generation: 1)
        queue.append(.loading, generation: 1)
        queue.append(.done, generation: 1)
        queue.append(.opened, generation: 2)
        // A batch holds the reports of one open.
        #expect(taken().elementsEqual([(.headersReceived, 1), (.loading, 1), (.done, 1)], by: ==))
        queue.append(.sent, generation: 2)  // while one is still waiting
        #expect(taken().elementsEqual([(.opened, 2), (.sent, 2)], by: ==))
        #expect(queue.isEmpty)
        // More than a batch holds: the rest waits, in order, while new ones join it.
        for state in [ReportKind.opened, .sent, .headersReceived, .loading, .loading, .loading, .loading, .loading, .loading] {
            queue.append(state, generation: 3)
        }
        #expect(taken().elementsEqual([(.opened, 3), (.sent, 3), (.headersReceived, 3)] + Array(repeating: (.loading, 3), count: 5), by: ==))
        queue.append(.done, generation: 3)
        #expect(queue.take(upTo: 1).count == 1)
        #expect(taken().elementsEqual([(.done, 3)], by: ==))
        #expect(queue.discards == 0)
        for state in [ReportKind.opened, .sent, .headersReceived] { queue.append(state, generation: 4) }  // reuses the slots
        #expect(queue.take(upTo: 1).count == 1)  // OPENED of open 4 is being delivered
        // An abort of open 4 drops its waiting reports, and makes the one taken stale.
        queue.discard(generation: 4)
        #expect(queue.isEmpty && queue.discards == 1)
        queue.append(.done, generation: 4)
        for state in [ReportKind.opened, .sent] { queue.append(state, generation: 5) }
        // An abort of open 5 drops only its own reports: open 4's DONE stays, and nothing
        // taken (of open 4) is stale.
        queue.discard(generation: 5)
        #expect(queue.discards == 1)
        queue.append(.done, generation: 5)
        #expect(taken().elementsEqual([(.done, 4)], by: ==))
        #expect(taken().elementsEqual([(.done, 5)], by: ==))
        #expect(taken().isEmpty && queue.discards == 1)
    }

    @Test func progressIsCoalescedAndTheLastOneBeforeDoneSeesTheEnd() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        #expect(scheduler.report(.opened) == true)
        #expect(Self.drain(&scheduler) == [["OPENED@1"]])
        #expect(scheduler.report(.sent) == true)
        #expect(scheduler.reportProgress() == false, "joins the run SENT started")
        #expect(scheduler.reportProgress() == false, "coalesced with the one waiting")
        #expect(scheduler.report(.headersReceived) == false)
        #expect(scheduler.report(.loading) == false)
        #expect(Self.drain(&scheduler) == [["SENT@1", "PROGRESS@1", "HEADERS_RECEIVED@1", "LOADING@1"]])
        // The progress callback has not returned yet: newer progress joins it.
        #expect(scheduler.reportProgress() == false)
        #expect(Self.drain(&scheduler) == [])
        scheduler.progressDelivered(generation: 1)
        _ = scheduler.loadingDelivered(generation: 1)
        #expect(scheduler.reportProgress() == true, "a new report, a new run")
        // The end: one waiting already reads the final counts, so no second one.
        #expect(scheduler.reportProgress(final: true) == false)
        #expect(scheduler.report(.done) == false)
        #expect(Self.drain(&scheduler) == [["PROGRESS@1", "DONE@1"]])
        // A progress callback still running at the end: one more, just before DONE.
        scheduler.opened()
        #expect(scheduler.report(.opened) == true)
        #expect(scheduler.reportProgress() == false)
        #expect(Self.drain(&scheduler) == [["OPENED@2", "PROGRESS@2"]])
        #expect(scheduler.reportProgress(final: true) == true)
        #expect(scheduler.report(.done) == false)
        #expect(Self.drain(&scheduler) == [["PROGRESS@2", "DONE@2"]])
    }

    @Test func anAbortDropsTheProgressOfItsOpen() {
        var scheduler = ReportScheduler()
        scheduler.opened()
        #expect(scheduler.report(.opened) == true)
        #expect(scheduler.reportProgress() == false)
        scheduler.aborted()
        #expect(scheduler.report(.done) == false)
        #expect(Self.drain(&scheduler) == [["DONE@1"]])
        #expect(scheduler.reportProgress() == true, "nothing waits for an earlier one")
    }
}
