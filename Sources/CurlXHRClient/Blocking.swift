import CurlXHR
import Dispatch

/// Runs async work as a task and blocks the calling thread until it is done: for the blocking
/// calls (`invokeSync`), the C interface and the `xhr` tool, whose threads are never Swift's
/// cooperative pool (from a thread of that pool it could wait for a thread that never comes).
package enum Blocking {
    package static func run<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) -> Value {
        let outcome = Locked<Value?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let value = await work()
            outcome.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0! }
    }
}
