// AsyncHTTPClient 1.37.0 as a benchmark client.
//
// --mode async:   `concurrency` tasks, each awaiting `execute(_:timeout:)` in a loop; the body
//                 is streamed and counted chunk by chunk, or collected whole with --collect.
// --mode threads: `concurrency` threads, each blocking on `execute(request:).wait()` (the
//                 EventLoopFuture API, which collects the body) in a loop.
//
// One event loop thread, a pool of up to `concurrency` HTTP/1.1 connections.
import AsyncHTTPClient
import BenchSupport
import NIOCore
import NIOPosix

let options = BenchOptions.parse(client: "ahc")
var configuration = HTTPClient.Configuration()
configuration.httpVersion = .http1Only
configuration.connectionPool = .init(idleTimeout: .seconds(60),
                                     concurrentHTTP1ConnectionsPerHostSoftLimit: options.concurrency)
let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let client = HTTPClient(eventLoopGroupProvider: .shared(loops), configuration: configuration)
let body = ByteBuffer(bytes: bodyBytes(options.postBytes))
let tally = Tally(options)

@Sendable func fetchOne() async {
    var request = HTTPClientRequest(url: options.url)
    for (name, value) in benchRequestHeaders.prefix(options.headers) { request.headers.add(name: name, value: value) }
    if options.postBytes > 0 {
        request.method = .POST
        request.body = .bytes(body)
    }
    do {
        let response = try await client.execute(request, timeout: .seconds(Int64(options.maxSeconds) + 10))
        var received = 0
        if options.collect {
            received = try await response.body.collect(upTo: Int.max).readableBytes
        } else {
            for try await chunk in response.body { received += chunk.readableBytes }
        }
        tally.finish(status: Int(response.status.code), bodyBytes: received)
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
                for (name, value) in benchRequestHeaders.prefix(options.headers) { request.headers.add(name: name, value: value) }
                let response = try client.execute(request: request).wait()
                tally.finish(status: Int(response.status.code), bodyBytes: response.body?.readableBytes ?? 0)
            } catch {
                tally.finish(status: 0, bodyBytes: 0, problem: "\(error)")
            }
        }
    }
}
tally.report()
try? await client.shutdown().get()
try? await loops.shutdownGracefully()
