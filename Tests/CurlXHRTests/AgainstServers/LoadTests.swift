@testable import CurlXHR
import Foundation
import Synchronization
import Testing

/// Many requests at once, big bodies, and the engine's bookkeeping afterwards.
@Suite(.ownThreads) struct LoadTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Starts `count` asynchronous GETs of `url` and waits for all of them; returns the bodies.
    func asyncBatch(_ url: String, count: Int) -> [(status: Int, body: Data)] {
        let results = Locked<[(status: Int, body: Data)]>([])
        let group = DispatchGroup()
        var requests: [HttpRequest] = []
        for _ in 0..<count {
            let request = HttpRequest()
            let body = Locked(Data())
            group.enter()
            request.onStatusChange = { request in
                let state = request.getState()
                guard state == .loading || state == .done else { return }
                let chunk = request.getReceiveBuffer()
                body.withLock { $0.append(chunk) }
                if state == .done {
                    let status = request.getStatus()
                    results.withLock { $0.append((status, body.withLock { $0 })) }
                    group.leave()
                }
            }
            request.callbackQueue = .global()
            request.open("GET", url: url, async: true)
            requests.append(request)
        }
        for request in requests { request.send() }
        _ = group.wait(timeout: .now() + 120)
        return results.withLock { $0 }
    }

    @Test func thirtyTwoThreadsOfSyncRequestsWhileAsyncRequestsRun() throws {
        let url = try env.httpURL + "/files/10k"
        let expected = Pattern.bytes(10 * 1024)
        let failures = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        let asyncResults = Locked<[(status: Int, body: Data)]>([])
        let asyncDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            asyncResults.withLock { $0 = self.asyncBatch(url, count: 300) }
            asyncDone.signal()
        }
        DispatchQueue.concurrentPerform(iterations: 32) { _ in
            for _ in 0..<50 {
                let request = HttpRequest()
                request.open("GET", url: url)
                request.send()
                if request.getStatus() != 200 || request.getReceiveBuffer() != expected {
                    failures.add(1, ordering: .relaxed)
                }
                completed.add(1, ordering: .relaxed)
            }
        }
        #expect(completed.load(ordering: .relaxed) == 32 * 50)
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(asyncDone.wait(timeout: .now() + 120) == .success)
        let results = asyncResults.withLock { $0 }
        #expect(results.count == 300)
        #expect(results.allSatisfy { $0.status == 200 && $0.body == expected })
    }

    /// The engine is woken only when it is about to wait for libcurl: a request posted at any
    /// other moment must be found by the loop itself. A post the loop neither found nor was
    /// woken for would sit until `curl_multi_poll` times out (1 s); one at a time on loopback a
    /// request takes milliseconds. Chains of requests, each sent from the previous one's DONE
    /// callback or right after a synchronous send returns, hit every moment of the loop.
    @Test(.alone) func requestsPostedAtAnyMomentOfTheLoopAreNeverLeftWaiting() throws {
        let url = try env.httpURL + "/files/100b"
        let slowest = Locked(0.0)
        let failures = Atomic<Int>(0)
        @Sendable func record(_ request: HttpRequest, since start: ContinuousClock.Instant) {
            let took = (ContinuousClock.now - start).components
            let seconds = Double(took.seconds) + Double(took.attoseconds) / 1e18
            slowest.withLock { $0 = max($0, seconds) }
            if request.getStatus() != 200 || request.getReceiveBuffer() != Pattern.bytes(100) {
                failures.add(1, ordering: .relaxed)
            }
        }
        let chainDone = DispatchSemaphore(value: 0)
        let chained = HttpRequest()
        let remaining = Atomic<Int>(300)
        let started = Locked(ContinuousClock.now)
        @Sendable func next() {
            started.withLock { $0 = .now }
            chained.open("GET", url: url, async: true)
            chained.send()
        }
        chained.onStatusChange = { request in
            guard request.getState() == .done else { return }
            record(request, since: started.withLock { $0 })
            if remaining.subtract(1, ordering: .relaxed).newValue > 0 { next() } else { chainDone.signal() }
        }
        next()
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let request = HttpRequest()
            for _ in 0..<150 {
                let start = ContinuousClock.now
                request.open("GET", url: url)
                request.send()
                record(request, since: start)
            }
        }
        #expect(chainDone.wait(timeout: .now() + 120) == .success)
        #expect(failures.load(ordering: .relaxed) == 0)
        let worst = slowest.withLock { $0 }
        #expect(worst < 0.9, "a request took \(worst) s: it waited for the engine's poll timeout")
    }

    @Test func aThousandAsyncRequestsInFlightAtOnce() throws {
        let results = asyncBatch(try env.httpURL + "/files/100b", count: 1000)
        #expect(results.count == 1000)
        let wrong = results.filter { $0.status != 200 || $0.body != Pattern.bytes(100) }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first status \(wrong.first?.status ?? -1)")
    }

    @Test func aRequestLetGoOfIsFreedWithTheTransferItKeeps() throws {
        // A request keeps its last transfer for the next send; the transfer must not keep the
        // request: once the application lets go of it, both go (sync, and async after DONE).
        let url = try env.httpURL + "/files/100b"
        weak var syncRequest: HttpRequest?
        weak var asyncRequest: HttpRequest?
        do {
            let request = HttpRequest()
            #expect(request.open("GET", url: url))
            #expect(request.send())
            #expect(request.getStatus() == 200)
            syncRequest = request
        }
        do {
            let request = HttpRequest()
            let done = DispatchSemaphore(value: 0)
            request.onStatusChange = { if $0.getState() == .done { done.signal() } }
            #expect(request.open("GET", url: url, async: true))
            #expect(request.send())
            #expect(done.wait(timeout: .now() + 20) == .success)
            asyncRequest = request
        }
        // The engine and the callback queue let go of theirs as they finish.
        let deadline = Date().addingTimeInterval(10)
        while syncRequest != nil || asyncRequest != nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(syncRequest == nil, "the synchronous request was not freed")
        #expect(asyncRequest == nil, "the asynchronous request was not freed")
    }

    /// (That no transfer is left behind is the soak's check, in a process of its own: in this
    /// one, other suites' transfers share the count, and an `async` test starved of the
    /// cooperative pool may hold one for a long while.)
    @Test func tenThousandRequestsFromEightThreadsAllSucceed() throws {
        let url = try env.httpURL + "/files/100b"
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let request = HttpRequest()
            for _ in 0..<1250 {
                request.open("GET", url: url)
                request.send()
                if request.getStatus() != 200 || request.getReceiveBuffer().count != 100 {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
    }

    @Test func twoHundredMiBDownloadDrainedInLoadingStaysSmall() throws {
        let size = 200 * 1024 * 1024
        let result = try probe(["download", try env.faultURL + "/bytes?n=\(size)"])
        #expect(result["status"] as? Int == 200)
        #expect(result["bytes"] as? Int == size)
        #expect(result["pattern_ok"] as? Bool == true)
        #expect((result["loading_reports"] as? Int ?? 0) > 10)
        let growth = (result["peak_kib"] as? Int ?? .max) - (result["baseline_kib"] as? Int ?? 0)
        #expect(growth < 32 * 1024, "peak memory grew by \(growth) KiB")
    }

    @Test func aHundredMiBDownloadToAFileKeepsMemoryFlat() throws {
        let size = 100 * 1024 * 1024
        let path = try env.scratchPath("probe-file") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try probe(["download-file", try env.faultURL + "/bytes?n=\(size)", path])
        #expect(result["status"] as? Int == 200, "\(result)")
        #expect(result["bytes"] as? Int == size)
        #expect(result["pattern_ok"] as? Bool == true)
        #expect(result["buffered"] as? Int == 0, "nothing in the receive buffer")
        let growth = (result["peak_kib"] as? Int ?? .max) - (result["baseline_kib"] as? Int ?? 0)
        #expect(growth < 4 * 1024, "peak memory grew by \(growth) KiB")
    }

    @Test(arguments: [false, true], [false, true])
    func largeBodiesArriveWholeWithOrWithoutAnnouncedLength(async: Bool, chunked: Bool) throws {
        // The receive buffer is sized ahead from Content-Length, or without one from what a
        // LOADING callback may find: every byte must still arrive once, in order.
        let size = 24 * 1024 * 1024 + 12_345
        let url = try env.faultURL + "/bytes?n=\(size)" + (chunked ? "&chunked=1" : "")
        let body: Data
        if async {
            let (request, seen) = fetchAsync("GET", url)
            #expect(request.getStatus() == 200)
            #expect(seen.states.filter { $0 == .loading }.count >= 1)
            body = seen.body
        } else {
            let (request, received) = fetchSync("GET", url)
            #expect(request.getStatus() == 200)
            #expect(request.getResponseHeader("Content-Length") == (chunked ? nil : "\(size)"))
            body = received
        }
        #expect(body.count == size)
        #expect(Pattern.matches(body, at: 0))
    }

    @Test func receiveBufferIsSizedForWhatIsAnnouncedWithinLimits() {
        // A large body's first chunk: a read less the head that came with it.
        let chunk = EasyHandle.receiveBufferSize - 250
        let threshold = ReportScheduler.pauseThreshold
        // Small chunks: Data grows as it needs.
        #expect(MemorySink.capacity(chunk: 100, toCome: 10_000_000, limit: MemorySink.maxReservation) == nil)
        #expect(MemorySink.capacity(chunk: MemorySink.sizingChunk - 1, toCome: 10_000_000, limit: MemorySink.maxReservation) == nil)
        // Synchronous: the whole announced rest, up to the reservation limit.
        #expect(MemorySink.capacity(chunk: chunk, toCome: 5_000_000, limit: MemorySink.maxReservation) == chunk + 5_000_000)
        #expect(MemorySink.capacity(chunk: chunk, toCome: 0, limit: MemorySink.maxReservation) == chunk)
        #expect(MemorySink.capacity(chunk: chunk, toCome: 1 << 40, limit: MemorySink.maxReservation) == chunk + MemorySink.maxReservation)
        // Asynchronous: no more than a LOADING callback lets pile up.
        #expect(MemorySink.capacity(chunk: chunk, toCome: 5_000_000, limit: ReportScheduler.pauseThreshold) == chunk + threshold)
        #expect(MemorySink.capacity(chunk: chunk, toCome: 1000, limit: ReportScheduler.pauseThreshold) == chunk + 1000)
        // No length announced: what a LOADING callback may find.
        #expect(MemorySink.capacity(chunk: chunk, toCome: nil, limit: ReportScheduler.pauseThreshold) == chunk + threshold)
        #expect(MemorySink.capacity(chunk: chunk, toCome: nil, limit: MemorySink.maxReservation) == chunk + threshold)
    }

    @Test func twoHundredMiBUploadStreamsFromDisk() throws {
        let size = 200 * 1024 * 1024
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlxhr-upload-\(UUID())").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let chunk = Pattern.bytes(251 * 4096)  // whole periods, so chunks join seamlessly
        var written = 0
        while written < size {
            let part = chunk.prefix(size - written)
            handle.write(part)
            written += part.count
        }
        try handle.close()
        defer { try? FileManager.default.removeItem(atPath: path) }

        let result = try probe(["upload", try env.faultURL + "/sink", path])
        #expect(result["status"] as? Int == 200)
        let growth = (result["peak_kib"] as? Int ?? .max) - (result["baseline_kib"] as? Int ?? 0)
        #expect(growth < 32 * 1024, "peak memory grew by \(growth) KiB")
        let answer = try #require(result["response"] as? String)
        let sink = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])
        #expect(sink["method"] as? String == "PUT")
        #expect(sink["body_length"] as? Int == size)
        let sum = try Shell.run("/usr/bin/sha256sum", [path]).output.prefix(64)
        #expect(sink["body_sha256"] as? String == String(sum))
    }
}
