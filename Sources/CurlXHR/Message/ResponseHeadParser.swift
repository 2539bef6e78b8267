import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// Assembles ``ResponseHead``s from the header lines libcurl hands over.
///
/// libcurl passes every header block it reads: 100-continue, redirect hops, the 401/407
/// rounds of an authentication handshake and the final response, and trailers. The header
/// callback is the C recorder (`cxhr_head_callback`): it only copies each line into a buffer
/// the parser keeps from head to head, and calls back once the empty line ends a block. Then,
/// once a head, ``finishHead()`` reads the status line; the field lines are copied where the
/// head is kept (a request copies a final head's once, into the buffer of its previous head;
/// a head that may be intermediate is kept by the transfer first), and become `String`s only
/// when asked for.
///
/// A class, so that an easy handle keeps one parser, and its buffer, for all its transfers.
final class ResponseHeadParser {
    /// libcurl's `CURLOPT_HEADERDATA`.
    let recorder = UnsafeMutablePointer<cxhr_head_recorder>.allocate(capacity: 1)

    /// `headEnded` is called with the recorder's `context` when a block ends (the owner sets
    /// the context); ``finishHead()`` reads the block. The buffer is allocated by the first line.
    init(headEnded: (@convention(c) (UnsafeMutableRawPointer?) -> Int32)? = nil,
         challenged: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = nil) {
        recorder.initialize(to: cxhr_head_recorder(bytes: nil, count: 0, capacity: 0, received: 0, saw_set_cookie: 0, has_transfer_encoding: 0,
                                                   content_length_values: 0, has_content_encoding: 0,
                                                   head_ended: headEnded, challenged: challenged, context: nil))
    }

    deinit {
        free(recorder.pointee.bytes)
        recorder.deallocate()
    }

    /// What a transfer's end left unfinished in the recorder: nothing, trailer fields, or a
    /// head the connection cut off.
    enum Leftover {
        case nothing
        /// The fields after a chunked body's last chunk (or HTTP/2's trailing HEADERS): libcurl
        /// hands them to the header callback without the empty line that would end a head.
        case trailers(ResponseHead)
        case cutHead
    }

    /// Takes the block no empty line ended (``Leftover``) and empties the recorder's block.
    /// A block that is no status line, after a final head (`afterHead`), is the trailer
    /// fields; anything else left is a head cut off.
    func takeLeftover(afterHead: Bool) -> Leftover {
        let recorded = UnsafeBufferPointer(start: recorder.pointee.bytes, count: recorder.pointee.count)
        guard !recorded.isEmpty else { return .nothing }
        recorder.pointee.count = 0
        recorder.pointee.has_transfer_encoding = 0
        recorder.pointee.content_length_values = 0
        recorder.pointee.has_content_encoding = 0
        guard afterHead, !Self.isStatusLine(recorded) else { return .cutHead }
        return .trailers(ResponseHead(RecordedHead(status: 0, reason: "", lines: recorded)))
    }

    /// Header bytes received since the last call (or ``reset()``), as libcurl's
    /// `CURLINFO_HEADER_SIZE` counts them; the count starts again.
    func takeReceivedBytes() -> Int64 {
        defer { recorder.pointee.received = 0 }
        return Int64(recorder.pointee.received)
    }

    /// A `Set-Cookie` field arrived since the last ``reset()``, in any block.
    var sawSetCookie: Bool { recorder.pointee.saw_set_cookie != 0 }

    /// Forgets a block left unfinished (by a transfer that failed within a head) and the
    /// `Set-Cookie` note: a transfer starts.
    func reset() {
        cxhr_head_clear(recorder)
    }

    /// Consumes one header line (with its CRLF) as the header callback does; returns the block
    /// the line completed.
    func consume(_ line: UnsafeRawBufferPointer) -> ResponseHead? {
        // The empty line that ends a head (no header line starts with CR or LF).
        guard let first = line.first, first != 0x0D, first != 0x0A else { return finishHead().map { ResponseHead($0) } }
        _ = cxhr_head_record_line(recorder, line.baseAddress!.assumingMemoryBound(to: CChar.self), line.count)
        return nil
    }

    /// The block recorded since the last one ended, as a head whose lines stay in the
    /// parser's buffer until it records again: nil when the block does not start with a status
    /// line (trailers, or what is left of a block a reset cut). Empties the block.
    func finishHead() -> RecordedHead? {
        let recorded = UnsafeBufferPointer(start: recorder.pointee.bytes, count: recorder.pointee.count)
        let hasTransferEncoding = recorder.pointee.has_transfer_encoding != 0
        let severalLengths = recorder.pointee.content_length_values > 1
        let hasContentEncoding = recorder.pointee.has_content_encoding != 0
        recorder.pointee.count = 0
        recorder.pointee.has_transfer_encoding = 0
        recorder.pointee.content_length_values = 0
        recorder.pointee.has_content_encoding = 0
        guard Self.isStatusLine(recorded), let found = memchr(recorded.baseAddress!, 0x0A, recorded.count) else { return nil }
        let newline = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - recorded.baseAddress!
        let (status, reason) = ResponseHead.statusLine(ResponseHead.withoutCR(recorded[..<newline]))
        return RecordedHead(status: status, reason: reason, lines: UnsafeBufferPointer(rebasing: recorded[(newline + 1)...]),
                            httpVersion: HttpRequest.Metrics.httpVersion(statusLine: recorded),
                            mayHaveTransferEncoding: hasTransferEncoding, mayHaveSeveralLengths: severalLengths,
                            mayHaveContentEncoding: hasContentEncoding)
    }

    private static func isStatusLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count >= 5 && bytes[0] == 0x48 && bytes[1] == 0x54 && bytes[2] == 0x54 && bytes[3] == 0x50
            && bytes[4] == 0x2F  // "HTTP/"
    }
}
