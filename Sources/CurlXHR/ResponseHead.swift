import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// The status line and header fields of one response.
///
/// The head stays the bytes it arrived as and its fields become `String`s only when asked
/// for: most responses are read for their status and body alone.
struct ResponseHead: Sendable, Equatable {
    var status = 0
    var reason = ""
    /// The header lines after the status line, each ending in LF (CRLF as received).
    private var lines: [UInt8] = []

    init(status: Int = 0, reason: String = "") {
        self.status = status
        self.reason = reason
    }

    /// An owned copy of a head the parser recorded, its lines copied into `storage`'s buffer
    /// (emptied; its capacity kept, so a request's heads after the first allocate nothing).
    /// `storage` is left empty.
    init(_ recorded: RecordedHead, reusing storage: inout [UInt8]) {
        status = recorded.status
        reason = recorded.reason
        swap(&lines, &storage)
        lines.replaceSubrange(lines.indices, with: recorded.lines)
    }

    /// An owned copy of a head the parser recorded.
    init(_ recorded: RecordedHead) {
        var storage: [UInt8] = []
        self.init(recorded, reusing: &storage)
    }

    /// Hands the buffer of the field lines to `storage`, for the next head to reuse.
    mutating func giveUpStorage(to storage: inout [UInt8]) {
        swap(&lines, &storage)
        lines = []
    }

    /// The head as a recorded one, its lines borrowed for the duration of `body`.
    func withRecorded<Result>(_ body: (RecordedHead) -> Result) -> Result {
        lines.withUnsafeBufferPointer { body(RecordedHead(status: status, reason: reason, lines: $0)) }
    }

    /// `HTTP/x.y SP status [SP reason]` without its line end; a missing reason becomes the
    /// standard one.
    static func statusLine<Bytes: BidirectionalCollection<UInt8>>(_ line: Bytes) -> (status: Int, reason: String)
    where Bytes.SubSequence == Bytes {
        var index = line.startIndex
        while index < line.endIndex, line[index] != 0x20 { line.formIndex(after: &index) }  // the version
        while index < line.endIndex, line[index] == 0x20 { line.formIndex(after: &index) }
        var status = 0, digits = 0
        while index < line.endIndex, line[index] >= 0x30, line[index] <= 0x39, digits < 3 {
            status = status * 10 + Int(line[index] - 0x30)
            digits += 1
            line.formIndex(after: &index)
        }
        if digits != 3 || (index < line.endIndex && line[index] != 0x20) { status = 0 }
        let reason = text(MessageValidation.withoutOptionalWhiteSpace(line[index...]))
        return (status, reason.isEmpty ? ReasonPhrase.standard(for: status) : reason)
    }

    static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The fields in arrival order, values trimmed, obs-fold continuations joined to their
    /// field with a space; lines that are no field (no colon) are left out, with their
    /// continuations.
    var fields: [(name: String, value: String)] { fields(named: nil) }

    /// The fields, or only those named `name` (case-insensitive; the others never become
    /// strings).
    private func fields(named name: String?) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        var lastKept = false
        var rest = lines[...]
        while let newline = rest.firstIndex(of: 0x0A) {
            let line = Self.withoutCR(rest[rest.startIndex..<newline])
            rest = rest[(newline + 1)...]
            guard let first = line.first else { continue }
            if first == 0x20 || first == 0x09 {
                guard lastKept else { continue }
                fields[fields.count - 1].value += " " + Self.text(MessageValidation.withoutOptionalWhiteSpace(line))
            } else if let colon = line.firstIndex(of: 0x3A) {
                lastKept = name.map { MessageValidation.sameFieldName(line[..<colon], $0.utf8) } ?? true
                guard lastKept else { continue }
                let value = MessageValidation.withoutOptionalWhiteSpace(line[(colon + 1)...])
                fields.append((Self.text(line[..<colon]), Self.text(value)))
            } else {
                lastKept = false  // a line that is no field: what folds onto it is left out too
            }
        }
        return fields
    }

    /// The value of the field `name` (case-insensitive); repeated fields joined with ", ".
    func value(of name: String) -> String? {
        let values = fields(named: name).map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// `Name: value` lines joined by `\n`.
    var allFields: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Without a CR at the end.
    static func withoutCR<Bytes: BidirectionalCollection<UInt8>>(_ line: Bytes) -> Bytes
    where Bytes.SubSequence == Bytes {
        line.last == 0x0D ? line.dropLast() : line
    }

    private static func text<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

/// A head as ``ResponseHeadParser`` recorded it: the status line read, the field lines (each
/// ending in LF) still in the parser's buffer, valid until it records the next line. Copied
/// into a ``ResponseHead`` only where it is kept.
struct RecordedHead {
    let status: Int
    let reason: String
    let lines: UnsafeBufferPointer<UInt8>
    /// The protocol the status line names (``HttpRequest/Metrics/httpVersion``).
    var httpVersion: String? = nil
}

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
        recorder.initialize(to: cxhr_head_recorder(bytes: nil, count: 0, capacity: 0, saw_set_cookie: 0,
                                                   head_ended: headEnded, challenged: challenged, context: nil))
    }

    deinit {
        free(recorder.pointee.bytes)
        recorder.deallocate()
    }

    /// Lines of a block arrived that no empty line ended yet.
    var hasUnfinishedBlock: Bool { recorder.pointee.count > 0 }

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
        recorder.pointee.count = 0
        guard Self.isStatusLine(recorded), let newline = recorded.firstIndex(of: 0x0A) else { return nil }
        let (status, reason) = ResponseHead.statusLine(ResponseHead.withoutCR(recorded[..<newline]))
        return RecordedHead(status: status, reason: reason, lines: UnsafeBufferPointer(rebasing: recorded[(newline + 1)...]),
                            httpVersion: HttpRequest.Metrics.httpVersion(statusLine: recorded))
    }

    private static func isStatusLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count >= 5 && bytes[0] == 0x48 && bytes[1] == 0x54 && bytes[2] == 0x54 && bytes[3] == 0x50
            && bytes[4] == 0x2F  // "HTTP/"
    }
}

/// Reason phrases for responses that carry none (HTTP/2 and later).
enum ReasonPhrase {
    static func standard(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }
}
