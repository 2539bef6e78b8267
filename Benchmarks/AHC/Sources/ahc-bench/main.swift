// AsyncHTTPClient 1.37.0 as a benchmark client.
//
// --mode async:   `concurrency` tasks, each awaiting `execute(_:timeout:)` in a loop; the body
//                 is streamed and counted chunk by chunk, or collected whole with --collect.
// --mode async --json (client "ahc-json"; with --json-items N): the same, each body collected
//                 with `collect(upTo: 2 MiB)` and decoded with
//                 `JSONDecoder().decode([JSONItem].self, from: Data(buffer:))` (a new decoder
//                 a call, as CurlXHRClient's HttpClient has one per client; both Foundation's
//                 JSONDecoder); the body bytes counted are the collected buffer's, and a
//                 response that does not decode into N items is an error with its reason.
// --mode threads: `concurrency` threads, each blocking on `execute(request:).wait()` (the
//                 EventLoopFuture API, which collects the body) in a loop.
//
// One event loop thread. For http URLs a pool of up to `concurrency` HTTP/1.1 connections
// (`.http1Only`). For https URLs `.automatic` (AHC's default): h2 offered by ALPN, so every
// request in flight is a stream of one HTTP/2 connection (one per event loop); --cacert PATH
// makes the certificates in that PEM file the only trust roots (NIOSSL's TLSConfiguration).
// With --expect-http-version each response's `version` is checked by the tally.
// --header "NAME: VALUE" (repeatable): added to every request's headers after the --headers
// ones (client-bearer-c16: `Authorization: Bearer <token>`, a static header, as an application
// holding a token it got elsewhere sends it).
import AsyncHTTPClient
import BenchSupport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import NIOSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// --json, taken out of the arguments before BenchOptions reads the shared ones.
let (decodesJSON, sharedArguments): (Bool, [String]) = {
    let arguments = CommandLine.arguments
    return (arguments.contains("--json"), arguments.filter { $0 != "--json" })
}()
let options = {
    var options = BenchOptions.parse(client: "ahc", sharedArguments, extraHeaders: true)
    if decodesJSON && options.client == "ahc" { options.client = "ahc-json" }
    return options
}()
if decodesJSON && (options.mode != .async || options.postBytes > 0 || options.jsonItems == nil) {
    writeError("ahc-bench: --json is for GETs in --mode async, with --json-items N\n")
    exit(64)
}
var configuration = HTTPClient.Configuration()
configuration.httpVersion = options.url.lowercased().hasPrefix("https:") ? .automatic : .http1Only
if let caFile = options.caCertificateFile {
    var tls = TLSConfiguration.makeClientConfiguration()
    do {
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
    } catch {
        writeError("ahc-bench: cannot read the CA certificates in \(caFile): \(error)\n")
        exit(64)
    }
    configuration.tlsConfiguration = tls
}
configuration.connectionPool = .init(idleTimeout: .seconds(60),
                                     concurrentHTTP1ConnectionsPerHostSoftLimit: options.concurrency)
let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let client = HTTPClient(eventLoopGroupProvider: .shared(loops), configuration: configuration)
let body = ByteBuffer(bytes: bodyBytes(options.postBytes))
/// The fields every request carries: the first --headers of the common list, then --header's.
let requestHeaders = Array(benchRequestHeaders.prefix(options.headers)) + options.extraHeaders
let tally = Tally(options)

/// The protocol a response came over as the tally names it ("HTTP/1.1", "HTTP/2"); nil
/// unless --expect-http-version asks.
func protocolName(_ version: HTTPVersion) -> String? {
    guard options.expectHTTPVersion != nil else { return nil }
    return version.major >= 2 ? "HTTP/\(version.major)" : "HTTP/\(version.major).\(version.minor)"
}

@Sendable func fetchOne() async {
    var request = HTTPClientRequest(url: options.url)
    for (name, value) in requestHeaders { request.headers.add(name: name, value: value) }
    if options.postBytes > 0 {
        request.method = .POST
        request.body = .bytes(body)
    }
    do {
        let response = try await client.execute(request, timeout: .seconds(Int64(options.maxSeconds) + 10))
        var received = 0
        if decodesJSON {
            let buffer = try await response.body.collect(upTo: 2 << 20)
            received = buffer.readableBytes
            let items = try JSONDecoder().decode([JSONItem].self, from: Data(buffer: buffer))
            if let problem = jsonItemsProblem(items, expected: options.jsonItems ?? 0) {
                tally.finish(status: Int(response.status.code), bodyBytes: received, problem: problem)
                return
            }
        } else if options.collect {
            received = try await response.body.collect(upTo: Int.max).readableBytes
        } else {
            for try await chunk in response.body { received += chunk.readableBytes }
        }
        tally.finish(status: Int(response.status.code), bodyBytes: received, httpVersion: protocolName(response.version))
    } catch {
        tally.finish(status: 0, bodyBytes: 0, problem: "\(error)")
    }
}

switch options.mode {
case .async:
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<options.concurrency {
            group.addTask {
                while tally.claim() { await fetchOne() }
            }
        }
    }
case .threads:
    runOnThreads(options.concurrency) { _ in
        while tally.claim() {
            do {
                var request = try HTTPClient.Request(url: options.url, method: options.postBytes > 0 ? .POST : .GET,
                                                     body: options.postBytes > 0 ? .byteBuffer(body) : nil)
                for (name, value) in requestHeaders { request.headers.add(name: name, value: value) }
                let response = try client.execute(request: request).wait()
                tally.finish(status: Int(response.status.code), bodyBytes: response.body?.readableBytes ?? 0,
                             httpVersion: protocolName(response.version))
            } catch {
                tally.finish(status: 0, bodyBytes: 0, problem: "\(error)")
            }
        }
    }
}
tally.report()
try? await client.shutdown().get()
try? await loops.shutdownGracefully()
