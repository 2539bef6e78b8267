import Testing
@testable import CurlXHR

/// A body's pace as ``RatePacer`` decides it, event by event, without I/O: each transcript is
/// the pieces libcurl offers at moments (milliseconds) and what the pacer must answer.
@Suite(.ownThreads) struct RatePacerTests {
    typealias Decision = RatePacer.Decision

    /// One event of a transcript and the answer it must give.
    enum Step {
        /// `count` bytes are ready at `at`.
        case ready(Int, at: Int64, Decision)
        /// The bytes that went on came back (the consumer paused).
        case returned(Int)
    }

    func run(_ pacer: inout RatePacer, _ steps: [Step], sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, step) in steps.enumerated() {
            switch step {
            case .ready(let count, let at, let expected):
                #expect(pacer.ready(count, at: at) == expected, "step \(index)", sourceLocation: sourceLocation)
            case .returned(let count):
                pacer.returned(count)
            }
        }
    }

    @Test func piecesWaitUntilTheyKeepTheRate() {
        // 1000 bytes a second: 100 bytes take 100 ms.
        var pacer = RatePacer(bytesPerSecond: 1000)
        run(&pacer, [
            .ready(100, at: 0, .pause(until: 100)),  // the first bytes wait their own time
            .ready(100, at: 40, .pause(until: 100)),  // woken early: the same moment
            .ready(100, at: 100, .proceed),
            .ready(100, at: 101, .pause(until: 200)),
            .ready(100, at: 200, .proceed),
            .ready(300, at: 250, .pause(until: 500)),
            .ready(300, at: 503, .proceed),  // resumed late: no debt carried over
            .ready(100, at: 510, .pause(until: 600)),
        ])
    }

    @Test func aPieceFarLargerThanASecondsWorthStillGoesAndTheAverageHolds() {
        // 1 KiB/s and libcurl's 16 KiB buffer: 16 s a piece, never stuck behind the credit.
        var pacer = RatePacer(bytesPerSecond: 1024)
        run(&pacer, [
            .ready(16384, at: 0, .pause(until: 16000)),
            .ready(16384, at: 16000, .proceed),
            .ready(4096, at: 16001, .pause(until: 20000)),
            .ready(4096, at: 20000, .proceed),
        ])
    }

    @Test func aTransferThatFellBehindCatchesUpByAtMostASecond() {
        var pacer = RatePacer(bytesPerSecond: 1000)
        run(&pacer, [
            .ready(100, at: 0, .pause(until: 100)),
            .ready(100, at: 100, .proceed),
            // The server stalled 10 s: one second's worth goes at once, not ten.
            .ready(500, at: 10_100, .proceed),
            .ready(500, at: 10_100, .proceed),
            .ready(100, at: 10_100, .pause(until: 10_200)),
        ])
    }

    @Test func bytesTheConsumerPausedCountOnlyWhenTaken() {
        var pacer = RatePacer(bytesPerSecond: 1000)
        run(&pacer, [
            .ready(100, at: 0, .pause(until: 100)),
            .ready(100, at: 100, .proceed),
            .returned(100),  // the consumer was behind: the same bytes come again
            .ready(100, at: 150, .proceed),
            .ready(100, at: 150, .pause(until: 200)),
        ])
    }

    @Test func theAverageNeverExceedsTheRate() {
        // Pieces of every size, offered as soon as allowed: never more than rate × elapsed.
        var pacer = RatePacer(bytesPerSecond: 3000)
        var now: Int64 = 5000, moved = 0
        let start = now
        for index in 0..<500 {
            let count = [1, 700, 16384, 3, 4096][index % 5]
            while case .pause(let moment) = pacer.ready(count, at: now) {
                #expect(moment > now)
                now = moment
            }
            moved += count
            #expect(Int64(moved) * 1000 <= 3000 * (now - start) + 3000, "at \(now): \(moved) bytes")
        }
        let seconds = Double(now - start) / 1000
        #expect(abs(Double(moved) / seconds - 3000) < 30, "\(Double(moved) / seconds) bytes a second")
    }

    @Test func uploadsOfferAnEighthOfASecondsWorth() {
        #expect(RatePacer(bytesPerSecond: 256 * 1024).piece(capacity: 256 * 1024) == 32 * 1024)
        #expect(RatePacer(bytesPerSecond: 1 << 30).piece(capacity: 65536) == 65536)
        #expect(RatePacer(bytesPerSecond: 5).piece(capacity: 65536) == 1)
    }

    @Test func slowDownloadsGetASmallerReceiveBuffer() {
        #expect(RateLimits(download: 512 * 1024).receiveBufferSize == nil)
        #expect(RateLimits(download: 4000).receiveBufferSize == 4000)
        #expect(RateLimits(download: 10).receiveBufferSize == 1024)
        #expect(RateLimits(upload: 10).receiveBufferSize == nil)
    }
}
