import Dispatch

/// Runs the callbacks the engine hands to ``HttpRequest/defaultCallbackQueue`` on a thread of
/// the library's own, inside `defaultCallbackQueue.sync`.
///
/// `queue.async` would wake one of Dispatch's worker threads for every round of the engine
/// that has results: a semaphore post, and the worker's drain of the serial queue. This
/// thread sleeps on the library's wake word instead (``Wakeups``), woken only when it found
/// nothing to do, and runs each round's callbacks as a synchronous block on the queue, which
/// Dispatch runs on the calling thread when the queue is free. The callbacks still run on the
/// queue, one at a time and in order with anything else submitted to it; the engine never
/// waits for them.
///
/// Only the default queue: the library owns it, so nothing else on it can keep this thread
/// waiting for long. Callbacks for an application's queues go there with `queue.async`.
final class DefaultQueueDelivery: Sendable {
    static let shared = DefaultQueueDelivery()

    private struct Pending {
        var requests: [HttpRequest] = []
        /// The thread found no batch and sleeps (or is about to): the next delivery wakes it.
        var threadWaits = false
    }

    private let pending = Locked(Pending())

    private init() {
        startDetachedThread("callback") { self.run() }
    }

    /// Queues the due callbacks of `requests` and empties it; wakes the thread only if it
    /// waits. The arrays' buffers are exchanged, not copied, and go round between the engine,
    /// the queue and the thread, so a round allocates nothing.
    func deliver(_ requests: inout [HttpRequest]) {
        let wake = pending.withLock { pending in
            if pending.requests.isEmpty {
                swap(&pending.requests, &requests)
            } else {
                pending.requests.append(contentsOf: requests)
                requests.removeAllKeepingBuffer()
            }
            defer { pending.threadWaits = false }
            return pending.threadWaits
        }
        if wake { Wakeups.wake(Wakeups.callbackThread) }
    }

    private func run() {
        var taken: [HttpRequest] = []
        while true {
            Wakeups.sleep(Wakeups.callbackThread) {
                pending.withLock { pending in
                    swap(&taken, &pending.requests)
                    pending.threadWaits = taken.isEmpty
                    return !taken.isEmpty
                }
            }
            HttpRequest.defaultCallbackQueue.sync {
                for request in taken { request.deliverReports() }
            }
            taken.removeAllKeepingBuffer()
        }
    }
}
