import CurlXHR
import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The secrets of one call, which no log line, span attribute or recorded error may hold: the
/// URL's password, the client's, and the values of the request's `Authorization`,
/// `Proxy-Authorization` and `Cookie` fields (and their credentials alone, such as a bearer
/// token), as the client made them and as each send carried them after the middlewares.
final class CallSecrets: Sendable {
    private let secrets = Locked<[String]>([])

    /// Adds the secrets of `request` and of `added`, a field sent with it (and `password`, the
    /// client's when it goes with the request).
    func add(_ request: HttpClientRequest, adding added: HTTPFields = [:], password: String?) {
        var found: [String] = []
        if let password { found.append(password) }
        if let password = Redaction.password(in: request.url) { found.append(password) }
        for name in Redaction.secretFields {
            var values = request.headerFields[values: name]
            values += added[values: name]
            for value in values {
                found.append(value)
                // "Bearer TOKEN", "Basic CREDENTIALS": the credentials alone too.
                if let space = value.firstIndex(of: " ") { found.append(String(value[value.index(after: space)...])) }
            }
        }
        for (name, value) in request.fieldList.refused where Redaction.secretFields.contains(where: { $0.rawName.lowercased() == name.lowercased() }) {
            found.append(value)
        }
        // A secret of a few bytes would blank out ordinary text; none is that short.
        found = found.filter { $0.count >= 4 }
        guard !found.isEmpty else { return }
        secrets.withLock { secrets in
            for secret in found where !secrets.contains(secret) { secrets.append(secret) }
            // Longest first: a token inside a longer field value goes with it.
            secrets.sort { $0.count > $1.count }
        }
    }

    /// `text` with every secret replaced by `[redacted]`.
    func scrub(_ text: String) -> String {
        secrets.withLock { secrets in
            secrets.reduce(text) { text, secret in text.replacing(secret, with: "[redacted]") }
        }
    }
}
