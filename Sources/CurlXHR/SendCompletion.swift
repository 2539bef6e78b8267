#if canImport(Glibc)
import Glibc
#endif

/// Where a request's synchronous sends wait for the engine to be done with their transfers:
/// one pthread mutex and condition per request, made once, instead of a semaphore made and
/// destroyed for every send.
///
/// Each waiter waits for its own transfer's flag, and completions wake every waiter, so the
/// late completion of a transfer that `open` aborted on another thread never releases the
/// send that followed it.
final class SendCompletion: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// The engine is done with `transfer`, whatever the reason. Wakes the waiters after
    /// unlocking, so a woken waiter does not block again on the mutex the engine still holds
    /// (the caller keeps `transfer`, and through it this object, alive meanwhile).
    func complete(_ transfer: Transfer) {
        pthread_mutex_lock(mutex)
        transfer.isComplete = true
        pthread_mutex_unlock(mutex)
        pthread_cond_broadcast(condition)
    }

    /// Returns once `transfer` is complete.
    func wait(for transfer: Transfer) {
        pthread_mutex_lock(mutex)
        while !transfer.isComplete { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
