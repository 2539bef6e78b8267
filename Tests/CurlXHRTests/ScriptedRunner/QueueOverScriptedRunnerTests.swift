@testable import CurlXHR
import Foundation
import Testing

/// Requests in a ``RequestQueue`` with the engine played by a script: who starts, who waits
/// and what each reports, with no server. (QueueTests checks the same against a server.)
/// Every test ends every send it made (the engine's count of transfers in flight, which
/// LoadTests checks, counts scripted ones too).
@Suite(.ownThreads) struct QueueOverScriptedRunnerTests {
    typealias State = HttpRequest.State

    /// An asynchronous request of its own runner, in `queue`, opened; callbacks recorded.
    static func queued(_ queue: RequestQueue, priority: HttpRequest.Priority = .normal) -> (HttpRequest, ScriptedRunner, Recorder) {
        let runner = ScriptedRunner()
        let request = HttpRequest(runner: runner)
        request.callbackQueue = DispatchQueue(label: "queued callbacks")
        let recorder = Recorder()
        request.delegate = recorder
        request.queue = queue
        request.priority = priority
        #expect(request.open("GET", url: "http://127.0.0.1:1/", async: true))
        return (request, runner, recorder)
    }

    /// Waits until the callbacks reported so far have run.
    static func settle(_ request: HttpRequest) { request.callbackQueue.sync {} }

