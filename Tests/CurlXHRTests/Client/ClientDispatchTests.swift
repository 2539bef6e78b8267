import CurlXHR
import CurlXHRClient
import Dispatch
import Foundation
import Testing

/// FSNetworking's completion handlers (decoded off the completion queue, delivered on it) and
/// the blocking calls of worker threads.
@Suite(.ownThreads) struct ClientDispatchTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// The completion queue a decoder's `userInfo` names, for ``Probe``.
    static let completionQueueKey = CodingUserInfoKey(rawValue: "completionQueue")!
    /// Set on the tests' completion queues.
    static let queueMark = DispatchSpecificKey<String>()

    /// A result that checks, as it is decoded, that it is not decoded on the completion queue
    /// its decoder names, and says where it was decoded.
    struct Probe: Decodable, Sendable {
        var name: String
        /// The mark of the queue it was decoded on, if any.
        var decodedOnMarkedQueue: String?

        enum CodingKeys: String, CodingKey { case name }

        init(from decoder: any Decoder) throws {
            if let queue = decoder.userInfo[ClientDispatchTests.completionQueueKey] as? DispatchQueue {
                dispatchPrecondition(condition: .notOnQueue(queue))
            }
            decodedOnMarkedQueue = DispatchQueue.getSpecific(key: ClientDispatchTests.queueMark)
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        }
    }

    /// A client whose decoder names `queue` for ``Probe``.
    func client(completionQueue: DispatchQueue = .global(), checking queue: DispatchQueue,
                middlewares: [any HttpClientMiddleware] = []) throws -> HttpClient {
        let decoder = JSONDecoder()
        decoder.userInfo[Self.completionQueueKey] = queue
        return HttpClient(baseURL: try env.faultURL, decoder: decoder, completionQueue: completionQueue, middlewares: middlewares)
    }

    static func markedQueue(_ label: String) -> DispatchQueue {
        let queue = DispatchQueue(label: label)
        queue.setSpecific(key: queueMark, value: label)
        return queue
    }

    static let probeArguments: [(String, HttpClient.Argument)] = [("type", "application/json"), ("body", #"{"name": "probe"}"#)]

    /// What a completion handler saw: the result and the mark of the queue it ran on.
    struct Delivered<Value: Sendable>: Sendable {
        var result: Result<Value, HttpClientError>
        var queueMark: String?
    }

    @Test func theCompletionRunsOnTheCallsQueueAndDecodingOffIt() async throws {
        let queue = Self.markedQueue("client-completion")
        let client = try client(completionQueue: Self.markedQueue("client-default"), checking: queue)
        let delivered = await withCheckedContinuation { (continuation: CheckedContinuation<Delivered<Probe>, Never>) in
            client.invoke("GET", path: "respond", arguments: Self.probeArguments, as: Probe.self, queue: queue) { result in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(returning: Delivered(result: result, queueMark: DispatchQueue.getSpecific(key: Self.queueMark)))
            }
        }
        #expect(delivered.queueMark == "client-completion")
        let probe = try delivered.result.get()
        #expect(probe.name == "probe")
        #expect(probe.decodedOnMarkedQueue == nil, "decoded on \(probe.decodedOnMarkedQueue ?? "")")
    }

    @Test func theClientsCompletionQueueIsTheDefault() async throws {
        let queue = Self.markedQueue("client-default")
        let client = try client(completionQueue: queue, checking: queue)
        let delivered = await withCheckedContinuation { (continuation: CheckedContinuation<Delivered<Probe>, Never>) in
            client.invoke("GET", path: "respond", arguments: Self.probeArguments) { (result: Result<Probe, HttpClientError>) in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(returning: Delivered(result: result, queueMark: DispatchQueue.getSpecific(key: Self.queueMark)))
            }
        }
        #expect(delivered.queueMark == "client-default")
        #expect(try delivered.result.get().decodedOnMarkedQueue == nil)
    }

    @Test func onTheGlobalQueueDecodingIsStillOffIt() async throws {
        // The default completion queue is the global one, which Swift's tasks run on too.
        let client = try client(checking: .global())
        let probe = try await withCheckedContinuation { (continuation: CheckedContinuation<Result<Probe, HttpClientError>, Never>) in
            client.invoke("GET", path: "respond", arguments: Self.probeArguments, as: Probe.self) { result in
                dispatchPrecondition(condition: .onQueue(.global()))
                continuation.resume(returning: result)
            }
        }.get()
        #expect(probe.name == "probe")
    }

    @Test func errorsAndContentArriveOnTheQueueToo() async throws {
        let queue = Self.markedQueue("client-errors")
        let client = try client(checking: queue)
        let failed = await withCheckedContinuation { (continuation: CheckedContinuation<Delivered<ResponseContent>, Never>) in
            client.invoke("GET", path: "respond", arguments: [("status", 404), ("type", "text/plain"), ("body", "gone")], queue: queue) { result in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(returning: Delivered(result: result, queueMark: DispatchQueue.getSpecific(key: Self.queueMark)))
            }
        }
        #expect(delivered(failed.result, is: 404, .text("gone")) && failed.queueMark == "client-errors")
        let content = await withCheckedContinuation { (continuation: CheckedContinuation<Delivered<ResponseContent>, Never>) in
            client.invoke("GET", path: "respond", arguments: [("type", "text/plain"), ("body", "here")], queue: queue) { result in
                continuation.resume(returning: Delivered(result: result, queueMark: DispatchQueue.getSpecific(key: Self.queueMark)))
            }
        }
        #expect(try content.result.get() == .text("here") && content.queueMark == "client-errors")
    }

    func delivered(_ result: Result<ResponseContent, HttpClientError>, is code: Int, _ body: ResponseContent) -> Bool {
        guard case .failure(.status(code, body)) = result else { return false }
        return true
    }

    @Test func cancellingTheCallStopsItAndReportsCancelled() async throws {
        let queue = Self.markedQueue("client-cancel")
        let client = try client(checking: queue)
        // A body that waits forever for a gate no one opens: only the cancel can end the call.
        let key = UUID().uuidString
        let delivered = await withCheckedContinuation { (continuation: CheckedContinuation<Delivered<ResponseContent>, Never>) in
            let task = client.invoke("GET", path: "trickle", arguments: [("key", .string(key)), ("n", 1_000_000), ("gate", 1)],
                                     queue: queue) { result in
                continuation.resume(returning: Delivered(result: result, queueMark: DispatchQueue.getSpecific(key: Self.queueMark)))
            }
            task.cancel()
        }
        guard case .failure(.cancelled) = delivered.result else { Issue.record("\(delivered.result)"); return }
        #expect(delivered.queueMark == "client-cancel")
    }

    // MARK: Blocking calls

    struct Item: Decodable, Sendable, Equatable {
        var id: Int
    }

    @Test func invokeSyncWorksFromAWorkerThread() async throws {
        let client = try client(checking: .main, middlewares: [AddHeader(name: "X-Sync", value: "through the middleware")])
        let item = try await onWorkerThread { () throws(HttpClientError) -> Item in
            try client.invokeSync("GET", path: "respond", arguments: [("type", "application/json"), ("body", #"{"id": 3}"#)])
        }.get()
        #expect(item == Item(id: 3))
        // The middleware applies: the server saw its header.
        let echo = try await onWorkerThread { () throws(HttpClientError) -> EchoedRequest in
            try client.invokeSync("POST", path: "echo", arguments: [("a", "b c")])
        }.get()
        #expect(echo.header("X-Sync") == "through the middleware" && echo.body == "a=b+c")
        // Errors are thrown as they are by the async calls.
        let failed = await onWorkerThread { () throws(HttpClientError) -> ResponseContent in
            try client.invokeSync("GET", path: "respond", arguments: [("status", 422), ("type", "application/json"), ("body", #"{"e": 1}"#)])
        }
        guard case .failure(.status(422, .json(["e": 1]))) = failed else { Issue.record("\(failed)"); return }
    }

    @Test func invokeSyncWorksFromTheGlobalQueue() async throws {
        let client = try client(checking: .main)
        let text = try await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, HttpClientError>, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(HttpClientError) in
                    try client.invokeSync("GET", path: "respond", arguments: [("type", "text/plain"), ("body", "from a worker")])
                })
            }
        }.get()
        #expect(text == "from a worker")
    }
}

/// Adds a header to every request.
struct AddHeader: HttpClientMiddleware {
    var name: String
    var value: String

    func intercept(_ request: HttpClientRequest,
                   next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
        var request = request
        request.setHeader(name, value: value)
        return try await next(request)
    }
}
