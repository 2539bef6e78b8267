@testable import CurlXHR
import Foundation
import Testing

/// `abort()` and re-`open()` in every state, against the fault server's slow answers.
@Suite(.ownThreads) struct AbortTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Asserts what DESIGN promises after an abort: DONE at once, status 0, data gone, one
    /// DONE callback and nothing after it (waiting a little to be sure).
    func expectAborted(_ request: HttpRequest, _ recorder: Recorder, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request.getState() == .done, sourceLocation: sourceLocation)
        #expect(request.getStatus() == 0, sourceLocation: sourceLocation)
        #expect(request.getStatusText() == "Request aborted", sourceLocation: sourceLocation)
        #expect(request.getFailureKind() == .aborted, sourceLocation: sourceLocation)
        #expect(recorder.waitForDone(), sourceLocation: sourceLocation)
        Thread.sleep(forTimeInterval: 0.5)
        let seen = recorder.result
        #expect(seen.states.filter { $0 == .done }.count == 1, "\(seen.states)", sourceLocation: sourceLocation)
        #expect(seen.states.last == .done, sourceLocation: sourceLocation)
        #expect(seen.callbacksAfterDone == 0, sourceLocation: sourceLocation)
        #expect(seen.statusAtDone == 0, sourceLocation: sourceLocation)
        #expect(request.getReceiveBuffer().isEmpty, sourceLocation: sourceLocation)
        #expect(!request.abort(), "a second abort finds DONE", sourceLocation: sourceLocation)
    }

    @Test func abortInSent() throws {
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=5000", async: true))
        #expect(request.send())
        #expect(request.getState() == .sent)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(request.getState() == .sent)
        let started = Date()
        #expect(request.abort())
        expectAborted(request, recorder)
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(recorder.result.states == [.opened, .sent, .done])
    }

    @Test(arguments: [false, true])
    func anAbortBeforeTheStartCommandEndsTheSendAtOnce(async: Bool) throws {
        // The abort lands after send's locked step and before its start command is posted:
        // the engine gets the cancel first. The send must not wait for the whole transfer.
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=3000", async: async))
        request.startWindowHook = { #expect(request.abort()) }
        let started = Date()
        #expect(request.send())
        if async { #expect(recorder.waitForDone()) }
        #expect(Date().timeIntervalSince(started) < 1.5, "the send waited for the aborted transfer")
        #expect(request.getState() == .done)
        #expect(request.getStatus() == 0)
        #expect(request.getFailureKind() == .aborted)
        // The request sends again, on the same transfer, normally.
        request.startWindowHook = nil
        #expect(request.open("GET", url: try env.faultURL + "/status?code=200"))
        #expect(request.send())
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "no text")")
        // One DONE (the abort drops its open's reports still waiting: OPENED and SENT).
        if async { #expect(recorder.result.states.filter { $0 == .done }.count == 1) }
    }

    @Test func abortInHeadersReceived() throws {
        // Headers at once, then no body for three seconds.
        let request = HttpRequest()
        let reachedHeaders = DispatchSemaphore(value: 0)
        let recorder = Recorder { _, state in if state == .headersReceived { reachedHeaders.signal() } }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/reset?after=0&wait_ms=3000", async: true))
        #expect(request.send())
        #expect(reachedHeaders.wait(timeout: .now() + 10) == .success)
        #expect(request.getState() == .headersReceived)
        #expect(request.abort())
        expectAborted(request, recorder)
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .done])
    }

    @Test func abortInLoadingFromInsideTheCallback() throws {
        let request = HttpRequest()
        let recorder = Recorder { request, state in
            if state == .loading {
                #expect(request.abort(), "abort from inside a LOADING callback")
                #expect(request.getState() == .done, "a callback that aborts sees DONE for the rest of it")
                #expect(request.getStatus() == 0)
                #expect(request.getReceiveBuffer().isEmpty)
            }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=20&size=1000&interval_ms=200", async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        expectAborted(request, recorder)
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .loading, .done])
    }

    @Test func abortInsideACallbackDropsTheReportsWaitingBehindIt() throws {
        // The callback queue is held until the response is LOADING, so OPENED, SENT,
        // HEADERS_RECEIVED and LOADING wait together; the abort in the third drops the fourth.
        let queue = DispatchQueue(label: "held until LOADING")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let request = HttpRequest()
        request.callbackQueue = queue
        let recorder = Recorder { request, state in
            if state == .headersReceived { #expect(request.abort(), "abort from inside a HEADERS_RECEIVED callback") }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=20&size=1000&interval_ms=200", async: true))
        #expect(request.send())
        let started = Date()
        while request.getState() != .loading, Date().timeIntervalSince(started) < 10 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(request.getState() == .loading)
        gate.signal()
        #expect(recorder.waitForDone())
        expectAborted(request, recorder)
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .done])
    }

    /// Opens `request` for a response that takes 10 s and sends it synchronously on another
    /// thread; returns once it is in flight, with what signals when that send returns.
    func sendSlowlyOnAnotherThread(_ request: HttpRequest) throws -> (returned: DispatchSemaphore, started: Date) {
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=10000"))
        let returned = DispatchSemaphore(value: 0)
        let started = Date()
        Thread.detachNewThread {
            request.send()
            returned.signal()
        }
        while request.getState() != .sent, Date().timeIntervalSince(started) < 5 { Thread.sleep(forTimeInterval: 0.01) }
        Thread.sleep(forTimeInterval: 0.2)
        return (returned, started)
    }

    @Test func abortFromAnotherThreadEndsASynchronousSend() throws {
        let request = HttpRequest()
        let (returned, started) = try sendSlowlyOnAnotherThread(request)
        #expect(request.abort())
        #expect(request.getState() == .done)
        #expect(returned.wait(timeout: .now() + 3) == .success, "the blocked send returns after abort")
        #expect(request.getStatus() == 0)
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func reopenFromAnotherThreadWhileASynchronousSendWaits() throws {
        let request = HttpRequest()
        let (returned, started) = try sendSlowlyOnAnotherThread(request)
        // The re-open aborts the waiting send's transfer; the new send waits for its own one
        // alone, whichever completion comes first.
        for _ in 0..<20 {
            #expect(request.open("GET", url: try env.httpURL + "/files/100b"))
            #expect(request.send())
            #expect(request.getState() == .done)
            #expect(request.getStatus() == 200)
            #expect(request.getReceiveBuffer().count == 100)
        }
        #expect(returned.wait(timeout: .now() + 3) == .success, "the first send returned when its transfer was aborted")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func openDuringLoadingAbortsAndStartsAfresh() throws {
        let request = HttpRequest()
        let queue = DispatchQueue(label: "late callbacks")
        request.callbackQueue = queue
        let loading = DispatchSemaphore(value: 0)
        let seenByLateDone = Locked<(bytes: Int, status: Int, text: String?)?>(nil)
        let recorder = Recorder { request, state in
            if state == .loading { loading.signal() }
            if state == .done {
                // The aborted transfer's DONE runs after the re-open and the new send: it
                // must see that request as it ended, not take the new one's data.
                seenByLateDone.withLock { $0 = (request.getReceiveBuffer().count, request.getStatus(), request.getStatusText()) }
            }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=50&size=1000&interval_ms=100", async: true))
        #expect(request.send())
        #expect(loading.wait(timeout: .now() + 10) == .success)
        #expect(request.getState() == .loading)
        queue.suspend()
        #expect(request.open("GET", url: try env.httpURL + "/files/100b"))
        #expect(request.getState() == .opened)
        #expect(request.getStatus() == 0)
        #expect(request.getReceiveBuffer().isEmpty, "the aborted transfer's bytes are gone")
        #expect(request.send())
        #expect(request.getStatus() == 200)
        queue.resume()
        #expect(recorder.waitForDone())
        #expect(request.getReceiveBuffer() == Pattern.bytes(100))
        let late = try #require(seenByLateDone.withLock { $0 })
        #expect(late.bytes == 0 && late.status == 0 && late.text == "Request aborted by open()", "\(late)")
        Thread.sleep(forTimeInterval: 0.3)
        let states = recorder.result.states
        #expect(states.filter { $0 == .done }.count == 1, "\(states)")
        #expect(states.last == .done, "the synchronous re-open reports nothing")
    }

    @Test func abortOutsideFlightSaysFalse() throws {
        let request = HttpRequest()
        #expect(!request.abort())
        #expect(request.getState() == .unsent)
        #expect(request.open("GET", url: try env.httpURL + "/files/100b"))
        #expect(!request.abort())
        #expect(request.getState() == .opened)
        #expect(request.send())
        #expect(!request.abort())
        #expect(request.getState() == .done)
        #expect(request.getStatus() == 200)
        #expect(request.getReceiveBuffer().count == 100)
    }
}
