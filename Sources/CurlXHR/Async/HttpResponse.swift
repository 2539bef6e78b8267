import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response as ``HttpRequest/response(timeout:progress:)`` returns it: at its head, with the body
/// still to come as an `AsyncSequence` of byte chunks.
///
/// ```swift
/// let request = HttpRequest()
/// request.open("GET", url: "https://intranet.example/api/report", auth: "ntlm",
///              user: "EXAMPLE\\alice", password: secret)
/// let response = try await request.response()
/// guard response.status == 200 else { ... }
/// for try await chunk in response.body { try file.write(contentsOf: chunk) }
/// // or: let data = try await response.body.collect(upTo: 1 << 20)
/// ```
///
/// The body is read once. A consumer that falls behind pauses the transfer: no more than about
/// 1 MiB waits in memory, however large the body. Letting go of the response (and of its body)
/// before the end, or cancelling the task that reads it, stops the transfer at once.
public struct HttpResponse: Sendable {
    let head: ResponseHead

    /// The HTTP status of the final response (after redirects and authentication rounds).
    public var status: Int { head.status }
    /// The reason phrase (the standard one when the server sent none, as over HTTP/2).
    public var statusText: String { head.reason }
    /// The protocol of the response: `"HTTP/1.1"`, `"HTTP/2"`, as ``HttpRequest/Metrics/httpVersion``.
    public var httpVersion: String? { head.httpVersion }
    /// The header fields in arrival order, values trimmed, repeated fields kept apart. A field
    /// whose name is no valid token (which a hostile server may send) is left out.
    public var headerFields: HTTPFields { head.headerFields }
    /// The header fields in arrival order, values trimmed.
    @available(*, deprecated, renamed: "headerFields")
    public var headers: [(name: String, value: String)] { head.fields }
    /// The body, as it arrives.
    public let body: Body
    /// The response came from the process's cache (``HttpRequest/setCacheFolder(_:maxBytes:)``),
    /// also when the server confirmed it with a 304 to the cache's validation.
    public let isFromCache: Bool

    /// The value of a header field, matched case-insensitively; repeated fields are joined
    /// with ", " (as ``HttpRequest/getResponseHeader(_:)``).
    public func header(_ name: String) -> String? { head.value(of: name) }

    /// The body length the head announces (`Content-Length`), nil when it announces none.
    public var expectedContentLength: Int? { head.announcedLength }

    /// The header fields, made into `HTTPFields` only when first asked for (the client layer's
    /// responses, most of which are read for their status and body alone).
    package var lazyHeaderFields: LazyHeaderFields { LazyHeaderFields(head) }

    init(head: ResponseHead, fromCache: Bool, stream: ResponseStream) {
        self.head = head
        isFromCache = fromCache
        body = Body(BodyReader(stream))
    }
}

extension HttpResponse {
    /// The body of a response: chunks of bytes in order, as they arrive (decoded, when the
    /// server compressed them and content decoding is on). Ends when the body is complete;
    /// throws ``HttpRequestError`` (code ``HttpRequestError/Code/transferFailed``) when the
    /// transfer fails, `CancellationError` when the task reading it is cancelled.
    ///
    /// With a response file (``HttpRequest/setResponseFile(_:resume:)``) the bytes go to the
    /// file: the body yields none, and ends when the file is complete.
    public struct Body: AsyncSequence, Sendable {
        public typealias Element = Data
        let reader: BodyReader

        init(_ reader: BodyReader) { self.reader = reader }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: reader) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            let reader: BodyReader

            public mutating func next() async throws -> Data? {
                if let ready = try reader.stream.readyChunk() { return ready }
                return try await reader.stream.waitForChunk()
            }

            /// The next chunk, on the caller's actor: a chunk that is there already is taken
            /// without leaving it.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Data? {
                if let ready = try reader.stream.readyChunk() { return ready }
                return try await reader.stream.waitForChunk()
            }
        }

        /// The whole body in one `Data`, at most `maxBytes` of it.
        /// - Throws: ``HttpRequestError`` with the code ``HttpRequestError/Code/tooLarge``
        ///   (the transfer is stopped) when the body is larger, and what reading it throws.
        public func collect(upTo maxBytes: Int) async throws -> Data {
            var chunks = makeAsyncIterator()
            guard let first = try await chunks.next() else { return Data() }
            guard first.count <= maxBytes else { throw tooLarge(maxBytes) }
            // A body that came in one chunk (most small ones) is that chunk: no copy.
            guard let second = try await chunks.next() else { return first }
            var data = Data()
            if let announced = reader.stream.announcedLength, announced <= maxBytes { data.reserveCapacity(announced) }
            data.append(first)
            var next: Data? = second
            while let chunk = next {
                guard chunk.count <= maxBytes - data.count else { throw tooLarge(maxBytes) }
                data.append(chunk)
                next = try await chunks.next()
            }
            return data
        }

        /// Stops the transfer of a body beyond `maxBytes`: the error ``collect(upTo:)`` throws.
        private func tooLarge(_ maxBytes: Int) -> HttpRequestError {
            reader.stream.cancel()
            return HttpRequestError(.tooLarge, "the body is larger than \(maxBytes) bytes")
        }
    }

    /// Whoever reads a body keeps its stream; the last to let go of it stops a transfer that
    /// has not ended.
    final class BodyReader: Sendable {
        let stream: ResponseStream
        init(_ stream: ResponseStream) { self.stream = stream }
        deinit { stream.cancel() }
    }
}

/// A response head's fields, made into `HTTPFields` each time they are asked for (a value,
/// with nothing to allocate for a response whose fields no one asks for); a field's value is
/// read from the head without them.
package struct LazyHeaderFields: Sendable {
    private let head: ResponseHead

    init(_ head: ResponseHead) {
        self.head = head
    }

    /// The fields, as ``HttpResponse/headerFields`` gives them.
    package var fields: HTTPFields { head.headerFields }

    /// The value of the fields named `name` (case aside) joined with ", ", as
    /// ``HttpResponse/header(_:)`` gives it; nil for a name that is no token, which
    /// ``fields`` never holds.
    package func value(of name: String) -> String? {
        HTTPField.Name(name) == nil ? nil : head.value(of: name)
    }
}
