import CurlXHR
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HttpClient {
    /// A call that failed, as ``HttpClient/onFailure`` sees it (Hermod's
    /// `didReceiveErrorInResponse`).
    public struct Failure: Sendable {
        /// The error the caller gets.
        public var error: HttpClientError
        /// The request as the client made it, before the middlewares; `nil` when it could not
        /// be made (``HttpClientError/encoding(_:)``).
        public var request: HttpClientRequest?
        /// The response, when one came: for ``HttpClientError/status(code:body:)`` and
        /// ``HttpClientError/decoding(_:body:)``; `nil` when the transfer failed.
        public var response: HttpClientResponse?

        /// A failure, as a middleware or a test may make one.
        public init(error: HttpClientError, request: HttpClientRequest? = nil, response: HttpClientResponse? = nil) {
            self.error = error
            self.request = request
            self.response = response
        }
    }
}

/// The path of every call, whichever way it was made: the request made, the middlewares and
/// the transfer, then the decoding.
extension HttpClient {
    /// What a call asked for.
    struct Call: Sendable {
        var method: String
        var path: String
        var arguments: [(String, Argument)]
        var body: RequestBody?
        var encoding: ArgumentEncoding?
        var headers: HeaderFieldList
        var progress: ProgressHandler?

        init(_ method: String, _ path: String, _ arguments: [(String, Argument)], _ body: RequestBody?,
             _ encoding: ArgumentEncoding?, _ headers: HeaderFieldList, _ progress: ProgressHandler? = nil) {
            self.method = method
            self.path = path
            self.arguments = arguments
            self.body = body
            self.encoding = encoding
            self.headers = headers
            self.progress = progress
        }
    }

    /// A call's transfer: the request the client made, for ``HttpClient/onFailure`` (`nil`
    /// when it could not be made, or there is no `onFailure` to see it), and what the
    /// middlewares and the transfer made of it.
    struct Sent: Sendable {
        var request: HttpClientRequest?
        var outcome: Swift.Result<HttpClientResponse, HttpClientError>
    }

    /// Makes the request of `call` and sends it through the middlewares; its progress, if
    /// anyone wants it, is reported on `queue`, and every report has run when this returns.
    @inline(__always)  // one task frame less for each call
    func transfer(_ call: Call, progressQueue queue: DispatchQueue) async -> Sent {
        var request: HttpClientRequest
        do throws(HttpClientError) {
            request = try makeRequest(call.method, path: call.path, arguments: call.arguments, body: call.body,
                                      encoding: call.encoding, headers: call.headers)
        } catch {
            return Sent(request: nil, outcome: .failure(error))
        }
        let reporter = (call.progress ?? onProgress).map { ProgressReporter($0, target: queue) }
        let observation = CallObservation(&request, client: self)
        let outcome: Swift.Result<HttpClientResponse, HttpClientError>
        #if Tracing
        let made = request
        outcome = await observation.run { () async -> Swift.Result<HttpClientResponse, HttpClientError> in
            do throws(HttpClientError) {
                return .success(try await send(made, progress: reporter, observation: observation))
            } catch {
                return .failure(error)
            }
        }
        #else
        // No span to run in: the send itself, with no closure to make for each call.
        do throws(HttpClientError) {
            outcome = .success(try await send(request, progress: reporter, observation: observation))
        } catch {
            outcome = .failure(error)
        }
        #endif
        if let reporter { await reporter.flush() }
        observation.end(request, outcome)
        // No copy of the request kept when no one will look at it.
        return Sent(request: onFailure == nil ? nil : request, outcome: outcome)
    }

    /// The result of a call: its response decoded by `decode`, or its failure, which
    /// ``onFailure`` sees first. Inlined into each caller: no generic `Result` made.
    @inline(__always)
    func decoded<Value>(_ sent: Sent, _ decode: (HttpClientResponse) throws(HttpClientError) -> Value) throws(HttpClientError) -> Value {
        let failure: HttpClientError
        let response: HttpClientResponse?
        switch sent.outcome {
        case .success(let made):
            do throws(HttpClientError) {
                return try decode(made)
            } catch {
                (failure, response) = (error, made)
            }
        case .failure(let error):
            (failure, response) = (error, nil)
        }
        onFailure?(Failure(error: failure, request: sent.request, response: response))
        throw failure
    }

    /// Runs `call` and decodes its response in the calling task.
    @inline(__always)
    func perform<Value>(_ call: Call, decode: (HttpClientResponse) throws(HttpClientError) -> Value) async throws(HttpClientError) -> Value {
        try decoded(await transfer(call, progressQueue: completionQueue), decode)
    }
}
