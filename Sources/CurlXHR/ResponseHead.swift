/// The status line and header fields of one response.
struct ResponseHead: Sendable, Equatable {
    var status = 0
    var reason = ""
    var fields: [(name: String, value: String)] = []

    static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    func value(of name: String) -> String? {
        let matches = fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        return matches.isEmpty ? nil : matches.joined(separator: ", ")
    }

    /// `Name: value` lines joined by `\n`.
    var allFields: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}

/// Assembles ``ResponseHead``s from the header lines libcurl hands over, one line a call.
///
/// libcurl passes every header block it reads: 100-continue, redirect hops, the 401/407
/// rounds of an authentication handshake and the final response. A status line starts a new
/// block; the empty line ends it.
struct ResponseHeadParser: Sendable {
    private var current: ResponseHead?

    /// Consumes one header line (with its CRLF); returns the block the line completed.
    /// Works on the bytes: this runs for every header line of every response.
    mutating func consume(_ line: UnsafeRawBufferPointer) -> ResponseHead? {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            defer { current = nil }
            return current
        }
        let bytes = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if bytes.starts(with: "HTTP/".utf8) {
            current = Self.statusLine(bytes)
        } else if bytes[0] == 0x20 || bytes[0] == 0x09 {
            // obs-fold: a continuation of the previous field's value.
            if let last = current?.fields.indices.last {
                current?.fields[last].value += " " + Self.text(bytes, 0..<end)
            }
        } else if current != nil, let colon = bytes.firstIndex(of: 0x3A) {
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<colon]), as: UTF8.self)
            current?.fields.append((name, Self.text(bytes, (colon + 1)..<end)))
        }
        return nil
    }

    /// `HTTP/x.y SP status [SP reason]`.
    private static func statusLine(_ bytes: UnsafeRawBufferPointer) -> ResponseHead {
        var index = 0
        while index < bytes.count, bytes[index] != 0x20 { index += 1 }      // the version
        while index < bytes.count, bytes[index] == 0x20 { index += 1 }
        var status = 0, digits = 0
        while index < bytes.count, (0x30...0x39).contains(bytes[index]), digits < 3 {
            status = status * 10 + Int(bytes[index] - 0x30)
            digits += 1
            index += 1
        }
        if digits != 3 || (index < bytes.count && bytes[index] != 0x20) { status = 0 }
        var reason = text(bytes, index..<bytes.count)
        if reason.isEmpty { reason = ReasonPhrase.standard(for: status) }
        return ResponseHead(status: status, reason: reason)
    }

    /// The bytes in `range` as text, without leading and trailing spaces and tabs.
    private static func text(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[lower..<upper]), as: UTF8.self)
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
