import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Runs the callbacks the engine hands to ``HttpRequest/defaultCallbackQueue`` on a thread of
/// the library's own, inside `defaultCallbackQueue.sync`.
///
/// `queue.async` would wake one of Dispatch's worker threads for every round of the engine
/// that has results: a semaphore post, and the worker's drain of the serial queue. This
/// thread waits on a condition variable instead and runs each round's callbacks as a
/// synchronous block on the queue, which Dispatch runs on the calling thread when the queue
/// is free. The callbacks still run on the queue, one at a time and in order with anything
/// else submitted to it; the engine never waits for them.
///
/// Only the default queue: the library owns it, so nothing else on it can keep this thread
/// waiting for long. Callbacks for an application's queues go there with `queue.async`.
final class DefaultQueueDelivery: @unchecked Sendable {
    static let shared = DefaultQueueDelivery()

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Under `mutex`.
    @exclusivity(unchecked) private var batches: [[HttpRequest]] = []
    @exclusivity(unchecked) private var threadWaits = false

    private init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
        startDetachedThread("callback") { self.run() }
    }

    /// Queues the due callbacks of `requests`; signals the thread only if it waits.
    func deliver(_ requests: [HttpRequest]) {
        pthread_mutex_lock(mutex)
        batches.append(requests)
        let wake = threadWaits
        threadWaits = false
        pthread_mutex_unlock(mutex)
        if wake { pthread_cond_signal(condition) }
    }

    private func run() {
        var taken: [[HttpRequest]] = []
        while true {
            pthread_mutex_lock(mutex)
            while batches.isEmpty {
                threadWaits = true
                pthread_cond_wait(condition, mutex)
            }
            swap(&taken, &batches)
            pthread_mutex_unlock(mutex)
            HttpRequest.defaultCallbackQueue.sync {
                for batch in taken {
                    for request in batch { request.deliverReports() }
                }
            }
            taken.removeAll(keepingCapacity: true)
        }
    }
}
