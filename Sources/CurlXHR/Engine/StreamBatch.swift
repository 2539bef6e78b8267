import Dispatch
import Synchronization

/// The `async` responses a round of the engine woke, handed to the pool to resume their
/// tasks, each stream let go of once woken (so its task may reuse it for its next response).
///
/// Not resumed from the engine thread: there, each resume wakes a pool worker that takes the
/// core from the engine for its one task (1.2 switches a request, measured on one core).
/// Two jobs of the pool share one batch (see ``wake()``): 0.10 switches a request.
final class StreamBatch: @unchecked Sendable {
    /// Retained streams, in the order they became due; each taken once, by the job that wakes it.
    private let streams: UnsafeMutableBufferPointer<Unmanaged<ResponseStream>>
    private let next = Atomic<Int>(0)

    /// Takes `due` and leaves it empty (its buffer kept).
    init(taking due: inout [ResponseStream]) {
        streams = .allocate(capacity: due.count)
        for (index, stream) in due.enumerated() {
            (streams.baseAddress! + index).initialize(to: Unmanaged.passRetained(stream))
        }
        due.removeAllKeepingBuffer()
    }

    deinit {
        // Every stream was taken: each job wakes until none is left.
        streams.deallocate()
    }

    /// Wakes every stream's waiting task from the pool. A resumed task goes to the pool's
    /// queue, and a task put on an empty queue wakes a worker that sleeps: sharing a core,
    /// that worker takes it at once, runs its one task, finds the queue empty and sleeps
    /// again, to be woken by the next resume (two switches a task, measured on one core). So
    /// the job's first hand-over is a second job on the same batch: the worker it wakes wakes
    /// streams too, and no later resume finds a worker asleep (as few switches a request as
    /// callbacks on the library's own thread; on two free cores, both wake at once).
    func wake() {
        DispatchQueue.global().async {
            DispatchQueue.global().async { self.wakeAll() }
            self.wakeAll()
        }
    }

    private func wakeAll() {
        while true {
            let index = next.add(1, ordering: .relaxed).oldValue
            guard index < streams.count else { return }
            streams[index].takeRetainedValue().wakeWaiters()
        }
    }
}
