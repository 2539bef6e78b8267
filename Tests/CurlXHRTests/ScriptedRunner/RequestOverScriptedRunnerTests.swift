@testable import CurlXHR
import Foundation
import Testing

/// HttpRequest's own logic with the engine played by a script: delivery, abort in every
/// state, re-open and backpressure, with no server. (The suites against real servers check
/// the same request over libcurl.)
@Suite(.ownThreads) struct RequestOverScriptedRunnerTests {
    typealias State = HttpRequest.State

    /// An asynchronous request over `runner` whose callbacks run on a queue the test holds
    /// (suspended until `release`), recorded by a `Recorder`.
    static func asyncRequest(_ runner: ScriptedRunner, action: (@Sendable (HttpRequest, State) -> Void)? = nil)
        -> (HttpRequest, Recorder, DispatchQueue) {
        let request = HttpRequest(runner: runner)
        let queue = DispatchQueue(label: "scripted callbacks")
        request.callbackQueue = queue
        let recorder = Recorder(action: action)
        request.delegate = recorder
        return (request, recorder, queue)
    }

    @Test func aSyncSendReturnsInDoneWithWhatTheEngineGave() throws {
        let runner = ScriptedRunner { runner, transfer in
            runner.head(transfer, status: 201, fields: "Content-Length: 11\r\nX-Kind: scripted\r\n")
            runner.body(transfer, "hello, ")
            runner.body(transfer, "sync")
            runner.finish(transfer)
        }
        let request = HttpRequest(runner: runner)
        #expect(request.open("POST", url: "http://127.0.0.1:1/x"))
        #expect(request.send("body"))
        #expect(request.getState() == .done)
        #expect(request.getStatus() == 201 && request.getStatusText() == "Created")
        #expect(request.getResponseHeader("x-kind") == "scripted")
        #expect(String(decoding: request.getReceiveBuffer(), as: UTF8.self) == "hello, sync")
        #expect(runner.commands == [.start(send: 1)])
        // Sent again: the finished transfer is prepared again for the next send.
        let first = ObjectIdentifier(try #require(runner.transfer))
        #expect(request.open("GET", url: "http://127.0.0.1:1/y"))
        #expect(request.send())
        #expect(runner.transfer.map(ObjectIdentifier.init) == first && runner.commands == [.start(send: 1), .start(send: 2)])
    }

    @Test func everyStateIsReportedOnceInOrderWithLoadingCoalesced() throws {
        let runner = ScriptedRunner()
        let (request, recorder, queue) = Self.asyncRequest(runner)
        queue.suspend()
        #expect(request.open("GET", url: "http://127.0.0.1:1/", async: true))
        #expect(request.send())
        let transfer = try #require(runner.transfer)
        runner.head(transfer, fields: "Content-Length: 9\r\n")
        #expect(request.getState() == .headersReceived && request.getStatus() == 200)
        for part in ["abc", "def", "ghi"] { #expect(runner.body(transfer, part) == .accepted) }
        runner.finish(transfer)
        #expect(request.getState() == .done)
        queue.resume()
        #expect(recorder.waitForDone())
        let seen = recorder.result
        #expect(seen.states == [.opened, .sent, .headersReceived, .loading, .done])
        #expect(String(decoding: seen.body, as: UTF8.self) == "abcdefghi")
        #expect(seen.statusAtHeaders == 200 && seen.statusAtDone == 200)
    }

    /// abort() in each state: true with one DONE and nothing after it in SENT,
    /// HEADERS_RECEIVED and LOADING; false and no change in UNSENT, OPENED and DONE. The
    /// engine is told to stop the send, and what the transfer reports later is refused.
    @Test(arguments: [State.unsent, .opened, .sent, .headersReceived, .loading, .done])
    func abortIn(_ state: State) throws {
        let runner = ScriptedRunner(completesStopsAtOnce: false)
        let (request, recorder, queue) = Self.asyncRequest(runner)
        if state != .unsent { #expect(request.open("GET", url: "http://127.0.0.1:1/", async: true)) }
        if state.rawValue >= State.sent.rawValue { #expect(request.send()) }
        let transfer = runner.transfer
        if state.rawValue >= State.headersReceived.rawValue, let transfer { runner.head(transfer) }
        if state.rawValue >= State.loading.rawValue, let transfer { runner.body(transfer, "partial") }
        if state == .done, let transfer { runner.finish(transfer) }
        #expect(request.getState() == state)
        queue.sync {}  // what came so far is delivered
        let inFlight = [State.sent, .headersReceived, .loading].contains(state)
        #expect(request.abort() == inFlight)
        guard inFlight, let transfer else {
            #expect(request.getState() == state && request.lastError != nil)
            #expect(!runner.commands.contains { if case .cancel = $0 { true } else { false } })
            return
        }
        #expect(request.getState() == .done && request.getStatus() == 0)
        #expect(request.getReceiveBuffer().isEmpty)
        #expect(request.getFailureKind() == .aborted)
        #expect(runner.commands.last == .cancel(send: 1))
        // News of the stopped send that was on its way before the engine took the cancel
        // changes nothing; then the engine completes it.
        #expect(runner.body(transfer, "late") == .refused)
        transfer.finish(nil, fallbackStatus: 200)
        #expect(request.getStatus() == 0 && request.getState() == .done)
        runner.completeStopped(transfer)
        #expect(recorder.waitForDone())
        queue.sync {}
        let seen = recorder.result
        #expect(seen.states.last == .done && seen.states.filter { $0 == .done }.count == 1)
        #expect(seen.callbacksAfterDone == 0 && seen.statusAtDone == 0)
        #expect(!seen.states.contains(.loading) || state == .loading)
    }

    @Test func abortInsideAHeadersReceivedCallbackIsDoneThere() throws {
        let seenAfterAbort = Locked<[State]>([])
        let runner = ScriptedRunner()
        let (request, recorder, queue) = Self.asyncRequest(runner) { request, state in
            guard state == .headersReceived else { return }
            _ = request.abort()
            seenAfterAbort.withLock { $0.append(request.getState()) }
        }
        queue.suspend()
        #expect(request.open("GET", url: "http://127.0.0.1:1/", async: true))
        #expect(request.send())
        let transfer = try #require(runner.transfer)
        runner.head(transfer)
        runner.body(transfer, "bytes that will be dropped")
        queue.resume()
        #expect(recorder.waitForDone())
        queue.sync {}
        #expect(seenAfterAbort.withLock { $0 } == [.done])
        // The LOADING queued behind HEADERS_RECEIVED is dropped; one DONE follows.
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .done])
        #expect(runner.commands == [.start(send: 1), .cancel(send: 1)])
    }

    @Test func aReopenInFlightStopsTheSendAndTheNextSendStartsAfresh() throws {
        let runner = ScriptedRunner(completesStopsAtOnce: false)
        let (request, recorder, queue) = Self.asyncRequest(runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/first", async: true))
        #expect(request.send())
        let first = try #require(runner.transfer)
        runner.head(first)
        runner.body(first, "old")
        #expect(request.open("GET", url: "http://127.0.0.1:1/second", async: true))
        #expect(request.getState() == .opened && request.getStatus() == 0)
        #expect(request.getReceiveBuffer().isEmpty)
        #expect(runner.commands == [.start(send: 1), .cancel(send: 1)])
        #expect(runner.body(first, "stale") == .refused)
        runner.completeStopped(first)
        #expect(request.send())
        let second = try #require(runner.transfer)
        runner.head(second, status: 204)
        runner.finish(second)
        #expect(recorder.waitForDone())
        queue.sync {}
        #expect(request.getStatus() == 204)
        // The first open's DONE (aborted), then the second's states.
        let states = recorder.result.states
        #expect(states.filter { $0 == .done }.count == 2)
        #expect(states.suffix(4) == [.opened, .sent, .headersReceived, .done])
    }

    @Test func aSlowLoadingCallbackPausesTheTransferAndItsEndResumesIt() throws {
        let gate = DispatchSemaphore(value: 0)
        let runner = ScriptedRunner()
        let (request, recorder, _) = Self.asyncRequest(runner) { _, state in
            if state == .loading { gate.wait() }  // a slow consumer: drained after the wait
        }
        #expect(request.open("GET", url: "http://127.0.0.1:1/", async: true))
        #expect(request.send())
        let transfer = try #require(runner.transfer)
        runner.head(transfer)
        let chunk = 256 * 1024
        var accepted = 0
        // The first LOADING callback is running (blocked on the gate, having drained what
        // came before it): bytes pile up to the threshold, then the transfer pauses.
        while runner.body(transfer, count: chunk) == .accepted {
            accepted += chunk
            #expect(accepted <= 2 * ReportScheduler.pauseThreshold + chunk)
        }
        #expect(!runner.commands.contains(.resume))
        gate.signal()  // the callback returns: the transfer resumes
        #expect(runner.resumed.wait(timeout: .now() + 10) == .success)
        #expect(runner.commands.last == .resume)
        // libcurl hands the paused bytes again.
        #expect(runner.body(transfer, count: chunk) == .accepted)
        accepted += chunk
        for _ in 0..<8 { gate.signal() }
        runner.finish(transfer)
        #expect(recorder.waitForDone())
        #expect(recorder.result.body.count == accepted)
    }

    @Test func anAsyncRequestReservesNoMoreThanALoadingCallbackLetsPileUp() {
        let request = HttpRequest(runner: ScriptedRunner())
        #expect(request.open("GET", url: "http://127.0.0.1:1/", async: true))
        #expect(request.withCore { $0.sink.reservationLimit } == ReportScheduler.pauseThreshold)
        #expect(request.open("GET", url: "http://127.0.0.1:1/"))
        #expect(request.withCore { $0.sink.reservationLimit } == MemorySink.maxReservation)
    }

    @Test func closeInDoneAsksTheEngineToCloseAndStopsNothing() throws {
        let runner = ScriptedRunner { runner, transfer in
            runner.head(transfer)
            runner.finish(transfer)
        }
        let request = HttpRequest(runner: runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/"))
        #expect(request.send())
        #expect(request.close())
        #expect(runner.commands == [.start(send: 1), .close(send: nil)])
        #expect(request.getState() == .done && request.getStatus() == 200)
    }

    @Test func anAbortFromAnotherThreadEndsASynchronousSend() throws {
        let started = DispatchSemaphore(value: 0)
        let runner = ScriptedRunner { runner, transfer in
            runner.head(transfer)  // and never finishes
            started.signal()
        }
        let request = HttpRequest(runner: runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/"))
        DispatchQueue.global().async {
            started.wait()  // the send is in flight
            _ = request.abort()
        }
        #expect(request.send())  // returns once the abort completed the send
        #expect(request.getState() == .done && request.getStatus() == 0)
        #expect(request.getFailureKind() == .aborted)
        #expect(runner.commands == [.start(send: 1), .cancel(send: 1)])
    }
}
