import CCurlShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Checks of user input that would otherwise break the request on the wire.
package enum MessageValidation {
    /// Whether two field names (or other ASCII tokens, such as URL origins) are equal ignoring
    /// ASCII case, compared byte by byte: no lower-cased copies.
    @inlinable
    package static func sameFieldName<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        a.count == b.count && a.elementsEqual(b) { lowered($0) == lowered($1) }
    }

    @inlinable
    package static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// Fields the library derives from the body, which `setRequestHeader` refuses.
    static let derivedFieldNames = ["Content-Length", "Transfer-Encoding"]

    /// `bytes` without leading and trailing spaces and tabs: a field value without its
    /// optional white space, in request and response heads alike.
    static func withoutOptionalWhiteSpace<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        var lower = bytes.startIndex, upper = bytes.endIndex
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { bytes.formIndex(after: &lower) }
        while upper > lower {
            let last = bytes.index(before: upper)
            guard bytes[last] == 0x20 || bytes[last] == 0x09 else { break }
            upper = last
        }
        return bytes[lower..<upper]
    }

    /// `value` without its optional white space; the string itself when it has none.
    static func trimmedFieldValue(_ value: String) -> String {
        // As usually given: neither end is white space, so there is nothing to scan.
        func isWhiteSpace(_ byte: UInt8?) -> Bool { byte == 0x20 || byte == 0x09 }
        if !isWhiteSpace(value.utf8.first), !isWhiteSpace(value.utf8.last) { return value }
        let trimmed = withoutOptionalWhiteSpace(value.utf8)
        if trimmed.startIndex == value.utf8.startIndex && trimmed.endIndex == value.utf8.endIndex { return value }
        return String(Substring(trimmed))
    }

    /// Why `name: value` cannot be a header field (a name that is no token, CR, LF or NUL in
    /// the value), or nil when it can.
    static func fieldProblem(name: String, value: String) -> String? {
        guard isToken(name) else { return "'\(escaped(name))' is not a valid header name" }
        guard isFieldValue(value) else { return "the value of header '\(escaped(name))' contains CR, LF or NUL" }
        return nil
    }

    /// RFC 9110 `token` characters, used by methods and header names.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && allBytes(of: text) { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                 UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                true
            default:
                false
            }
        }
    }

    /// Header values may not contain CR, LF or NUL; nor may anything else that goes into a
    /// request's head (user names, passwords, URLs).
    static func isFieldValue(_ text: String) -> Bool {
        allBytes(of: text) { $0 != 0x0D && $0 != 0x0A && $0 != 0x00 }
    }

    /// `text` for a message that quotes it: control characters written as escapes (`\r`,
    /// `\n`, `\t`, `\0`, `\u{1B}`), so that refused input cannot forge lines of a log.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": out += "\\r"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\0": out += "\\0"
            case _ where isControl(scalar): out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// Why `method` may not be sent, or nil: `CONNECT`, `TRACE` and `TRACK` in any case, as
    /// XMLHttpRequest refuses them (a tunnel, and echoes that reveal credentials to scripts).
    static func methodProblem(_ method: String) -> String? {
        // Compared byte by byte, in any case: every open passes here (no upper-cased copy).
        let length = method.utf8.count
        guard length == 5 || length == 7, let forbidden = forbiddenMethods.first(where: { sameFieldName($0.utf8, method.utf8) }) else { return nil }
        return "the method '\(forbidden)' is forbidden (as in XMLHttpRequest)"
    }

    private static let forbiddenMethods = ["CONNECT", "TRACE", "TRACK"]

    /// Why the authority of `url` (from "//" to the first "/", "?" or "#") cannot be sent,
    /// or nil: a backslash there, which libcurl reads as part of a user name or password
    /// (`http://a.example\@b.example/` goes to b.example) where a browser reads a path.
    static func authorityProblem(_ url: String) -> String? {
        var url = url
        let backslash = url.withUTF8 { bytes in bytes[authority(of: bytes)].contains(UInt8(ascii: "\\")) }
        guard backslash else { return nil }
        return backslashProblem(url)
    }

    private static func backslashProblem(_ url: String) -> String {
        "the URL '\(escaped(url))' has a backslash in its authority (its host, port, user or password)"
    }

    private static func hasBackslash(_ text: UnsafeMutablePointer<CChar>?) -> Bool {
        guard var byte = text else { return false }
        while byte.pointee != 0 {
            if byte.pointee == CChar(UInt8(ascii: "\\")) { return true }
            byte += 1
        }
        return false
    }

    private static func hasBackslash(_ handle: OpaquePointer, _ part: CURLUPart) -> Bool {
        var text: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, part, &text, 0) == CURLUE_OK else { return false }
        defer { curl_free(text) }
        return hasBackslash(text)
    }

    /// The bytes of `url` up to the end of its authority (`scheme://authority`), or nil
    /// without one: two URLs with the same, case aside, have the same origin.
    static func schemeAndAuthority(_ url: String) -> Substring.UTF8View? {
        var url = url
        let range = url.withUTF8 { authority(of: $0) }
        guard !range.isEmpty else { return nil }
        return url.utf8.prefix(range.upperBound)
    }

    /// Where the authority of a URL's bytes is: from "//" after the scheme to the first "/",
    /// "?" or "#" (empty, at 0, without one).
    private static func authority(of bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else { return 0..<0 }
        var end = colon + 3
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            end += 1
        }
        return (colon + 3)..<end
    }

    /// Whether every UTF-8 byte of `text` satisfies `predicate`: over the string's own
    /// contiguous bytes when it has them (native strings do), without the UTF-8 view's
    /// per-byte indexing.
    private static func allBytes(of text: String, satisfy predicate: (UInt8) -> Bool) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(predicate) } ?? text.utf8.allSatisfy(predicate)
    }

    /// The method as sent: standard methods upper-cased (as XMLHttpRequest does), others kept
    /// as given; nil when `method` is not a token.
    static func normalizedMethod(_ method: String) -> String? {
        if normalizedMethods.contains(method) { return method }  // as usually written: no copy
        guard isToken(method) else { return nil }
        let upper = method.uppercased()
        return normalizedMethods.contains(upper) ? upper : method
    }

    /// The methods XMLHttpRequest's `open` upper-cases (Fetch's "normalize a method"); any
    /// other method, `PATCH` included, goes out exactly as given. Most used first: small
    /// strings compare by their bits, cheaper than hashing.
    private static let normalizedMethods = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"]

    /// `url` with every byte outside ASCII after the authority (path, query, fragment)
    /// percent-encoded as UTF-8, as browsers and curl's URL API send them (`ß` → `%C3%9F`).
    /// The host is left as given. An ASCII URL is returned as it is, without a copy.
    static func percentEncodingNonASCII(_ url: String) -> String {
        // Every open passes here: the bytes are OR-ed together in a loop the compiler
        // vectorises (a generic allSatisfy is much slower).
        let isASCII = url.utf8.withContiguousStorageIfAvailable { bytes in
            var seen: UInt8 = 0
            for byte in bytes { seen |= byte }
            return seen < 0x80
        } ?? url.utf8.allSatisfy { $0 < 0x80 }
        guard !isASCII else { return url }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(url.utf8.count * 3)
        let bytes = Array(url.utf8)
        // The authority is kept as given.
        let index = bytes.withUnsafeBufferPointer { authority(of: $0).upperBound }
        encoded.append(contentsOf: bytes[..<index])
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in bytes[index...] {
            if byte < 0x80 {
                encoded.append(byte)
            } else {
                encoded.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// What libcurl's own URL parser makes of `url`: only absolute http and https URLs with a
    /// host pass. Succeeds with the parsed URL, which the engine hands to libcurl for each send.
    static func parseURL(_ url: String) -> Result<ParsedURL, URLProblem> {
        guard !url.utf8.contains(0) else { return .failure(URLProblem("the URL contains a NUL byte")) }
        guard isFieldValue(url) else { return .failure(URLProblem("the URL '\(escaped(url))' contains CR or LF")) }
        if let problem = authorityProblem(url) { return .failure(URLProblem(problem)) }
        guard let handle = curl_url() else { return .failure(URLProblem("out of memory parsing the URL")) }
        var keeps = false
        defer { if !keeps { curl_url_cleanup(handle) } }
        let code = curl_url_set(handle, CURLUPART_URL, url, 0)
        guard code == CURLUE_OK else {
            return .failure(URLProblem("malformed URL '\(escaped(url))': \(String(cString: curl_url_strerror(code)))"))
        }
        var scheme: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK, let scheme else {
            return .failure(URLProblem("the URL '\(escaped(url))' has no scheme"))
        }
        defer { curl_free(scheme) }
        let name = String(cString: scheme).lowercased()
        guard name == "http" || name == "https" else {
            return .failure(URLProblem("unsupported scheme '\(escaped(name))': only http and https are supported"))
        }
        var user: UnsafeMutablePointer<CChar>?
        let hasUser = curl_url_get(handle, CURLUPART_USER, &user, 0) == CURLUE_OK && user != nil
        let backslash = hasUser && (Self.hasBackslash(user) || Self.hasBackslash(handle, CURLUPART_PASSWORD))
        curl_free(user)
        // libcurl reads one to three slashes after "http:" as "//", so `http:/a.example\@b/`
        // has an authority the text check above does not see: the parts libcurl read are
        // checked too.
        guard !backslash else { return .failure(URLProblem(backslashProblem(url))) }
        keeps = true
        return .success(ParsedURL(handle: handle, hasUser: hasUser, isHTTPS: name == "https"))
    }

    /// Why `url` cannot be opened, or nil when it can.
    static func urlProblem(_ url: String) -> String? {
        if case .failure(let problem) = parseURL(url) { return problem.message }
        return nil
    }

    struct URLProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
