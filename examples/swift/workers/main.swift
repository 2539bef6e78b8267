// Synchronous requests from worker threads: each thread has its own HttpRequest and sends
// it again and again; a send blocks only its own thread.
//   swift run example-workers URL [THREADS] [REQUESTS-PER-THREAD]
import CurlXHR
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: example-workers URL [THREADS] [REQUESTS]\n".utf8))
    exit(2)
}
let url = arguments[1]
let threads = arguments.count > 2 ? Int(arguments[2]) ?? 4 : 4
let perThread = arguments.count > 3 ? Int(arguments[3]) ?? 25 : 25

let ok = Atomic(0), failed = Atomic(0)
let group = DispatchGroup()
for _ in 0..<threads {
    group.enter()
    Thread.detachNewThread {
        let request = HttpRequest()
        for _ in 0..<perThread {
            // async: false: send() returns in DONE.
            if request.open("GET", url: url), request.send(timeout: 30), request.getStatus() == 200 {
                ok.add(1)
            } else {
                failed.add(1)
            }
        }
        group.leave()
    }
}
group.wait()
print("\(ok.value) passed, \(failed.value) failed")
exit(failed.value == 0 ? 0 : 1)

/// A counter the threads share.
final class Atomic: @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int
    init(_ count: Int) { self.count = count }
    func add(_ amount: Int) { lock.withLock { count += amount } }
    var value: Int { lock.withLock { count } }
}
