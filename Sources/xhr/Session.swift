import CurlXHR
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Standard error: one-line errors, and the exit that goes with them.
struct Console {
    let silent: Bool

    func write(_ text: String) {
        StandardStreams.write(text, to: 2)
    }

    /// Prints `message` as `xhr: message` (unless silent) and returns the exit to throw.
    func exit(_ code: Int32, _ message: String) -> ExitCode {
        if !silent { write("xhr: \(message)\n") }
        return ExitCode(code)
    }

    /// Prints `xhr: message`, also when silent (as curl's warnings about its command line).
    func warn(_ message: String) {
        write("xhr: \(message)\n")
    }
}

/// Where the body (or the head, for -D) goes: standard output, or a file created at the
/// first write, as curl does, so that a failed transfer leaves no file behind.
final class Output: @unchecked Sendable {
    /// How a file is opened at the first write.
    struct FileMode {
        /// Appends to what the file holds (-C) rather than replacing it.
        var appends = false
        /// Refuses a file that exists (-J, as curl).
        var exclusive = false
        /// Makes the missing folders of the path (--create-dirs).
        var createsFolders = false
    }

    private var path: String?
    /// Names the file at the first write (-J: from the response's head); nil: no usable name.
    private let namer: (() -> String?)?
    private let mode: FileMode
    private var descriptor: Int32 = -1
    /// The descriptor after `close`: nothing more is written.
    private static let closed: Int32 = -2
    /// Takes bytes and keeps none (the library writes the file itself: xhr's own .part resume).
    private let discards: Bool

    private init(path: String?, descriptor: Int32 = -1, namer: (() -> String?)? = nil, mode: FileMode = FileMode(),
                 discards: Bool = false) {
        self.path = path
        self.descriptor = descriptor
        self.namer = namer
        self.mode = mode
        self.discards = discards
    }

    static func standardOutput() -> Output { Output(path: nil, descriptor: 1) }
    static func file(_ path: String, mode: FileMode = FileMode()) -> Output { Output(path: path, mode: mode) }
    static func named(by namer: @escaping () -> String?, mode: FileMode) -> Output { Output(path: nil, namer: namer, mode: mode) }
    static func discard() -> Output { Output(path: nil, discards: true) }

    /// Writes `data`; false when the file cannot be created or written.
    func write(_ data: Data) -> Bool {
        if discards { return true }
        guard let descriptor = open() else { return false }
        return StandardStreams.write(data, to: descriptor)
    }

    /// Opens the file before the transfer (-C: curl opens the file it continues at the start);
    /// false if it cannot be.
    func openNow() -> Bool {
        open() != nil
    }

    /// Creates the file if nothing was written (an empty body); false if it cannot be.
    func finish() -> Bool {
        discards || descriptor == Self.closed || open() != nil
    }

    var name: String { path ?? (namer == nil ? "standard output" : "the file -J names") }

    private func open() -> Int32? {
        if descriptor >= 0 { return descriptor }
        if descriptor == Self.closed { return nil }
        if path == nil, let namer { path = namer() }
        guard let path else { return nil }
        if mode.createsFolders { Self.makeFolders(of: path) }
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode.appends ? O_APPEND : O_TRUNC) | (mode.exclusive ? O_EXCL : 0)
        let opened = Glibc.open(path, flags, 0o666)
        guard opened >= 0 else { return nil }
        descriptor = opened
        return opened
    }

    /// mkdir -p of the folders above `path` (0750, as curl's --create-dirs).
    static func makeFolders(of path: String) {
        let bytes = Array(path.utf8)
        for index in bytes.indices.dropFirst() where bytes[index] == UInt8(ascii: "/") {
            _ = mkdir(String(decoding: bytes[..<index], as: UTF8.self), 0o750)
        }
    }

    func close() {
        if path != nil, descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = Self.closed
        }
    }
}

