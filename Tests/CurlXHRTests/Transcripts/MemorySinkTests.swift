import Foundation
import HTTPTypes
import Testing
@testable import CurlXHR

/// The memory sink, write by write: what the caller takes, what stays, how buffers are sized.
@Suite(.ownThreads) struct MemorySinkTests {
    static func write(_ sink: inout MemorySink, _ text: String, announced: Int? = nil) {
        Array(text.utf8).withUnsafeBytes { sink.write($0, announcedLength: announced) }
    }

    @Test func bytesAreTakenOnceInOrder() {
        var sink = MemorySink()
        sink.responseStarted()
        #expect(sink.unreadCount == 0 && sink.take().isEmpty)
        Self.write(&sink, "hello, ")
        Self.write(&sink, "world")
        #expect(sink.unreadCount == 12)
        #expect(String(decoding: sink.take(), as: UTF8.self) == "hello, world")
        #expect(sink.unreadCount == 0 && sink.take().isEmpty)
        Self.write(&sink, "again")
        #expect(String(decoding: sink.take(), as: UTF8.self) == "again")
    }

    @Test func aBufferHandedOutNeverChanges() {
        var sink = MemorySink()
        Self.write(&sink, String(repeating: "a", count: 100))
        let first = sink.take()
        Self.write(&sink, String(repeating: "b", count: 100))  // reuses the kept buffer's slot
        let second = sink.take()
        #expect(first == Data(repeating: UInt8(ascii: "a"), count: 100))
        #expect(second == Data(repeating: UInt8(ascii: "b"), count: 100))
    }

    @Test func discardDropsWhatWasNotTaken() {
        var sink = MemorySink()
        Self.write(&sink, "dropped")
        sink.discard()
        #expect(sink.unreadCount == 0 && sink.take().isEmpty)
        Self.write(&sink, "kept")
        #expect(String(decoding: sink.take(), as: UTF8.self) == "kept")
        #expect(sink.heldBytes == 4)  // a small buffer is kept for the next bytes
        // A large buffer is let go of.
        Self.write(&sink, String(repeating: "x", count: MemorySink.keptBufferLimit + 1))
        sink.discard()
        #expect(sink.unreadCount == 0 && sink.heldBytes == 0)
    }

    @Test func theAnnouncedLengthIsReadOnlyForALargeFirstChunk() {
        var sink = MemorySink()
        sink.responseStarted()
        var asked = 0
        func announced() -> Int? {
            asked += 1
            return 100_000
        }
        Array(repeating: UInt8(1), count: 100).withUnsafeBytes { sink.write($0, announcedLength: announced()) }
        #expect(asked == 0)  // a small chunk: Data grows by itself
        _ = sink.take()
        let chunk = Array(repeating: UInt8(2), count: MemorySink.sizingChunk)
        chunk.withUnsafeBytes { sink.write($0, announcedLength: announced()) }
        #expect(asked == 1)
        chunk.withUnsafeBytes { sink.write($0, announcedLength: announced()) }
        #expect(asked == 1)  // bytes wait: the buffer was sized already
        #expect(sink.take() == Data(chunk + chunk))
    }

    @Test func responseHeadsAnnounceTheirLength() {
        func head(_ lines: String) -> ResponseHead {
            Array(lines.utf8).withUnsafeBufferPointer { ResponseHead(RecordedHead(status: 200, reason: "OK", lines: $0)) }
        }
        #expect(head("Content-Length: 1234\r\n").announcedLength == 1234)
        #expect(head("content-length:0\r\nX: y\r\n").announcedLength == 0)
        #expect(head("X: y\r\n").announcedLength == nil)
        #expect(head("Content-Length: 12, 12\r\n").announcedLength == nil)
        #expect(head("Content-Length: -1\r\n").announcedLength == nil)
        #expect(head("Content-Length: 99999999999999999999999\r\n").announcedLength == nil)
        #expect(head("Transfer-Encoding: chunked\r\nContent-Length: 10\r\n").announcedLength == nil)
        #expect(head("Content-Length: 10\r\nX: y\r\nContent-Length: 10\r\n").announcedLength == nil, "two fields")
        #expect(head("Content-Length: 10\r\n 5\r\n").announcedLength == nil, "folded")
        #expect(head("X: y\r\n 5\r\nContent-Length:  77 \r\nY: z\r\n").announcedLength == 77)
        #expect(head("Content-Length: \r\n").announcedLength == nil)
        #expect(head("Content-Length: 1 2\r\n").announcedLength == nil)
        #expect(head("Content-Length\r\n").announcedLength == nil)
        #expect(head("Content-Length: 999999999999999999\r\n").announcedLength == 999_999_999_999_999_999, "18 digits")
        #expect(head("Content-Length: 0999\n").announcedLength == 999, "a bare LF")
    }

    /// `HttpResponse.headerFields`: the head's fields as `HTTPFields`, in order, repeats apart,
    /// and a name that is no token (a hostile server's) left out rather than passed on.
    @Test func responseHeadsGiveTheirFieldsAsHTTPFields() throws {
        let lines = "X-Multi: a\r\nBad Name: x\r\nx-multi:  b \r\nBad\u{7F}: y\r\nContent-Type: text/plain\r\n"
        let head = Array(lines.utf8).withUnsafeBufferPointer { ResponseHead(RecordedHead(status: 200, reason: "OK", lines: $0)) }
        let fields = head.headerFields
        #expect(fields.map(\.name.rawName) == ["X-Multi", "x-multi", "Content-Type"])
        #expect(fields[values: try #require(HTTPField.Name("X-MULTI"))] == ["a", "b"])
        #expect(fields[.contentType] == "text/plain")
    }
}
