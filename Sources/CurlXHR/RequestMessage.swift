import CCurlShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An authentication scheme that `open` and the proxy switches accept.
enum AuthScheme: String, Sendable, CaseIterable {
    case basic = "BASIC"
    case digest = "DIGEST"
    case ntlm = "NTLM"
    case negotiate = "NEGOTIATE"

    /// `nil` means Basic; names are case-insensitive.
    init?(name: String?) {
        guard let name else { self = .basic; return }
        guard let scheme = AuthScheme(rawValue: name.uppercased()) else { return nil }
        self = scheme
    }

    /// The `CURLOPT_HTTPAUTH`/`CURLOPT_PROXYAUTH` value. Negotiate waits for the challenge
    /// (`CURLAUTH_ONLY`): sent first, libcurl would run GSS-API, and ask the KDC for a ticket,
    /// for every request to every server.
    var curlMask: UInt {
        switch self {
        case .basic: cxhr_auth_basic
        case .digest: cxhr_auth_digest
        case .ntlm: cxhr_auth_ntlm
        case .negotiate: cxhr_auth_negotiate | cxhr_auth_only
        }
    }
}

/// User name and password for a server or a proxy.
struct Credentials: Sendable, Equatable {
    var user: String
    var password: String
    var scheme: AuthScheme

    /// Why `user` and `password` cannot be used with `scheme`, or nil when they can.
    static func problem(user: String, password: String?, scheme: AuthScheme) -> String? {
        if user.utf8.contains(0) || (password ?? "").utf8.contains(0) {
            return "the user name or password contains a NUL byte"
        }
        if scheme == .negotiate, !user.isEmpty, user.contains("\\") || !user.contains("@") {
            return "Kerberos needs a user@REALM name, not '\(user)'"
        }
        return nil
    }
}

/// An HTTP proxy set by `enableHttpProxy`.
///
/// A class, so that the switches holding one copy, compare and test it for nil as one
/// reference (every transfer does, when the engine matches its options to a handle's).
final class ProxySetting: Sendable, Equatable {
    let host: String
    let port: Int
    let credentials: Credentials?

    init(host: String, port: Int, credentials: Credentials? = nil) {
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    static func == (lhs: ProxySetting, rhs: ProxySetting) -> Bool {
        lhs === rhs || (lhs.port == rhs.port && lhs.host == rhs.host && lhs.credentials == rhs.credentials)
    }

    /// The proxy's URL for `CURLOPT_PROXY`, with an IPv6 address in brackets.
    var url: String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(bracketed):\(port)"
    }

    /// `host:port` as a user wrote it, for texts.
    var name: String { url.dropFirst("http://".count).description }

    /// The Negotiate user and password whose tickets must come from the KDC before sending.
    var ticketCredentials: Credentials? {
        credentials.flatMap { $0.scheme == .negotiate && !$0.user.isEmpty ? $0 : nil }
    }

    /// Why `host` and `port` do not name a proxy, or nil when they do.
    static func problem(host: String, port: Int) -> String? {
        guard (1...65535).contains(port) else { return "proxy port \(port) is not between 1 and 65535" }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && !"/?#@".utf8.contains($0) }) else {
            return "'\(host)' is not a proxy host name or address"
        }
        let candidate = ProxySetting(host: host, port: port)
        return MessageValidation.urlProblem(candidate.url + "/").map { _ in "'\(host)' is not a proxy host name or address" }
    }
}

/// A request header field as set by `setRequestHeader`.
struct HeaderField: Sendable, Equatable {
    var name: String
    var value: String

    /// The line libcurl sends: `Name: value`, or `Name;` for an empty value (libcurl drops a
    /// `Name:` line, which would remove a header of its own).
    var curlLine: String { value.isEmpty ? "\(name);" : "\(name): \(value)" }
}

/// What `open` set and the calls between `open` and `send` added: one request message.
struct RequestMessage: Sendable {
    /// Whether libcurl may answer a Negotiate challenge: with the credentials given for it,
    /// or, when none were given, with tickets already in a credential cache.
    var usesNegotiate: Bool {
        credentials.map { $0.scheme == .negotiate } ?? !urlHasUser
    }

    /// The Negotiate user and password whose tickets must come from the KDC before sending.
    var ticketCredentials: Credentials? {
        credentials.flatMap { $0.scheme == .negotiate && !$0.user.isEmpty ? $0 : nil }
    }

    var method = "GET"
    var url = ""
    var isAsync = false
    var credentials: Credentials?
    /// The URL carries its own user name (`http://user:password@host/`).
    var urlHasUser = false
    /// Header fields in the order they were set; a repeated name is joined with ", ".
    var headers: [HeaderField] = []
    /// Form values in the order they were set.
    var formValues: [(key: String, value: String)] = []

