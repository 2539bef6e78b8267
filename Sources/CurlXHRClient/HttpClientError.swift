import CurlXHR
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a call of an ``HttpClient`` failed.
///
/// ```swift
/// do {
///     let item: Item = try await client.invoke("GET", path: "items/7")
/// } catch .status(404, _) {
///     // no such item
/// } catch .status(let code, let body) {
///     print(code, body)                       // the error body, decoded by its own type
/// } catch .transfer(let error) where error.failureKind == .timeout {
///     // try again later
/// } catch {
///     print(error)                            // "HTTP status 503: the server's text"
/// }
/// ```
///
/// `"\(error)"`, `String(describing:)`, ``description`` and `localizedDescription` (through
/// `LocalizedError`, on Linux too) all give the same sentence: for a status, the code and the
/// server's text (a `text/*` body, or the JSON), made safe to print — control characters
/// escaped (`\n`, `\u{1B}`), invalid UTF-8 replaced with U+FFFD, and cut after
/// ``HttpClientError/descriptionLimit`` characters, saying how many bytes were left out.
public enum HttpClientError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The server answered with a status other than 2xx; `body` is the answer's body decoded
    /// by its own `Content-Type` (raw ``ResponseContent/data(_:)`` when it does not decode; a
    /// `text/*` body not valid in its charset is ``ResponseContent/text(_:)`` read as UTF-8,
    /// U+FFFD for the bad bytes).
    case status(code: Int, body: ResponseContent)
    /// `HttpRequest` refused the request (a malformed URL or header, an unreadable file: the
    /// error's `code` says) or the transfer failed (code `transferFailed`, with its
    /// `failureKind`: `.connection`, `.dns`, `.tls`, `.timeout`…), or the body was larger than
    /// ``HttpClient/maxResponseSize`` (code `tooLarge`).
    case transfer(HttpRequestError)
    /// A 2xx response's body could not be decoded into the type asked for: the decoder's (or
    /// the charset's) error, and the body as it came.
    case decoding(any Error, body: Data)
    /// The request could not be made: a JSON body the encoder refused, a file argument where
    /// the arguments go in the query string, a form with a repeated value name in
    /// `multipart/form-data`.
    case encoding(any Error)
    /// The task running the call was cancelled; the transfer was stopped.
    case cancelled
    /// An ``OAuth2Authorizer`` had no token for the call: the token endpoint refused the grant
    /// or the refresh (``OAuth2Error/rejected(status:error:description:)``), could not be
    /// reached, or the session was logged out.
    case authorization(OAuth2Error)
    /// A middleware threw this error (of another type than `HttpClientError`).
    case middleware(any Error)

    /// How many characters of the server's text a description shows at most.
    public static let descriptionLimit = 1000

    /// A sentence for people, safe to print on a terminal or write to a log: for a status, the
    /// code and the server's text, control characters escaped, cut after ``descriptionLimit``
    /// characters.
    public var description: String {
        DisplayText.escaped(sentence)
    }

    /// ``description``, for `localizedDescription` (Foundation's `LocalizedError`).
    public var errorDescription: String? { description }

    /// The sentence before control characters are escaped.
    private var sentence: String {
        switch self {
        case .status(let code, let body):
            let text = DisplayText.truncated(body.description, limit: Self.descriptionLimit)
            return "HTTP status \(code)" + (text.isEmpty ? "" : ": " + text)
        case .transfer(let error):
            if error.code == .transferFailed {
                return "the transfer failed (\(error.failureKind?.rawValue ?? "other")): \(error.message)"
            }
            return "the request was refused (\(error.code)): \(error.message)"
        case .decoding(let error, let body):
            return "the response body (\(body.count) bytes) could not be decoded: \(error)"
        case .encoding(let error):
            return "the request could not be encoded: \(error)"
        case .cancelled:
            return "the call was cancelled"
        case .authorization(let error):
            return "no authorization: \(error)"
        case .middleware(let error):
            return "a middleware failed: \(error)"
        }
    }

    /// What a middleware chain threw, as an `HttpClientError`.
    init(wrapping error: any Error) {
        switch error {
        case let error as HttpClientError: self = error
        case let error as HttpRequestError: self = .transfer(error)
        case is CancellationError, OAuth2Error.cancelled: self = .cancelled
        case let error as OAuth2Error: self = .authorization(error)
        default: self = .middleware(error)
        }
    }
}

/// Text from elsewhere (a server, a decoder) made safe to show: on one line, no control
/// character a terminal would act on, and of a sane length.
enum DisplayText {
    /// `text` with C0 and C1 control characters, DEL, the line and paragraph separators and the
    /// bidirectional controls escaped (`\n`, `\r`, `\t`, else `\u{XX}`), so that no escape
    /// sequence reaches a terminal and no line of a log is forged.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The first `limit` characters of `text`, and how many bytes more there were.
    static func truncated(_ text: String, limit: Int) -> String {
        guard let end = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex), end < text.endIndex else {
            return text
        }
        return text[..<end] + "… (cut: \(text[end...].utf8.count) more bytes)"
    }
}

/// A problem the client itself found, carried by ``HttpClientError/encoding(_:)`` and
/// ``HttpClientError/decoding(_:body:)``.
struct ClientProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
