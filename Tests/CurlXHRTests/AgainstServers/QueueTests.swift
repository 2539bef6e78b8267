@testable import CurlXHR
import Foundation
import Testing

/// ``RequestQueue`` against a real server that counts what reaches it (the slow hypercorn
/// app): the limit holds at the server, the order follows priority, a full queue refuses.
@Suite(.ownThreads) struct QueueTests {
    @Test func aQueueOfFourNeverHasMoreThanFourRequestsAtTheServer() throws {
        let server = try SlowServer()
        let queue = RequestQueue(maxSimultaneous: 4)
        let requests = (0..<12).map {
            openedAsync(server.url(ms: 300, tag: "q\($0)"), caFile: server.caFile) { $0.queue = queue }
        }
        let seconds = sendAllAndWait(requests)
        for (request, recorder) in requests {
            #expect(request.getStatus() == 200 && recorder.result.states.first == .opened)
            #expect(recorder.result.states.filter { $0 == .sent }.count == 1)
        }
        let stats = try server.stats()
        #expect(stats.max_in_flight == 4, "at most \(stats.max_in_flight) at once")
        #expect(stats.started.count == 12)
        // Three rounds of 0.3 s: the queue held the rest back.
        #expect(seconds >= 0.85, "took \(seconds) s")
        #expect(queue.runningCount == 0 && queue.waitingCount == 0)
    }

    @Test func aHighPriorityRequestQueuedLastStartsBeforeTheWaitingNormalOnes() throws {
        let server = try SlowServer()
        let queue = RequestQueue(maxSimultaneous: 1, maxPending: 6)
        let open = { (tag: String, priority: HttpRequest.Priority) in
            openedAsync(server.url(ms: tag == "blocker" ? 500 : 50, tag: tag), caFile: server.caFile) {
                $0.queue = queue
                $0.priority = priority
            }
        }
        let blocker = open("blocker", .normal)
        let normals = (1...3).map { open("n\($0)", .normal) }
        let low = open("low", .low)
        let front = open("front", .normal)
        let high = open("high", .high)
        let overflow = open("overflow", .high)
        #expect(blocker.0.send())
        for (request, _) in normals + [low] { #expect(request.send()) }
        #expect(queue.enqueue(front.0, atFront: true))
        #expect(high.0.send())
        // Six wait: the seventh is refused, and stays OPENED.
        #expect(!overflow.0.send())
        #expect(overflow.0.lastError?.code == .queueFull && overflow.0.getState() == .opened)
        #expect(queue.runningCount == 1 && queue.waitingCount == 6)
        for (_, recorder) in [blocker] + normals + [low, front, high] { #expect(recorder.waitForDone()) }
        #expect(try server.stats().started == ["blocker", "high", "front", "n1", "n2", "n3", "low"])
    }

    @Test func anAbortedWaitingRequestGetsOneDoneNoSentAndNeverReachesTheServer() throws {
        let server = try SlowServer()
        let queue = RequestQueue(maxSimultaneous: 1)
        let blocker = openedAsync(server.url(ms: 500, tag: "blocker"), caFile: server.caFile) { $0.queue = queue }
        let waiter = openedAsync(server.url(ms: 50, tag: "waiter"), caFile: server.caFile) { $0.queue = queue }
        let next = openedAsync(server.url(ms: 50, tag: "next"), caFile: server.caFile) { $0.queue = queue }
        #expect(blocker.0.send() && waiter.0.send() && next.0.send())
        #expect(waiter.0.getState() == .opened)
        #expect(waiter.0.abort())
        #expect(waiter.0.getState() == .done && waiter.0.getStatus() == 0)
        #expect(waiter.1.waitForDone())
        #expect(blocker.1.waitForDone() && next.1.waitForDone())
        // One DONE and no SENT (an OPENED still waiting for its callback is dropped by the abort).
        let states = waiter.1.result.states
        #expect(states.filter { $0 == .done }.count == 1 && !states.contains(.sent) && states.last == .done, "\(states)")
        #expect(waiter.1.result.callbacksAfterDone == 0)
        #expect(blocker.0.getStatus() == 200 && next.0.getStatus() == 200)
        #expect(try server.stats().started == ["blocker", "next"])
    }

    @Test func synchronousSendsFromManyThreadsWaitTheirTurn() throws {
        let server = try SlowServer()
        let queue = RequestQueue(maxSimultaneous: 2)
        let statuses = Locked([Int]())
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let request = HttpRequest()
            request.queue = queue
            _ = request.open("GET", url: server.url(ms: 200, tag: "s\(index)"))
            _ = request.setCACertificateFile(server.caFile)
            _ = request.send()
            statuses.withLock { $0.append(request.getStatus()) }
        }
        #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 8))
        let stats = try server.stats()
        #expect(stats.max_in_flight == 2 && stats.started.count == 8)
    }

    @Test func aRequestCanSwitchQueuesBetweenSends() throws {
        let server = try SlowServer()
        let small = RequestQueue(maxSimultaneous: 1)
        let (request, body) = fetchSync("GET", server.url(ms: 10, tag: "one")) {
            $0.setCACertificateFile(server.caFile)
            $0.queue = small
        }
        #expect(request.getStatus() == 200 && !body.isEmpty)
        #expect(request.queue === small && small.runningCount == 0)
        #expect(request.open("GET", url: server.url(ms: 10, tag: "two")))
        request.queue = nil
        #expect(request.send() && request.getStatus() == 200)
        #expect(try server.stats().started == ["one", "two"])
    }

    @Test func theProcessWidePerHostLimitHoldsConnectionsToTwo() throws {
        let server = try SlowServer()
        let probe = TestEnvironment.builtProduct("curlxhr-probe")
        // Six HTTP/1.1 requests at once in a process allowing two connections per host: two
        // at the server at a time, over two connections.
        let result = try Shell.run(probe, ["connection-limits", server.url(ms: 300, tag: "limited"), "0", "2", "6", server.caFile])
        #expect(result.status == 0 && result.output.contains("\"statuses\":[200,200,200,200,200,200]"), "\(result.output)")
        let stats = try server.stats()
        #expect(stats.max_in_flight == 2 && stats.started.count == 6 && stats.client_ports.count == 2, "\(stats)")

        // And with no limit, all six at once.
        let free = try SlowServer()
        let unlimited = try Shell.run(probe, ["connection-limits", free.url(ms: 300, tag: "free"), "0", "0", "6", free.caFile])
        #expect(unlimited.status == 0, "\(unlimited.output)")
        #expect(try free.stats().max_in_flight == 6)
    }
}