    func hasHeader(_ name: String) -> Bool {
        headers.contains { MessageValidation.sameFieldName($0.name.utf8, name.utf8) }
    }

    mutating func setHeader(_ name: String, value: String) {
        if let index = headers.firstIndex(where: { MessageValidation.sameFieldName($0.name.utf8, name.utf8) }) {
            headers[index].value += ", " + value
        } else {
            headers.append(HeaderField(name: name, value: value))
        }
    }

    /// Replaces the value of the key with the same bytes: String's == also equates spellings
    /// of a text that differ on the wire ("é" and "e" with a combining accent).
    mutating func setFormValue(_ value: String, forKey key: String) {
        if let index = formValues.firstIndex(where: { $0.key.utf8.elementsEqual(key.utf8) }) {
            formValues[index].value = value
        } else {
            formValues.append((key, value))
        }
    }

    /// The `application/x-www-form-urlencoded` body built from the form values.
    var formBody: [UInt8] {
        var body: [UInt8] = []
        for (index, pair) in formValues.enumerated() {
            if index > 0 { body.append(UInt8(ascii: "&")) }
            FormEncoding.append(pair.key, to: &body)
            body.append(UInt8(ascii: "="))
            FormEncoding.append(pair.value, to: &body)
        }
        return body
    }
}

/// The body given to `send`.
enum RequestBody: Sendable {
    case none
    /// The caller's bytes, kept (not copied) until libcurl has sent them.
    case bytes(Data, contentType: String?)
    case file(path: String)
}

/// WHATWG `application/x-www-form-urlencoded` serialisation of UTF-8 text.
enum FormEncoding {
    static func append(_ text: String, to body: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                body.append(byte)
            case UInt8(ascii: " "):
                body.append(UInt8(ascii: "+"))
            default:
                body.append(UInt8(ascii: "%"))
                body.append(hex[Int(byte >> 4)])
                body.append(hex[Int(byte & 0x0F)])
            }
        }
    }

    static func encode(_ text: String) -> String {
        var bytes: [UInt8] = []
        append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Checks of user input that would otherwise break the request on the wire.
enum MessageValidation {
    /// Whether two field names are equal ignoring ASCII case (names are tokens), compared
    /// byte by byte: no lower-cased copies.
    static func sameFieldName<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        a.count == b.count && a.elementsEqual(b) { lowered($0) == lowered($1) }
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
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
        let trimmed = withoutOptionalWhiteSpace(value.utf8)
        if trimmed.startIndex == value.utf8.startIndex && trimmed.endIndex == value.utf8.endIndex { return value }
        return String(Substring(trimmed))
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

    /// Header values may not contain CR, LF or NUL.
    static func isFieldValue(_ text: String) -> Bool {
        allBytes(of: text) { $0 != 0x0D && $0 != 0x0A && $0 != 0x00 }
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
        // vectorises (a generic allSatisfy cost about 800 instructions a URL).
        let isASCII = url.utf8.withContiguousStorageIfAvailable { bytes in
            var seen: UInt8 = 0
            for byte in bytes { seen |= byte }
            return seen < 0x80
        } ?? url.utf8.allSatisfy { $0 < 0x80 }
        guard !isASCII else { return url }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(url.utf8.count * 3)
        let bytes = Array(url.utf8)
        // The authority runs from "//" to the first '/', '?' or '#' after it.
        var index = 0
        if let scheme = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[(scheme + 1)...].starts(with: "//".utf8) {
            index = scheme + 3
            while index < bytes.count, !"/?#".utf8.contains(bytes[index]) { index += 1 }
        }
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
    /// host pass. Succeeds with whether the URL carries a user name.
    static func parseURL(_ url: String) -> Result<Bool, URLProblem> {
        guard !url.utf8.contains(0) else { return .failure(URLProblem("the URL contains a NUL byte")) }
        guard let handle = curl_url() else { return .failure(URLProblem("out of memory parsing the URL")) }
        defer { curl_url_cleanup(handle) }
        let code = curl_url_set(handle, CURLUPART_URL, url, 0)
        guard code == CURLUE_OK else {
            return .failure(URLProblem("malformed URL '\(url)': \(String(cString: curl_url_strerror(code)))"))
        }
        var scheme: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK, let scheme else {
            return .failure(URLProblem("the URL '\(url)' has no scheme"))
        }
        defer { curl_free(scheme) }
        let name = String(cString: scheme).lowercased()
        guard name == "http" || name == "https" else {
            return .failure(URLProblem("unsupported scheme '\(name)': only http and https are supported"))
        }
        var user: UnsafeMutablePointer<CChar>?
        let hasUser = curl_url_get(handle, CURLUPART_USER, &user, 0) == CURLUE_OK && user != nil
        curl_free(user)
        return .success(hasUser)
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
