@testable import CurlXHR
import Foundation
import Testing

/// What a response file does with each answer, decided before a byte is written.
@Suite(.ownThreads) struct FileSinkTests {
    let v1 = "\"v1\""
    @Test func aFreshDownloadWritesA2xxBodyAndLeavesOthersToTheBuffer() {
        #expect(FileSink.plan(status: 200, contentRange: nil, validator: v1, resumeOffset: 0, expected: v1) == .file(append: false))
        #expect(FileSink.plan(status: 206, contentRange: "bytes 0-99/1000", validator: v1, resumeOffset: 0, expected: v1) == .file(append: false))
        #expect(FileSink.plan(status: 204, contentRange: nil, validator: v1, resumeOffset: 0, expected: v1) == .file(append: false))
        for status in [301, 404, 416, 500] {
            #expect(FileSink.plan(status: status, contentRange: nil, validator: v1, resumeOffset: 0, expected: v1) == .memory)
        }
    }

    @Test func aResumeAppendsOnlyTheRangeThatContinuesThePart() {
        #expect(FileSink.plan(status: 206, contentRange: "bytes 800-999/1000", validator: v1, resumeOffset: 800, expected: v1) == .file(append: true))
        #expect(FileSink.plan(status: 200, contentRange: nil, validator: v1, resumeOffset: 800, expected: v1) == .file(append: false), "changed: start over")
        if case .refuse(let text) = FileSink.plan(status: 206, contentRange: "bytes 0-999/1000", validator: v1, resumeOffset: 800, expected: v1) {
            #expect(text.contains("800"))
        } else {
            Issue.record("a range from elsewhere must be refused")
        }
        #expect(FileSink.plan(status: 206, contentRange: nil, validator: v1, resumeOffset: 800, expected: v1) != .file(append: true))
        #expect(FileSink.plan(status: 416, contentRange: "bytes */800", validator: v1, resumeOffset: 800, expected: v1) == .memory)
    }

    @Test func contentRangesAndValidators() {
        #expect(FileSink.rangeStart("bytes 100-199/1000") == 100)
        #expect(FileSink.rangeStart("Bytes 5-9/*") == 5)
        #expect(FileSink.rangeStart("bytes */1000") == nil)
        #expect(FileSink.rangeStart("items 1-2/3") == nil)
        #expect(FileSink.validator(etag: "\"abc\"", lastModified: "Thu, 01 Jan 2026 00:00:00 GMT") == "\"abc\"")
        #expect(FileSink.validator(etag: "W/\"abc\"", lastModified: "Thu, 01 Jan 2026 00:00:00 GMT") == "Thu, 01 Jan 2026 00:00:00 GMT",
                "a weak ETag cannot go in If-Range")
        #expect(FileSink.validator(etag: nil, lastModified: nil) == nil)
    }

    @Test func aFileGoesOnlyWhereItCanBeWritten() {
        #expect(FileSink.Setting.problem("/tmp/curlxhr-file-sink-test.bin") == nil)
        #expect(FileSink.Setting.problem("relative-name.bin") == nil, "the current folder")
        #expect(FileSink.Setting.problem("")?.contains("empty") == true)
        #expect(FileSink.Setting.problem("/tmp")?.contains("folder") == true)
        #expect(FileSink.Setting.problem("/nonexistent-folder/file.bin")?.contains("does not exist") == true)
        #expect(FileSink.Setting.problem("/etc/hostname/file.bin")?.contains("does not exist") == true)
    }

    /// A folder of its own with a `.part` of `size` bytes and, if given, its validator.
    func partial(size: Int, validator: String?) throws -> FileSink.Setting {
        let folder = "/tmp/curlxhr-file-sink-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        #expect(mkdir(folder, 0o700) == 0)
        let setting = FileSink.Setting(path: folder + "/file.bin", resume: true)
        #expect(FileManager.default.createFile(atPath: setting.partPath, contents: Data(count: size)))
        if let validator { #expect(FileManager.default.createFile(atPath: setting.validatorPath, contents: Data((validator + "\n").utf8))) }
        return setting
    }

    @Test func aRangeOfAnotherVersionIsRefusedEvenWhenItStartsInPlace() throws {
        // A server that ignores If-Range but honours Range.
        if case .refuse(let text) = FileSink.plan(status: 206, contentRange: "bytes 100-199/200", validator: "\"v2\"",
                                                 resumeOffset: 100, expected: v1) {
            #expect(text.contains("another version"))
        } else {
            Issue.record("a range of another version must be refused")
        }
        #expect(FileSink.plan(status: 206, contentRange: "bytes 100-199/200", validator: nil, resumeOffset: 100, expected: v1) != .file(append: true))
        #expect(FileSink.plan(status: 200, contentRange: nil, validator: "\"v2\"", resumeOffset: 100, expected: v1) == .file(append: false),
                "the whole new version: start over")
        // The sink reads the .part and its validator back for the plan.
        let setting = try partial(size: 100, validator: v1)
        let sink = FileSink(setting, decoding: true)
        #expect(sink.resumeOffset == 100 && sink.validator == v1)
        try? FileManager.default.removeItem(atPath: (setting.path as NSString).deletingLastPathComponent)
    }

    @Test func aDecodedBodyKeepsNoValidatorSoItIsNeverResumedByOffset() throws {
        let setting = try partial(size: 0, validator: nil)
        let parser = ResponseHeadParser()
        func feed(_ line: String) -> ResponseHead? { Array(line.utf8).withUnsafeBytes { parser.consume($0) } }
        _ = feed("HTTP/1.1 200 OK\r\n")
        _ = feed("ETag: \"v1\"\r\n")
        _ = feed("Content-Encoding: gzip\r\n")
        let head = try #require(feed("\r\n"))
        var sink = FileSink(setting, decoding: true)
        head.withRecorded { sink.begin($0) }
        #expect(sink.isActive)
        #expect(!FileManager.default.fileExists(atPath: setting.validatorPath), "decoded: offsets of the wire would not match")
        sink.discard()
        var plain = FileSink(setting, decoding: false)
        head.withRecorded { plain.begin($0) }
        #expect(FileManager.default.fileExists(atPath: setting.validatorPath))
        plain.discard()
        #expect(FileSink(setting, decoding: true).resumeOffset == 0, "an empty .part: nothing to resume")
        try? FileManager.default.removeItem(atPath: (setting.path as NSString).deletingLastPathComponent)
    }
}
