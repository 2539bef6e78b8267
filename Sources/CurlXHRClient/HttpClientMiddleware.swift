import CurlXHR
import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Code that runs around every call of an ``HttpClient``: it may change the request, call
/// `next` (once, several times, or not at all) and change or replace the response — add an
/// `Authorization` header, refresh a token and retry after a 401, log, measure.
///
/// ```swift
/// struct BearerToken: HttpClientMiddleware {
///     let tokens: TokenStore
///     func intercept(_ request: HttpClientRequest,
///                    next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
///         var request = request
///         request.setHeader("Authorization", value: "Bearer \(await tokens.current)")
///         let response = try await next(request)
///         guard response.status == 401 else { return response }
///         request.setHeader("Authorization", value: "Bearer \(try await tokens.refresh())")
///         return try await next(request)
///     }
/// }
/// ```
///
/// Middlewares run in the order of ``HttpClient/middlewares``, the first outermost. The
/// response a middleware gets from `next` is the server's, whatever its status: a status other
/// than 2xx becomes ``HttpClientError/status(code:body:)`` only after the outermost middleware
/// returned. `next` throws ``HttpClientError`` (``HttpClientError/transfer(_:)``,
/// ``HttpClientError/cancelled``, ``HttpClientError/encoding(_:)``); an error a middleware
/// throws reaches the caller as it is if it is an ``HttpClientError``, else as
/// ``HttpClientError/middleware(_:)``.
public protocol HttpClientMiddleware: Sendable {
    /// Handles `request`, usually by passing it (changed or not) to `next`, which runs the
    /// middlewares after this one and then the transfer.
    func intercept(_ request: HttpClientRequest,
                   next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse
}

/// A call's request as the middlewares see it, before it becomes an `HttpRequest`.
public struct HttpClientRequest: Sendable {
    /// The method, such as `GET` or `POST`.
    public var method: String
    /// The absolute URL, query included.
    public var url: String { didSet { urlIsOnClientOrigin = false } }
    /// ``url`` was made by the client from a path (``HttpClient/url(for:)``) and not changed
    /// since: it is on the client's origin without comparing the two.
    var urlIsOnClientOrigin = false
    /// The header fields in order: the client's, the call's, then the body's `Content-Type`.
    /// A repeated name is sent as one field with the values joined by ", ".
    public var headerFields: HTTPFields {
        get { fieldList.fields }
        set { fieldList.fields = newValue }
    }
    /// ``headerFields``, and the fields set as text that `HTTPFields` cannot hold (refused when
    /// the request is sent).
    var fieldList: HeaderFieldList
    /// The body.
    public var body: Body
    /// The ``HttpClient/baseURL`` of the client making the call: the client's credentials (and
    /// an ``OAuth2Authorizer``'s token) go only to its scheme, host and port. `nil` for a
    /// request made elsewhere.
    public var clientBaseURL: String? { didSet { urlIsOnClientOrigin = false } }

    /// Whether ``url`` has the scheme, host and port of ``clientBaseURL``.
    public var isToClientOrigin: Bool {
        if urlIsOnClientOrigin { return true }
        return clientBaseURL.map { HTTPURL.sameOrigin(url, $0) } ?? false
    }

    /// A request body.
    public enum Body: Sendable, Equatable {
        /// No body.
        case none
        /// Bytes sent as they are (their `Content-Type` is one of ``HttpClientRequest/headerFields``).
        case data(Data)
        /// A `multipart/form-data` form: the values first, then the files in order, each file
        /// streamed from disk; libcurl makes the `Content-Type` with its boundary (a
        /// `Content-Type` among the headers is not sent). Value names must be distinct (files
        /// may share a name).
        case multipart([FormPart])
    }

    /// A part of a `multipart/form-data` form.
    public enum FormPart: Sendable, Equatable {
        /// A text value.
        case value(name: String, value: String)
        /// A file read from disk as it is sent; `fileName` `nil`: the path's last component;
        /// `contentType` `nil`: guessed from the name's extension.
        case file(name: String, path: String, fileName: String?, contentType: String?)
    }

    /// A request of the client's, with its fields as the client keeps them.
    init(method: String, url: String, fieldList: HeaderFieldList, body: Body, clientBaseURL: String?, urlIsOnClientOrigin: Bool) {
        self.method = method
        self.url = url
        self.fieldList = fieldList
        self.body = body
        self.clientBaseURL = clientBaseURL
        self.urlIsOnClientOrigin = urlIsOnClientOrigin
    }

