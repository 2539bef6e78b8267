#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Body bytes kept in memory until the caller takes them (``take()``), as `Data`: the
/// destination of a request's body that is not the response file's (`Transfer+BodyPath.swift`).
///
/// A small buffer is kept from response to response, shared with a caller who took it: the
/// next bytes replace it, in place once the caller let go of it (no allocation a response). A
/// large one is let go of, so an idle request holds no large buffer. A buffer is sized ahead
/// for what the head announced, within limits: growing a `Data` chunk by chunk copies what it
/// holds at every growth.
struct MemorySink {
    /// Body bytes since the last ``take()`` (none while `taken`).
    private var buffer = Data()
    /// `buffer` went to the caller of ``take()`` and stays only for its storage: the next
    /// bytes replace it, in place once the caller let go of it.
    private var taken = false
    /// Body bytes of the current response written so far.
    private var written = 0
    /// The most a buffer is sized for ahead: a synchronous request holds the whole body (as
    /// announced, up to ``maxReservation``); an asynchronous one what arrives until its
    /// LOADING callback drains the buffer (``ReportScheduler/pauseThreshold``).
    var reservationLimit = MemorySink.maxReservation

    /// A first chunk at least this large starts a buffer sized for what is still to come
    /// (after smaller ones the body is small or arrives slowly, and `Data` grows as it
    /// needs). Well under a full read: the first read of a response also carries its head.
    static let sizingChunk = 4 * 1024

    /// Buffers under this size are kept from response to response; larger ones are let go.
    static let keptBufferLimit = 16 * 1024

    /// The most a buffer is sized for ahead of the bytes it holds.
    static let maxReservation = 64 << 20

    /// The capacity for an empty buffer that takes a chunk of `chunk` bytes, with `toCome`
    /// more announced (nil: unknown), with at most `limit` reserved ahead; nil to let `Data`
    /// grow by itself.
    static func capacity(chunk: Int, toCome: Int?, limit: Int) -> Int? {
        guard chunk >= sizingChunk else { return nil }
        return chunk + min(toCome ?? ReportScheduler.pauseThreshold, limit, maxReservation)
    }

    /// A final response's head arrived: its body comes next.
    mutating func responseStarted() {
        written = 0
    }

    /// Bytes written and not yet read by the owner's consumer.
    var unreadCount: Int { taken ? 0 : buffer.count }

    /// The bytes the sink holds, read or not: a kept buffer's too.
    var heldBytes: Int { buffer.count }

    /// Takes body bytes of the current response, in order. `announcedLength` is the length
    /// its head announced (`Content-Length`; nil when none), read only when it sizes a buffer.
    mutating func write(_ bytes: UnsafeRawBufferPointer, announcedLength: @autoclosure () -> Int?) {
        defer { written += bytes.count }
        if unreadCount == 0, bytes.count >= Self.sizingChunk,
           let capacity = Self.capacity(chunk: bytes.count, toCome: announcedLength().map { max(0, $0 - written - bytes.count) },
                                        limit: reservationLimit) {
            buffer = Data(capacity: capacity)
            taken = false
        }
        guard taken else {
            buffer.append(bytes.assumingMemoryBound(to: UInt8.self))
            return
        }
        taken = false
        buffer.writeOver(with: bytes)
    }

    /// Takes `data` as the next bytes of the current response, while it holds none unread.
    mutating func adopt(_ data: Data) {
        buffer = data
        taken = false
        written += data.count
    }

    /// The bytes since the last call.
    mutating func take() -> Data {
        guard !taken else { return Data() }
        defer { discard() }
        return buffer
    }

    /// Done with the bytes so far (handed out, or dropped): a small buffer is kept, shared
    /// with any caller, for the next bytes to reuse; a large one is let go of.
    mutating func discard() {
        if buffer.count < Self.keptBufferLimit {
            taken = true
        } else {
            buffer = Data()
            taken = false
        }
    }
}
