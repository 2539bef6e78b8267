@testable import CurlXHR
import Foundation
import Testing

/// Where callbacks run: on the request's callback queue, one at a time with anything else on
/// that queue, and without holding up the engine. Serialized: one test floods the default
/// queue, which would hold up the reports another one counts.
@Suite(.serialized, .ownThreads) struct CallbackQueueTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Marks a queue so code can tell whether it runs on it.
    static let queueName = DispatchSpecificKey<String>()

    /// Sends an asynchronous GET whose body arrives in pauses (so later callbacks come from
    /// later rounds of the engine) and records, for every callback, the name its queue carries.
    func queueNamesSeen(_ configure: (HttpRequest) -> Void) throws -> (names: [String?], states: [HttpRequest.State]) {
        let request = HttpRequest()
        let names = Locked<[String?]>([])
        let recorder = Recorder { _, _ in
            names.withLock { $0.append(DispatchQueue.getSpecific(key: Self.queueName)) }
        }
        request.delegate = recorder
        configure(request)
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=3&size=1000&interval_ms=50", async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        #expect(request.getStatus() == 200)
        #expect(recorder.result.body.count == 3000)
        return (names.withLock { $0 }, recorder.result.states)
    }

    @Test func callbacksRunOnTheDefaultQueue() throws {
        HttpRequest.defaultCallbackQueue.setSpecific(key: Self.queueName, value: "default")
        let seen = try queueNamesSeen { _ in }
        // LOADING at least once: the default queue is shared with every other test, and the
        // reports of a queue that is behind are merged (ReportScheduler), so it may come once.
        #expect(seen.states.contains(.loading) && seen.states.last == .done, "\(seen.states)")
        #expect(seen.names.count == seen.states.count)
        #expect(seen.names.allSatisfy { $0 == "default" }, "\(seen.names)")
    }

    @Test func callbacksRunOnTheQueueTheRequestWasGiven() throws {
        let queue = DispatchQueue(label: "own callbacks")
        queue.setSpecific(key: Self.queueName, value: "own")
        let seen = try queueNamesSeen { $0.callbackQueue = queue }
        #expect(seen.states.last == .done, "\(seen.states)")
        #expect(seen.names.allSatisfy { $0 == "own" }, "\(seen.names)")
    }

    @Test func workOnTheDefaultQueueNeverOverlapsACallback() throws {
        // Blocks submitted to the default queue from another thread while callbacks run
        // there: at no time do two of them run at once.
        let running = Locked(0)
        let overlaps = Locked(0)
        @Sendable func occupy() {
            let before = running.withLock { value -> Int in value += 1; return value }
            if before > 1 { overlaps.withLock { $0 += 1 } }
            usleep(200)
            running.withLock { $0 -= 1 }
        }
        let requests = (0..<8).map { _ in HttpRequest() }
        let url = try env.httpURL + "/files/10k"
        let stop = Locked(false)
        let submitter = Thread {
            while !stop.withLock({ $0 }) {
                HttpRequest.defaultCallbackQueue.async { occupy() }
                usleep(100)
            }
        }
        submitter.start()
        for _ in 0..<5 {
            // A recorder for each round: one says DONE once, for that round's send.
            let recorders = requests.map { request in
                let recorder = Recorder { _, _ in occupy() }
                request.delegate = recorder
                return recorder
            }
            for request in requests {
                #expect(request.open("GET", url: url, async: true))
                #expect(request.send())
            }
            for recorder in recorders { #expect(recorder.waitForDone()) }
        }
        stop.withLock { $0 = true }
        HttpRequest.defaultCallbackQueue.sync {}
        #expect(overlaps.withLock { $0 } == 0)
        #expect(requests.allSatisfy { $0.getStatus() == 200 })
    }

    @Test func aRequestSentAgainFromItsDoneCallbackReportsEveryStateEachTime() throws {
        // A small response comes whole in one round of the engine, so its HEADERS_RECEIVED,
        // LOADING and DONE wait together; the next send starts inside that DONE callback.
        let url = try env.httpURL + "/files/100b"
        let sends = 50
        let states = Locked<[HttpRequest.State]>([])
        let received = Locked((current: 0, perSend: [Int]()))
        let finished = DispatchSemaphore(value: 0)
        let request = HttpRequest()
        request.onStatusChange = { request in
            let state = request.getState()
            states.withLock { $0.append(state) }
            let bytes = request.getReceiveBuffer().count
            received.withLock { $0.current += bytes }
            guard state == .done else { return }
            let done = received.withLock { received -> Int in
                received.perSend.append(received.current)
                received.current = 0
                return received.perSend.count
            }
            guard done < sends else {
                finished.signal()
                return
            }
            #expect(request.open("GET", url: url, async: true))
            #expect(request.send())
        }
        #expect(request.open("GET", url: url, async: true))
        #expect(request.send())
        #expect(finished.wait(timeout: .now() + 60) == .success)
        let everyState: [HttpRequest.State] = [.opened, .sent, .headersReceived, .loading, .done]
        #expect(states.withLock { $0 } == Array(repeatElement(everyState, count: sends).joined()))
        #expect(received.withLock { $0.perSend } == Array(repeating: 100, count: sends))
    }

    /// Holds `queue` until `request`, sent by `send`, is DONE, so that all its callbacks wait
    /// together; then lets them run.
    func deliverOnceDone(_ request: HttpRequest, on queue: DispatchQueue, _ send: () -> Void) {
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        send()
        let started = Date()
        while request.getState() != .done, Date().timeIntervalSince(started) < 10 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(request.getState() == .done)
        gate.signal()
    }

    @Test func aClosureClearedInACallbackIsNotCalledAgain() throws {
        let queue = DispatchQueue(label: "held")
        let request = HttpRequest()
        request.callbackQueue = queue
        let states = Locked<[HttpRequest.State]>([])
        let finished = DispatchSemaphore(value: 0)
        request.onStatusChange = { request in
            let state = request.getState()
            states.withLock { $0.append(state) }
            if state == .headersReceived {
                request.onStatusChange = nil
                finished.signal()
            }
        }
        let url = try env.httpURL + "/files/100b"
        deliverOnceDone(request, on: queue) {
            #expect(request.open("GET", url: url, async: true))
            #expect(request.send())
        }
        #expect(finished.wait(timeout: .now() + 10) == .success)
        queue.sync {}  // the rest of the callbacks have run (or were skipped)
        #expect(states.withLock { $0 } == [.opened, .sent, .headersReceived])
    }

    @Test func eachAbortedOpenGetsItsDoneWhenCallbacksRunLate() throws {
        // Two opens, each aborted, before any callback runs: both DONEs arrive, in order, and
        // nothing else of the aborted opens.
        let queue = DispatchQueue(label: "held")
        let request = HttpRequest()
        request.callbackQueue = queue
        let seen = Locked<[HttpRequest.State]>([])
        request.onStatusChange = { request in
            let state = request.getState()
            seen.withLock { $0.append(state) }
        }
        let url = try env.faultURL + "/delay?ms=5000"
        deliverOnceDone(request, on: queue) {
            for _ in 0..<2 {
                #expect(request.open("GET", url: url, async: true))
                #expect(request.send())
                #expect(request.abort())
            }
        }
        queue.sync {}
        #expect(seen.withLock { $0 } == [.done, .done])
    }

    @Test func aSynchronousSendInsideACallbackCompletes() throws {
        // The callback blocks the default queue until its synchronous request is DONE: the
        // engine must not need that queue to finish it.
        let url = try env.httpURL + "/files/100b"
        let inner = Locked<(status: Int, bytes: Int)?>(nil)
        let recorder = Recorder { _, state in
            guard state == .headersReceived else { return }
            let nested = HttpRequest()
            nested.open("GET", url: url)
            nested.send()
            inner.withLock { $0 = (nested.getStatus(), nested.getReceiveBuffer().count) }
        }
        let request = HttpRequest()
        request.delegate = recorder
        #expect(request.open("GET", url: url, async: true))
        #expect(request.send())
        #expect(recorder.waitForDone(seconds: 20))
        let result = try #require(inner.withLock { $0 })
        #expect(result.status == 200 && result.bytes == 100, "\(result)")
        #expect(request.getStatus() == 200)
    }
}
