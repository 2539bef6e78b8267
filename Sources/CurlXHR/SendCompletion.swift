import CCurlShim
import Synchronization

/// Where synchronous sends wait for the engine to be done with their transfers.
///
/// One futex word for the process (`ccompletion.h`): a send sleeps on it with its request's
/// bit, and the engine wakes, in one system call when its round ends, the bits of every send
/// whose transfer it completed in the round. So the woken sends run one after another instead
/// of each preempting the engine in the middle of its round (a condition variable per request,
/// signalled as each transfer ended, cost about one more context switch a request from 16
/// threads).
///
/// Whether a transfer is complete is its own atomic flag, so a send woken for another
/// request's bit, or for the late completion of a transfer `open` aborted, sleeps again.
enum SendCompletion {
    private static let requests = Atomic<UInt32>(0)

    /// The bit for a new request's sends; requests share the 32 bits in turn.
    static func newBit() -> UInt32 {
        1 << (requests.wrappingAdd(1, ordering: .relaxed).oldValue % 32)
    }

    /// Returns once `transfer` is complete.
    static func wait(for transfer: Transfer) {
        while true {
            let epoch = cxhr_completion_epoch()
            if transfer.isComplete.load(ordering: .acquiring) { return }
            cxhr_completion_sleep(epoch, transfer.request.completionBit)
        }
    }

    /// Wakes the sends waiting with `bits` (none for 0).
    static func wake(_ bits: UInt32) {
        if bits != 0 { cxhr_completion_wake(bits) }
    }
}
