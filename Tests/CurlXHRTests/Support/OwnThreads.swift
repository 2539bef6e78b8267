import Foundation
import Testing

/// Runs each test of a suite on threads of its own, never on Swift's cooperative pool, with
/// at most ``width`` tests at once.
///
/// The pool has one thread per core (two on a small machine), and Swift Testing runs every
/// test function there, synchronous ones too. A test that blocks (a synchronous send, a
/// sleep, a wait for a process) holds one of those threads: two of them stalled every other
/// test, and the library's own tasks (a `Task.detached` of `invokeSync` or of an OAuth2
/// token fetch), for seconds. Here a test's body runs on ``TestThreads``, so blocking holds
/// its own thread alone, and the pool stays free for the tasks the library starts.
struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    /// How many tests run at once: the loopback servers and two cores take this many
    /// without a test's timing moving (`CURLXHR_TEST_WIDTH` sets another).
    static let width = ProcessInfo.processInfo.environment["CURLXHR_TEST_WIDTH"].flatMap { Int($0) }.map { max(1, $0) } ?? 6
    private static let gate = Gate(width)

    var isRecursive: Bool { true }

    /// A serialized suite holds one place for all its tests (which run one after another, so
    /// none waits in line again after the one before); every other test holds its own.
    @TaskLocal private static var inSerializedSuite = false

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        if test.isSuite { return test.traits.contains { $0 is ParallelizationTrait } ? self : nil }
        return testCase == nil ? nil : self
    }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        @Sendable func onThreads() async throws {
            try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
        }
        if test.isSuite, Self.inSerializedSuite {
            try await function()  // a serialized suite inside one: the outer one's place
        } else if test.isSuite {
            try await Self.gate.holding { try await Self.$inSerializedSuite.withValue(true) { try await function() } }
        } else if test.traits.contains(where: { $0 is Alone }) {
            // Every place: nothing else runs. A serialized suite gives its own place back
            // meanwhile, so that no one waits holding a place (and none waits for ever).
            let inSuite = Self.inSerializedSuite
            if inSuite { await Self.gate.leave() }
            let outcome = await Self.outcome { try await Self.gate.holding(alone: true, onThreads) }
            if inSuite { await Self.gate.enter() }
            try outcome.get()
        } else if Self.inSerializedSuite {
            try await onThreads()
        } else {
            try await Self.gate.holding(onThreads)
        }
    }

    /// What `body` did: run to the end, or threw.
    static func outcome(_ body: () async throws -> Void) async -> Result<Void, any Error> {
        do {
            try await body()
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// `width` places, taken in turn; a waiter for every place (``Alone``) lets the others
    /// pass, and goes once all are free (at the latest when the others are done). Each
    /// waiter holds none while it waits.
    private actor Gate {
        private let width: Int
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []
        private var waitingAlone: [CheckedContinuation<Void, Never>] = []
        init(_ width: Int) {
            self.width = width
            free = width
        }

        func enter(alone: Bool = false) async {
            if alone || width == 1 {
                if free == width {
                    free = 0
                    return
                }
                await withCheckedContinuation { waitingAlone.append($0) }
            } else if waiting.isEmpty, free > 0 {
                free -= 1
            } else {
                await withCheckedContinuation { waiting.append($0) }
            }
        }

        func leave(alone: Bool = false) {
            free += alone ? width : 1
            while free > 0, !waiting.isEmpty {
                free -= 1
                waiting.removeFirst().resume()
            }
            if free == width, !waitingAlone.isEmpty {
                free = 0
                waitingAlone.removeFirst().resume()
            }
        }

        nonisolated func holding(alone: Bool = false, _ body: @Sendable () async throws -> Void) async throws {
            await enter(alone: alone)
            let outcome = await OwnThreads.outcome(body)
            await leave(alone: alone)
            try outcome.get()
        }
    }
}

/// A test that changes what every request of the process uses (a process-wide setting, the
/// one cookie jar), or that measures a latency the other tests' load would move: with
/// ``OwnThreads``, it runs while no other test does.
struct Alone: TestTrait {}

extension Trait where Self == Alone {
    static var alone: Self { Alone() }
}

extension Trait where Self == OwnThreads {
    /// Each test on threads of its own: see ``OwnThreads``.
    static var ownThreads: Self { OwnThreads() }
}

/// A task executor whose jobs run on plain threads: an idle one when there is one, else a
/// new one. A thread idle for 10 s ends.
final class TestThreads: TaskExecutor, @unchecked Sendable {
    static let shared = TestThreads()
    private let lock = NSLock()
    /// Threads waiting for a job, each on its own semaphore; guarded by `lock`.
    private var idle: [Worker] = []

    /// One thread: the job it is handed, and the semaphore it waits on for it.
    private final class Worker: @unchecked Sendable {
        let handed = DispatchSemaphore(value: 0)
        /// Set before `handed` is signalled, read after.
        var job: UnownedJob?
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        let worker = idle.popLast()
        lock.unlock()
        if let worker {
            worker.job = job
            worker.handed.signal()
            return
        }
        let thread = Thread { self.work(first: job) }
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func work(first: UnownedJob) {
        let worker = Worker()
        var job = first
        while true {
            job.runSynchronously(on: asUnownedTaskExecutor())
            lock.lock()
            idle.append(worker)
            lock.unlock()
            if worker.handed.wait(timeout: .now() + 10) == .timedOut {
                lock.lock()
                let unclaimed = idle.firstIndex { $0 === worker }.map { idle.remove(at: $0) } != nil
                lock.unlock()
                if unclaimed { return }
                worker.handed.wait()  // claimed as the wait ended: its job is on the way
            }
            job = worker.job!
            worker.job = nil
        }
    }
}
