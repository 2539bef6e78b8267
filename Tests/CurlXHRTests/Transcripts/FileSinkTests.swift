@testable import CurlXHR
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
}
