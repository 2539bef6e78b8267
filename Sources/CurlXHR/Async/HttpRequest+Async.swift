#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `async`/`await`: a response returned at its head, the body as an `AsyncSequence`.
extension HttpRequest {
    /// Sends the OPENED request (with no body, or its form values and files) and returns the
    /// response at its head; the body follows as ``HttpResponse/body``.
    ///
    /// Everything set between `open` and here applies: the method, URL and credentials of
    /// `open`, headers, form values, verification, CA file, redirects, cookies, proxy,
    /// timeouts (the total limit ends the body too), range, retries, content decoding,
    /// response file, ``queue`` and ``priority``. The request itself stays OPENED and
    /// unchanged: it is the template of the send, and may start more sends, `async` or not.
    /// Its callbacks, ``abort()`` and getters do not concern the `async` send; cancel the task
    /// instead, which stops the transfer at once, whether it waits in a queue, for the head or
    /// in the middle of the body.
    ///
    /// - Parameters:
    ///   - timeout: seconds for the whole send, body included; 0 for the total of
    ///     ``setTimeouts(connect:headers:idle:total:)``, or none.
    ///   - progress: receives the send's progress as its body goes out and the response's
    ///     comes in (FSNetworking's progress block): on ``callbackQueue``, one report at a
    ///     time, the counts never going down. A report that waits takes in the newer counts;
    ///     the first shows nothing sent yet, and the last, after the transfer ended, the final
    ///     counts (it may run after the body was read: it is not ordered with the consumer).
    /// - Throws: ``HttpRequestError``: what ``send(timeout:)`` would refuse (with the same code
    ///   and message; any state but OPENED is ``HttpRequestError/Code/invalidState``), or the
    ///   code ``HttpRequestError/Code/transferFailed`` when the transfer fails before its head
    ///   (with ``HttpRequestError/failureKind``). `CancellationError` when the task is cancelled.
    public func response(timeout: Double = 0, progress: ProgressHandler? = nil) async throws -> HttpResponse {
        try await stream(sending: .none, timeout: timeout, progress: progress).response()
    }

    /// Sends `body` byte for byte (no `Content-Type` unless set); see ``response(timeout:progress:)``.
    public func response(sending body: Data, timeout: Double = 0, progress: ProgressHandler? = nil) async throws -> HttpResponse {
        try await stream(sending: .bytes(body, contentType: nil), timeout: timeout, progress: progress).response()
    }

    /// Sends `body` as UTF-8 text (`Content-Type: text/plain;charset=UTF-8` unless set); see
    /// ``response(timeout:progress:)``.
    public func response(sending body: String, timeout: Double = 0, progress: ProgressHandler? = nil) async throws -> HttpResponse {
        try await stream(sending: .bytes(Data(body.utf8), contentType: "text/plain;charset=UTF-8"), timeout: timeout,
                         progress: progress).response()
    }

    /// Streams the file at `path` as the body, as ``sendWithFile(_:timeout:)`` does; see
    /// ``response(timeout:progress:)``.
    public func response(sendingFile path: String, timeout: Double = 0, progress: ProgressHandler? = nil) async throws -> HttpResponse {
        switch ReadableFile.open(path) {
        case .failure(let problem):
            throw HttpRequestError(.fileUnreadable, problem.message)
        case .success(let file):
            return try await stream(sending: .file(path: path), timeout: timeout, fileDescriptor: file.descriptor,
                                    fileSize: file.size, progress: progress).response()
        }
    }

    /// The stream of a send of `body`, its transfer prepared (not an `async` function: each
    /// level of those costs the task a frame and a look at its executor).
    private func stream(sending body: RequestBody, timeout: Double, fileDescriptor: Int32 = -1, fileSize: Int64 = 0,
                        progress: ProgressHandler?) throws -> ResponseStream {
        if Task.isCancelled {
            if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
            throw CancellationError()
        }
        var jar: JarCookies?
        var prepared: Result<ResponseStream, HttpRequestError>
        repeat {
            prepared = withCore { core -> Result<ResponseStream, HttpRequestError> in
                guard core.machine.state == .opened, !core.machine.isWaiting else {
                    return .failure(HttpRequestError(core.machine.rejection(.send)))
                }
                let plan: SendPlan
                do throws(HttpRequestError) {
                    plan = try core.plan(body, timeout: timeout, fileDescriptor: fileDescriptor, fileSize: fileSize, jar: jar)
                } catch { return .failure(error) }
                let stream = ResponseStream.reusing(&core.lastStream) ?? ResponseStream(runner: runner)
                core.lastStream = stream
                var slot: QueueSlot?
                if let queue = core.queue {
                    switch stream.admit(to: queue, priority: core.priority) {
                    case .failure(let refusal): return .failure(refusal)
                    case .success(let admitted): slot = admitted
                    }
                }
                // The message as `open` left it (whether its own sends are async or not: no
                // synchronous send waits for this one, the stream's completion bit being 0).
                stream.preparedTransfer.prepare(plan, message: core.message, switches: core.switches,
                                                pipelining: core.enablePipelining, queueSlot: slot)
                if let observer = core.makeObserver(for: self) { stream.observe(observer) }
                stream.reportProgress(to: progress.map {
                    ProgressFeed($0, on: core.callbackQueue, toSend: Self.size(of: plan.body, fileSize: fileSize),
                                 decodesBody: core.switches.contentDecoding)
                })
                core.sentBody = CurlCommand.Body(body, fileSize: fileSize)
                return .success(stream)
            }
            // The cache needs the jar's cookies, read without the lock; then plan again.
            guard case .failure(let error) = prepared, error.code == .jarNeeded else { break }
            jar = JarCookies(for: error.message)
        } while true
        switch prepared {
        case .failure(let refusal):
            if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
            throw refusal
        case .success(let stream):
            return stream
        }
    }
}
