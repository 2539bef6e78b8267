import CurlXHR
import Dispatch

extension HttpClient {
    /// Receives a call's progress (FSNetworking's progress block): body bytes sent and to
    /// send, received and to receive (`-1` while not known), as `HttpRequest.Progress`.
    public typealias ProgressHandler = @Sendable (HttpRequest.Progress) -> Void
}

/// Hands a call's progress to its handler on a serial queue, in order: a report joins one
/// that waits (so a fast transfer costs few hops) and the counts a handler sees never go down,
/// the last report showing the totals. A middleware that sends the call again starts a new
/// attempt, whose counts start again from 0; reports of the attempt before are dropped.
final class ProgressReporter: Sendable {
    private struct State {
        var latest: HttpRequest.Progress?
        var pending = false
        var attempt = 0
        /// The call ended (``flush()``): a report that comes later is not made.
        var closed = false
    }

    private let handler: HttpClient.ProgressHandler
    private let queue: DispatchQueue
    private let state = Locked(State())

    /// A reporter calling `handler` on `target` (through a serial queue of its own).
    init(_ handler: @escaping HttpClient.ProgressHandler, target: DispatchQueue) {
        self.handler = handler
        queue = DispatchQueue(label: "CurlXHRClient.progress", target: target)
    }

    /// A new send of the call: the number its reports carry.
    func startAttempt() -> Int {
        state.withLock { state in
            state.attempt += 1
            state.latest = nil
            return state.attempt
        }
    }

    /// Reports `progress` of `attempt`, unless a newer attempt started or nothing changed.
    /// The body sent is the most either this or an earlier report counted (the transfer's
    /// upload reports come from another queue: ``sent(_:attempt:)``), and its size the known one.
    func report(_ progress: HttpRequest.Progress, attempt: Int) {
        merge(attempt, first: progress) { latest in
            latest.bytesReceived = progress.bytesReceived
            latest.bytesToReceive = progress.bytesToReceive
            latest.bytesSent = max(latest.bytesSent, progress.bytesSent)
            if progress.bytesToSend >= 0 { latest.bytesToSend = progress.bytesToSend }
        }
    }

    /// Reports the body sent so far of `attempt` as its transfer counts it (`HttpRequest`'s
    /// progress handler): only the counts of what is sent.
    func sent(_ transfer: HttpRequest.Progress, attempt: Int) {
        merge(attempt, first: HttpRequest.Progress(bytesSent: transfer.bytesSent, bytesToSend: transfer.bytesToSend)) { latest in
            latest.bytesSent = max(latest.bytesSent, transfer.bytesSent)
            if transfer.bytesToSend >= 0 { latest.bytesToSend = transfer.bytesToSend }
        }
    }

    /// Applies `change` to the latest counts of `attempt` (takes `first` when there are none),
    /// and queues a report unless one waits or nothing changed.
    private func merge(_ attempt: Int, first: HttpRequest.Progress, _ change: (inout HttpRequest.Progress) -> Void) {
        let schedules = state.withLock { state -> Bool in
            guard state.attempt == attempt, !state.closed else { return false }
            var merged = first
            if let latest = state.latest {
                merged = latest
                change(&merged)
            }
            guard state.latest != merged else { return false }
            state.latest = merged
            guard !state.pending else { return false }
            state.pending = true
            return true
        }
        guard schedules else { return }
        queue.async {
            let latest = self.state.withLock { state -> HttpRequest.Progress? in
                state.pending = false
                return state.latest
            }
            if let latest { self.handler(latest) }
        }
    }

    /// Returns once every report made so far has been handled; none is made after it.
    func flush() async {
        state.withLock { $0.closed = true }
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }
}

/// The counts of one send as its transfer goes: what the progress reports say.
struct TransferCounts: Equatable {
    var progress: HttpRequest.Progress

    /// Before the send: the body's size when known (`-1` for a multipart form, which libcurl sizes).
    init(body: HttpClientRequest.Body) {
        let toSend: Int64
        switch body {
        case .none: toSend = 0
        case .data(let data): toSend = Int64(data.count)
        case .multipart: toSend = -1
        }
        progress = HttpRequest.Progress(bytesSent: 0, bytesToSend: toSend, bytesReceived: 0, bytesToReceive: -1)
    }

    /// The head came: the body went out (counted whole when its size is known), and the size
    /// to receive is the `Content-Length` of a body that comes as it is (0 for HEAD, 204 and
    /// 304; unknown when it comes compressed, its decoded size not being announced).
    mutating func headArrived(method: String, status: Int, contentLength: Int?, contentEncoding: String?) {
        if progress.bytesToSend > 0 { progress.bytesSent = progress.bytesToSend }
        if method == "HEAD" || status == 204 || status == 304 {
            progress.bytesToReceive = 0
        } else if let contentLength, contentEncoding.map({ $0.isEmpty || $0.lowercased() == "identity" }) ?? true {
            progress.bytesToReceive = Int64(contentLength)
        }
    }

    /// `count` body bytes arrived.
    mutating func received(_ count: Int) {
        progress.bytesReceived += Int64(count)
    }

    /// The body is complete: what came is the total.
    mutating func bodyComplete() {
        progress.bytesToReceive = progress.bytesReceived
    }
}