/// One request as the tool runs it: writes the body where it belongs as it arrives, and
/// reports states, the response head and progress on standard error.
final class Session: HttpRequestDelegate, @unchecked Sendable {
    private let request: HttpRequest
    private let output: Output
    private let headDump: Output?
    private let console: Console
    private let include: Bool
    private let discardErrorBody: Bool
    private let verbose: Bool
    private let states: Bool
    private let uploadTotal: Int64?
    private let progress: ProgressBar?
    private let done = DispatchSemaphore(value: 0)
    // Touched on the callback queue only (and by `run`'s caller after DONE).
    /// Just before the request is opened and sent: the zero of --states' times.
    private let started = DispatchTime.now()
    private var received: Int64 = 0
    private var wroteHead = false
    /// -f and a status of 400 or more: the body is dropped.
    private var discarding = false
    /// Body bytes written to the output (curl's size_download).
    private(set) var written: Int64 = 0
    /// The output that could not be written, if one could not.
    private(set) var writeFailure: String?
    /// Bytes of the file a -C run continues (0: none): the bar counts from there on a 206.
    var resumedFrom: Int64 = 0
    /// -C as curl: the body is appended to the file from `resumedFrom`, only in a 206; a 416
    /// (nothing left to send) or a 200 as long as the file write nothing.
    var continuesFile = false
    /// -C, and a 200 with a body other than the file's: the server ignored the range (curl's 33).
    private(set) var rangeIgnored = false
    /// Runs on the callback queue after DONE was handled (several URLs: the run counts them).
    var onDone: (() -> Void)?
    /// A 401 with a Bearer challenge is not written anywhere: the run sends again with a new
    /// token (--oauth2-token-url).
    var dropsRefusedBearer = false
    /// Whether the response was such a 401, dropped.
    private(set) var refusedBearer = false

    init(request: HttpRequest, output: Output, headDump: Output?, console: Console, include: Bool,
         discardErrorBody: Bool, verbose: Bool, states: Bool, uploadTotal: Int64?, progress: Bool) {
        self.request = request
        self.output = output
        self.headDump = headDump
        self.console = console
        self.include = include
        self.discardErrorBody = discardErrorBody
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
        closeOutputs()
    }

    func closeOutputs() {
        output.close()
        headDump?.close()
    }

    /// After a complete transfer: creates the output file of an empty body. The path that
    /// could not be written, if any.
    func finishOutputs() -> String? {
        if writeFailure == nil, !discarding, !output.finish() { writeFailure = output.name }
        return writeFailure
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
        if state == .done {
            done.signal()
            onDone?()
        }
    }

    private var elapsedMilliseconds: Double {
        Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000
    }

    private func report(_ state: HttpRequest.State) {
        let sent = request.getBytesSent()
        let name = Fixed.padded("\(state)", to: 16)
        var line = "[" + Fixed.text(elapsedMilliseconds, decimals: 1, width: 9) + " ms] " + "\(name) received \(received)"
        if sent > 0 { line += ", sent \(sent)" }
        if state == .done { line += ", status \(request.getStatus()) \(request.getStatusText() ?? "")" }
        console.write(line + "\n")
    }

    /// The status line as curl prints it: `HTTP/1.1 200 OK`; `HTTP/2 200 ` for HTTP/2 and 3,
    /// which have no reason phrase (curl ends the line with a space there).
    static func statusLine(_ request: HttpRequest) -> String {
        let version = request.getMetrics().httpVersion ?? "HTTP/1.1"
        guard version.hasPrefix("HTTP/1") else { return "\(version) \(request.getStatus()) " }
        let reason = request.getStatusText() ?? ""
        return reason.isEmpty ? "\(version) \(request.getStatus())" : "\(version) \(request.getStatus()) \(reason)"
    }

