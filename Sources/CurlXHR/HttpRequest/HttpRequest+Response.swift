import CCurlShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What a request reports of its state and its response.
extension HttpRequest {
    // MARK: The response

    /// The ready state; inside a callback, the state being reported.
    public func getState() -> State {
        // Without the lock: this thread's own callback, else the state the lock last left.
        runsCallback ? State(rawValue: callbackState.load(ordering: .relaxed)) ?? .unsent : published.read().state
    }

    /// The callback running on this thread changed the request's state (abort or open):
    /// `getState()` returns the new state, and the getters the new `open`'s data, until it
    /// returns. Only the thread that runs the callback writes these.
    func callbackChangedState(to state: State, generation: Int) {
        callbackState.store(state.rawValue, ordering: .relaxed)
        callbackGeneration.store(generation, ordering: .relaxed)
    }

    /// Whether the calling thread runs a callback of this request.
    var runsCallback: Bool {
        callbackThread.load(ordering: .relaxed) == UInt(pthread_self())
    }

    /// Whether the calling thread runs a callback of an earlier `open` (the DONE of a transfer
    /// a re-open aborted, delivered late): it sees that request as it ended, aborted, and never
    /// the current one's data.
    func isStale(_ core: Core) -> Bool {
        isStale(generation: UInt32(truncatingIfNeeded: core.scheduler.generation))
    }

    /// ``isStale(_:)`` against the `open` generation (its low 32 bits, as published).
    func isStale(generation: UInt32) -> Bool {
        runsCallback && UInt32(truncatingIfNeeded: callbackGeneration.load(ordering: .relaxed)) != generation
    }

    /// The value of a response header, matched case-insensitively; repeated fields are joined
    /// with ", ". `nil` when absent or before HEADERS_RECEIVED.
    public func getResponseHeader(_ name: String) -> String? {
        withCore { isStale($0) ? nil : $0.response?.value(of: name) }
    }

    /// The value of a trailer field, sent after a chunked body's last chunk (or in HTTP/2's
    /// trailing HEADERS frame), matched case-insensitively; repeated fields are joined with
    /// ", ". `nil` when absent or before the response has ended (read it at DONE).
    public func getResponseTrailer(_ name: String) -> String? {
        withCore { isStale($0) || !$0.lastSend.ended ? nil : $0.lastSend.trailers?.value(of: name) }
    }

    /// All headers of the final response as `Name: value` lines joined by `\n`; `nil` before
    /// HEADERS_RECEIVED and after a failure.
    public func getAllResponseHeaders() -> String? {
        withCore { isStale($0) ? nil : $0.response?.allFields }
    }

    /// The HTTP status of the final response; 0 before HEADERS_RECEIVED and on any failure
    /// (DNS, connect, TLS, timeout, reset, malformed response, abort).
    public func getStatus() -> Int {
        // Without the lock, as for getState().
        let snapshot = published.read()
        return isStale(generation: snapshot.generation) ? 0 : snapshot.status
    }

    /// The reason phrase, or after a failure the text describing it (TLS failures begin with
    /// "SSL"); `nil` before either is known.
    public func getStatusText() -> String? {
        withCore { isStale($0) ? Core.staleFailure.text : $0.failure?.text ?? $0.response?.reason }
    }

    /// How many body bytes of the current (or last) send have gone out, for upload progress.
    /// Counts the body only, not the headers; 0 for a request without a body.
    public func getBytesSent() -> Int64 {
        sentBytes.load(ordering: .relaxed)
    }

    /// How far the body of the current (or last) send has gone out, and its response's body
    /// come in: bytes sent and to send (0 without a body; -1 until known, as for a multipart
    /// form before libcurl sized it), body bytes received (after decoding; into the receive
    /// buffer or the response file) and to receive (-1 when unknown: before the head, without
    /// a `Content-Length`, or for a compressed body, unless mesibo's `Content-Size` says).
    public func getProgress() -> Progress {
        withCore { core in
            let stale = isStale(core)
            return Progress(bytesSent: sentBytes.load(ordering: .relaxed), bytesToSend: bytesToSend.load(ordering: .relaxed),
                            bytesReceived: stale ? 0 : core.received,
                            bytesToReceive: stale ? -1 : core.response?.expectedBodyLength(decoded: core.switches.contentDecoding)
                                .map(Int64.init) ?? -1)
        }
    }

    /// The kind of failure that ended the request with status 0 (the details are in
    /// ``getStatusText()``); `nil` while it has not failed.
    public func getFailureKind() -> FailureKind? {
        withCore { isStale($0) ? Core.staleFailure.kind : $0.failure?.kind }
    }

    /// The libcurl code of the failure that ended the request (curl's exit status for it), 0
    /// when there is none or it says no more than ``getFailureKind()``: for `xhr`'s exit
    /// status.
    package func getFailureCode() -> Int32 {
        withCore { isStale($0) ? 0 : $0.failure?.code ?? 0 }
    }

    /// What the last send measured and where it ended: the protocol, the URL after
    /// redirects, how many were followed, and its times (as curl's `--write-out` variables).
    /// Empty after `open`; before the send ends only the protocol is there, from
    /// HEADERS_RECEIVED on.
    public func getMetrics() -> Metrics {
        withCore { core in
            if isStale(core) { return Metrics() }
            guard core.lastSend.ended else { return Metrics(httpVersion: core.response?.httpVersion) }
            return Metrics(core.lastSend, facts: core.finishedTransfer?.facts ?? cxhr_send_facts(), url: core.message.url,
                           method: core.message.method)
        }
    }

    /// The body bytes received since the previous call (all of them on the first call).
    public func getReceiveBuffer() -> Data {
        // Without the lock when no bytes wait (as at DONE after LOADING took them).
        guard published.read().hasReceived else { return Data() }
        return withCore { core in
            if isStale(core) { return Data() }
            return core.sink.take()
        }
    }
}
