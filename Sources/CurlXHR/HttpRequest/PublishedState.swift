import Synchronization

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

    func read() -> Snapshot {
        Snapshot(value: word.load(ordering: .acquiring))
    }

    /// What one read saw, decoded field by field as asked for.
    struct Snapshot {
        let value: UInt64
        var state: HttpRequest.State { HttpRequest.State(rawValue: Int32(value & 0xFF)) ?? .unsent }
        var status: Int { Int((value >> 8) & 0xFFFF) }
        var generation: UInt32 { UInt32(truncatingIfNeeded: value >> 32) }
        var hasReceived: Bool { value & 1 << 24 != 0 }
    }

    /// ``ReportScheduler/discards`` as the lock last left it.
    var reportDiscards: UInt64 { discards.load(ordering: .acquiring) }
}
