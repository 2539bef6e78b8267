@testable import CurlXHR
import Foundation
import Testing

/// `async` responses with no server: the scripted runner plays the engine, event by event,
/// and records what the stream asks of it (start, cancel, resume).
@Suite(.ownThreads) struct ResponseStreamOverScriptedRunnerTests {
    func opened(_ runner: ScriptedRunner, configure: (HttpRequest) -> Void = { _ in }) -> HttpRequest {
        let request = HttpRequest(runner: runner)
        #expect(request.open("GET", url: "http://example.invalid/"))
        configure(request)
        return request
    }

    /// Waits (briefly) until the runner saw `count` commands.
    func commands(_ runner: ScriptedRunner, count: Int) async throws -> [ScriptedRunner.Command] {
        for _ in 0..<500 where runner.commands.count < count { try await Task.sleep(for: .milliseconds(2)) }
        return runner.commands
    }

    @Test func aSlowConsumerPausesTheTransferAndReadingResumesIt() async throws {
        let runner = ScriptedRunner()
        let request = opened(runner)
        async let pending = request.response()
        #expect(try await commands(runner, count: 1) == [.start(send: 1)])
        let transfer = try #require(runner.transfer)
        runner.head(transfer, fields: "Content-Length: 3145728\r\n")
        let response = try await pending
        #expect(response.expectedContentLength == 3 << 20)
        // 1 MiB kept for the consumer: the next chunk is not taken, and libcurl keeps it.
        #expect(runner.body(transfer, count: 1 << 20) == .accepted)
        #expect(runner.body(transfer, count: 1 << 20) == .paused)
        var iterator = response.body.makeAsyncIterator()
        #expect(try await iterator.next()?.count == 1 << 20)
        #expect(runner.commands == [.start(send: 1), .resume], "reading what waited resumes the transfer")
        // libcurl hands over the paused chunk again; the last one waits for the reader again.
        #expect(runner.body(transfer, count: 1 << 20) == .accepted)
        #expect(runner.body(transfer, count: 1 << 20) == .paused)
        #expect(try await iterator.next()?.count == 1 << 20)
        #expect(runner.commands == [.start(send: 1), .resume, .resume])
        #expect(runner.body(transfer, count: 1 << 20) == .accepted)
        runner.finish(transfer)
        #expect(try await iterator.next()?.count == 1 << 20)
        #expect(try await iterator.next() == nil)
        #expect(try await iterator.next() == nil, "and stays ended")
    }

    @Test func cancellingMidBodyCancelsTheSendAndRefusesWhatComesAfter() async throws {
        // The runner completes the cancelled send only when told: as the engine may, it first
        // hands over bytes that were on their way.
        let runner = ScriptedRunner(completesStopsAtOnce: false)
        let request = opened(runner)
        let reading = Task {
            let response = try await request.response()
            for try await _ in response.body {}
        }
        _ = try await commands(runner, count: 1)
        let transfer = try #require(runner.transfer)
        runner.head(transfer)
        #expect(runner.body(transfer, "first") == .accepted)
        reading.cancel()
        await #expect(throws: CancellationError.self) { try await reading.value }
        #expect(runner.commands == [.start(send: 1), .cancel(send: 1)])
        #expect(runner.body(transfer, "late") == .refused)
        runner.completeStopped(transfer)
    }

    @Test func aFailureBeforeTheHeadThrowsItsKind() async throws {
        let runner = ScriptedRunner(onStart: { runner, transfer in
            runner.finish(transfer, failure: TransferFailure(kind: .tls, text: "SSL certificate problem"))
        })
        do {
            _ = try await opened(runner).response()
            Issue.record("a failed send returned a response")
        } catch let error as HttpRequestError {
            #expect(error.code == .transferFailed && error.failureKind == .tls && error.message == "SSL certificate problem")
        }
    }

    @Test func aCancelledWaitingResponseLeavesItsQueueWithoutStarting() async throws {
        let runner = ScriptedRunner()
        let queue = RequestQueue(maxSimultaneous: 1)
        let first = opened(runner) { $0.queue = queue }
        let second = opened(runner) { $0.queue = queue }
        let third = opened(runner) { $0.queue = queue }
        async let running = first.response()
        _ = try await commands(runner, count: 1)
        let firstTransfer = try #require(runner.transfer)
        let waiting = Task { try await second.response() }
        let next = Task { try await third.response() }
        for _ in 0..<500 where queue.waitingCount < 2 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(queue.runningCount == 1 && queue.waitingCount == 2)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        #expect(queue.waitingCount == 1)
        #expect(runner.commands == [.start(send: 1)], "the cancelled one never started")
        // The first ends: the third, not the cancelled second, takes the slot.
        runner.head(firstTransfer)
        runner.finish(firstTransfer)
        #expect(try await running.status == 200)
        #expect(try await commands(runner, count: 2) == [.start(send: 1), .start(send: 1)])
        let thirdTransfer = try #require(runner.transfer)
        #expect(thirdTransfer !== firstTransfer)
        runner.head(thirdTransfer, status: 204)
        runner.finish(thirdTransfer)
        #expect(try await next.value.status == 204)
        #expect(queue.runningCount == 0 && queue.waitingCount == 0)
    }

    @Test func abortWaitingOfTheQueueEndsAWaitingResponse() async throws {
        let runner = ScriptedRunner()
        let queue = RequestQueue(maxSimultaneous: 1)
        async let running = opened(runner) { $0.queue = queue }.response()
        _ = try await commands(runner, count: 1)
        let first = try #require(runner.transfer)
        let waiter = opened(runner) { $0.queue = queue }
        let waiting = Task { try await waiter.response() }
        for _ in 0..<500 where queue.waitingCount < 1 { try await Task.sleep(for: .milliseconds(2)) }
        queue.abortWaiting()
        do {
            _ = try await waiting.value
            Issue.record("an aborted waiting response returned")
        } catch let error as HttpRequestError {
            #expect(error.failureKind == .aborted)
        }
        runner.head(first)
        runner.finish(first)
        #expect(try await running.status == 200)
        #expect(runner.commands == [.start(send: 1)])
    }

    @Test func aRequestReusesTheStreamOfAResponseLetGoOf() async throws {
        let runner = ScriptedRunner(onStart: { runner, transfer in
            runner.head(transfer)
            runner.body(transfer, "body \(transfer.sends)")
            runner.finish(transfer)
        })
        let request = opened(runner)
        var first: HttpResponse? = try await request.response()
        #expect(try await first?.body.collect(upTo: 100) == Data("body 1".utf8))
        // The first response is still held: the second gets a stream and a transfer of its own
        // (its first send). (The test holds no transfer: a reference would prevent reuse.)
        var second: HttpResponse? = try await request.response()
        #expect(try await second?.body.collect(upTo: 100) == Data("body 1".utf8))
        first = nil
        second = nil
        // Both let go of: the third reuses the last one, for its second send, and reads afresh.
        let third = try await request.response()
        #expect(try await third.body.collect(upTo: 100) == Data("body 2".utf8))
        #expect(runner.commands == [.start(send: 1), .start(send: 1), .start(send: 2)])
    }
}