    /// A request of `method` to `url`, made by the client at `clientBaseURL`.
    public init(method: String, url: String, headerFields: HTTPFields = [:], body: Body = .none,
                clientBaseURL: String? = nil) {
        self.method = method
        self.url = url
        fieldList = HeaderFieldList(headerFields)
        self.body = body
        self.clientBaseURL = clientBaseURL
    }

    /// A request of `method` to `url` with fields as name and value pairs.
    @available(*, deprecated, renamed: "init(method:url:headerFields:body:clientBaseURL:)")
    public init(method: String, url: String, headers: [(name: String, value: String)], body: Body = .none,
                clientBaseURL: String? = nil) {
        self.init(method: method, url: url, body: body, clientBaseURL: clientBaseURL)
        fieldList = HeaderFieldList(headers)
    }

    /// The header fields as name and value pairs.
    @available(*, deprecated, renamed: "headerFields")
    public var headers: [(name: String, value: String)] {
        get { fieldList.pairs }
        set { fieldList = HeaderFieldList(newValue) }
    }

    /// The value of the header `name` (matched case-insensitively), repeated fields joined
    /// with ", "; `nil` when there is none.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headerFields[$0] }
    }

    /// Replaces every field named `name` (matched case-insensitively) with one of `value`, or
    /// removes them for `nil`. A name that is no token, or a value with CR, LF or NUL, fails
    /// the call when it is sent (as `HttpRequest.setRequestHeader(_:value:)` refuses it).
    public mutating func setHeader(_ name: String, value: String?) {
        fieldList.set(name, value: value)
    }

    /// ``setHeader(_:value:)`` for a field checked already.
    mutating func setField(_ entry: HeaderFieldList.Entry) {
        fieldList.set(entry)
    }
}

/// A response as the middlewares see it: the status, headers and whole body.
public struct HttpClientResponse: Sendable {
    /// The HTTP status of the final response (after redirects and authentication rounds).
    public var status: Int
    /// The header fields in arrival order. For a response of the transfer they are made from
    /// its head each time they are read: keep the value to read several fields
    /// (``header(_:)`` reads one from the head).
    public var headerFields: HTTPFields {
        get {
            switch fieldStore {
            case .made(let fields): fields
            case .lazy(let fields): fields.fields
            }
        }
        set { fieldStore = .made(newValue) }
    }
    /// The fields as given, or a transfer's, made into `HTTPFields` only when asked for.
    private var fieldStore: FieldStore
    private enum FieldStore: Sendable {
        case made(HTTPFields)
        case lazy(LazyHeaderFields)
    }
    /// The body, decoded when it came compressed.
    public var body: Data
    /// The response came from the process's HTTP cache (``HttpClient/cachePolicy``).
    public var isFromCache: Bool

    /// A response; middlewares may make one without a transfer (from a cache, say).
    public init(status: Int, headerFields: HTTPFields = [:], body: Data = Data(), isFromCache: Bool = false) {
        self.status = status
        fieldStore = .made(headerFields)
        self.body = body
        self.isFromCache = isFromCache
    }

    /// A transfer's response, its fields read from `response`'s head when asked for.
    init(_ response: HttpResponse, body: Data) {
        status = response.status
        fieldStore = .lazy(response.lazyHeaderFields)
        self.body = body
        isFromCache = response.isFromCache
    }

    /// A response with fields as name and value pairs (a pair `HTTPFields` cannot hold is left out).
    @available(*, deprecated, renamed: "init(status:headerFields:body:isFromCache:)")
    public init(status: Int, headers: [(name: String, value: String)], body: Data = Data(), isFromCache: Bool = false) {
        self.init(status: status, headerFields: HeaderFieldList(headers).fields, body: body, isFromCache: isFromCache)
    }

    /// The header fields as name and value pairs.
    @available(*, deprecated, renamed: "headerFields")
    public var headers: [(name: String, value: String)] {
        get { HeaderFieldList(headerFields).pairs }
        set { headerFields = HeaderFieldList(newValue).fields }
    }

    /// The value of the header `name` (matched case-insensitively), repeated fields joined
    /// with ", "; `nil` when there is none.
    public func header(_ name: String) -> String? {
        if case .lazy(let fields) = fieldStore { return fields.value(of: name) }
        return HTTPField.Name(name).flatMap { headerFields[$0] }
    }
}
