import HTTPTypes

/// What the logs and spans of a call may show of a URL, and the secrets they must never show.
enum Redaction {
    /// The query parameters whose values are replaced: OpenTelemetry's list of signatures
    /// (`url.query` conventions) and OAuth2's `access_token` (RFC 6750, section 2.3).
    static let secretQueryKeys: Set<String> = ["access_token", "awsaccesskeyid", "signature", "sig", "x-goog-signature"]

    /// `url` with its user information replaced by `REDACTED:REDACTED` (as OpenTelemetry's
    /// `url.full` asks), the values of ``secretQueryKeys`` by `REDACTED`, and its control
    /// characters (CR, LF, … which `HttpRequest` refuses) percent-encoded, so that a hostile
    /// URL cannot add lines to a log.
    static func url(_ url: String) -> String {
        var text = Substring(withoutControlCharacters(url))
        var result = ""
        if let scheme = text.firstRange(of: "://") {
            result += text[..<scheme.upperBound]
            text = text[scheme.upperBound...]
            let authorityEnd = text.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            if let at = text[..<authorityEnd].lastIndex(of: "@") {
                result += "REDACTED:REDACTED"
                text = text[at...]
            }
        }
        guard let question = text.firstIndex(of: "?") else { return result + text }
        result += text[...question]
        let query = text[text.index(after: question)...]
        let fragment = query.firstIndex(of: "#") ?? query.endIndex
        let pairs = query[..<fragment].split(separator: "&", omittingEmptySubsequences: false).map(redactedPair)
        result += pairs.joined(separator: "&")
        return result + query[fragment...]
    }

    static func withoutControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    /// `name=value`, its value `REDACTED` when `name` is one of ``secretQueryKeys``.
    private static func redactedPair(_ pair: Substring) -> String {
        guard let equals = pair.firstIndex(of: "="), secretQueryKeys.contains(pair[..<equals].lowercased()) else {
            return String(pair)
        }
        return String(pair[...equals]) + "REDACTED"
    }

    /// The password of `url`'s user information, if it has one.
    static func password(in url: String) -> String? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return nil }
        let password = rest[rest.index(after: colon)..<at]
        return password.isEmpty ? nil : String(password)
    }

    /// The fields whose values are secrets: credentials and cookies.
    static let secretFields: [HTTPField.Name] = [.authorization, .proxyAuthorization, .cookie]
}