    private func writeHead() {
        let status = request.getStatus()
        guard !wroteHead, status != 0 else { return }
        wroteHead = true
        if dropsRefusedBearer, OAuth2Options.refusesBearer(request) {
            refusedBearer = true
            discarding = true
            return
        }
        let fields = request.getAllResponseHeaders() ?? ""
        let lines = [Self.statusLine(request)] + (fields.isEmpty ? [] : fields.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        if verbose {
            console.write(lines.map { "< \($0)\n" }.joined() + "<\n")
        }
        let wire = Data((lines.map { $0 + "\r\n" }.joined() + "\r\n").utf8)
        if include { write(wire, to: output) }
        if let headDump { write(wire, to: headDump) }
        if discardErrorBody, status >= 400 { discarding = true }
        if continuesFile, resumedFrom > 0 { checkResumed(status) }
    }

    /// A -C run's answer: a 206 is appended; a 416, or a 200 whose length is the file's
    /// (all there already), writes nothing; another 200 ends the transfer (curl's 33).
    private func checkResumed(_ status: Int) {
        guard status == 200 || status == 416 else { return }
        discarding = true
        if status == 200, request.getResponseHeader("Content-Length").flatMap({ Int64($0) }) != resumedFrom {
            rangeIgnored = true
            request.abort()
        }
    }

    private func drain() {
        let data = request.getReceiveBuffer()
        guard !data.isEmpty else { return }
        received += Int64(data.count)
        guard !discarding, writeFailure == nil else { return }
        if write(data, to: output) { written += Int64(data.count) }
    }

    /// Writes, or on failure records it and stops the transfer (curl's exit 23).
    @discardableResult
    private func write(_ data: Data, to target: Output) -> Bool {
        guard writeFailure == nil else { return false }
        if target.write(data) { return true }
        writeFailure = target.name
        let state = request.getState()
        if state == .sent || state == .headersReceived || state == .loading { request.abort() }
        return false
    }

    private func drawProgress(_ bar: ProgressBar) {
        let state = request.getState()
        // The library's counts: totals from the body to send and the response head (-1: unknown).
        let progress = request.getProgress()
        if progress.bytesToSend != 0, state.rawValue < HttpRequest.State.headersReceived.rawValue {
            let total = progress.bytesToSend > 0 ? progress.bytesToSend : uploadTotal
            bar.draw(console, arrow: "↑", bytes: progress.bytesSent, total: total)
        } else if state.rawValue >= HttpRequest.State.headersReceived.rawValue {
            let offset = request.getStatus() == 206 ? resumedFrom : 0
            let total = progress.bytesToReceive >= 0 ? offset + progress.bytesToReceive : nil
            bar.draw(console, arrow: "↓", bytes: offset + progress.bytesReceived, total: total,
                     note: offset > 0 ? "resumed at \(ProgressBar.size(offset))" : nil)
        }
    }
}

/// A one-line progress bar on a terminal: bytes, rate, and a percentage when the total is known.
final class ProgressBar: @unchecked Sendable {
    private let started = DispatchTime.now()
    private var drawn = false

    func draw(_ console: Console, arrow: String, bytes: Int64, total: Int64?, note: String? = nil) {
        let seconds = max(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9, 0.001)
        let rate = Self.size(Int64(Double(bytes) / seconds)) + "/s"
        var line: String
        if let total, total > 0 {
            let fraction = min(Double(bytes) / Double(total), 1)
            let width = 30, filled = Int(fraction * Double(width))
            line = arrow + " " + Fixed.text(fraction * 100, decimals: 1, width: 5) + "% [" + String(repeating: "#", count: filled)
                + String(repeating: " ", count: width - filled) + "] \(Self.size(bytes)) of \(Self.size(total))  \(rate)"
        } else {
            line = "\(arrow) \(Self.size(bytes))  \(rate)"
        }
        if let note { line += "  (\(note))" }
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
        return unit == 0 ? "\(bytes) B" : Fixed.text(value, decimals: 1) + " " + units[unit]
    }
}
