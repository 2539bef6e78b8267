@testable import CurlXHR
import Foundation
import Testing

/// `setResponseFile` against the fault server's `/file` (ranges, If-Range, a connection cut
/// after K bytes, a log of the requests it saw): bodies streamed to disk, resumed downloads.
@Suite(.ownThreads) struct ResponseFileTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func size(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1 }

    /// Byte i of version `version` of the fault server's /file is (i + version) % 251.
    func matchesFile(_ path: String, size expected: Int, version: Int = 0) throws -> Bool {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.count == expected && Pattern.matches(data, at: version)
    }

    func fileLog(_ key: String) throws -> [[String: Any]] {
        let body = fetchSync("GET", try env.faultURL + "/file-log?key=\(key)").1
        return try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
    }

    @Test(arguments: [false, true])
    func aBodyGoesToTheFileNotTheBuffer(async: Bool) throws {
        let path = try env.scratchPath("response") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let url = try env.faultURL + "/file?size=3000000"
        let configure: (HttpRequest) -> Void = { #expect($0.setResponseFile(path)) }
        let request: HttpRequest
        if async {
            let (asyncRequest, seen) = fetchAsync("GET", url, configure: configure)
            request = asyncRequest
            #expect(seen.states.contains(.loading), "LOADING is still reported")
            #expect(seen.body.isEmpty)
        } else {
            request = fetchSync("GET", url, configure: configure).0
        }
        #expect(request.getStatus() == 200)
        #expect(request.getReceiveBuffer().isEmpty)
        #expect(try matchesFile(path, size: 3_000_000))
        #expect(!exists(path + ".part"))
    }

    @Test func aResponseOtherThan2xxLeavesTheFileAloneAndFillsTheBuffer() throws {
        let path = try env.scratchPath("response-404") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("previous".utf8).write(to: URL(fileURLWithPath: path))
        let (request, body) = fetchSync("GET", try env.faultURL + "/status?code=404") { $0.setResponseFile(path) }
        #expect(request.getStatus() == 404)
        #expect(body == Data("status".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("previous".utf8))
        #expect(!exists(path + ".part"))
    }

    @Test func aFileThatCannotBeWrittenIsRefused() throws {
        let request = HttpRequest()
        #expect(!request.setResponseFile("/nonexistent-folder/x.bin"))
        #expect(request.lastError?.code == .fileUnwritable)
        #expect(!request.setResponseFile("/tmp"))
        #expect(request.setResponseFile(nil), "back to the buffer")
        #expect(request.open("GET", url: try env.faultURL + "/stall?n=10&head_ms=500", async: true))
        #expect(request.send())
        #expect(!request.setResponseFile("/tmp/x.bin"), "not while in flight")
        #expect(request.abort())
    }

    @Test func aBrokenDownloadResumesWithOneRangeRequestAndEndsWhole() throws {
        let key = UUID().uuidString
        let path = try env.scratchPath("resume") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let total = 5_000_000, cut = 2_000_000  // the server closes at 40 %
        let broken = fetchSync("GET", try env.faultURL + "/file?size=\(total)&key=\(key)&cut=\(cut)") {
            $0.setResponseFile(path, resume: true)
        }.0
        #expect(broken.getStatus() == 0)
        #expect(broken.getFailureKind() == .connection)
        #expect(!exists(path), "no partial file passed off as whole")
        #expect(size(path + ".part") == cut)
        #expect(exists(path + ".part.validator"))

        let request = HttpRequest()
        let recorder = Recorder()
        request.delegate = recorder
        #expect(request.setResponseFile(path, resume: true))
        #expect(request.open("GET", url: try env.faultURL + "/file?size=\(total)&key=\(key)", async: true))
        #expect(request.send())
        #expect(recorder.waitForDone())
        #expect(request.getStatus() == 206)
        #expect(recorder.result.states == [.opened, .sent, .headersReceived, .loading, .done]
                || recorder.result.states.filter { $0 != .loading } == [.opened, .sent, .headersReceived, .done])
        #expect(try matchesFile(path, size: total), "byte for byte the source")
        #expect(!exists(path + ".part") && !exists(path + ".part.validator"))
        let log = try fileLog(key)
        #expect(log.count == 2)
        #expect(log.compactMap { $0["range"] as? String } == ["bytes=\(cut)-"], "one Range request")
        #expect(log.last?["ifRange"] as? String == "\"f0-\(total)\"")
    }

    @Test func aFileThatChangedStartsOver() throws {
        let key = UUID().uuidString
        let path = try env.scratchPath("changed") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let total = 1_000_000
        _ = fetchSync("GET", try env.faultURL + "/file?size=\(total)&version=0&key=\(key)&cut=400000") { $0.setResponseFile(path, resume: true) }
        #expect(size(path + ".part") == 400_000)
        let (request, _) = fetchSync("GET", try env.faultURL + "/file?size=\(total)&version=1&key=\(key)") { $0.setResponseFile(path, resume: true) }
        #expect(request.getStatus() == 200, "If-Range did not match: the whole new file")
        #expect(try matchesFile(path, size: total, version: 1), "the new version only, nothing of the old")
        let log = try fileLog(key)
        #expect(log.last?["status"] as? Int == 200)
        #expect(log.last?["range"] as? String == "bytes=400000-")
    }

    @Test func withoutResumeAPartIsStartedOverAndARangeCannotJoinAResume() throws {
        let path = try env.scratchPath("no-resume") + ".bin"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = fetchSync("GET", try env.faultURL + "/file?size=500000&cut=100000") { $0.setResponseFile(path, resume: true) }
        #expect(size(path + ".part") == 100_000)
        let request = HttpRequest()
        #expect(request.setResponseFile(path, resume: true))
        #expect(request.setRange(from: 10))
        #expect(request.open("GET", url: try env.faultURL + "/file?size=500000"))
        #expect(!request.send(), "a range and a resume")
        #expect(request.lastError?.message.contains("range") == true)
        let plain = fetchSync("GET", try env.faultURL + "/file?size=500000") { $0.setResponseFile(path) }.0
        #expect(plain.getStatus() == 200)
        #expect(try matchesFile(path, size: 500_000))
    }
}
