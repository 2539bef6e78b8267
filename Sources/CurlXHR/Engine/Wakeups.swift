import CCurlShim
import Synchronization

/// Where the library's threads sleep until the engine has something for them: synchronous
/// sends until their transfers are complete, the callback thread until callbacks are due.
///
/// One futex word for the process (`cwakeword.h`). A thread sleeps on it with its bit; the
/// engine wakes, in one system call when its round ends, the bits of everything the round
/// completed. So the woken sends run one after another instead of each preempting the engine
/// in the middle of its round: a condition variable per request, signalled as each transfer
/// ended, cost about one more context switch a request from 16 threads. A sleeper woken for
/// another's bit (requests share the bits in turn) checks its own state and sleeps again.
enum Wakeups {
    /// The callback thread's bit (``DefaultQueueDelivery``).
    static let callbackThread: UInt32 = 1 << 31

    private static let requests = Atomic<UInt32>(0)

    /// The bit for a new request's synchronous sends: one of the other 31, in turn.
    static func newRequestBit() -> UInt32 {
        1 << (requests.wrappingAdd(1, ordering: .relaxed).oldValue % 31)
    }

    /// Returns once `isDone()` is true, sleeping with `bits` between checks. `isDone` must
    /// read, with acquiring order or under a lock, what the waker set before it woke `bits`.
    static func sleep(_ bits: UInt32, until isDone: () -> Bool) {
        while true {
            let epoch = cxhr_wake_epoch()
            if isDone() { return }
            cxhr_wake_sleep(epoch, bits)
        }
    }

    /// Wakes the threads sleeping with any of `bits` (none for 0).
    static func wake(_ bits: UInt32) {
        if bits != 0 { cxhr_wake(bits) }
    }
}
