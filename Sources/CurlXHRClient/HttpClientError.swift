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
///     print(error)
/// }
/// ```
public enum HttpClientError: Error, Sendable, CustomStringConvertible {
    /// The server answered with a status other than 2xx; `body` is the answer's body decoded
    /// by its own `Content-Type` (raw ``ResponseContent/data(_:)`` when it does not decode).
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

    /// A sentence for people.
    public var description: String {
        switch self {
        case .status(let code, let body):
            let text = body.description
            return "HTTP status \(code)" + (text.isEmpty ? "" : ": " + (text.count > 300 ? String(text.prefix(300)) + "…" : text))
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

/// A problem the client itself found, carried by ``HttpClientError/encoding(_:)`` and
/// ``HttpClientError/decoding(_:body:)``.
struct ClientProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
