// libFuzzer target: URL, method and header validation (MessageValidation), as open(),
// setRequestHeader() and enableHttpProxy() use it.
//
// The input is up to three texts separated by 0xFE bytes (a byte UTF-8 never has; other bytes
// that are not UTF-8 become U+FFFD), plus a proxy port from the last two bytes. Checked:
// - isToken is RFC 9110's token (non-empty, tchar bytes only); isFieldValue accepts exactly
//   the texts without CR, LF and NUL;
// - normalizedMethod refuses exactly the non-tokens, upper-cases the six standard methods
//   (ASCII case-insensitive) and keeps any other token as given;
// - trimmedFieldValue drops exactly the outer spaces and tabs; sameFieldName is ASCII
//   case-insensitive equality;
// - a header setRequestHeader accepts makes a curl line with no CR, LF or NUL whose name is
//   the name given; a repeated name (in any case) joins the values with ", ";
// - percentEncodingNonASCII is the identity on ASCII, keeps the authority as given, leaves no
//   byte above 0x7F after it, and changes nothing but raw bytes into their %XX;
// - a URL parseURL accepts is http or https with a host, has no control character or space
//   (nothing that could split the request line), names a user only with an "@", and still
//   parses once open() percent-encodes it;
// - a proxy ProxySetting.problem accepts has a port from 1 to 65535 and a URL that parses;
// - a URL parseURL accepts has no backslash in its authority; a method methodProblem accepts
//   is not CONNECT, TRACE or TRACK in any case;
// - credentials Credentials.parse accepts hold no CR, LF or NUL, in the user or the password;
// - escaped leaves no control character (C0, DEL, C1, U+2028, U+2029) and changes a text
//   without them not at all.
@testable import CurlXHR

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("property violated: \(message())") }
}

private let tchars = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)

private func asciiLowered<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
    bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
}

private func asciiUppercased(_ text: String) -> String {
    String(decoding: text.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 & ~0x20 : $0 }, as: UTF8.self)
}

private func isOWS(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

/// `%XX` with XX from 80 to FF as that byte; other bytes as they are.
private func decodingHighEscapes(_ bytes: [UInt8]) -> [UInt8] {
    func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
    var decoded: [UInt8] = []
    var index = 0
    while index < bytes.count {
        if bytes[index] == 0x25, index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]),
           high >= 8 {
            decoded.append(high << 4 | low)
            index += 3
        } else {
            decoded.append(bytes[index])
            index += 1
        }
    }
    return decoded
}

/// Where the authority of a URL ends ("scheme://authority"), 0 without one.
private func authorityEnd(_ bytes: [UInt8]) -> Int {
    guard let colon = bytes.firstIndex(of: 0x3A), bytes[(colon + 1)...].starts(with: "//".utf8) else { return 0 }
    var index = colon + 3
    while index < bytes.count, !"/?#".utf8.contains(bytes[index]) { index += 1 }
    return index
}

private func checkURL(_ url: String) {
    let bytes = Array(url.utf8)
    let end = authorityEnd(bytes)
    let encoded = MessageValidation.percentEncodingNonASCII(url)
    let encodedBytes = Array(encoded.utf8)
    if bytes.allSatisfy({ $0 < 0x80 }) { check(encoded == url, "an ASCII URL changed") }
    check(encodedBytes.prefix(end).elementsEqual(bytes.prefix(end)), "the authority changed")
    check(encodedBytes.dropFirst(end).allSatisfy { $0 < 0x80 }, "\(encoded.debugDescription) has raw bytes after its authority")
    check(decodingHighEscapes(encodedBytes) == decodingHighEscapes(bytes), "\(encoded.debugDescription) is not \(url.debugDescription) escaped")

    switch MessageValidation.parseURL(url) {
    case .failure:
        break
    case .success(let parsed):
        let hasUser = parsed.hasUser
        check(!bytes.contains { $0 <= 0x20 || $0 == 0x7F }, "\(url.debugDescription) passes with a control character or space")
        check(!hasUser || bytes.contains(0x40), "\(url.debugDescription) names a user without an @")
        check(!bytes.prefix(end).contains(0x5C), "\(url.debugDescription) passes with a backslash in its authority")
        guard let parts = HTTPURL(url) else { fatalError("property violated: \(url.debugDescription) passes, HTTPURL refuses it") }
        check(parts.scheme == "http" || parts.scheme == "https", "scheme \(parts.scheme)")
        check(!parts.host.isEmpty, "\(url.debugDescription) passes without a host")
        check(parts.hasUser == hasUser, "\(url.debugDescription): HTTPURL and parseURL disagree on the user")
        check(HTTPURL.sameOrigin(url, url), "\(url.debugDescription) is not of its own origin")
        let again = HTTPURL(parts.cacheKey)
        check(again?.cacheKey == parts.cacheKey && again?.origin == parts.origin,
              "\(url.debugDescription): its cache key \(parts.cacheKey.debugDescription) does not name it again")
        if case .failure(let problem) = MessageValidation.parseURL(encoded) {
            fatalError("property violated: \(url.debugDescription) passes, encoded as \(encoded.debugDescription) not: \(problem.message)")
        }
    }
    if encoded != url, case .success = MessageValidation.parseURL(encoded) {
        check(HTTPURL(encoded) != nil, "\(encoded.debugDescription) passes, HTTPURL refuses it")
    }
}

