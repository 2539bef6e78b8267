import CurlXHR
@testable import CurlXHRClient
import Foundation
import Testing

/// FSNetworking's progress block for client calls: uploads and downloads of 1 MiB against the
/// fault server report counts that never go down and end at the totals, on the queue promised.
@Suite(.ownThreads) struct ClientProgressTests {
    let env: TestEnvironment
    let client: HttpClient
    init() throws { (env, client) = try faultServerClient() }

    static let size = 1 << 20

    /// The reports a handler got, and whether each ran on the queue marked with `key`.
    final class Reports: Sendable {
        let key = DispatchSpecificKey<Int>()
        let queue: DispatchQueue
        let seen = Locked<[(HttpRequest.Progress, Bool)]>([])
        init() {
            queue = DispatchQueue(label: "progress-test")
            queue.setSpecific(key: key, value: 1)
        }
        var handler: HttpClient.ProgressHandler {
            { progress in self.seen.withLock { $0.append((progress, DispatchQueue.getSpecific(key: self.key) == 1)) } }
        }
        var all: [HttpRequest.Progress] { seen.withLock { $0.map(\.0) } }
        var onQueue: Bool { seen.withLock { $0.allSatisfy(\.1) } }
    }

    /// The counts never go down and the last report shows the totals. (Reports coalesce while
    /// the handler's queue is busy, so how many there are depends on the machine's load.)
    static func checkMonotonic(_ reports: [HttpRequest.Progress], sent: Int64, received: Int64,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        guard let last = reports.last else { Issue.record("no report", sourceLocation: sourceLocation); return }
        for (before, after) in zip(reports, reports.dropFirst()) {
            #expect(after.bytesSent >= before.bytesSent && after.bytesReceived >= before.bytesReceived,
                    "\(before) then \(after)", sourceLocation: sourceLocation)
        }
        #expect(last.bytesSent == sent && last.bytesToSend == sent, "\(last)", sourceLocation: sourceLocation)
        #expect(last.bytesReceived == received && last.bytesToReceive == received, "\(last)", sourceLocation: sourceLocation)
    }

    @Test func aDownloadReportsEachChunkUpToTheTotal() async throws {
        var client = client
        let reports = Reports()
        client.completionQueue = reports.queue
        let data: Data = try await client.invoke("GET", path: "bytes", arguments: [("n", .int(Self.size))], progress: reports.handler)
        #expect(data.count == Self.size)
        let all = reports.all
        Self.checkMonotonic(all, sent: 0, received: Int64(Self.size))
        #expect(all.dropFirst().allSatisfy { $0.bytesToReceive == Int64(Self.size) }, "the Content-Length, from the head on")
        #expect(reports.onQueue, "on the client's completion queue")
    }

    @Test func anUploadReportsItsSizeAndItsEnd() async throws {
        let reports = Reports()
        var client = client
        client.completionQueue = reports.queue
        client.onProgress = reports.handler
        let body = Pattern.bytes(Self.size)
        let (echo, response) = try await echoed(client.invoke("PUT", path: "echo", body: .data(body, contentType: "application/x-pattern"),
                                                              as: Data.self))
        #expect(echo.bodyLength == Self.size)
        let all = reports.all
        Self.checkMonotonic(all, sent: Int64(Self.size), received: Int64(response.count))
        #expect(all[0].bytesToSend == Int64(Self.size), "the size to send is known from the start")
        #expect(reports.onQueue)
    }

    @Test func anUploadReportsTheBodyAsItGoesOut() async throws {
        let reports = Reports()
        var client = client
        client.completionQueue = reports.queue
        client.configure = { $0.setRateLimits(upload: 2_000_000) }  // half a second
        let body = Pattern.bytes(Self.size)
        let (echo, response) = try await echoed(client.invoke("POST", path: "echo", body: .data(body, contentType: "application/x-pattern"),
                                                              as: Data.self, progress: reports.handler))
        #expect(echo.bodyLength == Self.size)
        let all = reports.all
        Self.checkMonotonic(all, sent: Int64(Self.size), received: Int64(response.count))
        #expect(all.contains { $0.bytesSent > 0 && $0.bytesSent < Int64(Self.size) && $0.bytesReceived == 0 },
                "counts while the body goes out: \(all)")
        #expect(reports.onQueue)
    }

    @Test func aFormWithAFileReportsItsSizeOnceLibcurlKnowsIt() async throws {
        let path = try env.scratchPath("client-progress-form") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Pattern.bytes(Self.size).write(to: URL(fileURLWithPath: path))
        let reports = Reports()
        var client = client
        client.configure = { $0.setRateLimits(upload: 2_000_000) }
        let _: Data = try await client.invoke("POST", path: "multipart", arguments: [("file", .file(path: path)), ("note", "x")],
                                              progress: reports.handler)
        let all = reports.all
        #expect(all.contains { $0.bytesToSend > Int64(Self.size) && $0.bytesSent > 0 && $0.bytesSent < $0.bytesToSend },
                "the form's size from libcurl, and counts on the way: \(all)")
        let formSize = all.last?.bytesToSend ?? -1
        #expect(all.allSatisfy { $0.bytesToSend == -1 || $0.bytesToSend == formSize }, "unknown until libcurl sized it: \(all)")
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent }, "never backwards")
    }

    /// The echo, and its bytes as the call returned them.
    func echoed(_ data: Data) throws -> (EchoedRequest, Data) {
        (try JSONDecoder().decode(EchoedRequest.self, from: data), data)
    }

    @Test func aChunkedDownloadLearnsItsTotalAtTheEnd() async throws {
        let reports = Reports()
        let data: Data = try await client.invoke("GET", path: "bytes", arguments: [("n", .int(Self.size)), ("chunked", 1)],
                                                 progress: reports.handler)
        let all = reports.all
        Self.checkMonotonic(all, sent: 0, received: Int64(data.count))
        #expect(all.dropLast().allSatisfy { $0.bytesToReceive == -1 }, "no length announced")
    }

    @Test func aCompletionHandlerRunsAfterTheLastReportOnItsQueue() async throws {
        let reports = Reports()
        let order = Locked<[String]>([])
        let done: Result<Data, HttpClientError> = await withCheckedContinuation { continuation in
            client.invoke("POST", path: "echo", body: .data(Pattern.bytes(Self.size), contentType: "application/x-pattern"),
                          as: Data.self, queue: reports.queue, progress: { progress in
                              reports.handler(progress)
                              order.withLock { $0.append("progress") }
                          }) { result in
                order.withLock { $0.append("completion") }
                continuation.resume(returning: result)
            }
        }
        let response = try done.get()
        Self.checkMonotonic(reports.all, sent: Int64(Self.size), received: Int64(response.count))
        #expect(reports.onQueue)
        #expect(order.withLock { $0.last } == "completion" && order.withLock { $0.count } == reports.all.count + 1)
    }

    @Test func aBlockingCallReportsOffItsThread() async throws {
        let reports = Reports()
        let client = client
        let result = await onWorkerThread { () throws(HttpClientError) -> Data in
            try client.invokeSync("GET", path: "bytes", arguments: [("n", .int(Self.size))], progress: reports.handler)
        }
        #expect(try result.get().count == Self.size)
        Self.checkMonotonic(reports.all, sent: 0, received: Int64(Self.size))
    }

    @Test func withoutAHandlerNothingIsCountedAndTheLimitStays() async throws {
        var client = client
        client.maxResponseSize = 1000
        let plain = await clientError { try await client.invoke("GET", path: "bytes", arguments: [("n", 5000)]) }
        guard case .transfer(let error)? = plain, error.code == .tooLarge else { Issue.record("\(String(describing: plain))"); return }
        client.onProgress = { _ in }
        let counted = await clientError { try await client.invoke("GET", path: "bytes", arguments: [("n", 5000)]) }
        guard case .transfer(let limited)? = counted, limited.failureKind == .response else {
            Issue.record("\(String(describing: counted))")
            return
        }
        #expect(limited.message.contains("1000"), "\(limited.message)")
    }

    @Test func countsFollowTheTransfer() {
        var upload = TransferCounts(body: .data(Data(count: 10)))
        #expect(upload.progress == HttpRequest.Progress(bytesSent: 0, bytesToSend: 10, bytesReceived: 0, bytesToReceive: -1))
        upload.headArrived(method: "PUT", status: 201, contentLength: 5, contentEncoding: nil)
        #expect(upload.progress == HttpRequest.Progress(bytesSent: 10, bytesToSend: 10, bytesReceived: 0, bytesToReceive: 5))
        upload.received(5)
        upload.bodyComplete()
        #expect(upload.progress == HttpRequest.Progress(bytesSent: 10, bytesToSend: 10, bytesReceived: 5, bytesToReceive: 5))
        var form = TransferCounts(body: .multipart([.value(name: "a", value: "b")]))
        form.headArrived(method: "POST", status: 200, contentLength: 7, contentEncoding: "gzip")
        #expect(form.progress == HttpRequest.Progress(bytesSent: 0, bytesToSend: -1, bytesReceived: 0, bytesToReceive: -1),
                "a form's size is libcurl's; a compressed body's decoded size is not announced")
        for (method, status) in [("HEAD", 200), ("GET", 204), ("GET", 304)] {
            var empty = TransferCounts(body: .none)
            empty.headArrived(method: method, status: status, contentLength: 1234, contentEncoding: nil)
            #expect(empty.progress.bytesToReceive == 0, "\(method) \(status)")
        }
    }
}
