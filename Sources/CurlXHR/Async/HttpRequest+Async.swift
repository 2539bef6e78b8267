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
    /// - Parameter timeout: seconds for the whole send, body included; 0 for the total of
    ///   ``setTimeouts(connect:headers:idle:total:)``, or none.
    /// - Throws: ``HttpRequestError``: what ``send(timeout:)`` would refuse (with the same code
    ///   and message; any state but OPENED is ``HttpRequestError/Code/invalidState``), or the
    ///   code ``HttpRequestError/Code/transferFailed`` when the transfer fails before its head
    ///   (with ``HttpRequestError/failureKind``). `CancellationError` when the task is cancelled.
    public func response(timeout: Double = 0) async throws -> HttpResponse {
        try await stream(sending: .none, timeout: timeout).response()
    }

    /// Sends `body` byte for byte (no `Content-Type` unless set); see ``response(timeout:)``.
    public func response(sending body: Data, timeout: Double = 0) async throws -> HttpResponse {
        try await stream(sending: .bytes(body, contentType: nil), timeout: timeout).response()
    }

    /// Sends `body` as UTF-8 text (`Content-Type: text/plain;charset=UTF-8` unless set); see
    /// ``response(timeout:)``.
    public func response(sending body: String, timeout: Double = 0) async throws -> HttpResponse {
        try await stream(sending: .bytes(Data(body.utf8), contentType: "text/plain;charset=UTF-8"), timeout: timeout).response()
    }

    /// Streams the file at `path` as the body, as ``sendWithFile(_:timeout:)`` does; see
    /// ``response(timeout:)``.
    public func response(sendingFile path: String, timeout: Double = 0) async throws -> HttpResponse {
        switch ReadableFile.open(path) {
        case .failure(let problem):
            throw HttpRequestError(.fileUnreadable, problem.message)
        case .success(let file):
            return try await stream(sending: .file(path: path), timeout: timeout, fileDescriptor: file.descriptor,
                                    fileSize: file.size).response()
        }
    }

    /// The stream of a send of `body`, its transfer prepared (not an `async` function: each
    /// level of those costs the task a frame and a look at its executor).
    private func stream(sending body: RequestBody, timeout: Double, fileDescriptor: Int32 = -1, fileSize: Int64 = 0) throws -> ResponseStream {
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
