// CurlXHR's client layer (CurlXHRClient) as a benchmark client: JSON decoded by the client.
//
// --mode async (client "curlxhr-client"): `concurrency` tasks (a task group), each calling
//     `try await client.invoke("GET", path: PATH, as: [JSONItem].self)` in a loop on one
//     `HttpClient(baseURL:)` made from --url (its scheme, host and port; PATH is the rest), as
//     an application fetching a JSON array would: HttpClient runs one HttpRequest a call,
//     collects the body and decodes it with its JSONDecoder by the response's Content-Type
//     (application/json). GETs only.
//
// --json-items N (required): the number of items each array must hold. The client never sees
//     the body's bytes (invoke returns the decoded value), so a call that returned N items
//     counts --expect-bytes body bytes (a body that is not all there does not decode); one
//     that returned another count, or threw (a status other than 2xx is
//     HttpClientError.status), is an error with its reason.
// --headers N: the client's default headers (sent with every call). --cacert PATH:
//     HttpRequest.caCertificateFile, set once for the process. --expect-http-version is not
//     supported (invoke does not tell the protocol).
//
// Library defaults throughout (HttpClient's JSONDecoder, HttpRequest's defaults).
import BenchSupport
import CurlXHR
import CurlXHRClient
#if canImport(Glibc)
import Glibc
#endif

let options = BenchOptions.parse(client: "curlxhr-client")
guard options.mode == .async, options.postBytes == 0 else {
    writeError("curlxhr-client-bench: GETs in --mode async only\n")
    exit(64)
}
guard let expectedItems = options.jsonItems else {
    writeError("curlxhr-client-bench: --json-items N is required (the items each JSON array holds)\n")
    exit(64)
}
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
let client = HttpClient(baseURL: baseURL, headers: Array(benchRequestHeaders.prefix(options.headers)))
let tally = Tally(options)

await withTaskGroup(of: Void.self) { group in
    for _ in 0..<options.concurrency {
        group.addTask {
            while tally.claim() {
                do {
                    let items = try await client.invoke("GET", path: path, as: [JSONItem].self)
                    let problem = jsonItemsProblem(items, expected: expectedItems)
                    tally.finish(status: 200, bodyBytes: problem == nil ? options.expectBytes : 0, problem: problem)
                } catch {
                    var status = 0
                    if case .status(let code, _)? = error as? HttpClientError { status = code }
                    tally.finish(status: status, bodyBytes: 0, problem: "\(error)")
                }
            }
        }
    }
}
tally.report()
