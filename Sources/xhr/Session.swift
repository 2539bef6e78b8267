import ArgumentParser
import CurlXHR
import Dispatch
import Foundation

/// Standard error: one-line errors, and the exit that goes with them.
struct Console {
    let silent: Bool

    func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Prints `message` as `xhr: message` (unless silent) and returns the exit to throw.
    func exit(_ code: Int32, _ message: String) -> ExitCode {
        if !silent { write("xhr: \(message)\n") }
        return ExitCode(code)
    }
}

/// One request as the tool runs it: writes the body where it belongs as it arrives, and
/// reports states, the response head and progress on standard error.
final class Session: HttpRequestDelegate, @unchecked Sendable {
    private let request: HttpRequest
    private let sink: FileHandle
    private let console: Console
    private let include: Bool
    private let verbose: Bool
    private let states: Bool
    private let uploadTotal: Int64?
    private let progress: ProgressBar?
    private let done = DispatchSemaphore(value: 0)
    // Touched on the callback queue only (and by `run` after DONE).
    /// Just before the request is opened and sent: the zero of --states' times.
    private let started = DispatchTime.now()
    private var received: Int64 = 0
    private var wroteHead = false

    init(request: HttpRequest, sink: FileHandle, console: Console, include: Bool, verbose: Bool, states: Bool,
         uploadTotal: Int64?, progress: Bool) {
        self.request = request
        self.sink = sink
        self.console = console
        self.include = include
        self.verbose = verbose
        self.states = states
        self.uploadTotal = uploadTotal
        self.progress = progress ? ProgressBar() : nil
    }

    func describeRequest(method: String, url: String, headers: [String]) {
        console.write("> \(method) \(url)\n")
        for header in headers { console.write("> \(header)\n") }
    }

    /// Sends with `send` and returns in DONE; for an asynchronous request this session must
    /// already be its delegate.
    func run(async: Bool, send: () -> Bool) throws {
        let timer = progress.map { bar in
            let timer = DispatchSource.makeTimerSource(queue: HttpRequest.defaultCallbackQueue)
            timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
            timer.setEventHandler { [self] in drawProgress(bar) }
            timer.resume()
            return timer
        }
        defer { timer?.cancel() }
        guard send() else {
            throw console.exit(request.lastError?.code == .fileUnreadable ? 26 : 2, request.lastError?.message ?? "send refused")
        }
        if async {
            done.wait()
        } else {
            HttpRequest.defaultCallbackQueue.sync {
                writeHead()
                drain()
                if states { report(.done) }
            }
        }
        HttpRequest.defaultCallbackQueue.sync {
            if let progress { drawProgress(progress); progress.finish(console) }
        }
    }

    func onStatusChange(_ request: HttpRequest) {
        let state = request.getState()
        switch state {
        case .headersReceived:
            writeHead()
        case .loading:
            drain()
        case .done:
            writeHead()
            drain()
        default:
            break
        }
        if states { report(state) }
        if state == .done { done.signal() }
    }

    private var elapsedMilliseconds: Double {
        Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000
    }

    private func report(_ state: HttpRequest.State) {
        let sent = request.getBytesSent()
        let name = "\(state)".padding(toLength: 16, withPad: " ", startingAt: 0)
        var line = String(format: "[%9.1f ms] ", elapsedMilliseconds) + "\(name) received \(received)"
        if sent > 0 { line += ", sent \(sent)" }
        if state == .done { line += ", status \(request.getStatus()) \(request.getStatusText() ?? "")" }
        console.write(line + "\n")
    }

    private func writeHead() {
        guard !wroteHead, request.getStatus() != 0 else { return }
        wroteHead = true
        let head = "HTTP \(request.getStatus()) \(request.getStatusText() ?? "")\n" + (request.getAllResponseHeaders() ?? "")
        if verbose {
            console.write(head.split(separator: "\n", omittingEmptySubsequences: false).map { "< \($0)" }.joined(separator: "\n") + "\n")
        }
        if include {
            sink.write(Data((head.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n\r\n").utf8))
        }
    }

    private func drain() {
        let data = request.getReceiveBuffer()
        guard !data.isEmpty else { return }
        received += Int64(data.count)
        sink.write(data)
    }

    private func drawProgress(_ bar: ProgressBar) {
        let state = request.getState()
        let sent = request.getBytesSent()
        if let uploadTotal, uploadTotal > 0, state.rawValue < HttpRequest.State.headersReceived.rawValue {
            bar.draw(console, arrow: "↑", bytes: sent, total: uploadTotal)
        } else if state.rawValue >= HttpRequest.State.headersReceived.rawValue {
            let total = request.getResponseHeader("Content-Length").flatMap { Int64($0) }
            bar.draw(console, arrow: "↓", bytes: received, total: total)
        }
    }
}

/// A one-line progress bar on a terminal: bytes, rate, and a percentage when the total is known.
final class ProgressBar: @unchecked Sendable {
    private let started = DispatchTime.now()
    private var drawn = false

    func draw(_ console: Console, arrow: String, bytes: Int64, total: Int64?) {
        let seconds = max(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9, 0.001)
        let rate = Self.size(Int64(Double(bytes) / seconds)) + "/s"
        var line: String
        if let total, total > 0 {
            let fraction = min(Double(bytes) / Double(total), 1)
            let width = 30, filled = Int(fraction * Double(width))
            line = arrow + String(format: " %5.1f%% [", fraction * 100) + String(repeating: "#", count: filled)
                + String(repeating: " ", count: width - filled) + "] \(Self.size(bytes)) of \(Self.size(total))  \(rate)"
        } else {
            line = "\(arrow) \(Self.size(bytes))  \(rate)"
        }
        console.write("\r" + line + "\u{1B}[K")
        drawn = true
    }

    func finish(_ console: Console) {
        if drawn { console.write("\n") }
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f ", value) + units[unit]
    }
}
