@testable import CurlXHR
import Foundation
import Testing

/// `onProgress` and `getProgress()` against the fault server: totals from the head and the
/// body, coalesced reports, and a last report with the final counts before DONE.
@Suite(.ownThreads) struct ProgressTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Sends `body` (or nothing) to `url` asynchronously, recording every progress report and
    /// the state each came in; returns the request and the reports.
    func sendRecordingProgress(_ method: String, _ url: String, body: Data? = nil,
                               configure: (HttpRequest) -> Void = { _ in }) -> (HttpRequest, [HttpRequest.Progress], Recorder) {
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        let reports = Locked<[HttpRequest.Progress]>([])
        // Progress reports ("P") and state callbacks, in the order they ran.
        let log = Locked<[String]>([])
        request.onProgress = { request in
            reports.withLock { $0.append(request.getProgress()) }
            log.withLock { $0.append("P") }
        }
        request.onStatusChange = { request in log.withLock { $0.append(request.getState().description) } }
        #expect(request.open(method, url: url, async: true))
        configure(request)
        #expect(request.sendData(body))
        #expect(recorder.waitForDone())
        // The closure runs after the delegate that woke this thread.
        for _ in 0..<200 where log.withLock({ $0.last }) != "DONE" { Thread.sleep(forTimeInterval: 0.01) }
        let order = log.withLock { $0 }
        #expect(order.last == "DONE" && order.dropLast().last == "P", "the last progress report comes just before DONE: \(order)")
        return (request, reports.withLock { $0 }, recorder)
    }

    @Test func aDownloadReportsItsTotalAndEndsWithTheFinalCounts() throws {
        let size = 3_000_000
        let (request, reports, recorder) = sendRecordingProgress("GET", try env.faultURL + "/bytes?n=\(size)")
        #expect(recorder.result.body.count == size)
        let last = try #require(reports.last)
        #expect(last == HttpRequest.Progress(bytesSent: 0, bytesToSend: 0, bytesReceived: Int64(size), bytesToReceive: Int64(size)))
        #expect(request.getProgress() == last)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived }, "never backwards")
        let loadings = recorder.result.states.filter { $0 == .loading }.count
        #expect(reports.count <= loadings + 2, "coalesced as LOADING is: \(reports.count) reports, \(loadings) LOADING")
    }

    @Test func anUploadReportsWhatWentOut() throws {
        let body = Data(count: 2_000_000)
        let (request, reports, _) = sendRecordingProgress("POST", try env.faultURL + "/sink", body: body)
        #expect(request.getStatus() == 200)
        #expect(reports.allSatisfy { $0.bytesToSend == 2_000_000 }, "the total is known from the start")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent }, "never backwards")
        #expect(reports.allSatisfy { $0.bytesReceived == 0 || $0.bytesSent == 2_000_000 }, "the answer comes after the body")
        let last = try #require(reports.last)
        #expect(last.bytesSent == 2_000_000 && last.bytesToSend == 2_000_000)
        #expect(request.getProgress().bytesSent == 2_000_000)
    }

    @Test func unknownTotalsAreMinusOne() throws {
        let (chunked, reports, _) = sendRecordingProgress("GET", try env.faultURL + "/bytes?n=5000&chunked=1")
        #expect(chunked.getStatus() == 200)
        #expect(reports.last?.bytesReceived == 5000)
        #expect(reports.last?.bytesToReceive == -1, "no Content-Length")
        let (compressed, encodedReports, _) = sendRecordingProgress("GET", try env.faultURL + "/encoded?enc=gzip&n=100000")
        #expect(compressed.getResponseHeader("Content-Encoding") == "gzip")
        #expect(encodedReports.last?.bytesReceived == 100_000, "decoded bytes")
        #expect(encodedReports.last?.bytesToReceive == -1, "the Content-Length counts the wire's bytes")
        let before = HttpRequest()
        #expect(before.getProgress() == HttpRequest.Progress(), "nothing sent: 0 of 0, 0 of unknown")
    }

    @Test func aMultipartFormLearnsItsSizeFromLibcurl() throws {
        let path = try env.scratchPath("progress-form") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(count: 1_500_000).write(to: URL(fileURLWithPath: path))
        let (request, reports, _) = sendRecordingProgress("POST", try env.faultURL + "/multipart") {
            #expect($0.addPostFile(path, forKey: "f"))
        }
        #expect(request.getStatus() == 200)
        let last = try #require(reports.last)
        #expect(last.bytesToSend > 1_500_000, "the file and the form's framing")
        #expect(last.bytesSent == last.bytesToSend)
    }

    @Test func aResponseFileCountsWhatWentToDisk() throws {
        let path = try env.scratchPath("progress-file") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let (request, reports, _) = sendRecordingProgress("GET", try env.faultURL + "/file?size=2000000") { $0.setResponseFile(path) }
        #expect(request.getStatus() == 200)
        #expect(reports.last?.bytesReceived == 2_000_000 && reports.last?.bytesToReceive == 2_000_000)
    }

    @Test func aSynchronousSendCanBeWatchedFromAnotherThread() throws {
        let request = HttpRequest()
        let called = Locked(0)
        request.onProgress = { _ in called.withLock { $0 += 1 } }
        #expect(request.open("GET", url: try env.faultURL + "/drip?chunks=6&size=1000&interval_ms=100"))
        let seen = Locked<[Int64]>([])
        let watcher = Thread {
            for _ in 0..<20 {
                seen.withLock { $0.append(request.getProgress().bytesReceived) }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        watcher.start()
        #expect(request.send())
        while !watcher.isFinished { Thread.sleep(forTimeInterval: 0.02) }
        #expect(request.getProgress().bytesReceived == 6000)
        #expect(seen.withLock { $0 }.contains { $0 > 0 && $0 < 6000 }, "partial counts while it ran")
        #expect(called.withLock { $0 } == 0, "no callbacks for a synchronous send")
    }

    // MARK: async/await sends (response(…, progress:))

    /// The reports of an `async` send, once the last one (with `done`'s counts) has run.
    final class AwaitReports: Sendable {
        let seen = Locked<[HttpRequest.Progress]>([])
        let delay: Double
        init(delay: Double = 0) { self.delay = delay }
        var handler: HttpRequest.ProgressHandler {
            { progress in
                self.seen.withLock { $0.append(progress) }
                if self.delay > 0 { Thread.sleep(forTimeInterval: self.delay) }
            }
        }
        /// The reports, waiting (at most 5 s) for one that satisfies `done`.
        func all(until done: (HttpRequest.Progress) -> Bool) -> [HttpRequest.Progress] {
            for _ in 0..<500 where !(seen.withLock { $0.last.map(done) ?? false }) { Thread.sleep(forTimeInterval: 0.01) }
            return seen.withLock { $0 }
        }
    }

    @Test func anAwaitedUploadReportsTheBodyAsItGoesOut() async throws {
        let size = 1_000_000
        let request = HttpRequest()
        #expect(request.open("POST", url: try env.faultURL + "/sink"))
        #expect(request.setRateLimits(upload: 2_000_000))  // half a second: reports on the way
        let reports = AwaitReports()
        let response = try await request.response(sending: Data(count: size), progress: reports.handler)
        let echo = try await response.body.collect(upTo: 1 << 20)
        let all = reports.all { $0.bytesReceived == Int64(echo.count) && $0.bytesSent == Int64(size) }
        // The first report may already take in counts that came before it ran (coalesced).
        #expect(all.first.map { $0.bytesToSend == Int64(size) && $0.bytesReceived == 0 } == true,
                "the first report: the size known from the start, nothing received: \(all)")
        #expect(all.contains { $0.bytesSent > 0 && $0.bytesSent < Int64(size) }, "counts on the way: \(all)")
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent && $0.bytesReceived <= $1.bytesReceived },
                "never backwards: \(all)")
        #expect(all.last == HttpRequest.Progress(bytesSent: Int64(size), bytesToSend: Int64(size),
                                                 bytesReceived: Int64(echo.count), bytesToReceive: Int64(echo.count)))
        #expect(request.getProgress().bytesSent == 0, "the request's own counts are its own sends'")
    }

    @Test func anAwaitedFormAndFileLearnTheirSizeFromLibcurl() async throws {
        let path = try env.scratchPath("await-progress") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(count: 600_000).write(to: URL(fileURLWithPath: path))
        let form = HttpRequest()
        #expect(form.open("POST", url: try env.faultURL + "/multipart"))
        #expect(form.addPostFile(path, forKey: "file"))
        #expect(form.setRateLimits(upload: 1_500_000))
        let formReports = AwaitReports()
        let formResponse = try await form.response(progress: formReports.handler)
        _ = try await formResponse.body.collect(upTo: 1 << 20)
        let formAll = formReports.all { $0.bytesToSend > 600_000 && $0.bytesSent == $0.bytesToSend }
        let formSize = formAll.last?.bytesToSend ?? -1
        #expect(formSize > 600_000 && formAll.last?.bytesSent == formSize, "the form's size from libcurl, all sent: \(formAll)")
        #expect(formAll.allSatisfy { $0.bytesToSend == -1 || $0.bytesToSend == formSize }, "unknown until libcurl sized it: \(formAll)")

        let put = HttpRequest()
        #expect(put.open("PUT", url: try env.faultURL + "/sink"))
        let putReports = AwaitReports()
        _ = try await put.response(sendingFile: path, progress: putReports.handler).body.collect(upTo: 1 << 20)
        let putAll = putReports.all { $0.bytesSent == 600_000 }
        #expect(putAll.allSatisfy { $0.bytesToSend == 600_000 } && putAll.last?.bytesSent == 600_000, "\(putAll)")
    }

    @Test func anAwaitedDownloadCountsItsBodyAndASlowHandlerGetsFewerReports() async throws {
        let size = 3_000_000
        let request = HttpRequest()
        #expect(request.open("GET", url: try env.faultURL + "/bytes?n=\(size)"))
        let reports = AwaitReports(delay: 0.05)
        var chunks = 0
        for try await _ in try await request.response(progress: reports.handler).body { chunks += 1 }
        let all = reports.all { $0.bytesReceived == Int64(size) }
        #expect(all.last == HttpRequest.Progress(bytesSent: 0, bytesToSend: 0, bytesReceived: Int64(size), bytesToReceive: Int64(size)))
        #expect(all.dropFirst().allSatisfy { $0.bytesToReceive == Int64(size) }, "the Content-Length from the head on: \(all)")
        #expect(all.count < chunks, "a busy handler's reports coalesce: \(all.count) reports, \(chunks) chunks")
    }

    @Test func aCancelledAwaitedUploadStopsReporting() async throws {
        let request = HttpRequest()
        #expect(request.open("POST", url: try env.faultURL + "/sink"))
        #expect(request.setRateLimits(upload: 200_000))
        let reports = AwaitReports()
        let task = Task { try await request.response(sending: Data(count: 5_000_000), progress: reports.handler) }
        for _ in 0..<500 where !(reports.seen.withLock { $0.contains { $0.bytesSent > 0 } }) { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        // Reports queued before the stop may still run (a loaded machine): they settle, and
        // none comes after.
        var settled = reports.seen.withLock { $0 }
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(500))
            let now = reports.seen.withLock { $0 }
            if now == settled { break }
            settled = now
        }
        #expect(reports.seen.withLock { $0 } == settled, "no report after the transfer stopped")
        #expect(settled.last.map { $0.bytesSent > 0 && $0.bytesSent < 5_000_000 } == true, "\(settled)")
    }
}
