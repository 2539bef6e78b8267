import CurlXHR
import HTTPTypes
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A client of one HTTP API: a base URL, an API path and default headers, arguments encoded
/// by HTTP-RPC's rules, bodies serialized as JSON, forms or raw bytes, responses decoded by
/// their content type, and middleware around every call. Each call runs one `HttpRequest`
/// (its `async` `HttpRequest.response(timeout:progress:)`), so every switch of `HttpRequest` is
/// available through `configure`.
///
/// ```swift
/// let client = HttpClient(baseURL: "https://api.example.com", apiPath: "v2",
///                         headers: [("Accept", "application/json")]) { request in
///     request.setTimeouts(connect: 5, total: 30)
/// }
/// struct Item: Decodable { var id: Int; var name: String }
/// let items: [Item] = try await client.invoke("GET", path: "items", arguments: [("tag", ["a", "b"])])
/// let made: Item = try await client.invoke("POST", path: "items", body: .json(NewItem(name: "x")))
/// ```
///
/// The three ways to call: `async` (``invoke(_:path:arguments:body:encoding:headerFields:as:progress:)``), with a
/// completion handler on a dispatch queue (``invoke(_:path:arguments:body:encoding:headerFields:as:queue:progress:completion:)``)
/// and blocking, for worker threads (``invokeSync(_:path:arguments:body:encoding:headerFields:as:progress:)``). Each
/// throws (or completes with) an ``HttpClientError``: a status other than 2xx, a failed transfer,
/// a body that could not be decoded.
///
/// `HttpClient` is a value: copies share nothing but the encoder and decoder.
public struct HttpClient: Sendable {
    /// The scheme, host and optional port (and path prefix) every URL starts with, such as
    /// `https://api.example.com`.
    public var baseURL: String { didSet { urlPrefix = Self.prefix(baseURL, apiPath) } }
    /// The path between ``baseURL`` and each call's path, such as `v2` or `/api/v2/`; slashes
    /// at its ends do not matter.
    public var apiPath: String { didSet { urlPrefix = Self.prefix(baseURL, apiPath) } }
    /// ``baseURL`` and ``apiPath`` joined, without a slash at the end: made once, not for
    /// each call.
    private var urlPrefix: String
    /// Header fields sent with every call, before the call's own.
    public var headerFields: HTTPFields {
        get { fieldList.fields }
        set { fieldList.fields = newValue }
    }
    /// ``headerFields``, and the fields given as text that `HTTPFields` cannot hold (every call
    /// fails naming the first).
    var fieldList: HeaderFieldList
    /// The user name given to `HttpRequest.open(_:url:async:user:password:auth:)`.
    public var user: String? {
        get { credentials?.user }
        set { credentials = Credentials(user: newValue, password: password, auth: auth) }
    }
    /// The password given to `HttpRequest.open(_:url:async:user:password:auth:)`.
    public var password: String? {
        get { credentials?.password }
        set { credentials = Credentials(user: user, password: newValue, auth: auth) }
    }
    /// The authentication scheme given to `HttpRequest.open(_:url:async:user:password:auth:)`:
    /// `"BASIC"` (or `nil`), `"DIGEST"`, `"NTLM"` or `"NEGOTIATE"`.
    public var auth: String? {
        get { credentials?.auth }
        set { credentials = Credentials(user: user, password: password, auth: newValue) }
    }
    /// ``user``, ``password`` and ``auth``; `nil` when none is set.
    private(set) var credentials: Credentials?

    /// A user name, password and scheme together: each call takes one reference, not three
    /// strings.
    final class Credentials: Sendable {
        let user: String?
        let password: String?
        let auth: String?

