@testable import CurlXHR
import Foundation
import Testing

/// The library's own decoding stage: every coding and stack of codings decoded, memory flat
/// whatever the compression ratio while a consumer is behind, damaged bodies refused; and the
/// response size limit, in memory, into a file, from C's and xhr's side.
@Suite(.ownThreads) struct DecodingAndSizeLimitTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// Under the sanitizers the probe runs ten times slower: a smaller body, the same ratio.
    static let zerosSize = ProcessInfo.processInfo.environment["CURLXHR_SANITIZER"] == nil ? 512 << 20 : 96 << 20

    // MARK: Memory

    @Test(arguments: ["download", "stream"])
    func gzippedZerosToASlowConsumerKeepMemoryFlat(mode: String) throws {
        // About 500 KiB on the wire for 512 MiB of body.
        let result = try probe([mode, try env.faultURL + "/zeros?n=\(Self.zerosSize)", "zeros"])
        #expect(result["status"] as? Int == 200, "\(result)")
        #expect(result["bytes"] as? Int == Self.zerosSize, "\(result)")
        #expect(result["pattern_ok"] as? Bool == true, "every byte 0")
        let growth = (result["peak_kib"] as? Int ?? .max) - (result["baseline_kib"] as? Int ?? 0)
        #expect(growth < 24 * 1024, "peak memory grew by \(growth) KiB for a paused, decoding transfer")
    }

    @Test func xhrDecodesGzippedZerosForASlowPipeInLittleMoreMemoryThanASmallGet() throws {
        let xhr = TestEnvironment.builtProduct("xhr")
        let size = Self.zerosSize
        let marker = try env.scratchPath("xhr-zeros")
        /// xhr's peak resident set in KiB, its output read by `reader`.
        func peak(_ url: String, reader: String) throws -> (kib: Int, output: String) {
            let script = "/usr/bin/time -f '%M' -o \"$1.rss\" \"\(xhr)\" -sS \"\(url)\" | python3 -c \"\(reader)\""
            let run = try Shell.run("/bin/bash", ["-c", "set -o pipefail; " + script, "xhr-zeros", marker])
            #expect(run.status == 0, "\(run.output)")
            let text = try String(contentsOfFile: marker + ".rss", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            return (Int(text) ?? .max, run.output)
        }
        // The peer in the same run: a small GET, read at once.
        let small = try peak(try env.faultURL + "/bytes?n=100", reader: "import sys; sys.stdin.buffer.read()")
        // A reader slower than the decoder: xhr's writes block, its transfer pauses.
        let slow = """
            import sys, time
            n = 0
            while True:
                b = sys.stdin.buffer.read(1 << 20)
                if not b: break
                n += len(b); time.sleep(0.001)
            print(n)
            """
        let zeros = try peak(try env.faultURL + "/zeros?n=\(size)", reader: slow)
        #expect(zeros.output.split(separator: "\n").first == "\(size)", "\(zeros.output)")
        #expect(zeros.kib - small.kib < 32 * 1024, "xhr's peak: \(zeros.kib) KiB for the body, \(small.kib) KiB for a small GET")
    }

    // MARK: Codings

    @Test(arguments: ["gzip", "deflate", "deflate-raw", "br", "zstd", "gzip,br", "br,gzip,zstd", "deflate,deflate"])
    func everyCodingAndStackIsDecoded(codings: String) throws {
        for field in ["content", "transfer"] {
            let (request, seen) = fetchAsync("GET", try env.faultURL + "/stacked?n=300000&enc=\(codings)&field=\(field)")
            #expect(request.getStatus() == 200, "\(codings) in \(field): \(request.getStatusText() ?? "")")
            #expect(seen.body.count == 300_000 && seen.body == Pattern.bytes(300_000), "\(codings) in \(field): \(seen.body.count) bytes")
        }
        // Without decoding, the body comes as sent.
        let (raw, body) = fetchSync("GET", try env.faultURL + "/stacked?n=300000&enc=\(codings)") { $0.disableContentDecoding() }
        #expect(raw.getStatus() == 200 && body != Pattern.bytes(300_000))
        #expect(raw.getResponseHeader("Content-Length") == String(body.count))
    }

    @Test(arguments: ["gzip", "br", "zstd", "gzip,br"])
    func aDamagedBodyIsAFailureNamingItsCoding(codings: String) throws {
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/stacked?n=300000&enc=\(codings)&corrupt=1")
        #expect(request.getStatus() == 0)
        #expect(request.getFailureKind() == .response)
        let text = request.getStatusText() ?? ""
        #expect(text.contains("could not be decoded"), "\(text)")
        #expect(codings.split(separator: ",").contains { text.contains("(\($0))") }, "\(text)")
        #expect(seen.states.last == .done && seen.statusAtDone == 0)
    }

    @Test func aCodingTheLibraryDoesNotKnowLeavesTheBodyAsSent() throws {
        let (request, body) = fetchSync("GET", try env.faultURL + "/stacked?n=5000&enc=gzip,x-custom")
        #expect(request.getStatus() == 200)
        #expect(request.getResponseHeader("Content-Encoding") == "gzip, x-custom")
        #expect(body.count != 5000 && body.prefix(2) == Data([0x1F, 0x8B]), "the gzip bytes, undecoded")
    }

    // MARK: The size limit

    @Test func aBodyOverTheLimitEndsTheRequest() throws {
        // Announced: refused at the head, before any body.
        let (announced, seen) = fetchAsync("GET", try env.faultURL + "/bytes?n=5000") { #expect($0.setMaxResponseSize(4000)) }
        #expect(announced.getStatus() == 0 && announced.getFailureKind() == .response)
        #expect(announced.getStatusText()?.contains("4000 bytes") == true, "\(announced.getStatusText() ?? "")")
        #expect(seen.states == [.opened, .sent, .done])
        // At the limit: the whole body.
        let (exact, body) = fetchSync("GET", try env.faultURL + "/bytes?n=5000") { $0.setMaxResponseSize(5000) }
        #expect(exact.getStatus() == 200 && body == Pattern.bytes(5000))
        // Decoded bytes count: 1 MiB of zeros is a few KiB on the wire, without a length.
        let (decoded, decodedSeen) = fetchAsync("GET", try env.faultURL + "/zeros?n=\(1 << 20)") { $0.setMaxResponseSize(100_000) }
        #expect(decoded.getStatus() == 0 && decoded.getFailureKind() == .response)
        #expect(decoded.getStatusText()?.contains("100000 bytes") == true)
        #expect(decodedSeen.body.count <= 100_000, "no byte past the limit is delivered")
        #expect(decodedSeen.states.last == .done)
        // The limit stays with the request across open, and 0 lifts it.
        #expect(decoded.open("GET", url: try env.faultURL + "/bytes?n=200000"))
        #expect(decoded.send())
        #expect(decoded.getStatus() == 0)
        let url = try env.faultURL + "/bytes?n=200000"
        #expect(decoded.setMaxResponseSize(0) && decoded.open("GET", url: url) && decoded.send())
        #expect(decoded.getStatus() == 200)
    }

    @Test func aChunkedBodyWithoutALengthIsHeldToTheLimitToo() throws {
        // No Content-Length and no coding (curl 7.88's own limit cannot tell then): the
        // bytes are counted as they come.
        let (request, seen) = fetchAsync("GET", try env.faultURL + "/bytes?n=50000&chunked=1") { #expect($0.setMaxResponseSize(20000)) }
        #expect(request.getStatus() == 0 && request.getFailureKind() == .response, "\(request.getStatusText() ?? "")")
        #expect(request.getStatusText()?.contains("20000 bytes") == true)
        #expect(seen.states.filter { $0 == .done }.count == 1 && seen.statusAtDone == 0)
        #expect(seen.body.count <= 20000 && Pattern.matches(seen.body, at: 0), "no byte past the limit is delivered")
    }

    @Test func aResponseFileOverTheLimitIsNeverPassedOffAsWhole() throws {
        let path = try env.scratchPath("limit-file") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let (request, _) = fetchSync("GET", try env.faultURL + "/zeros?n=\(4 << 20)") {
            $0.setResponseFile(path)
            $0.setMaxResponseSize(1 << 20)
        }
        #expect(request.getStatus() == 0 && request.getFailureKind() == .response)
        #expect(!FileManager.default.fileExists(atPath: path), "no file passed off as whole")
        let part = (try? FileManager.default.attributesOfItem(atPath: path + ".part")[.size] as? Int) ?? 0
        #expect(part <= 1 << 20)
    }

    @Test func badLimitsAreRefused() throws {
        let request = HttpRequest()
        #expect(!request.setMaxResponseSize(-1))
        #expect(request.lastError?.code == .invalidArgument)
        #expect(request.open("GET", url: try env.faultURL + "/delay?ms=300", async: true))
        #expect(request.send())
        #expect(!request.setMaxResponseSize(10), "not while in flight")
        request.abort()
    }

    @Test func xhrMaxFilesizeExitsAsCurlDoes() throws {
        let url = try env.faultURL + "/bytes?n=5000"
        let ours = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-sS", "--max-filesize", "4000", url])
        let curl = try XHRToolTests.run("/usr/bin/curl", ["-sS", "--max-filesize", "4000", url])
        #expect(ours.status == 63 && curl.status == 63, "xhr \(ours.status) \(ours.stderr), curl \(curl.status)")
        #expect(ours.stdout.isEmpty)
        let fine = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-sS", "--max-filesize", "5K", url])
        #expect(fine.status == 0 && fine.stdout == Pattern.bytes(5000))
        // Without a length (curl 7.88 cannot tell then): still 63.
        let zeros = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-sS", "-o", "/dev/null", "--max-filesize", "1M",
                                                                              try env.faultURL + "/zeros?n=\(8 << 20)"])
        #expect(zeros.status == 63, "\(zeros.stderr)")
        let bad = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["--max-filesize", "lots", url])
        #expect(bad.status == 2 || bad.status == 64, "\(bad.status) \(bad.stderr)")
    }
}
