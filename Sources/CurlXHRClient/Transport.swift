import CurlXHR
import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The end of the middleware chain: one `HttpRequest` per request, sent with its `async`
/// `HttpRequest.response(timeout:progress:)`.
enum Transport {
    /// What a send takes of its client: the middleware chain's last link keeps this, not a
    /// copy of the whole client, for each call.
    struct Settings: Sendable {
        let requestPool: RequestPool
        let configure: (@Sendable (HttpRequest) -> Void)?
        let credentials: HttpClient.Credentials?
        let cachePolicy: HttpRequest.CachePolicy
        let maxResponseSize: Int

        init(_ client: HttpClient) {
            requestPool = client.requestPool
            configure = client.configure
            credentials = client.credentials
            cachePolicy = client.cachePolicy
            maxResponseSize = client.maxResponseSize
        }
    }

    /// `adding`: a field sent in place of the request's of its name (an OAuth2 token's), as if
    /// set on the request, without a copy of it.
    @inline(__always)  // one task frame less for each call
    static func send(_ request: HttpClientRequest, adding added: HeaderFieldList.Entry? = nil, with client: Settings, progress: ProgressReporter?,
                     observation: CallObservation? = nil) async throws(HttpClientError) -> HttpClientResponse {
        observation?.sending(request, adding: added, password: client.credentials?.password)
        // A request nothing else sets up is the client's to use again (RequestPool).
        let pooled = progress == nil && client.configure == nil && !(observation?.watchesRequests ?? false)
        let http = pooled ? client.requestPool.take() : HttpRequest()
        // The client's credentials are for its own server: not for an absolute URL elsewhere.
        let credentials = client.credentials.flatMap { request.isToClientOrigin ? $0 : nil }
        guard http.open(request.method, url: request.url, user: credentials?.user, password: credentials?.password,
                        auth: credentials?.auth) else {
            throw refusal(of: http)
        }
        let isMultipart: Bool
        if case .multipart = request.body { isMultipart = true } else { isMultipart = false }
        // Fields HTTPFields could not hold: HttpRequest refuses them, with its reason.
        for (name, value) in request.fieldList.refused {
            guard http.setRequestHeader(name, value: value) else { throw refusal(of: http) }
        }
        // The boundary is libcurl's: a Content-Type of the caller's would lose it.
        guard (request.headerFields.isEmpty && added == nil)
                || http.addRequestFields(request.headerFields, leavingOutContentType: isMultipart, replacingWith: added?.fields ?? [:]) else {
            throw refusal(of: http)
        }
        if case .multipart(let parts) = request.body {
            for part in parts {
                switch part {
                case .value(let name, let value):
                    http.appendPostValue(value, forKey: name)  // an array repeats its name
                    if let error = http.lastError { throw .transfer(error) }
                case .file(let name, let path, let fileName, let contentType):
                    guard http.addPostFile(path, forKey: name, fileName: fileName, contentType: contentType) else {
                        throw refusal(of: http)
                    }
                }
            }
            http.sendFormAsMultipart()
        }
        http.setCachePolicy(client.cachePolicy)
        // Counted as it arrives, the body is limited by the transfer itself (collect(upTo:) is
        // not used).
        if progress != nil { http.setMaxResponseSize(Int64(client.maxResponseSize)) }
        client.configure?(http)
        observation?.watch(http)
        do {
            var counts = TransferCounts(body: request.body)
            let attempt = progress?.startAttempt() ?? 0
            progress?.report(counts.progress, attempt: attempt)
            // The body sent, as the transfer counts it (the rest is counted here).
            var sent: HttpRequest.ProgressHandler?
            if let progress {
                sent = { @Sendable (counts: HttpRequest.Progress) in progress.sent(counts, attempt: attempt) }
            }
            // The response is let go of before the request goes back: a request whose last
            // response nothing holds uses its response stream and transfer again.
            let made: HttpClientResponse
            do {
                let response: HttpResponse
                switch request.body {
                case .none, .multipart: response = try await http.response(progress: sent)
                case .data(let data): response = try await http.response(sending: data, progress: sent)
                }
                let body: Data
                if let progress {
                    counts.headArrived(method: request.method, status: response.status, contentLength: response.expectedContentLength,
                                       contentEncoding: response.header("Content-Encoding"))
                    progress.report(counts.progress, attempt: attempt)
                    var collected = Data()
                    for try await chunk in response.body {
                        collected.append(chunk)
                        counts.received(chunk.count)
                        progress.report(counts.progress, attempt: attempt)
                    }
                    counts.bodyComplete()
                    progress.report(counts.progress, attempt: attempt)
                    body = collected
                } else {
                    body = try await response.body.collect(upTo: client.maxResponseSize)
                }
                made = HttpClientResponse(response, body: body)
            }
            if pooled { client.requestPool.giveBack(http) }
            return made
        } catch {
            // HttpRequestError, or CancellationError.
            throw HttpClientError(wrapping: error)
        }
    }

    /// The middleware chain's last link: ``send(_:adding:with:progress:observation:)``.
    static func link(_ client: Settings, _ progress: ProgressReporter?,
                     _ observation: CallObservation?) -> @Sendable (HttpClientRequest) async throws -> HttpClientResponse {
        { request in try await send(request, with: client, progress: progress, observation: observation) }
    }

    static func refusal(of request: HttpRequest) -> HttpClientError {
        if let error = request.lastError { return .transfer(error) }
        return .encoding(ClientProblem("HttpRequest refused the request"))
    }
}
