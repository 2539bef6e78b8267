/// The decisions of one ``RequestQueue`` as a pure value type: which request starts, which
/// waits, which is refused, and who starts when one leaves.
///
/// Requests (`Member`s) come in with ``admit(_:priority:atFront:)`` and go out with
/// ``leave(_:)``, exactly once each: when their send ends, or when they stop waiting. No
/// lock, no thread and no request in here; ``RequestQueue`` keeps one behind its lock.
///
/// | event | slots free | all slots taken | all taken, `maxPending` waiting |
/// |-------|------------|-----------------|---------------------------------|
/// | admit | start      | wait            | full (refused)                  |
/// | leave of a running member | – | the next waiting one starts | the same |
/// | leave of a waiting member | – | removed, nothing starts | the same |
///
/// The next to start is the first waiting member of the highest priority; within one
/// priority, members admitted at the front come first (the latest of them first), then the
/// others in order of arrival.
struct QueueBook<Member: Equatable & Sendable>: Sendable {
    enum Admission: Equatable, Sendable {
        /// A slot was free: the member runs now.
        case start
        /// Waits for a slot.
        case wait
        /// `maxPending` members already wait: refused.
        case full
    }

    /// At most this many run at once (at least 1).
    let maxSimultaneous: Int
    /// At most this many wait (0: no limit).
    let maxPending: Int
    /// The members running now, in the order they started.
    private(set) var running: [Member] = []
    /// The waiting members, one lane per priority (``HttpRequest/Priority``'s raw value).
    private var lanes = [Lane](repeating: Lane(), count: HttpRequest.Priority.allCases.count)
    private(set) var waitingCount = 0

    /// The members of one priority that wait: those admitted at the front (the latest last,
    /// so it is taken first) and the others in order of arrival (from `head` on).
    private struct Lane: Sendable {
        var front: [Member] = []
        var back: [Member] = []
        var head = 0

        var isEmpty: Bool { front.isEmpty && head == back.count }

        mutating func takeNext() -> Member? {
            if let member = front.popLast() { return member }
            guard head < back.count else { return nil }
            let member = back[head]
            head += 1
            if head == back.count {
                back.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= back.count {
                back.removeFirst(head)  // now and then, so taking stays cheap
                head = 0
            }
            return member
        }

        mutating func remove(_ member: Member) -> Bool {
            if let index = front.firstIndex(of: member) {
                front.remove(at: index)
                return true
            }
            if let index = back[head...].firstIndex(of: member) {
                back.remove(at: index)
                return true
            }
            return false
        }

        /// In the order they would start.
        var ordered: [Member] { front.reversed() + back[head...] }
    }

    /// `maxSimultaneous` below 1 counts as 1, `maxPending` below 0 as 0 (no limit).
    init(maxSimultaneous: Int, maxPending: Int = 0) {
        self.maxSimultaneous = max(1, maxSimultaneous)
        self.maxPending = max(0, maxPending)
    }

    /// A member asks to run.
    mutating func admit(_ member: Member, priority: HttpRequest.Priority, atFront: Bool) -> Admission {
        if running.count < maxSimultaneous {
            running.append(member)
            return .start
        }
        if maxPending > 0, waitingCount >= maxPending { return .full }
        if atFront {
            lanes[Int(priority.rawValue)].front.append(member)
        } else {
            lanes[Int(priority.rawValue)].back.append(member)
        }
        waitingCount += 1
        return .wait
    }

    /// A member is done (its send ended) or stops waiting (aborted). Returns the members that
    /// start now, in order: the next waiting ones, when a running member freed its slot.
    mutating func leave(_ member: Member) -> [Member] {
        if let index = running.firstIndex(of: member) {
            running.remove(at: index)
            var starting: [Member] = []
            while running.count < maxSimultaneous, let next = takeNext() {
                running.append(next)
                starting.append(next)
            }
            return starting
        }
        for priority in lanes.indices where lanes[priority].remove(member) {
            waitingCount -= 1
            break
        }
        return []
    }

    /// Every waiting member, removed (in the order they would have started); the running
    /// ones keep their slots.
    mutating func removeWaiting() -> [Member] {
        let removed = waiting
        lanes = [Lane](repeating: Lane(), count: lanes.count)
        waitingCount = 0
        return removed
    }

    /// The waiting members in the order they would start.
    var waiting: [Member] {
        lanes.reversed().flatMap(\.ordered)
    }

    private mutating func takeNext() -> Member? {
        for priority in lanes.indices.reversed() where !lanes[priority].isEmpty {
            waitingCount -= 1
            return lanes[priority].takeNext()
        }
        return nil
    }
}