private func checkMethod(_ method: String) {
    let isToken = !method.isEmpty && method.utf8.allSatisfy { tchars.contains($0) }
    check(MessageValidation.isToken(method) == isToken, "isToken(\(method.debugDescription))")
    let normalized = MessageValidation.normalizedMethod(method)
    check((normalized == nil) == !isToken, "normalizedMethod(\(method.debugDescription)) = \(normalized.debugDescription)")
    guard let normalized else { return }
    let upper = asciiUppercased(method)
    check((MessageValidation.methodProblem(normalized) == nil) == !["CONNECT", "TRACE", "TRACK"].contains(upper),
          "methodProblem(\(method.debugDescription))")
    let expected = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"].contains(upper) ? upper : method
    check(normalized == expected, "normalizedMethod(\(method.debugDescription)) = \(normalized.debugDescription)")
}

private func checkHeader(_ name: String, _ value: String, _ other: String) {
    let valueBytes = Array(value.utf8)
    check(MessageValidation.isFieldValue(value) == !valueBytes.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 },
          "isFieldValue(\(value.debugDescription))")
    let trimmed = MessageValidation.trimmedFieldValue(value)
    let start = valueBytes.firstIndex { !isOWS($0) } ?? valueBytes.count
    let end = (valueBytes.lastIndex { !isOWS($0) } ?? -1) + 1
    check(Array(trimmed.utf8) == (start < end ? Array(valueBytes[start..<end]) : []), "trimmedFieldValue(\(value.debugDescription))")
    check(MessageValidation.sameFieldName(name.utf8, value.utf8) == (asciiLowered(name.utf8) == asciiLowered(value.utf8)),
          "sameFieldName")

    // What setRequestHeader lets through.
    guard MessageValidation.isToken(name), MessageValidation.isFieldValue(value),
          !MessageValidation.derivedFieldNames.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) })
    else { return }
    let line = Array(HeaderField(name: name, value: trimmed).curlLine.utf8)
    check(!line.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "the curl line of \(name): \(value.debugDescription) breaks the head")
    let separator = line.firstIndex { $0 == 0x3A || $0 == 0x3B }
    check(separator.map { Array(line[..<$0]) } == Array(name.utf8), "the curl line names another field")
    var message = RequestMessage()
    message.setHeader(name, value: trimmed)
    guard MessageValidation.isFieldValue(other) else { return }
    let otherTrimmed = MessageValidation.trimmedFieldValue(other)
    message.setHeader(String(decoding: asciiLowered(name.utf8), as: UTF8.self), value: otherTrimmed)
    check(message.headers.count == 1 && message.headers[0].value == trimmed + ", " + otherTrimmed && message.hasHeader(asciiUppercased(name)),
          "a repeated header")
}

private func checkCredentials(_ user: String, _ password: String) {
    let splits: (String) -> Bool = { $0.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }
    for auth in ["BASIC", "DIGEST", "NTLM", "NEGOTIATE"] {
        guard case .success((_, let credentials?)) = Credentials.parse(user: user, password: password, auth: auth) else { continue }
        check(!splits(credentials.user) && !splits(credentials.password), "credentials \(user.debugDescription) pass for \(auth)")
    }
}

private func checkEscaped(_ text: String) {
    let escaped = MessageValidation.escaped(text)
    check(!escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 },
          "escaped(\(text.debugDescription)) keeps a control character")
    if !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }) {
        check(escaped == text, "escaped changed \(text.debugDescription)")
    }
}

private func checkProxy(_ host: String, _ port: Int) {
    guard ProxySetting.problem(host: host, port: port) == nil else { return }
    check((1...65535).contains(port), "proxy port \(port) passes")
    let proxy = ProxySetting(host: host, port: port)
    check(MessageValidation.urlProblem(proxy.url + "/") == nil, "the URL of proxy \(host.debugDescription) does not parse")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzValidation(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let parts = bytes.split(separator: 0xFE, maxSplits: 2, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let first = parts[0], second = parts.count > 1 ? parts[1] : "", third = parts.count > 2 ? parts[2] : ""
    let port = size >= 2 ? Int(bytes[size - 2]) << 8 | Int(bytes[size - 1]) : 0

    checkURL(first)
    checkMethod(first)
    checkHeader(first, second, third)
    checkHeader(second, first, third)
    checkProxy(first, port * 2 - 1)
    checkCredentials(first, second)
    checkEscaped(first)
    return 0
}