        /// `nil` when all three are.
        init?(user: String?, password: String?, auth: String?) {
            guard user != nil || password != nil || auth != nil else { return nil }
            (self.user, self.password, self.auth) = (user, password, auth)
        }
    }
    /// Encodes ``RequestBody/json(_:)`` bodies.
    public let encoder: JSONEncoder
    /// Decodes JSON responses (`application/json` and `…+json`).
    public let decoder: JSONDecoder
    /// Where completion handlers run unless a call names its own queue.
    public var completionQueue: DispatchQueue
    /// Run around every call, in order: the first is the outermost (it sees the request first
    /// and the response last).
    public var middlewares: [any HttpClientMiddleware] {
        didSet { soleAuthorizer = Self.soleAuthorizer(middlewares) }
    }
    /// The only middleware, when it is an ``OAuth2Authorizer`` (found once, not for each call).
    private var soleAuthorizer: OAuth2Authorizer?
    /// Called with each call's `HttpRequest` once it is opened and has its headers and form,
    /// just before it is sent: set timeouts, a proxy, a CA file, retries, verification
    /// switches, a queue… A client without it opens the requests of its finished calls again
    /// for its next calls (their transfers and buffers kept); with it, each call has a new
    /// `HttpRequest`, since what it sets may outlive `open`.
    public var configure: (@Sendable (HttpRequest) -> Void)?
    /// How calls use the process's HTTP cache (`HttpRequest.setCacheFolder(_:maxBytes:)`):
    /// `.default` stores and reuses what RFC 9111 allows; `[.readForced]` answers only from the
    /// cache (offline: a call with nothing stored fails with ``HttpClientError/transfer(_:)``).
    public var cachePolicy: HttpRequest.CachePolicy = .default
    /// The largest response body a call accepts, in bytes (default 64 MiB); a larger one fails
    /// the call with ``HttpClientError/transfer(_:)`` (code `.tooLarge`; for a call whose
    /// progress is reported, code `.transferFailed` with kind `.response`, see ``onProgress``).
    public var maxResponseSize: Int = 64 << 20
    /// Where the arguments of calls to POST, PUT and PATCH without a `body:` go (HTTP-RPC's
    /// encodings): ``ArgumentEncoding/automatic`` (a urlencoded form, multipart with files) by
    /// default; ``ArgumentEncoding/multipart`` for HTTP-RPC's POST, ``ArgumentEncoding/json``
    /// or ``ArgumentEncoding/query`` for its PUT and PATCH. Other methods put them in the query
    /// string unless a call says otherwise; a call's `encoding:` and a `Content-Type` among its
    /// headers (`multipart/form-data`, urlencoded, JSON) come first.
    public var argumentEncoding: ArgumentEncoding = .automatic
    /// Receives the progress of every call that has no `progress:` of its own (FSNetworking's
    /// progress block): bytes sent and to send, received and to receive. Reports run on the
    /// ``completionQueue`` (a completion-handler call's `queue:`; for `invokeSync` a queue of
    /// the call's own, its thread waiting), one after another, the counts never going down; the
    /// last one, with the totals, has run when the call returns or completes.
    ///
    /// The body sent is counted as libcurl sends it, and whole once the response's head
    /// arrives; a multipart form's size is known once libcurl has sized it (`bytesToSend` -1
    /// before). The body received is counted chunk by chunk, its size from
    /// `Content-Length` unless it comes compressed, and the total once it is complete. A
    /// middleware that sends the call again starts the counts again. With a progress handler
    /// a body beyond ``maxResponseSize`` ends the transfer as `HttpRequest.setMaxResponseSize(_:)`
    /// does (``HttpClientError/transfer(_:)`` with code `transferFailed`, kind `.response`).
    public var onProgress: ProgressHandler?
    /// Sees every call that fails, once, with the error its caller gets (Hermod's
    /// `didReceiveErrorInResponse`): a status other than 2xx, a failed or refused transfer, a
    /// body that does not decode into the type asked for (which no middleware sees, decoding
    /// coming after them), a request that could not be encoded, a middleware's error, a
    /// cancelled call. It runs where the call ends, before the caller gets the error: in the
    /// calling task for `async` calls, on the client's decoding queue before a completion
    /// handler is queued, on the calling thread for `invokeSync`. Keep it short; log, count,
    /// or start a new login.
    public var onFailure: (@Sendable (Failure) -> Void)?
    /// The logger, tracer and metrics of the package traits `Logging`, `Tracing` and `Metrics`
    /// (``logger``, ``tracer``, ``metricsFactory``); empty without them.
    var observability = ClientObservability()
    /// The requests this client's calls finished with, for its next calls.
    let requestPool = RequestPool()
    /// The URLs of the last paths called, for the calls to come.
    let madeURLs = MadeURLs()

    /// A client of the API at `baseURL` + `apiPath`.
    ///
    /// - Parameters:
    ///   - baseURL: an absolute `http` or `https` URL: scheme, host, optional port and path.
    ///   - apiPath: a path added to `baseURL` before each call's path.
    ///   - headerFields: fields sent with every call.
    ///   - user: a user name for server authentication.
    ///   - password: its password.
    ///   - auth: the scheme: `"BASIC"` (or `nil`), `"DIGEST"`, `"NTLM"` or `"NEGOTIATE"`.
    ///   - encoder: encodes JSON request bodies.
    ///   - decoder: decodes JSON responses.
    ///   - completionQueue: where completion handlers run (default: the global queue).
    ///   - middlewares: run around every call, the first outermost.
    ///   - configure: sets up each call's `HttpRequest` just before it is sent.
    public init(baseURL: String, apiPath: String = "", headerFields: HTTPFields = [:],
                user: String? = nil, password: String? = nil, auth: String? = nil,
                encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder(),
                completionQueue: DispatchQueue = .global(), middlewares: [any HttpClientMiddleware] = [],
                configure: (@Sendable (HttpRequest) -> Void)? = nil) {
        self.baseURL = baseURL
        self.apiPath = apiPath
        urlPrefix = Self.prefix(baseURL, apiPath)
        fieldList = HeaderFieldList(headerFields)
        credentials = Credentials(user: user, password: password, auth: auth)
        self.encoder = encoder
        self.decoder = decoder
        self.completionQueue = completionQueue
        self.middlewares = middlewares
        soleAuthorizer = Self.soleAuthorizer(middlewares)
        self.configure = configure
    }

