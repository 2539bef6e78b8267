@testable import CurlXHR
import Foundation
import Testing

/// What a user of the request object sees of the cache: a hit reported exactly as a network
/// response, for every front (delegate, synchronous, response file, async/await), large bodies
/// streamed with backpressure, an abort in the middle, offline misses, and refusals.
@Suite(.ownThreads) struct CacheAPITests {
    static let fresh = CacheFixture.h("Cache-Control", "max-age=600")

    static func pattern(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 251) }) }

    /// Whether `data` is the pattern of `count` bytes: a Bool, so that a failed check of a
    /// large body never makes the test library diff megabytes.
    static func isPattern(_ data: Data, _ count: Int) -> Bool { data.count == count && data == pattern(count) }

    /// Keeps the chunks of the body as it hands them out, untouched.
    final class Keeper: HttpRequestDelegate, @unchecked Sendable {
        let chunks = Locked([Data]())
        let done = DispatchSemaphore(value: 0)
        func onStatusChange(_ request: HttpRequest) {
            let state = request.getState()
            if state == .loading || state == .done { chunks.withLock { $0.append(request.getReceiveBuffer()) } }
            if state == .done { done.signal() }
        }
    }

    @Test func anAsynchronousHitIsReportedLikeTheNetworkResponse() throws {
        CacheFixture.on()
        let key = "api-states-\(UUID().uuidString)"
        let url = try CacheFixture.url(key, "\(Self.fresh)&size=5000")
        let (network, fromNetwork) = fetchAsync("GET", url)
        let (hit, fromCache) = fetchAsync("GET", url)
        #expect(!network.isResponseFromCache() && hit.isResponseFromCache())
        #expect(fromNetwork.states == [.opened, .sent, .headersReceived, .loading, .done])
        #expect(fromCache.states == fromNetwork.states)
        #expect(fromCache.statusAtHeaders == 200 && fromCache.statusAtDone == 200)
        #expect(Self.isPattern(fromCache.body, 5000) && fromNetwork.body == fromCache.body)
        #expect(hit.getResponseHeader("Content-Type") == network.getResponseHeader("Content-Type"))
        #expect(hit.getResponseHeader("Age") != nil && hit.getMetrics().httpVersion == "HTTP/1.1")
        #expect(try CacheFixture.log(key).count == 1)
    }

    /// After a first hit, plain GETs of the URL are answered from the memo: the same answer,
    /// its Age counting on, and it stops when the response goes stale or another process
    /// changes the store.
    @Test func repeatedHitsAnswerTheSameUntilStaleOrChangedElsewhere() throws {
        CacheFixture.on()
        let key = "api-memo-\(UUID().uuidString)"
        let url = try CacheFixture.url(key, "\(CacheFixture.h("Cache-Control", "max-age=600"))&\(CacheFixture.h("Age", "598"))&etag=%22m%22")
        let (_, body) = fetchSync("GET", url)
        var heads: [String] = []
        for _ in 0..<3 {
            let (hit, again) = fetchSync("GET", url)
            #expect(hit.isResponseFromCache() && again == body)
            heads.append(hit.getAllResponseHeaders()?.replacingOccurrences(of: "Age: 59[89]\r\n", with: "", options: .regularExpression) ?? "")
            #expect(["598", "599"].contains(hit.getResponseHeader("Age")), "\(hit.getResponseHeader("Age") ?? "")")
        }
        #expect(Set(heads).count == 1, "\(heads)")
        #expect(try CacheFixture.log(key).count == 1)
        // Two seconds on, the response is stale: validated.
        Thread.sleep(forTimeInterval: 2.2)
        let (validated, _) = fetchSync("GET", url)
        #expect(validated.isResponseFromCache())
        #expect(try CacheFixture.log(key).last?.isConditional == true && CacheFixture.log(key).count == 2)

        // Another process's POST invalidates what this process answered from memory.
        let fresh = try CacheFixture.url("\(key)-b", "\(Self.fresh)")
        _ = fetchSync("GET", fresh)
        #expect(fetchSync("GET", fresh).0.isResponseFromCache() && fetchSync("GET", fresh).0.isResponseFromCache())
        let post = try Shell.run(TestEnvironment.builtProduct("xhr"), ["-s", "-X", "POST", "--cache", CacheFixture.folder, fresh])
        #expect(post.status == 0, "\(post.output)")
        let (after, _) = fetchSync("GET", fresh)
        #expect(!after.isResponseFromCache() && after.getStatus() == 200)
        #expect(try CacheFixture.log("\(key)-b").map(\.method) == ["GET", "POST", "GET"])
    }

    @Test func aLargeHitStreamsToASlowConsumerWhole() throws {
        CacheFixture.on()
        let size = 3 << 20
        let url = try CacheFixture.url("api-large-\(UUID().uuidString)", "\(Self.fresh)&size=\(size)")
        let (_, first) = fetchAsync("GET", url)
        #expect(Self.isPattern(first.body, size))
        // A consumer that takes its time at each LOADING: the replay waits for it (paused),
        // and every byte arrives once, in order.
        let request = HttpRequest()
        let recorder = Recorder { _, state in
            if state == .loading { Thread.sleep(forTimeInterval: 0.002) }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: url, async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        #expect(request.isResponseFromCache())
        #expect(Self.isPattern(recorder.result.body, size))
        #expect(recorder.result.states.filter { $0 == .loading }.count > 1)
    }

    /// Chunks of a large hit are read straight into buffers the caller is handed: one the
    /// caller still holds is never filled again.
    @Test func chunksTheCallerKeepsStayAsTheyWere() throws {
        CacheFixture.on()
        let size = 6 << 20
        let url = try CacheFixture.url("api-keep-\(UUID().uuidString)", "\(Self.fresh)&size=\(size)")
        _ = fetchSync("GET", url)
        let request = HttpRequest()
        let keeper = Keeper()
        request.delegate = keeper
        #expect(request.open("GET", url: url, async: true))
        #expect(request.send())
        #expect(keeper.done.wait(timeout: .now() + 30) == .success)
        #expect(request.isResponseFromCache())
        let kept = keeper.chunks.withLock { $0 }
        #expect(kept.filter { !$0.isEmpty }.count > 2)
        var whole = Data()
        for chunk in kept { whole.append(chunk) }
        #expect(Self.isPattern(whole, size), "\(whole.count) bytes")
    }

    @Test func abortingAHitMidBodyEndsItOnce() throws {
        CacheFixture.on()
        let url = try CacheFixture.url("api-abort-\(UUID().uuidString)", "\(Self.fresh)&size=\(4 << 20)")
        _ = fetchSync("GET", url)
        let request = HttpRequest()
        let loading = DispatchSemaphore(value: 0)
        let recorder = Recorder { _, state in
            if state == .loading {
                loading.signal()
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        request.delegate = recorder
        #expect(request.open("GET", url: url, async: true))
        #expect(request.send())
        #expect(loading.wait(timeout: .now() + 10) == .success)
        #expect(request.abort())
        #expect(recorder.waitForDone())
        Thread.sleep(forTimeInterval: 0.2)
        #expect(request.getStatus() == 0 && recorder.result.states.filter { $0 == .done }.count == 1)
        #expect(recorder.result.callbacksAfterDone == 0)
        #expect(recorder.result.body.count < 4 << 20)
        // The request is usable again, and the entry too.
        #expect(request.open("GET", url: url))
        #expect(request.send() && request.getStatus() == 200 && Self.isPattern(request.getReceiveBuffer(), 4 << 20))
    }

    @Test func theAsyncAPIAndAResponseFileGetTheStoredResponse() async throws {
        CacheFixture.on()
        let key = "api-await-\(UUID().uuidString)"
        let url = try CacheFixture.url(key, "\(Self.fresh)&size=70000")
        _ = fetchSync("GET", url)
        let request = HttpRequest()
        #expect(request.open("GET", url: url))
        let response = try await request.response()
        #expect(response.status == 200 && response.isFromCache && response.header("Age") != nil)
        #expect(Self.isPattern(try await response.body.collect(upTo: 1 << 20), 70000))

        let path = try TestEnvironment.get().scratchPath("cache-file")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let (toFile, _) = fetchSync("GET", url) { $0.setResponseFile(path) }
        #expect(toFile.isResponseFromCache() && toFile.getStatus() == 200)
        #expect(Self.isPattern(FileManager.default.contents(atPath: path) ?? Data(), 70000))
        #expect(try CacheFixture.log(key).count == 1)
    }

    @Test func aRevalidatedResponseShowsNo304() throws {
        CacheFixture.on()
        let key = "api-304-\(UUID().uuidString)"
        let url = try CacheFixture.url(key, "\(Self.fresh)&etag=%22t%22&date=offset:-700")
        _ = fetchSync("GET", url)
        let (request, seen) = fetchAsync("GET", url)
        #expect(seen.states == [.opened, .sent, .headersReceived, .loading, .done])
        #expect(seen.statusAtHeaders == 200 && request.isResponseFromCache())
        #expect(String(decoding: seen.body, as: UTF8.self).hasPrefix("body of \(key)"))
        let log = try CacheFixture.log(key)
        #expect(log.count == 2 && log[1].status == 304 && log[1].isConditional)
    }

    @Test func anOfflineMissEndsInDoneWithStatusZeroAndAText() throws {
        CacheFixture.on()
        let key = "api-offline-\(UUID().uuidString)"
        let (request, seen) = fetchAsync("GET", try CacheFixture.url(key)) { $0.setCachePolicy(.readForced) }
        #expect(seen.states == [.opened, .sent, .done])
        #expect(request.getStatus() == 0 && request.getStatusText()?.contains("Not in the cache") == true)
        #expect(try CacheFixture.log(key).isEmpty)
        let (sync, _) = fetchSync("GET", try CacheFixture.url(key)) { $0.setCachePolicy(.readForced) }
        #expect(sync.getStatus() == 0 && sync.getFailureKind() == .other)
    }

    @Test(arguments: ["foo", "foo, chunked"])
    func aTransferCodingLibcurlDoesNotKnowIsDeliveredAndStored(codings: String) throws {
        CacheFixture.on()
        let key = "api-te-\(UUID().uuidString)"
        let url = try CacheFixture.url(key, "\(Self.fresh)&te=\(CacheFixture.encoded(codings))")
        let (network, seen) = fetchAsync("GET", url)
        #expect(network.getStatus() == 200, "\(network.getStatusText() ?? "")")
        #expect(seen.states == [.opened, .sent, .headersReceived, .loading, .done])
        #expect(String(decoding: seen.body, as: UTF8.self) == "body of \(key), version 0")
        #expect(network.getResponseHeader("Transfer-Encoding") == codings)
        let (hit, body) = fetchSync("GET", url)
        #expect(hit.isResponseFromCache() && String(decoding: body, as: UTF8.self) == "body of \(key), version 0")
        // Without content decoding the body comes as it is too, on the first try.
        let (plain, plainBody) = fetchSync("GET", url) { $0.disableContentDecoding(); $0.setCachePolicy([]) }
        #expect(plain.getStatus() == 200 && String(decoding: plainBody, as: UTF8.self) == "body of \(key), version 0")
        // Each went once: libcurl decodes nothing, so it never refuses the coding.
        #expect(try CacheFixture.log(key).count == 2)
    }

    @Test func refusals() throws {
        CacheFixture.on()
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: try CacheFixture.url("api-refuse-\(UUID().uuidString)", "delay_ms=300"), async: true))
        #expect(request.send())
        #expect(!request.setCachePolicy([]))
        #expect(request.lastError != nil)
        #expect(recorder.waitForDone())
        #expect(request.setCachePolicy([]))

        // A folder that cannot be made: false with the reason, and the cache in use stays.
        let file = try TestEnvironment.get().scratchPath("not-a-folder")
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        #expect(!HttpRequest.setCacheFolder(file + "/cache", maxBytes: 1 << 20))
        #expect(HttpRequest.cacheFolderError?.contains(file) == true)
        #expect(!HttpRequest.setCacheFolder(CacheFixture.folder, maxBytes: 0))
        #expect(!HttpRequest.setCacheFolder("", maxBytes: 1 << 20))
        #expect(HttpCache.shared?.store.folder == CacheFixture.folder)
    }
}
