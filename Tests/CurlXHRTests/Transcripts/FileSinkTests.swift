@testable import CurlXHR
import Foundation
import Testing

/// What a response file does with each answer, decided before a byte is written.
@Suite struct FileSinkTests {
    @Test func aFreshDownloadWritesA2xxBodyAndLeavesOthersToTheBuffer() {
        #expect(FileSink.plan(status: 200, contentRange: nil, resumeOffset: 0) == .file(append: false))
        #expect(FileSink.plan(status: 206, contentRange: "bytes 0-99/1000", resumeOffset: 0) == .file(append: false))
        #expect(FileSink.plan(status: 204, contentRange: nil, resumeOffset: 0) == .file(append: false))
        for status in [301, 404, 416, 500] {
            #expect(FileSink.plan(status: status, contentRange: nil, resumeOffset: 0) == .memory)
        }
    }

    @Test func aResumeAppendsOnlyTheRangeThatContinuesThePart() {
        #expect(FileSink.plan(status: 206, contentRange: "bytes 800-999/1000", resumeOffset: 800) == .file(append: true))
        #expect(FileSink.plan(status: 200, contentRange: nil, resumeOffset: 800) == .file(append: false), "changed: start over")
        if case .refuse(let text) = FileSink.plan(status: 206, contentRange: "bytes 0-999/1000", resumeOffset: 800) {
            #expect(text.contains("800"))
        } else {
            Issue.record("a range from elsewhere must be refused")
        }
        #expect(FileSink.plan(status: 206, contentRange: nil, resumeOffset: 800) != .file(append: true))
        #expect(FileSink.plan(status: 416, contentRange: "bytes */800", resumeOffset: 800) == .memory)
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
        let setting = try partial(size: 100, validator: "\"v1\"")
        var sink = FileSink(setting)
        #expect(sink.resumeOffset == 100 && sink.validator == "\"v1\"")
        sink.begin(.file(append: true), validator: "\"v2\"")
        #expect(!sink.isActive)
        #expect(sink.failure?.contains("another version") == true)
        var same = FileSink(setting)
        same.begin(.file(append: true), validator: "\"v1\"")
        #expect(same.isActive && same.failure == nil)
        same.discard()
        try? FileManager.default.removeItem(atPath: (setting.path as NSString).deletingLastPathComponent)
    }

    @Test func aDecodedBodyKeepsNoValidatorSoItIsNeverResumedByOffset() throws {
        let setting = try partial(size: 0, validator: nil)
        var sink = FileSink(setting)
        sink.begin(.file(append: false), validator: "\"v1\"", decoded: true)
        #expect(sink.isActive)
        #expect(!FileManager.default.fileExists(atPath: setting.validatorPath))
        sink.discard()
        var plain = FileSink(setting)
        plain.begin(.file(append: false), validator: "\"v1\"")
        #expect(FileManager.default.fileExists(atPath: setting.validatorPath))
        plain.discard()
        #expect(FileSink(setting).resumeOffset == 0, "an empty .part: nothing to resume")
        try? FileManager.default.removeItem(atPath: (setting.path as NSString).deletingLastPathComponent)
    }
}
