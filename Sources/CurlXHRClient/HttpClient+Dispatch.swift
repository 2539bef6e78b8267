import Dispatch
import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Calls with a completion handler on a dispatch queue, and blocking calls for worker threads.
extension HttpClient {
    // MARK: Completion handlers

    /// Calls the API and hands the decoded result to `completion` on `queue` (else the client's
    /// ``completionQueue``), as FSNetworking does: the body is decoded on a background queue of
    /// its own, never on `queue`, so a completion on the main queue or a UI queue only gets the
    /// finished value.
    ///
    /// Arguments, body and decoding as in ``invoke(_:path:arguments:body:encoding:headerFields:as:progress:)``.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, upper-cased.
    ///   - path: added to ``baseURL`` and ``apiPath`` (see ``url(for:)``); it may carry a query.
    ///   - arguments: the call's arguments, in order; keys may repeat.
    ///   - body: a JSON or raw body; the arguments then go in the query string.
    ///   - encoding: where the arguments go; `nil`: the client's rule (``argumentEncoding``).
    ///   - headerFields: fields for this call, after the client's ``headerFields``.
    ///   - type: the type to decode the response into.
    ///   - queue: where `completion` (and `progress`) runs; `nil`: ``completionQueue``.
    ///   - progress: receives the call's progress, instead of the client's ``onProgress``.
    ///   - completion: called once with the result or the ``HttpClientError``.
    /// - Returns: the task running the call: `cancel()` stops the transfer, and `completion`
    ///   then gets ``HttpClientError/cancelled``.
    @discardableResult
    public func invoke<Result: Decodable & Sendable>(_ method: String, path: String, arguments: [(String, Argument)] = [],
                                                     body: RequestBody? = nil, encoding: ArgumentEncoding? = nil,
                                                     headerFields: HTTPFields = [:], as type: Result.Type = Result.self,
                                                     queue: DispatchQueue? = nil, progress: ProgressHandler? = nil,
                                                     completion: @escaping @Sendable (Swift.Result<Result, HttpClientError>) -> Void) -> Task<Void, Never> {
        let decoder = decoder
        return call(Call(method, path, arguments, body, encoding, HeaderFieldList(headerFields), progress), queue: queue, completion: completion) {
            response throws(HttpClientError) in try ResponseDecoding.result(Result.self, from: response, decoder: decoder)
        }
    }

    /// Calls the API and hands the body, decoded by its `Content-Type` (``ResponseContent``),
    /// to `completion` on `queue`; see ``invoke(_:path:arguments:body:encoding:headerFields:as:queue:progress:completion:)``.
    @discardableResult
    public func invoke(_ method: String, path: String, arguments: [(String, Argument)] = [],
                       body: RequestBody? = nil, encoding: ArgumentEncoding? = nil, headerFields: HTTPFields = [:],
                       queue: DispatchQueue? = nil, progress: ProgressHandler? = nil,
                       completion: @escaping @Sendable (Swift.Result<ResponseContent, HttpClientError>) -> Void) -> Task<Void, Never> {
        let decoder = decoder
        return call(Call(method, path, arguments, body, encoding, HeaderFieldList(headerFields), progress), queue: queue, completion: completion) {
            response throws(HttpClientError) in try ResponseDecoding.content(from: response, decoder: decoder)
        }
    }

    func call<Value: Sendable>(_ call: Call, queue: DispatchQueue?,
                               completion: @escaping @Sendable (Swift.Result<Value, HttpClientError>) -> Void,
                               decode: @escaping @Sendable (HttpClientResponse) throws(HttpClientError) -> Value) -> Task<Void, Never> {
        let queue = queue ?? completionQueue
        let client = self
        return Task.detached {
            let sent = await client.transfer(call, progressQueue: queue)
            // A serial queue of its own: tasks run on the global queues, one of which may be the
            // completion queue, while a new serial queue is none of them.
            DispatchQueue(label: "CurlXHRClient.decoding").async {
                let result = Swift.Result { () throws(HttpClientError) in try client.decoded(sent, decode) }
                queue.async { completion(result) }
            }
        }
    }

    // MARK: Blocking calls

    /// Calls the API and waits for the decoded result, blocking the calling thread: for worker
    /// threads and code that is not `async`. Arguments, body, decoding and middlewares as in
    /// ``invoke(_:path:arguments:body:encoding:headerFields:as:progress:)``; the call runs as a task and the body is
    /// decoded on the calling thread. Progress reports (`progress`, else ``onProgress``) run on
    /// a global queue, never on the calling thread, which waits.
    ///
    /// - Important: Never call it from an `async` context, a task, or any thread of Swift's
    ///   cooperative pool: it blocks its thread until the call is done, and the call itself
    ///   needs a thread of that pool, which may then never come.
    /// - Throws: ``HttpClientError``.
    public func invokeSync<Result: Decodable>(_ method: String, path: String, arguments: [(String, Argument)] = [],
                                              body: RequestBody? = nil, encoding: ArgumentEncoding? = nil,
                                              headerFields: HTTPFields = [:],
                                              as type: Result.Type = Result.self,
                                              progress: ProgressHandler? = nil) throws(HttpClientError) -> Result {
        try performBlocking(Call(method, path, arguments, body, encoding, HeaderFieldList(headerFields), progress)) {
            response throws(HttpClientError) in try ResponseDecoding.result(Result.self, from: response, decoder: decoder)
        }
    }

    /// Calls the API and waits for the body, decoded by its `Content-Type`; see
    /// ``invokeSync(_:path:arguments:body:encoding:headerFields:as:progress:)`` (never from an `async` context).
    /// - Throws: ``HttpClientError``.
    @discardableResult
    public func invokeSync(_ method: String, path: String, arguments: [(String, Argument)] = [],
                           body: RequestBody? = nil, encoding: ArgumentEncoding? = nil,
                           headerFields: HTTPFields = [:],
                           progress: ProgressHandler? = nil) throws(HttpClientError) -> ResponseContent {
        try performBlocking(Call(method, path, arguments, body, encoding, HeaderFieldList(headerFields), progress)) {
            response throws(HttpClientError) in try ResponseDecoding.content(from: response, decoder: decoder)
        }
    }

    /// Runs `call` as a task, waits for it, and decodes its response on the calling thread.
    func performBlocking<Value>(_ call: Call, decode: (HttpClientResponse) throws(HttpClientError) -> Value) throws(HttpClientError) -> Value {
        let client = self
        // Not the completion queue: the calling thread, waiting here, may be one of its own.
        let sent = Blocking.run { await client.transfer(call, progressQueue: .global()) }
        return try decoded(sent, decode)
    }
}