    private static func soleAuthorizer(_ middlewares: [any HttpClientMiddleware]) -> OAuth2Authorizer? {
        middlewares.count == 1 ? middlewares[0] as? OAuth2Authorizer : nil
    }

    /// The URL of `path`: ``baseURL``, ``apiPath`` and `path` joined with one slash between
    /// each (a trailing slash of `path` is kept). A `path` that is an absolute `http` or
    /// `https` URL is used as it is; the client's ``user`` and ``password`` go with it only
    /// when it names the scheme, host and port of ``baseURL``.
    public func url(for path: String) -> String {
        if Self.isAbsolute(path) { return path }
        let prefix = urlPrefix
        return madeURLs.url(prefix: prefix, path: path) {
            let rest = path.utf8.drop { $0 == UInt8(ascii: "/") }
            guard !rest.isEmpty else { return prefix }
            var url = prefix
            url.reserveCapacity(url.utf8.count + 1 + rest.count)
            url += "/"
            url += Substring(rest)
            return url
        }
    }

    /// `baseURL` and `apiPath` joined with one slash, without a slash at the end.
    private static func prefix(_ baseURL: String, _ apiPath: String) -> String {
        var url = String(withoutTrailingSlashes(baseURL[...]))
        let api = withoutTrailingSlashes(apiPath.drop { $0 == "/" })
        if !api.isEmpty { url += "/" + api }
        return url
    }

    static func withoutTrailingSlashes(_ text: Substring) -> Substring {
        var end = text.endIndex
        while end > text.startIndex, text[text.index(before: end)] == "/" { end = text.index(before: end) }
        return text[..<end]
    }

    static func isAbsolute(_ path: String) -> Bool {
        // A path's first byte answers for most calls.
        guard let first = path.utf8.first, first | 0x20 == UInt8(ascii: "h") else { return false }
        // Compared byte by byte, case aside: no lowercased copy for each call.
        func starts(with scheme: String) -> Bool {
            var bytes = path.utf8.makeIterator()
            for expected in scheme.utf8 {
                guard let byte = bytes.next() else { return false }
                if (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) != expected { return false }
            }
            return true
        }
        return starts(with: "http://") || starts(with: "https://")
    }

    // MARK: async/await

    /// Calls the API and decodes the response into `Result`.
    ///
    /// The arguments go as HTTP-RPC's `WebServiceProxy` sends them (``ArgumentEncoding/automatic``):
    /// for GET, DELETE, HEAD (and any method but POST, PUT and PATCH) in the query string; for
    /// POST, PUT and PATCH as an `application/x-www-form-urlencoded` body, or
    /// `multipart/form-data` when one is a ``Argument/file(path:fileName:contentType:)`` (the
    /// file streamed from disk). `encoding` (else a `Content-Type` among the headers, for POST,
    /// PUT and PATCH, else the client's ``argumentEncoding``) chooses another place. When a
    /// `body` is given, the arguments go in the query string and the body as it says. Values
    /// are percent-encoded as UTF-8 (a space as `+`); an ``Argument/array(_:)`` repeats its key.
    ///
    /// A 2xx response is decoded by its `Content-Type`: JSON (`application/json`, `…+json`, or
    /// no type at all) with ``decoder``; `String` from `text/*` (or any body) in its charset,
    /// UTF-8 by default; `Data` as it came; any other type is a decoding error. An empty body
    /// (204, HEAD) gives `nil` for an `Optional`, `""` for `String`, empty `Data`, and
    /// ``Empty`` (which ignores any body); `String?` and `Data?` take any other body as `String`
    /// and `Data` do.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, upper-cased.
    ///   - path: added to ``baseURL`` and ``apiPath`` (see ``url(for:)``); it may carry a query.
    ///     It is sent as given (bytes outside ASCII percent-encoded): percent-encode reserved
    ///     characters of a segment, such as `/`, `?`, `#` and spaces, yourself.
    ///   - arguments: the call's arguments, in order; keys may repeat.
    ///   - body: a JSON or raw body; the arguments then go in the query string.
    ///   - encoding: where the arguments go, for this call whatever its method; `nil`: the
    ///     client's rule (``argumentEncoding``).
    ///   - headerFields: fields for this call, after the client's ``headerFields``.
    ///   - type: the type to decode the response into.
    ///   - progress: receives the call's progress (bytes sent and received, with their totals)
    ///     on the ``completionQueue``, instead of the client's ``onProgress``; the last report
    ///     has run when the call returns.
    /// - Throws: ``HttpClientError``: ``HttpClientError/status(code:body:)`` for a status other
    ///   than 2xx (after redirects, which are followed), ``HttpClientError/transfer(_:)`` when
    ///   `HttpRequest` refused the request or the transfer failed,
    ///   ``HttpClientError/decoding(_:body:)`` for a body that does not decode.
    public func invoke<Result: Decodable>(_ method: String, path: String, arguments: [(String, Argument)] = [],
                                          body: RequestBody? = nil, encoding: ArgumentEncoding? = nil,
                                          headerFields: HTTPFields = [:],
                                          as type: Result.Type = Result.self,
                                          progress: ProgressHandler? = nil) async throws(HttpClientError) -> Result {
        let call = Call(method, path, arguments, body, encoding, HeaderFieldList(headerFields), progress)
        let decoder = decoder
        return try await perform(call) { response throws(HttpClientError) in
            try ResponseDecoding.result(Result.self, from: response, decoder: decoder)
        }
    }