    /// Starts a synchronous send of `request` on another thread and returns once it waits in
    /// `queue`; the semaphore is signalled when that send returns.
    static func sendWaiting(_ request: HttpRequest, in queue: RequestQueue) -> DispatchSemaphore {
        let returned = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = request.send()
            returned.signal()
        }
        while queue.waitingCount == 0 { usleep(1_000) }
        return returned
    }

    @Test func aRequestBeyondTheSlotsWaitsOpenedWithNoCallbackUntilOneEnds() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let (first, firstRunner, firstSeen) = Self.queued(queue)
        let (second, secondRunner, secondSeen) = Self.queued(queue)
        #expect(first.send())
        #expect(second.send())
        Self.settle(first); Self.settle(second)
        #expect(first.getState() == .sent && second.getState() == .opened)
        #expect(secondRunner.commands.isEmpty && secondSeen.result.states == [.opened])
        #expect(queue.runningCount == 1 && queue.waitingCount == 1)
        // Waiting: a second send and the pre-send switches are refused, and say why.
        #expect(!second.send())
        #expect(second.lastError?.message == "send is not allowed while the request waits in its queue")
        #expect(!second.setTimeouts(total: 5))
        #expect(!second.setRequestHeader("X-Late", value: "1"))
        firstRunner.finish(try #require(firstRunner.transfer))
        #expect(firstSeen.waitForDone())
        #expect(second.getState() == .sent && secondRunner.commands == [.start(send: 1)])
        #expect(queue.runningCount == 1 && queue.waitingCount == 0)
        secondRunner.finish(try #require(secondRunner.transfer))
        #expect(secondSeen.waitForDone())
        #expect(secondSeen.result.states == [.opened, .sent, .headersReceived, .done])
        #expect(queue.runningCount == 0)
    }

    @Test func abortingAWaitingRequestGivesOneDoneNoSentAndFreesNothingElse() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let (first, firstRunner, firstSeen) = Self.queued(queue)
        let (second, secondRunner, secondSeen) = Self.queued(queue)
        let (third, thirdRunner, _) = Self.queued(queue)
        #expect(first.send() && second.send() && third.send())
        #expect(second.abort())
        #expect(second.getState() == .done && second.getStatus() == 0 && second.getFailureKind() == .aborted)
        #expect(secondSeen.waitForDone())
        Self.settle(second)
        // One DONE, no SENT (an OPENED whose callback had not run yet is dropped by the abort).
        let states = secondSeen.result.states
        #expect(states.filter { $0 == .done }.count == 1 && !states.contains(.sent) && states.last == .done, "\(states)")
        #expect(secondSeen.result.callbacksAfterDone == 0)
        #expect(secondRunner.commands.isEmpty)
        // The running request runs on; the third still waits.
        #expect(first.getState() == .sent && third.getState() == .opened)
        #expect(queue.runningCount == 1 && queue.waitingCount == 1)
        firstRunner.finish(try #require(firstRunner.transfer))
        #expect(firstSeen.waitForDone())
        #expect(third.getState() == .sent && thirdRunner.commands == [.start(send: 1)])
        #expect(secondRunner.commands.isEmpty)
        #expect(third.abort())
    }

    @Test func beyondMaxPendingSendSaysFalseAndTheRequestStaysOpened() throws {
        let queue = RequestQueue(maxSimultaneous: 1, maxPending: 1)
        let (first, _, _) = Self.queued(queue)
        let (second, _, _) = Self.queued(queue)
        let (third, thirdRunner, thirdSeen) = Self.queued(queue)
        #expect(first.send() && second.send())
        #expect(!third.send())
        #expect(third.lastError?.code == .queueFull)
        #expect(third.lastError?.message == "the queue already holds 1 waiting request (maxPending)")
        #expect(third.getState() == .opened && thirdRunner.commands.isEmpty)
        Self.settle(third)
        #expect(thirdSeen.result.states == [.opened])
        // Still OPENED and free: it may go elsewhere.
        third.queue = nil
        #expect(third.send() && third.getState() == .sent)
        for request in [first, second, third] { #expect(request.abort()) }
        #expect(queue.runningCount == 0 && queue.waitingCount == 0)
    }

    @Test func reopeningAWaitingRequestTakesItOutAndItMayQueueAgain() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let (first, firstRunner, _) = Self.queued(queue)
        let (second, secondRunner, secondSeen) = Self.queued(queue)
        #expect(first.send() && second.send())
        Self.settle(second)
        #expect(second.open("GET", url: "http://127.0.0.1:1/again", async: true))
        #expect(second.getState() == .opened && queue.waitingCount == 0)
        #expect(second.send())
        #expect(queue.waitingCount == 1)
        firstRunner.finish(try #require(firstRunner.transfer))
        #expect(second.getState() == .sent && secondRunner.commands == [.start(send: 2)])
        secondRunner.finish(try #require(secondRunner.transfer))
        #expect(secondSeen.waitForDone())
        Self.settle(second)
        // The open in between passed through DONE, as for a request in flight.
        #expect(secondSeen.result.states == [.opened, .done, .opened, .sent, .headersReceived, .done])
    }

    @Test func aSynchronousSendWaitsItsTurnAndAnAbortFromElsewhereEndsIt() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let (first, firstRunner, _) = Self.queued(queue)
        #expect(first.send())
        // Answered as soon as it starts.
        let runner = ScriptedRunner { runner, transfer in
            runner.head(transfer, status: 204)
            runner.finish(transfer)
        }
        let waiter = HttpRequest(runner: runner)
        waiter.queue = queue
        #expect(waiter.open("GET", url: "http://127.0.0.1:1/"))
        var returned = Self.sendWaiting(waiter, in: queue)
        #expect(returned.wait(timeout: .now() + 0.2) == .timedOut)  // blocked, waiting
        #expect(waiter.getState() == .opened)
        firstRunner.finish(try #require(firstRunner.transfer))
        #expect(returned.wait(timeout: .now() + 5) == .success)
        #expect(waiter.getState() == .done && waiter.getStatus() == 204)

        // Again, and this time an abort from another thread ends the wait.
        let (blocker, blockerRunner, _) = Self.queued(queue)
        #expect(blocker.send())
        #expect(waiter.open("GET", url: "http://127.0.0.1:1/"))
        returned = Self.sendWaiting(waiter, in: queue)
        #expect(waiter.abort())
        #expect(returned.wait(timeout: .now() + 5) == .success)
        #expect(waiter.getState() == .done && waiter.getStatus() == 0 && waiter.getFailureKind() == .aborted)
        #expect(runner.commands == [.start(send: 1)])
        blockerRunner.finish(try #require(blockerRunner.transfer))
        #expect(queue.runningCount == 0 && queue.waitingCount == 0)
    }

    @Test func abortWaitingEndsTheWaitersAndLeavesTheRunning() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let (first, firstRunner, _) = Self.queued(queue)
        let waiters = (0..<3).map { _ in Self.queued(queue) }
        #expect(first.send())
        for (request, _, _) in waiters { #expect(request.send()) }
        queue.abortWaiting()
        for (request, runner, seen) in waiters {
            #expect(request.getState() == .done && request.getStatus() == 0)
            #expect(seen.waitForDone() && runner.commands.isEmpty)
        }
        #expect(first.getState() == .sent && queue.runningCount == 1 && queue.waitingCount == 0)
        firstRunner.finish(try #require(firstRunner.transfer))
        #expect(queue.runningCount == 0)
        for (_, runner, _) in waiters { #expect(runner.commands.isEmpty) }
    }

    @Test func aSlotOrAnAbortMeantForAnEarlierSendLeavesALaterOneAlone() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let (first, firstRunner, _) = Self.queued(queue)
        let (second, secondRunner, _) = Self.queued(queue)
        #expect(first.send() && second.send())
        let earlier = try #require(second.withCore { $0.machine.waitingSlot })
        // Opened and sent again: it waits for another slot.
        #expect(second.open("GET", url: "http://127.0.0.1:1/again", async: true))
        #expect(second.send())
        let later = try #require(second.withCore { $0.machine.waitingSlot })
        #expect(later != earlier && queue.waitingCount == 1)
        // The earlier send's slot, or an abort of it, comes late: the later send keeps waiting.
        second.slotFreed(earlier)
        second.stopWaiting(forSlot: earlier)
        #expect(second.getState() == .opened && secondRunner.commands.isEmpty && queue.waitingCount == 1)
        // Its own slot starts it.
        firstRunner.finish(try #require(firstRunner.transfer))
        #expect(second.getState() == .sent && secondRunner.commands == [.start(send: 2)])
        #expect(second.abort())
        #expect(queue.runningCount == 0 && queue.waitingCount == 0)
    }

    @Test func aSynchronousSendThatWouldWaitIsRefusedInADefaultQueueCallback() throws {
        let queue = RequestQueue(maxSimultaneous: 1)
        let (blocker, _, _) = Self.queued(queue)
        #expect(blocker.send())
        let refusal = Locked<HttpRequestError?>(nil)
        let done = DispatchSemaphore(value: 0)
        let caller = HttpRequest(runner: ScriptedRunner())  // its callbacks on the default queue
        caller.onStatusChange = { request in
            guard request.getState() == .opened else { return }
            let waiter = HttpRequest(runner: ScriptedRunner())
            waiter.queue = queue
            _ = waiter.open("GET", url: "http://127.0.0.1:1/")
            if !waiter.send() { refusal.withLock { $0 = waiter.lastError } }
            done.signal()
        }
        #expect(caller.open("GET", url: "http://127.0.0.1:1/", async: true))
        #expect(done.wait(timeout: .now() + 5) == .success)
        let error = try #require(refusal.withLock { $0 })
        #expect(error.code == .invalidState && error.message.contains("inside a callback"))
        #expect(queue.waitingCount == 0 && queue.runningCount == 1)
        // Outside a callback the same send waits for its turn.
        let waiter = HttpRequest(runner: ScriptedRunner())
        waiter.queue = queue
        #expect(waiter.open("GET", url: "http://127.0.0.1:1/"))
        let returned = Self.sendWaiting(waiter, in: queue)
        #expect(waiter.getState() == .opened)
        #expect(waiter.abort() && returned.wait(timeout: .now() + 5) == .success)
        #expect(blocker.abort())
    }
}

