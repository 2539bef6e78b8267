/// What a trace entry (``HttpRequest/TraceEntry``) shows of a secret: `[redacted]` in its
/// place. In header lines sent and received, the values of `Authorization`,
/// `Proxy-Authorization`, `Cookie` and `Set-Cookie`; in libcurl's informational lines, a
/// cookie's value ("Added cookie NAME="VALUE" for domain …"); in both, each of the send's
/// passwords wherever it appears. Body and TLS bytes are left as they are. Pure.
enum TraceRedaction {
    static let mark = Array("[redacted]".utf8)
    private static let secretFields = ["authorization", "proxy-authorization", "cookie", "set-cookie"].map { Array($0.utf8) }

    static func redacted(_ kind: HttpRequest.TraceEntry.Kind, _ bytes: UnsafeRawBufferPointer, secrets: [String]) -> [UInt8] {
        var out: [UInt8]
        switch kind {
        case .headerOut, .headerIn: out = redactingFields(bytes)
        case .info: out = redactingCookieValue(Array(bytes))
        case .dataOut, .dataIn, .tlsIn, .tlsOut: return Array(bytes)
        }
        for secret in secrets { out = replacing(Array(secret.utf8), in: out) }
        return out
    }

    /// Each line whose field name is a secret one keeps its name and loses its value.
    private static func redactingFields(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            let line = bytes[start..<end]
            if let colon = line.firstIndex(of: UInt8(ascii: ":")), isSecretField(bytes[start..<colon]) {
                var valueStart = colon + 1
                while valueStart < end, bytes[valueStart] == UInt8(ascii: " ") || bytes[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
                out.append(contentsOf: bytes[start..<valueStart])
                out.append(contentsOf: mark)
                if end > valueStart, bytes[end - 1] == UInt8(ascii: "\r") { out.append(UInt8(ascii: "\r")) }
            } else {
                out.append(contentsOf: line)
            }
            if end < bytes.count { out.append(UInt8(ascii: "\n")) }
            start = end + 1
        }
        return out
    }

    private static func isSecretField(_ name: Slice<UnsafeRawBufferPointer>) -> Bool {
        secretFields.contains { field in
            field.count == name.count && zip(field, name).allSatisfy { $0 == ($1 | 0x20) }
        }
    }

    /// libcurl's "Added cookie NAME="VALUE" for domain …" and "Replaced cookie …" lines.
    private static func redactingCookieValue(_ line: [UInt8]) -> [UInt8] {
        let added = Array("Added cookie ".utf8), replaced = Array("Replaced cookie ".utf8)
        guard line.starts(with: added) || line.starts(with: replaced),
              let open = firstRange(of: Array("=\"".utf8), in: line),
              let close = lastRange(of: Array("\" for domain ".utf8), in: line), close.lowerBound >= open.upperBound
        else { return line }
        return Array(line[..<open.upperBound]) + mark + Array(line[close.lowerBound...])
    }

    /// `bytes` with every occurrence of `secret` replaced by the mark.
    static func replacing(_ secret: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard !secret.isEmpty, bytes.count >= secret.count, firstRange(of: secret, in: bytes) != nil else { return bytes }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes.count - index >= secret.count, bytes[index..<(index + secret.count)].elementsEqual(secret) {
                out.append(contentsOf: mark)
                index += secret.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    private static func firstRange(of needle: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard bytes.count >= needle.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }

    private static func lastRange(of needle: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard bytes.count >= needle.count else { return nil }
        for start in stride(from: bytes.count - needle.count, through: 0, by: -1)
        where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }

    /// The passwords a send's trace must not show: the request's and the proxy's, and the
    /// URL's as written in it.
    static func secrets(url: String, credentials: HttpRequest.Credentials?, proxyPassword: String?) -> [String] {
        var secrets = [credentials?.password, proxyPassword].compactMap { $0 }
        if let password = urlPassword(url) { secrets.append(password) }
        return secrets.filter { !$0.isEmpty }
    }

    /// The password of `scheme://user:password@host/…`, as written.
    static func urlPassword(_ url: String) -> String? {
        let bytes = Array(url.utf8)
        guard let schemeEnd = firstRange(of: Array("://".utf8), in: bytes) else { return nil }
        let rest = bytes[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        guard let at = bytes[schemeEnd.upperBound..<authorityEnd].lastIndex(of: UInt8(ascii: "@")),
              let colon = bytes[schemeEnd.upperBound..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
        else { return nil }
        return String(decoding: bytes[(colon + 1)..<at], as: UTF8.self)
    }
}
