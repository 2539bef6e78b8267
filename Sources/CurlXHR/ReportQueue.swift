import Synchronization

extension HttpRequest {
    /// A state to report, and the `open` it belongs to.
    typealias Report = (state: State, generation: Int)

    /// Reports of one `open` taken from the queue together, oldest first: up to eight states,
    /// four bits each.
    struct ReportBatch {
        static let capacity = 8
        private var states: UInt32 = 0
        private(set) var count = 0
        /// The `open` the reports belong to.
        private(set) var generation = 0

        init(generation: Int = 0) {
            self.generation = generation
        }

        subscript(index: Int) -> State {
            State(rawValue: Int32(truncatingIfNeeded: states >> UInt32(4 * index) & 0xF))!
        }

        mutating func append(_ state: State) {
            states |= UInt32(truncatingIfNeeded: state.rawValue) << UInt32(4 * count)
            count += 1
        }
    }

    /// Reports waiting for the callback queue, oldest first: `items[next..<count]`. Taken by
    /// index, so taking some moves none of the others; emptied by resetting the indices, so
    /// the slots are written over by the next reports.
    struct ReportQueue {
        private var items: [Report] = []
        private var next = 0
        private var count = 0
        /// How many times ``discard(generation:)`` dropped the reports of the `open` whose
        /// reports were taken last: those taken before it are stale.
        private(set) var discards: UInt64 = 0
        /// The `open` of the reports taken last.
        private var takenGeneration = -1

        var isEmpty: Bool { next == count }

        mutating func append(_ state: State, generation: Int) {
            if count < items.count {
                items[count] = (state, generation)
            } else {
                items.append((state, generation))
            }
            count += 1
        }

        /// Takes the oldest reports of one `open`, up to `limit` and as many as a batch holds.
        mutating func take(upTo limit: Int = ReportBatch.capacity) -> ReportBatch {
            guard next < count else { return ReportBatch() }
            var batch = ReportBatch(generation: items[next].generation)
            let most = min(limit, ReportBatch.capacity)
            while next < count, batch.count < most, items[next].generation == batch.generation {
                batch.append(items[next].state)
                next += 1
            }
            takenGeneration = batch.generation
            if next == count { rewind() }
            return batch
        }

        /// Drops the waiting reports of the `open` numbered `generation`, the latest (an abort:
        /// its DONE supersedes them). Those of earlier opens stay, to be delivered as stale
        /// callbacks; they come first, as the queue is in `open` order.
        mutating func discard(generation: Int) {
            while count > next, items[count - 1].generation == generation { count -= 1 }
            if next == count { rewind() }
            if takenGeneration == generation { discards &+= 1 }
        }

        private mutating func rewind() {
            next = 0
            count = 0
        }
    }
}

/// A request's ready state, status and `open` generation as its lock last left them, and
/// whether received bytes wait, for getters that read them without the lock: one word, so a
/// read sees them together. And how many times an abort discarded the reports waiting, for
/// callbacks taken before.
struct PublishedState: ~Copyable, Sendable {
    /// Bits 32–63: the generation (its low 32 bits); 24: bytes wait; 8–23: the status; 0–7:
    /// the state.
    private let word = Atomic<UInt64>(0)
    private let discards = Atomic<UInt64>(0)

    func publish(state: HttpRequest.State, status: Int, generation: Int, hasReceived: Bool, reportDiscards: UInt64) {
        let value = UInt64(UInt32(truncatingIfNeeded: generation)) << 32 | (hasReceived ? 1 << 24 : 0)
            | UInt64(UInt16(clamping: status)) << 8 | UInt64(UInt8(truncatingIfNeeded: state.rawValue))
        word.store(value, ordering: .releasing)
        discards.store(reportDiscards, ordering: .releasing)
    }

    func read() -> (state: HttpRequest.State, status: Int, generation: UInt32, hasReceived: Bool) {
        let value = word.load(ordering: .acquiring)
        return (HttpRequest.State(rawValue: Int32(value & 0xFF)) ?? .unsent, Int((value >> 8) & 0xFFFF),
                UInt32(truncatingIfNeeded: value >> 32), value & 1 << 24 != 0)
    }

    /// ``HttpRequest/ReportQueue/discards`` as the lock last left it.
    var reportDiscards: UInt64 { discards.load(ordering: .acquiring) }
}
