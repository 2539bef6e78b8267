// URLSession (swift-corelibs-foundation's FoundationNetworking) as a benchmark client.
//
// --mode async only: `concurrency` data tasks in flight on one session whose delegate
// counts each task's body bytes as they arrive (keeping none) and, when a task completes,
// records the outcome and starts the next task. The delegate queue is serial.
// URLSession has no blocking API, so --mode threads is refused.
//
// The configuration is the default one except: up to `concurrency` connections to the
// host (the default is 6), and no URL cache, so every request goes to the server.
import BenchSupport
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

let options = BenchOptions.parse(client: "urlsession")
guard options.mode == .async else {
    writeError("urlsession-bench: URLSession has no blocking API; only --mode async\n")
    exit(65)
}
let tally = Tally(options)

final class Driver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let request: URLRequest
    let allDone = DispatchSemaphore(value: 0)
    private let busy = Mutex(0)
    /// Body bytes so far per task; touched on the serial delegate queue only.
    private var received: [Int: Int] = [:]
    private var session: URLSession?

    init(request: URLRequest) {
        self.request = request
    }

    func start(_ configuration: URLSessionConfiguration, tasks: Int) {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        busy.withLock { $0 = tasks }
        for _ in 0..<tasks { issue() }
    }

    /// Starts one more task, or retires a slot when the run is over.
    func issue() {
        if tally.claim() {
            session!.dataTask(with: request).resume()
        } else if busy.withLock({ busy -> Int in busy -= 1; return busy }) == 0 {
            allDone.signal()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received[dataTask.taskIdentifier, default: 0] += data.count
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let bytes = received.removeValue(forKey: task.taskIdentifier) ?? 0
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? 0
        tally.finish(status: status, bodyBytes: bytes, problem: error.map { "\($0)" })
        issue()
    }
}

var request = URLRequest(url: URL(string: options.url)!)
request.timeoutInterval = options.maxSeconds + 10
for (name, value) in benchRequestHeaders.prefix(options.headers) {
    request.setValue(value, forHTTPHeaderField: name)
}
if options.postBytes > 0 {
    request.httpMethod = "POST"
    request.httpBody = Data(bodyBytes(options.postBytes))
}
let configuration = URLSessionConfiguration.default
configuration.httpMaximumConnectionsPerHost = options.concurrency
configuration.urlCache = nil
configuration.requestCachePolicy = .reloadIgnoringLocalCacheData

let driver = Driver(request: request)
driver.start(configuration, tasks: options.concurrency)
driver.allDone.wait()
tally.report()
