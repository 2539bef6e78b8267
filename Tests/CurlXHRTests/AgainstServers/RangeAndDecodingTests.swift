@testable import CurlXHR
import Foundation
import Testing

/// `setRange` and content decoding against the fault server's `/file` (ranges, a log of the
/// requests it saw) and `/encoded` (gzip, deflate, br and zstd bodies of the pattern).
@Suite(.ownThreads) struct RangeAndDecodingTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func fileLog(_ key: String) throws -> [[String: Any]] {
        let body = fetchSync("GET", try env.faultURL + "/file-log?key=\(key)").1
        return try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
    }

    @Test(arguments: [false, true])
    func aRangeGetsThoseBytesWith206(async: Bool) throws {
        let key = UUID().uuidString
        let url = try env.faultURL + "/file?size=100000&key=\(key)"
        let configure: (HttpRequest) -> Void = { #expect($0.setRange(from: 1000, to: 1999)) }
        let (request, body) = async ? { let (r, seen) = fetchAsync("GET", url, configure: configure); return (r, seen.body) }()
                                    : fetchSync("GET", url, configure: configure)
        #expect(request.getStatus() == 206)
        #expect(request.getResponseHeader("Content-Range") == "bytes 1000-1999/100000")
        #expect(body == Pattern.bytes(1000, from: 1000))
        #expect(try fileLog(key).map { $0["range"] as? String } == ["bytes=1000-1999"])
    }

    @Test func anOpenEndedRangeRunsToTheEndAndSurvivesOpen() throws {
        let request = HttpRequest()
        #expect(request.setRange(from: 99_000), "UNSENT takes switches")
        #expect(request.open("GET", url: try env.faultURL + "/file?size=100000"))
        #expect(request.send())
        #expect(request.getStatus() == 206)
        #expect(request.getReceiveBuffer() == Pattern.bytes(1000, from: 99_000))
        // The switch stays for the next open, as the other switches do.
        #expect(request.open("GET", url: try env.faultURL + "/file?size=99500"))
        #expect(request.send())
        #expect(request.getStatus() == 206)
        #expect(request.getReceiveBuffer() == Pattern.bytes(500, from: 99_000))
    }

    @Test func aRangeBeyondTheEndIsTheServers416() throws {
        let (request, _) = fetchSync("GET", try env.faultURL + "/file?size=1000") { $0.setRange(from: 5000) }
        #expect(request.getStatus() == 416, "the server's answer, reported as it came")
        #expect(request.getResponseHeader("Content-Range") == "bytes */1000")
        #expect(request.getFailureKind() == nil)
    }

    @Test func badRangesAreRefused() throws {
        let request = HttpRequest()
        #expect(!request.setRange(from: -1))
        #expect(request.lastError?.message.contains("byte 0") == true)
        #expect(!request.setRange(from: 10, to: 9))
        #expect(request.lastError?.message.contains("end") == true)
        #expect(request.setRange(from: 10, to: 10), "one byte")
        #expect(request.open("GET", url: try env.faultURL + "/stall?n=10&head_ms=300", async: true))
        #expect(request.send())
        #expect(!request.setRange(from: 0), "not while in flight")
        #expect(request.abort())
        // A range asks for part of a response: with a body to send, libcurl would make it
        // the body's Content-Range.
        #expect(request.open("PUT", url: try env.faultURL + "/record"))
        #expect(!request.send("data"))
        #expect(request.lastError?.message.contains("range") == true)
        #expect(request.open("POST", url: try env.faultURL + "/record"))
        #expect(!request.send())
    }

    @Test(arguments: ["gzip", "deflate", "br", "zstd"])
    func compressedBodiesArriveDecoded(encoding: String) throws {
        let count = 300_000
        let (request, body) = fetchSync("GET", try env.faultURL + "/encoded?enc=\(encoding)&n=\(count)")
        #expect(request.getStatus() == 200)
        #expect(request.getResponseHeader("Content-Encoding") == encoding, "the server did compress")
        let sent = Int(request.getResponseHeader("Content-Length") ?? "") ?? 0
        #expect(sent > 0 && sent < count / 2, "\(sent) bytes on the wire")
        #expect(body.count == count)
        #expect(Pattern.matches(body, at: 0))
        // Asynchronously, LOADING by LOADING.
        let (_, seen) = fetchAsync("GET", try env.faultURL + "/encoded?enc=\(encoding)&n=\(count)")
        #expect(seen.body.count == count && Pattern.matches(seen.body, at: 0))
    }

    @Test func theRequestAsksForEveryEncodingLibcurlDecodes() throws {
        let record = try Echo(fetchSync("GET", try env.faultURL + "/record").1)
        let asked = (record.header("Accept-Encoding") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Set(asked).isSuperset(of: ["gzip", "deflate", "br", "zstd"]), "\(asked)")
        let plain = try Echo(fetchSync("GET", try env.faultURL + "/record") { $0.disableContentDecoding() }.1)
        #expect(plain.header("Accept-Encoding") == nil, "no Accept-Encoding of the library's own")
    }

    @Test func withDecodingOffTheBodyComesAsSent() throws {
        let (forced, raw) = fetchSync("GET", try env.faultURL + "/encoded?enc=gzip&n=50000&force=1") { $0.disableContentDecoding() }
        #expect(forced.getStatus() == 200)
        #expect(raw.count == Int(forced.getResponseHeader("Content-Length") ?? ""), "the bytes of the wire")
        #expect(raw.prefix(2) == Data([0x1f, 0x8b]), "a gzip stream")
        // The caller's own Accept-Encoding goes out, and the answer stays encoded.
        let (own, ownRaw) = fetchSync("GET", try env.faultURL + "/encoded?enc=br&n=50000") {
            $0.disableContentDecoding()
            $0.setRequestHeader("Accept-Encoding", value: "br")
        }
        #expect(own.getResponseHeader("Content-Encoding") == "br")
        #expect(ownRaw.count == Int(own.getResponseHeader("Content-Length") ?? ""))
        #expect(ownRaw.count < 50000)
    }
}
