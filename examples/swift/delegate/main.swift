// An asynchronous request with a delegate, GDHttpRequest's way: every ready state is
// reported on the library's callback queue; LOADING takes the bytes that arrived.
//   swift run example-delegate URL
import CurlXHR
import Foundation

final class Printer: HttpRequestDelegate, @unchecked Sendable {
    private var received = 0
    let done = DispatchSemaphore(value: 0)

    func onStatusChange(_ request: HttpRequest) {
        let state = request.getState()
        if state == .loading || state == .done { received += request.getReceiveBuffer().count }
        print("\(state) status \(request.getStatus()), \(received) bytes so far")
        if state == .done { done.signal() }
    }
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: example-delegate URL\n".utf8))
    exit(2)
}
let printer = Printer()
let request = HttpRequest()
request.delegate = printer
guard request.open("GET", url: CommandLine.arguments[1], async: true), request.send() else {
    print("refused: \(request.lastError?.message ?? "")")
    exit(1)
}
printer.done.wait()
exit(request.getStatus() == 0 ? 1 : 0)
