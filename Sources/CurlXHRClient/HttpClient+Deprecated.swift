import CurlXHR
import Dispatch
import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The spellings with header fields as name and value pairs, kept as forwards to those with
/// `HTTPFields`. A pair `HTTPFields` cannot hold as given (a name that is no token, a value
/// with CR, LF or NUL) fails the call, naming it, as `HttpRequest.setRequestHeader(_:value:)`
/// refuses it.
extension HttpClient {
    /// Header fields sent with every call, as name and value pairs.
    @available(*, deprecated, renamed: "headerFields")
    public var headers: [(name: String, value: String)] {
        get { fieldList.pairs }
        set { fieldList = HeaderFieldList(newValue) }
    }

    /// A client with fields as name and value pairs; see ``init(baseURL:apiPath:headerFields:user:password:auth:encoder:decoder:completionQueue:middlewares:configure:)``.
    @available(*, deprecated, renamed: "init(baseURL:apiPath:headerFields:user:password:auth:encoder:decoder:completionQueue:middlewares:configure:)")
    public init(baseURL: String, apiPath: String = "", headers: [(name: String, value: String)],
                user: String? = nil, password: String? = nil, auth: String? = nil,
                encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder(),
                completionQueue: DispatchQueue = .global(), middlewares: [any HttpClientMiddleware] = [],
                configure: (@Sendable (HttpRequest) -> Void)? = nil) {
        self.init(baseURL: baseURL, apiPath: apiPath, user: user, password: password, auth: auth, encoder: encoder,
                  decoder: decoder, completionQueue: completionQueue, middlewares: middlewares, configure: configure)
        fieldList = HeaderFieldList(headers)
    }

    /// ``invoke(_:path:arguments:body:encoding:headerFields:as:progress:)`` with fields as name and value pairs.
    @available(*, deprecated, renamed: "invoke(_:path:arguments:body:encoding:headerFields:as:progress:)")
    public func invoke<Result: Decodable>(_ method: String, path: String, arguments: [(String, Argument)] = [],
                                          body: RequestBody? = nil, headers: [(name: String, value: String)],
                                          as type: Result.Type = Result.self) async throws(HttpClientError) -> Result {
        let decoder = decoder
        return try await perform(Call(method, path, arguments, body, nil, HeaderFieldList(headers))) { response throws(HttpClientError) in
            try ResponseDecoding.result(Result.self, from: response, decoder: decoder)
        }
    }

    /// ``invoke(_:path:arguments:body:encoding:headerFields:progress:)`` with fields as name and value pairs.
    @available(*, deprecated, renamed: "invoke(_:path:arguments:body:encoding:headerFields:progress:)")
    @discardableResult
    public func invoke(_ method: String, path: String, arguments: [(String, Argument)] = [],
                       body: RequestBody? = nil, headers: [(name: String, value: String)]) async throws(HttpClientError) -> ResponseContent {
        let decoder = decoder
        return try await perform(Call(method, path, arguments, body, nil, HeaderFieldList(headers))) { response throws(HttpClientError) in
            try ResponseDecoding.content(from: response, decoder: decoder)
        }
    }

    /// ``invoke(_:path:arguments:body:encoding:headerFields:as:queue:progress:completion:)`` with fields as name and value pairs.
    @available(*, deprecated, renamed: "invoke(_:path:arguments:body:encoding:headerFields:as:queue:progress:completion:)")
    @discardableResult
    public func invoke<Result: Decodable & Sendable>(_ method: String, path: String, arguments: [(String, Argument)] = [],
                                                     body: RequestBody? = nil, headers: [(name: String, value: String)],
                                                     as type: Result.Type = Result.self, queue: DispatchQueue? = nil,
                                                     completion: @escaping @Sendable (Swift.Result<Result, HttpClientError>) -> Void) -> Task<Void, Never> {
        let decoder = decoder
        return call(Call(method, path, arguments, body, nil, HeaderFieldList(headers)), queue: queue, completion: completion) {
            response throws(HttpClientError) in try ResponseDecoding.result(Result.self, from: response, decoder: decoder)
        }
    }

    /// ``invoke(_:path:arguments:body:encoding:headerFields:queue:progress:completion:)`` with fields as name and value pairs.
    @available(*, deprecated, renamed: "invoke(_:path:arguments:body:encoding:headerFields:queue:progress:completion:)")
    @discardableResult
    public func invoke(_ method: String, path: String, arguments: [(String, Argument)] = [],
                       body: RequestBody? = nil, headers: [(name: String, value: String)], queue: DispatchQueue? = nil,
                       completion: @escaping @Sendable (Swift.Result<ResponseContent, HttpClientError>) -> Void) -> Task<Void, Never> {
        let decoder = decoder
        return call(Call(method, path, arguments, body, nil, HeaderFieldList(headers)), queue: queue, completion: completion) {
            response throws(HttpClientError) in try ResponseDecoding.content(from: response, decoder: decoder)
        }
    }

    /// ``invokeSync(_:path:arguments:body:encoding:headerFields:as:progress:)`` with fields as name and value pairs.
    @available(*, deprecated, renamed: "invokeSync(_:path:arguments:body:encoding:headerFields:as:progress:)")
    public func invokeSync<Result: Decodable>(_ method: String, path: String, arguments: [(String, Argument)] = [],
                                              body: RequestBody? = nil, headers: [(name: String, value: String)],
                                              as type: Result.Type = Result.self) throws(HttpClientError) -> Result {
        try performBlocking(Call(method, path, arguments, body, nil, HeaderFieldList(headers))) { response throws(HttpClientError) in
            try ResponseDecoding.result(Result.self, from: response, decoder: decoder)
        }
    }

    /// ``invokeSync(_:path:arguments:body:encoding:headerFields:progress:)`` with fields as name and value pairs.
    @available(*, deprecated, renamed: "invokeSync(_:path:arguments:body:encoding:headerFields:progress:)")
    @discardableResult
    public func invokeSync(_ method: String, path: String, arguments: [(String, Argument)] = [],
                           body: RequestBody? = nil, headers: [(name: String, value: String)]) throws(HttpClientError) -> ResponseContent {
        try performBlocking(Call(method, path, arguments, body, nil, HeaderFieldList(headers))) { response throws(HttpClientError) in
            try ResponseDecoding.content(from: response, decoder: decoder)
        }
    }
}
