// CurlXHR's client layer (CurlXHRClient) as a benchmark client: JSON decoded by the client
// (json-*), or bodies taken as `Data` with a bearer token on every call (client-bearer-*).
//
// --mode async (client "curlxhr-client"): `concurrency` tasks (a task group), each calling
//     `try await client.invoke("GET", path: PATH, as: [JSONItem].self)` (with --json-items) or
//     `try await client.invoke("GET", path: PATH, as: Data.self)` (without) in a loop on one
//     `HttpClient(baseURL:)` made from --url (its scheme, host and port; PATH is the rest), as
//     an application would: HttpClient runs one HttpRequest a call, collects the body and
//     decodes it by the response's Content-Type (JSON with its JSONDecoder; `Data` as it came).
//     GETs only.
//
// --json-items N: the number of items each array must hold. The client never sees the body's
//     bytes (invoke returns the decoded value), so a call that returned N items counts
//     --expect-bytes body bytes (a body that is not all there does not decode); one that
//     returned another count, or threw (a status other than 2xx is HttpClientError.status), is
//     an error with its reason. Without it a call counts the bytes of the `Data` it returned
//     (the tally wants --expect-bytes of them); one that threw is an error with its reason.
// --oauth2 TOKEN_URL: the client has one middleware, an `OAuth2Authorizer` for the client
//     credentials grant at TOKEN_URL (client "bench", secret "s", in memory): the first calls
//     wait for one token request (a POST of `grant_type=client_credentials`), and every call
//     then carries `Authorization: Bearer <token>` (client-bearer-c16; the server's path
//     answers 401 to a call without that token, and a 401 throws).
// --header "NAME: VALUE" (repeatable): a default header of the client (sent with every call),
//     after the --headers ones (client-bearer-c16's `curlxhr-client-header`: the same bearer
//     token as a static header, without the authorizer).
// --headers N: the client's default headers (sent with every call). --cacert PATH:
//     HttpRequest.caCertificateFile, set once for the process (the token endpoint's requests
//     too). --expect-http-version is not supported (invoke does not tell the protocol).
//
// Library defaults throughout (HttpClient's JSONDecoder, HttpRequest's defaults).
import BenchSupport
import CurlXHR
import CurlXHRClient
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// --oauth2 TOKEN_URL, taken out of the arguments before BenchOptions reads the shared ones.
let (tokenURL, sharedArguments): (String?, [String]) = {
    var arguments = CommandLine.arguments
    guard let flag = arguments.firstIndex(of: "--oauth2") else { return (nil, arguments) }
    guard flag + 1 < arguments.count else {
        writeError("curlxhr-client-bench: --oauth2 needs the token endpoint's URL\n")
        exit(64)
    }
    let url = arguments[flag + 1]
    arguments.removeSubrange(flag...(flag + 1))
    return (url, arguments)
}()
let options = BenchOptions.parse(client: "curlxhr-client", sharedArguments, extraHeaders: true)
guard options.mode == .async, options.postBytes == 0 else {
    writeError("curlxhr-client-bench: GETs in --mode async only\n")
    exit(64)
}
/// --json-items: decode each body into that many JSONItems; nil: take it as Data.
let expectedItems = options.jsonItems
guard options.expectHTTPVersion == nil else {
    writeError("curlxhr-client-bench: --expect-http-version is not supported (invoke does not tell the protocol)\n")
    exit(64)
}
/// --url split into the client's base URL (scheme://host[:port]) and the call's path.
let (baseURL, path): (String, String) = {
    let url = options.url
    guard let scheme = url.firstRange(of: "://") else {
        writeError("curlxhr-client-bench: --url needs a scheme: \(url)\n")
        exit(64)
    }
    let rest = url[scheme.upperBound...]
    let slash = rest.firstIndex(of: "/") ?? rest.endIndex
    return (String(url[..<slash]), String(rest[slash...]))
}()
if let caFile = options.caCertificateFile { HttpRequest.caCertificateFile = caFile }
let middlewares: [any HttpClientMiddleware] = tokenURL.map {
    [OAuth2Authorizer(OAuth2Configuration(tokenURL: $0, clientID: "bench", clientSecret: "s", grant: .clientCredentials))]
} ?? []
var defaultFields = HTTPFields()
for (name, value) in Array(benchRequestHeaders.prefix(options.headers)) + options.extraHeaders {
    guard let name = HTTPField.Name(name) else { writeError("curlxhr-client-bench: '\(name)' is no field name\n"); exit(64) }
    defaultFields.append(HTTPField(name: name, value: value))
}
let client = HttpClient(baseURL: baseURL, headerFields: defaultFields, middlewares: middlewares)
let tally = Tally(options)

// The calls run as tasks while the main thread waits on a semaphore (as curlxhr-bench's
// --await does): no top-level `await`, so the main thread runs no executor of its own.
let allDone = DispatchSemaphore(value: 0)
Task.detached {
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<options.concurrency {
            group.addTask {
                while tally.claim() {
                    do {
                        if let expectedItems {
                            let items = try await client.invoke("GET", path: path, as: [JSONItem].self)
                            let problem = jsonItemsProblem(items, expected: expectedItems)
                            tally.finish(status: 200, bodyBytes: problem == nil ? options.expectBytes : 0, problem: problem)
                        } else {
                            // invoke throws for any status but 2xx; the bench server's paths answer 200 or
                            // an error status.
                            let body = try await client.invoke("GET", path: path, as: Data.self)
                            tally.finish(status: 200, bodyBytes: body.count)
                        }
                    } catch {
                        var status = 0
                        if case .status(let code, _)? = error as? HttpClientError { status = code }
                        tally.finish(status: status, bodyBytes: 0, problem: "\(error)")
                    }
                }
            }
        }
    }
    allDone.signal()
}
allDone.wait()
tally.report()
