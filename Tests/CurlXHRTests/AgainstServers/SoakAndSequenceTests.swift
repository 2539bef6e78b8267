@testable import CurlXHR
import Foundation
import Synchronization
import Testing

/// Tens of thousands of requests leave a process as they found it, and random call
/// sequences from several threads never crash, hang or break a rule.
@Suite(.ownThreads) struct SoakAndSequenceTests {
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
        let (seed, seconds) = Self.sequenceRun("random call sequences")
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

extension SoakAndSequenceTests {
    /// Every accepted asynchronous send ends in exactly one DONE callback, whoever ends it:
    /// eight threads call `open`, `send`, `abort`, `close`, the switches and replace the
    /// receivers on requests of their own and shared ones, and the callbacks do the same on
    /// their own request, for about 15 seconds (`CURLXHR_SEQUENCE_SECONDS`, seed
    /// `CURLXHR_SEQUENCE_SEED`). Counted per request object: sends that returned true, DONE
    /// callbacks; at the end, after every request is aborted and the callbacks are delivered,
    /// the two agree for each.
    @Test func everyAcceptedAsynchronousSendEndsInExactlyOneDone() throws {
        let (seed, seconds) = Self.sequenceRun("one DONE per send")
        let fault = try env.faultURL
        let urls = [fault + "/bytes?n=5000", fault + "/drip?chunks=4&size=200&interval_ms=10", fault + "/delay?ms=30",
                    fault + "/redirect/chain?n=2", fault + "/status?code=503", fault + "/reset?after=100&wait_ms=10",
                    fault + "/cuthead?at=field", fault + "/trailers?n=300", "http://127.0.0.1:1/refused", fault + "/bytes?n=0"]
        // Two of its own for each thread (0-15), four shared (16-19). Each keeps one mode:
        // asynchronous (counted), or synchronous (12, 13, 14, 15 and 19: sends that block
        // beside the others, never counted).
        let requests = (0..<20).map { _ in HttpRequest() }
        let synchronous: Set<Int> = [12, 13, 14, 15, 19]
        let files = try env.scratchPath("one-done")
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        let queues = [DispatchQueue(label: "done-a"), DispatchQueue(label: "done-b", attributes: .concurrent)]
        let accepted = Locked([Int](repeating: 0, count: 20))
        let dones = Locked([Int](repeating: 0, count: 20))
        let callbackCalls = Atomic<Int>(0)
        let stopping = Atomic<Bool>(false)
        @Sendable func index(of request: HttpRequest) -> Int { requests.firstIndex { $0 === request }! }
        @Sendable func send(_ request: HttpRequest, _ data: Bool, _ pick: Int) {
            let sent = data ? request.sendData(Data(count: pick * 997 % 20_000), timeout: 2) : request.send(timeout: 2)
            if sent, !synchronous.contains(index(of: request)) { accepted.withLock { $0[index(of: request)] += 1 } }
        }
        // The receiver counts DONE, and now and then acts on its own request from inside.
        @Sendable func receiver(_ salt: Int) -> @Sendable (HttpRequest) -> Void {
            { request in
                let state = request.getState()
                if state == .done { dones.withLock { $0[index(of: request)] += 1 } }
                _ = request.getReceiveBuffer()
                let call = callbackCalls.add(1, ordering: .relaxed).newValue &+ salt
                guard !stopping.load(ordering: .relaxed) else { return }
                switch call % 23 {
                case 0: request.abort()
                case 1:
                    if request.open("GET", url: urls[call % urls.count], async: !synchronous.contains(index(of: request))) {
                        send(request, false, call)
                    }
                case 2: send(request, true, call)
                case 3: request.close()
                case 4: request.onStatusChange = receiver(call)
                case 5: request.delegate = call % 2 == 0 ? nil : Recorder()  // a delegate too, not counting
                case 6: request.callbackQueue = queues[call % 2]
                default: break
                }
            }
        }
        for request in requests { request.onStatusChange = receiver(0) }
        let deadline = Date().addingTimeInterval(seconds)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var random = SplitMix64(seed: seed &+ UInt64(thread))
            while Date() < deadline {
                let pick = random.next(below: 4)
                let request = requests[pick < 2 ? 2 * thread + pick : 16 + pick - 2]
                switch random.next(below: 12) {
                case 0, 1, 2:
                    _ = request.open(["GET", "POST", "HEAD"][random.next(below: 3)], url: urls[random.next(below: urls.count)],
                                     async: !synchronous.contains(index(of: request)))
                case 3, 4: send(request, false, 0)
                case 5: send(request, true, random.next(below: 50))
                case 6: request.abort()
                case 7: request.close()
                case 8:
                    switch random.next(below: 9) {
                    case 0: _ = request.disableFollowLocation()
                    case 1: _ = request.disableCookieHandling()
                    case 2: _ = request.setRetries(2, backoff: 0.02)
                    case 3: _ = request.setTimeouts(connect: 1, headers: 0.05 * Double(random.next(below: 4)), idle: 1)
                    case 4: _ = request.setResponseFile(random.next(below: 2) == 0 ? nil : files + "/\(thread)-\(random.next(below: 3))")
                    case 5: _ = request.enableHttpProxy(host: "127.0.0.1", port: 1)
                    case 6: _ = request.disableHttpProxy()
                    case 7: _ = request.setRange(from: Int64(random.next(below: 100)))
                    default: _ = request.disableContentDecoding()
                    }
                case 9: request.onStatusChange = receiver(thread)
                case 10:
                    if random.next(below: 2) == 0 {
                        _ = request.setRequestHeader("X-A", value: "v")
                    } else {
                        request.callbackQueue = random.next(below: 3) == 0 ? .global() : queues[random.next(below: 2)]
                    }
                default: _ = (request.getState(), request.getStatus(), request.getReceiveBuffer())
                }
            }
        }
        stopping.store(true, ordering: .relaxed)
        for request in requests { request.abort() }
        // The last callbacks reach their receivers.
        let settle = Date().addingTimeInterval(20)
        func mismatched() -> [String] {
            (0..<20).compactMap { index in
                let (sends, done) = (accepted.withLock { $0[index] }, dones.withLock { $0[index] })
                return sends == done ? nil : "request \(index): \(sends) sends accepted, \(done) DONE"
            }
        }
        while !mismatched().isEmpty, Date() < settle { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.3)  // a second DONE would come now
        let total = accepted.withLock { $0.reduce(0, +) }
        print("one DONE per send: \(total) asynchronous sends accepted")
        #expect(total > 100)
        #expect(mismatched().isEmpty, "seed \(seed): \(mismatched())")
    }
}

extension SoakAndSequenceTests {
    /// The seed (`CURLXHR_SEQUENCE_SEED`, else a random one, printed so a run can be replayed)
    /// and the seconds (`CURLXHR_SEQUENCE_SECONDS`, 15 by default) of a random sequence run.
    static func sequenceRun(_ name: String) -> (seed: UInt64, seconds: Double) {
        let environment = ProcessInfo.processInfo.environment
        let seed = UInt64(environment["CURLXHR_SEQUENCE_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        print("\(name): seed \(seed) (CURLXHR_SEQUENCE_SEED=\(seed) replays the calls each thread makes)")
        return (seed, Double(environment["CURLXHR_SEQUENCE_SECONDS"] ?? "") ?? 15)
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
