@testable import CurlXHR
import Foundation
import Synchronization
import Testing

/// Tens of thousands of requests leave a process as they found it, and random call
/// sequences from several threads never crash, hang or break a rule.
@Suite struct SoakAndSequenceTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// In a process of its own (other tests would move the numbers): every kind of request,
    /// 20,000 of them from 8 threads, after a round of each as warm-up.
    @Test func aSoakReturnsDescriptorsThreadsAndMemoryToTheirBaseline() throws {
        // Under ThreadSanitizer (CURLXHR_SANITIZER) requests cost ten times as much, and its
        // shadow memory grows with the addresses the process touched.
        let sanitized = ProcessInfo.processInfo.environment["CURLXHR_SANITIZER"] != nil
        let count = Int(ProcessInfo.processInfo.environment["CURLXHR_SOAK_REQUESTS"] ?? "") ?? (sanitized ? 5_000 : 20_000)
        let memoryMargin = (sanitized ? 64 : 12) * 1024
        let result = try Shell.run(TestEnvironment.builtProduct("curlxhr-probe"), ["soak", try env.faultURL, "\(count)"])
        #expect(result.status == 0, "\(result.output.suffix(2000))")
        let line = try #require(result.output.split(separator: "\n").last)
        let numbers = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        func value(_ name: String) -> Int { numbers[name] as? Int ?? -1 }
        print("soak: \(line)")
        #expect(value("requests") == count)
        #expect(value("descriptors_after") <= value("descriptors_before") + 8, "descriptors: \(line)")
        #expect(value("threads_after") <= value("threads_before") + 2, "threads: \(line)")
        #expect(value("rss_kib_after") <= value("rss_kib_before") + memoryMargin, "resident memory: \(line)")
        #expect(value("transfers_in_flight_after") == 0, "transfers left behind: \(line)")
    }

    /// Seeded random calls from four threads, each on two requests of its own and two shared
    /// by all, for about 15 seconds
    /// (`CURLXHR_SEQUENCE_SECONDS`), replayable with `CURLXHR_SEQUENCE_SEED`. Every call's
    /// answer must agree with the rules: a refusal says why, a status is 0 or an HTTP status,
    /// a synchronous send that returned true left DONE unless another thread opened the
    /// request again; at the end every request stops, and no transfer is left in flight.
    @Test func randomCallSequencesFromSeveralThreadsKeepTheRules() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = UInt64(environment["CURLXHR_SEQUENCE_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        let seconds = Double(environment["CURLXHR_SEQUENCE_SECONDS"] ?? "") ?? 15
        print("random call sequences: seed \(seed) (CURLXHR_SEQUENCE_SEED=\(seed) replays the calls each thread makes)")
        let fault = try env.faultURL
        let urls = [fault + "/bytes?n=5000", fault + "/drip?chunks=5&size=200&interval_ms=20", fault + "/delay?ms=200",
                    fault + "/redirect/chain?n=3", fault + "/status?code=503", fault + "/reset?after=100&wait_ms=10",
                    fault + "/cuthead?at=field", fault + "/sink", "http://127.0.0.1:1/refused", "not a url", "ftp://x/",
                    fault + "/record/ß?q=ü"]
        let methods = ["GET", "POST", "put", "HEAD", "patCH", "DELETE", "BAD METHOD", ""]
        // Two of its own for each thread (0-1, 2-3, 4-5, 6-7), two shared (8-9).
        let requests = (0..<10).map { _ in HttpRequest() }
        let callbacks = Atomic<Int>(0)
        for request in requests {
            request.onStatusChange = { request in
                callbacks.add(1, ordering: .relaxed)
                _ = request.getReceiveBuffer()
                #expect((0..<600).contains(request.getStatus()))
            }
        }
        let problems = Locked<[String]>([])
        let deadline = Date().addingTimeInterval(seconds)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var random = SplitMix64(seed: seed &+ UInt64(thread))
            var calls = 0
            while Date() < deadline {
                let pick = random.next(below: 4)
                let own = pick < 2
                let request = requests[own ? 2 * thread + pick : 8 + pick - 2]
                func problem(_ text: String) { problems.withLock { $0.append("thread \(thread) call \(calls): \(text)") } }
                func refusalSaysWhy(_ accepted: Bool, _ call: String) {
                    // Only on its own requests: another thread's success clears lastError.
                    if own, !accepted, request.lastError == nil { problem("\(call) returned false without lastError") }
                }
                calls += 1
                switch random.next(below: 16) {
                case 0, 1:
                    let method = methods[random.next(below: methods.count)]
                    refusalSaysWhy(request.open(method, url: urls[random.next(below: urls.count)], async: random.next(below: 2) == 0),
                                   "open")
                case 2:
                    refusalSaysWhy(request.setRequestHeader(["X-A", "Bad Name", "User-Agent", "Content-Length"][random.next(below: 4)],
                                                            value: ["v", "a\r\nb", "", "ü"][random.next(below: 4)]), "setRequestHeader")
                case 3:
                    request.setPostValue("v\(calls)", forKey: "k\(random.next(below: 3))")
                case 4, 5:
                    let sent = request.send(timeout: 2)
                    refusalSaysWhy(sent, "send")
                case 6:
                    refusalSaysWhy(request.sendData(Data(count: random.next(below: 100_000)), timeout: 2), "sendData")
                case 7:
                    _ = request.abort()
                case 8:
                    _ = request.close()
                case 9:
                    let accepted = switch random.next(below: 4) {
                    case 0: request.disableFollowLocation()
                    case 1: request.disableCookieHandling()
                    case 2: request.disablePeerVerification()
                    default: request.disableHttpProxy()
                    }
                    refusalSaysWhy(accepted, "switch")
                case 10:
                    refusalSaysWhy(request.enableHttpProxy(host: ["127.0.0.1", "bad host", ""][random.next(below: 3)],
                                                           port: [1, 0, 70_000][random.next(below: 3)]), "enableHttpProxy")
                case 11:
                    let status = request.getStatus()
                    if !(status == 0 || (100..<600).contains(status)) { problem("status \(status)") }
                case 12:
                    _ = request.getAllResponseHeaders()
                    _ = request.getResponseHeader("Content-Type")
                    _ = request.getStatusText()
                    _ = request.getMetrics()
                case 13:
                    _ = request.getReceiveBuffer()
                case 14:
                    request.enablePipelining = random.next(below: 2) == 0
                default:
                    _ = request.getState()
                    _ = request.getBytesSent()
                }
            }
        }
        // Every request stops: an abort ends what is in flight at once.
        for request in requests { request.abort() }
        for request in requests {
            #expect(![HttpRequest.State.sent, .headersReceived, .loading].contains(request.getState()), "a request still in flight")
        }
        #expect(problems.withLock { $0 }.isEmpty, "seed \(seed): \(problems.withLock { $0.prefix(5) })")
        #expect(callbacks.load(ordering: .relaxed) > 0)
    }
}

/// A small seeded generator (SplitMix64), so a run can be replayed from its seed.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
