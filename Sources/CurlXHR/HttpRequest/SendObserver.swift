import Dispatch

/// The events and trace entries of one send, on their way to the request's callback queue:
/// posted by whichever thread sees them (the sending thread, the engine), delivered in the
/// order posted, one run at a time. Made only for a send whose request has an observer, so
/// a send without one pays a nil check at each point an event could come from.
///
/// ``close(with:)`` posts `.done` and shuts the channel: nothing posted after it is delivered.
final class SendObserver: Sendable {
    enum Item {
        case event(HttpRequest.Event)
        case trace(HttpRequest.TraceEntry)
    }

    private struct Pending {
        var items: [Item] = []
        var delivering = false
        var closed = false
    }

    /// The request, until the last item is delivered (the send holds it anyway until it ends).
    private let request: HttpRequest
    private let observers: Observers
    private let queue: DispatchQueue
    private let pending = Locked(Pending())
    /// The password of the request's URL and of its credentials, replaced in trace entries.
    let secrets: [String]

    init(request: HttpRequest, observers: Observers, queue: DispatchQueue, secrets: [String]) {
        self.request = request
        self.observers = observers
        self.queue = queue
        self.secrets = secrets.filter { !$0.isEmpty }
    }

    /// Whether trace entries are wanted (`CURLOPT_VERBOSE` with a debug callback).
    var traces: Bool { observers.trace != nil }

    func post(_ event: HttpRequest.Event) {
        guard observers.event != nil else { return }
        append(.event(event), closing: false)
    }

    func post(_ entry: HttpRequest.TraceEntry) {
        append(.trace(entry), closing: false)
    }

    /// The send started: `.started`, and what the cache's plan says of it (``CacheExchange/outcomeAtStart``).
    func started(_ cache: CacheExchange?) {
        post(.started)
        if let outcome = cache?.outcomeAtStart { post(.cache(outcome)) }
    }

    /// Posts `.done` with `metrics` (to an event receiver); nothing after it is delivered.
    func close(with metrics: HttpRequest.Metrics) {
        append(observers.event == nil ? nil : .event(.done(metrics)), closing: true)
    }

    /// Queues `item` (nil: none, only `closing`) unless the channel is closed.
    private func append(_ item: Item?, closing: Bool) {
        let start = pending.withLock { pending -> Bool in
            guard !pending.closed else { return false }
            if closing { pending.closed = true }
            guard let item else { return false }
            pending.items.append(item)
            guard !pending.delivering else { return false }
            pending.delivering = true
            return true
        }
        if start { queue.async { self.deliver() } }
    }

    /// Delivers what is pending, and what is posted meanwhile, in order.
    private func deliver() {
        var batch: [Item] = []
        while true {
            pending.withLock { pending in
                swap(&batch, &pending.items)
                if batch.isEmpty { pending.delivering = false }
            }
            guard !batch.isEmpty else { return }
            for item in batch {
                switch item {
                case .event(let event): observers.event?(request, event)
                case .trace(let entry): observers.trace?(request, entry)
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
