import HTTPTypes
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
    /// The protocol the status line names (``HttpRequest/Metrics/httpVersion``): known from
    /// HEADERS_RECEIVED on, not only when the send ends.
    var httpVersion: String?
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
        httpVersion = recorded.httpVersion
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
        lines.withUnsafeBufferPointer { body(RecordedHead(status: status, reason: reason, lines: $0, httpVersion: httpVersion)) }
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

    /// ``fields`` as `HTTPFields`, those whose name is no token left out.
    var headerFields: HTTPFields {
        // Made whole from an array: appending one by one goes through HTTPFields'
        // replaceSubrange for each field.
        HTTPFields(fields.compactMap { name, value in HTTPField.Name(name).map { HTTPField(name: $0, value: value) } })
    }

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

    /// The body length the head announces: its `Content-Length` when it is one number and
    /// no `Transfer-Encoding` overrides it; nil otherwise.
    var announcedLength: Int? {
        withRecorded { $0.announcedLength }
    }

    /// A field value that is one decimal number (no sign, no list), else nil.
    static func decimal(_ value: String?) -> Int? {
        guard let value, !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(value)
    }

    /// Whether a `Content-Encoding` value names an encoding (not none, not `identity`).
    static func isEncoded(_ contentEncoding: String?) -> Bool {
        guard let contentEncoding, !contentEncoding.isEmpty else { return false }
        return contentEncoding.lowercased() != "identity"
    }

    /// The body bytes to expect after decoding, as far as the head tells: its announced
    /// length when the body is not encoded (or is not to be decoded), else mesibo's
    /// `Content-Size` (the size after decoding) when given; nil when unknown.
    func expectedBodyLength(decoded: Bool) -> Int? {
        if !(decoded && Self.isEncoded(value(of: "Content-Encoding"))), let length = announcedLength { return length }
        return Self.decimal(value(of: "Content-Size"))
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
    /// False when the head surely has no `Transfer-Encoding` field (the header recorder
    /// notes one as it copies the lines), so that every response need not look for it.
    var mayHaveTransferEncoding = true
    /// False when the head surely has at most one `Content-Length` value (the recorder counts
    /// them): only a head with more is checked for ``lengthsDisagree``.
    var mayHaveSeveralLengths = true
    /// False when the head surely has no `Content-Encoding` field (noted as it is recorded).
    var mayHaveContentEncoding = true
}

extension RecordedHead {
    /// The head's `Content-Length` values (several fields, or a list in one) are not all the
    /// same, and no `Transfer-Encoding` overrides them: its framing is invalid, and the
    /// response an error (RFC 9112, 6.3).
    var lengthsDisagree: Bool {
        guard mayHaveSeveralLengths, !hasField("Transfer-Encoding") else { return false }
        let values = Array((ResponseHead(self).value(of: "Content-Length") ?? "").utf8)
        return Set(values.split(separator: 0x2C).map { Array(MessageValidation.withoutOptionalWhiteSpace($0)) }).count > 1
    }

    /// ``ResponseHead/announcedLength``, read in place: the value of the one `Content-Length`
    /// field when it is one number (not folded, not a list, no second field) and there is no
    /// `Transfer-Encoding`.
    var announcedLength: Int? {
        guard !hasField("Transfer-Encoding"), let bytes = fieldValueBytes("Content-Length", only: true) else { return nil }
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let digits = bytes[..<end]
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var length = 0
        for byte in digits {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            length = length * 10 + Int(byte - 0x30)
        }
        return length
    }

    /// Whether a field named `name` (case-insensitive) is among the head's lines, read in
    /// place.
    func hasField(_ name: String) -> Bool {
        fieldValueBytes(name) != nil
    }

    /// The value of the first field named `name` (case-insensitive), without its surrounding
    /// spaces; read in place, copied only when found.
    func fieldValue(_ name: String) -> String? {
        guard let bytes = fieldValueBytes(name) else { return nil }
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Read over the raw bytes (memchr finds each line's end), with no generic slicing a byte
    /// at a time. A line is the field when the name, in any case, is followed at once by the
    /// colon (no white space may come between, RFC 9112 5.1); a line folded onto the one
    /// before starts with a space or tab, which no name does.
    /// With `only`, nil also when the field is folded onto the next line or named twice (its
    /// value is then not the one line's).
    private func fieldValueBytes(_ name: String, only: Bool = false) -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard let base = lines.baseAddress else { return nil }
        var name = name
        return name.withUTF8 { name -> Slice<UnsafeBufferPointer<UInt8>>? in
            let count = lines.count, width = name.count
            var start = 0
            var found: Slice<UnsafeBufferPointer<UInt8>>?
            var foundLast = false
            while start < count {
                let end = memchr(base + start, 0x0A, count - start).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? count
                if foundLast, base[start] == 0x20 || base[start] == 0x09 { return nil }  // folded onto it
                foundLast = false
                if end - start > width, base[start + width] == 0x3A,
                   MessageValidation.sameFieldName(UnsafeBufferPointer(start: base + start, count: width), name) {
                    guard found == nil else { return nil }  // a second field (only)
                    var valueEnd = end
                    if valueEnd > start + width + 1, base[valueEnd - 1] == 0x0D { valueEnd -= 1 }
                    found = lines[(start + width + 1)..<valueEnd].drop { $0 == 0x20 || $0 == 0x09 }
                    if !only { return found }
                    foundLast = true
                }
                start = end + 1
            }
            return found
        }
    }
}
