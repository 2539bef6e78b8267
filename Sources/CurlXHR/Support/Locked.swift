#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex.
///
/// Used instead of `Synchronization.Mutex`, whose Linux implementation (a bare futex) is
/// invisible to ThreadSanitizer: with a pthread mutex, `--sanitize=thread` sees the locking
/// and reports only real races.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// The value, outside the object: the mutex already keeps accesses apart, so Swift's
    /// run-time exclusivity check of a stored property (on every lock) is left out.
    private let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    package init(_ value: Value) {
        self.value.initialize(to: value)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
