import Testing
@testable import CurlXHR

/// A ``RequestQueue``'s decisions, event by event, with no request and no server.
@Suite(.ownThreads) struct QueueBookTests {
    typealias Book = QueueBook<String>

    @Test func slotsFillThenRequestsWaitAndEachEndStartsTheNext() {
        var book = Book(maxSimultaneous: 2)
        #expect(book.admit("a", priority: .normal, atFront: false) == .start)
        #expect(book.admit("b", priority: .normal, atFront: false) == .start)
        #expect(book.admit("c", priority: .normal, atFront: false) == .wait)
        #expect(book.admit("d", priority: .normal, atFront: false) == .wait)
        #expect(book.running == ["a", "b"] && book.waiting == ["c", "d"] && book.waitingCount == 2)
        #expect(book.leave("b") == ["c"])
        #expect(book.running == ["a", "c"] && book.waiting == ["d"])
        #expect(book.leave("a") == ["d"])
        #expect(book.leave("c") == [])
        #expect(book.leave("d") == [])
        #expect(book.running.isEmpty && book.waitingCount == 0)
        // Empty again: the next starts at once.
        #expect(book.admit("e", priority: .low, atFront: false) == .start)
    }

    @Test func higherPriorityFirstThenFrontInsertionsLatestFirstThenArrival() {
        var book = Book(maxSimultaneous: 1)
        #expect(book.admit("running", priority: .low, atFront: false) == .start)
        for (member, priority, front) in [("n1", HttpRequest.Priority.normal, false), ("l1", .low, false), ("n2", .normal, false),
                                          ("h1", .high, false), ("f1", .normal, true), ("f2", .normal, true),
                                          ("h2", .high, false), ("lf", .low, true)] {
            #expect(book.admit(member, priority: priority, atFront: front) == .wait)
        }
        let order = ["h1", "h2", "f2", "f1", "n1", "n2", "lf", "l1"]
        #expect(book.waiting == order)
        var started: [String] = []
        var current = "running"
        while true {
            let next = book.leave(current)
            guard let first = next.first else { break }
            #expect(next.count == 1)
            started.append(first)
            current = first
        }
        #expect(started == order)
    }

    @Test func beyondMaxPendingARequestIsRefusedAndAnAbortedWaiterMakesRoom() {
        var book = Book(maxSimultaneous: 1, maxPending: 2)
        #expect(book.admit("x", priority: .normal, atFront: false) == .start)
        #expect(book.admit("a", priority: .normal, atFront: false) == .wait)
        #expect(book.admit("b", priority: .high, atFront: true) == .wait)
        #expect(book.admit("c", priority: .high, atFront: false) == .full)
        #expect(book.waiting == ["b", "a"])
        // A waiting request that leaves frees no slot: nothing starts.
        #expect(book.leave("a") == [])
        #expect(book.running == ["x"] && book.waiting == ["b"])
        #expect(book.admit("c", priority: .normal, atFront: false) == .wait)
        #expect(book.admit("d", priority: .normal, atFront: false) == .full)
    }

    @Test func aMemberUnknownToTheBookChangesNothing() {
        var book = Book(maxSimultaneous: 1)
        #expect(book.admit("x", priority: .normal, atFront: false) == .start)
        #expect(book.admit("y", priority: .normal, atFront: false) == .wait)
        #expect(book.leave("stranger") == [])
        #expect(book.running == ["x"] && book.waiting == ["y"])
        // Leaving twice: the second time it is a stranger.
        #expect(book.leave("x") == ["y"])
        #expect(book.leave("x") == [])
        #expect(book.running == ["y"])
    }

    @Test func removingTheWaitingKeepsTheRunning() {
        var book = Book(maxSimultaneous: 2)
        for member in ["a", "b", "c", "d"] { _ = book.admit(member, priority: .normal, atFront: false) }
        _ = book.admit("e", priority: .high, atFront: false)
        #expect(book.removeWaiting() == ["e", "c", "d"])
        #expect(book.waitingCount == 0 && book.waiting.isEmpty && book.running == ["a", "b"])
        #expect(book.leave("a") == [])
        #expect(book.admit("f", priority: .normal, atFront: false) == .start)
    }

    @Test func limitsBelowTheirFloorsCountAsOneSlotAndNoPendingLimit() {
        let book = Book(maxSimultaneous: 0, maxPending: -3)
        #expect(book.maxSimultaneous == 1 && book.maxPending == 0)
    }

    @Test func aLongQueueDrainsInArrivalOrderWhileMoreArrive() {
        var book = QueueBook<Int>(maxSimultaneous: 3)
        for member in 0..<3 { #expect(book.admit(member, priority: .normal, atFront: false) == .start) }
        var next = 3
        for _ in 0..<1_000 {
            #expect(book.admit(next, priority: .normal, atFront: false) == .wait)
            next += 1
        }
        var started: [Int] = []
        var running = [0, 1, 2]
        while let done = running.first {
            running.removeFirst()
            let starting = book.leave(done)
            started += starting
            running += starting
            // Arrivals keep coming while the queue drains (the lane's head moves on).
            if next < 1_500 {
                #expect(book.admit(next, priority: .normal, atFront: false) == .wait)
                next += 1
            }
        }
        #expect(started == Array(3..<1_500))
        #expect(book.waitingCount == 0 && book.running.isEmpty)
    }
}
