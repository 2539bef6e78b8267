@testable import CurlXHR
import Foundation
import Testing

/// `setRateLimits`: the rate a user asked for holds on every path (sync, async, async/await,
/// upload, xhr), the bytes arrive intact, and an abort or a timeout during a rate pause ends
/// the send once and at once. These are the promise (the rate held), not speed benchmarks:
/// each paced transfer takes about 4 s, so they are few. libcurl 7.88's own limit does not
/// hold a loopback download (curl's `--limit-rate` took 0.13–0.3 s for the 2 MiB below).
/// Serialized: the synchronous sends block the pool's threads the `async` body's task needs.
@Suite(.serialized) struct RateLimitTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    static let size = 2 << 20
    static let rate: Int64 = 512 * 1024
    /// About 4 s at the rate: the band a paced transfer of 4 s worth must end in.
    static let band = 3.4...6.0

    func seconds(_ work: () async throws -> Void) async rethrows -> Double {
        let started = Date()
        try await work()
        return Date().timeIntervalSince(started)
    }

    @Test(arguments: ["sync", "async", "await"])
    func aDownloadHoldsItsRateAndArrivesWhole(path: String) async throws {
        let url = try env.faultURL + "/bytes?n=\(Self.size)"
        var body = Data()
        let elapsed = try await seconds {
            switch path {
            case "sync":
                let (request, data) = fetchSync("GET", url) { #expect($0.setRateLimits(download: Self.rate)) }
                #expect(request.getStatus() == 200)
                body = data
            case "async":
                let (request, seen) = fetchAsync("GET", url) { #expect($0.setRateLimits(download: Self.rate)) }
                #expect(request.getStatus() == 200 && seen.states.filter { $0 == .done }.count == 1)
                body = seen.body
            default:
                // A consumer that falls behind now and then: its pauses and the rate's must
                // not undo each other.
                let request = HttpRequest()
                #expect(request.open("GET", url: url) && request.setRateLimits(download: Self.rate))
                let response = try await request.response()
                var chunks = 0
                for try await chunk in response.body {
                    body.append(chunk)
                    chunks += 1
                    if chunks % 40 == 1 { try await Task.sleep(for: .milliseconds(150)) }
                }
            }
        }
        #expect(body.count == Self.size && body == Pattern.bytes(Self.size), "\(body.count) bytes")
        #expect(Self.band.contains(elapsed), "\(path): \(elapsed) s for 2 MiB at 512 KiB/s")
    }

    @Test func withoutALimitTheSameDownloadIsFarFaster() async throws {
        let url = try env.faultURL + "/bytes?n=\(Self.size)"
        var body = Data()
        let elapsed = await seconds {
            let (request, data) = fetchSync("GET", url) { #expect($0.setRateLimits(download: 0)) }
            #expect(request.getStatus() == 200)
            body = data
        }
        #expect(body == Pattern.bytes(Self.size))
        #expect(elapsed < 1.7, "\(elapsed) s unpaced")
    }

    @Test func anUploadHoldsItsRateAndArrivesWhole() async throws {
        let payload = Pattern.bytes(1 << 20)
        let url = try env.faultURL + "/sink"
        var answer = Data()
        let elapsed = await seconds {
            let (request, data) = fetchSync("POST", url, body: payload) {
                #expect($0.setRateLimits(upload: 256 * 1024))
            }
            #expect(request.getStatus() == 200)
            answer = data
        }
        let echo = try Echo(answer)
        let path = try env.scratchPath("rate-upload")
        try payload.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected = try MultipartTests.sha256(path)
        #expect(echo.bodyLength == 1 << 20 && echo.bodySHA256 == expected)
        #expect(Self.band.contains(elapsed), "\(elapsed) s for 1 MiB up at 256 KiB/s")
    }

    @Test func aLimitFarBelowOneBufferASecondHoldsOnAverage() async throws {
        // 4 KiB at 1 KiB/s: libcurl hands over more than a second's worth at once.
        let url = try env.faultURL + "/bytes?n=4096"
        var body = Data()
        let elapsed = await seconds {
            let (request, data) = fetchSync("GET", url) { $0.setRateLimits(download: 1024) }
            #expect(request.getStatus() == 200)
            body = data
        }
        #expect(body == Pattern.bytes(4096))
        #expect(Self.band.contains(elapsed), "\(elapsed) s for 4 KiB at 1 KiB/s")
    }

    @Test func anAbortDuringARatePauseEndsTheSendOnceAndAtOnce() throws {
        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.open("GET", url: try env.faultURL + "/bytes?n=\(1 << 20)", async: true))
        #expect(request.setRateLimits(download: 1024))
        #expect(request.send())
        Thread.sleep(forTimeInterval: 1.5)  // the head came, the body waits for its time
        let started = Date()
        #expect(request.abort())
        try AbortTests().expectAborted(request, recorder)
        #expect(Date().timeIntervalSince(started) < 1.5)
        // The request sends again, without a limit, normally.
        #expect(request.setRateLimits())
        #expect(request.open("GET", url: try env.faultURL + "/bytes?n=5000"))
        #expect(request.send() && request.getStatus() == 200 && request.getReceiveBuffer() == Pattern.bytes(5000))
    }

    @Test func aTotalTimeoutShorterThanThePacedTimeEndsInTheTimeout() throws {
        let started = Date()
        let (request, body) = fetchSync("GET", try env.faultURL + "/bytes?n=\(1 << 20)", configure: {
            // Pieces of 2 KiB a second apart: longer than the idle limit, which a rate pause
            // does not run out.
            $0.setRateLimits(download: 2048)
            $0.setTimeouts(idle: 0.5)
        }, timeout: 1.5)
        let elapsed = Date().timeIntervalSince(started)
        #expect(request.getStatus() == 0 && request.getFailureKind() == .timeout, "\(request.getStatusText() ?? "")")
        #expect(request.getStatusText()?.hasPrefix("total timeout") == true, "not the idle one: \(request.getStatusText() ?? "")")
        #expect(body.count < 1 << 20)
        #expect(elapsed > 1.2 && elapsed < 3, "\(elapsed) s")
    }

    @Test func theSwitchIsAPreSendOne() throws {
        let request = HttpRequest()
        #expect(request.setRateLimits(download: 100, upload: 0), "UNSENT")
        #expect(!request.setRateLimits(download: -1))
        #expect(request.lastError?.code == .invalidArgument && request.lastError?.message.contains("-1") == true)
        #expect(!request.setRateLimits(upload: -5))
        #expect(request.open("GET", url: try env.faultURL + "/bytes?n=100000", async: true))
        #expect(request.setRateLimits(download: 10_000), "OPENED")
        #expect(request.send())
        #expect(!request.setRateLimits(), "not while in flight")
        #expect(request.lastError != nil)
        request.abort()
        #expect(request.setRateLimits(), "DONE")
    }

    @Test func xhrLimitRateHoldsAndAgreesWithCurl() throws {
        let url = try env.faultURL + "/bytes?n=\(Self.size)"
        let ours = try env.scratchPath("rate-xhr"), theirs = try env.scratchPath("rate-curl")
        defer { for path in [ours, theirs] { try? FileManager.default.removeItem(atPath: path) } }
        let started = Date()
        let xhr = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-sS", "--limit-rate", "512k", url, "-o", ours])
        let elapsed = Date().timeIntervalSince(started)
        // curl's own timing does not hold here: only its bytes and exit status are compared.
        let curl = try XHRToolTests.run("/usr/bin/curl", ["-sS", "--limit-rate", "512k", url, "-o", theirs])
        #expect(xhr.status == 0 && curl.status == 0, "xhr \(xhr.status) \(xhr.stderr), curl \(curl.status)")
        let written = try Data(contentsOf: URL(fileURLWithPath: ours))
        let curlWrote = try Data(contentsOf: URL(fileURLWithPath: theirs))
        #expect(written == curlWrote && written == Pattern.bytes(Self.size))
        #expect(Self.band.contains(elapsed), "xhr: \(elapsed) s for 2 MiB at 512k")
        for bad in ["1x", "-5", "1.5k", ""] {
            let refused = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["--limit-rate", bad, url])
            let curlRefused = try XHRToolTests.run("/usr/bin/curl", ["-s", "--limit-rate", bad, url])
            #expect(refused.status == 2 && curlRefused.status == 2, "'\(bad)': xhr \(refused.status), curl \(curlRefused.status)")
            #expect(refused.stderr.contains("--limit-rate"), "\(refused.stderr)")
        }
    }
}