    /// Calls the API and returns the response's body as its `Content-Type` says: JSON as
    /// ``ResponseContent/json(_:)``, `text/*` as ``ResponseContent/text(_:)``, anything else
    /// as ``ResponseContent/data(_:)``, no body as ``ResponseContent/empty``. Arguments and
    /// body as in ``invoke(_:path:arguments:body:encoding:headerFields:as:progress:)``.
    /// - Throws: ``HttpClientError``.
    @discardableResult
    public func invoke(_ method: String, path: String, arguments: [(String, Argument)] = [],
                       body: RequestBody? = nil, encoding: ArgumentEncoding? = nil,
                       headerFields: HTTPFields = [:],
                       progress: ProgressHandler? = nil) async throws(HttpClientError) -> ResponseContent {
        let call = Call(method, path, arguments, body, encoding, HeaderFieldList(headerFields), progress)
        let decoder = decoder
        return try await perform(call) { response throws(HttpClientError) in
            try ResponseDecoding.content(from: response, decoder: decoder)
        }
    }
}

extension HttpClient {
    // MARK: The pipeline

    /// Runs `request` through the middlewares, outermost first, to the transfer; an
    /// `OAuth2Authorizer` that is the only middleware and has its token at hand is not called
    /// through `intercept` (it does the same without the frames). `progress` reports each
    /// transfer's counts. `observation` sees each send.
    @inline(__always)
    func send(_ request: HttpClientRequest, progress: ProgressReporter? = nil,
              observation: CallObservation? = nil) async throws(HttpClientError) -> HttpClientResponse {
        let settings = Transport.Settings(self)
        // Without middlewares, straight to the transfer (no closure chain to call through); so
        // too with an OAuth2Authorizer alone that has a token at hand: what its intercept does,
        // without its frames and a closure for each call (a 401 goes on as there), the token's
        // field sent beside the request (no copy of it). One call of the transfer here, so
        // that it stays inlined.
        var added: HeaderFieldList.Entry?
        var generation = 0
        if !middlewares.isEmpty {
            guard let ready = soleAuthorizer?.readyField(for: request), request.fieldList.refused.isEmpty else {
                return try await intercepted(request, next: Transport.link(settings, progress, observation))
            }
            (added, generation) = (ready.entry, ready.generation)
        }
        let response = try await Transport.send(request, adding: added, with: settings, progress: progress, observation: observation)
        guard added != nil, response.status == 401, let authorizer = soleAuthorizer else { return response }
        do {
            return try await authorizer.answer(response, to: request, sentWith: generation,
                                               next: Transport.link(settings, progress, observation))
        } catch {
            throw HttpClientError(wrapping: error)
        }
    }

    /// `request` through every middleware, the outermost first, and `next` last.
    @inline(__always)
    private func intercepted(_ request: HttpClientRequest,
                             next: @escaping @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws(HttpClientError) -> HttpClientResponse {
        var next = next
        // The outermost middleware is called here, not through a closure of its own.
        for middleware in middlewares.dropFirst().reversed() {
            let inner = next
            next = { request in try await middleware.intercept(request, next: inner) }
        }
        do {
            return try await middlewares[0].intercept(request, next: next)
        } catch {
            throw HttpClientError(wrapping: error)
        }
    }
}
