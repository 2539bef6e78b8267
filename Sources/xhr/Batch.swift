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

/// Several URLs in one run: each to its own file, one after another, or at once with -Z
/// (through a ``RequestQueue`` of --parallel-max slots), with one progress line for all.
extension Fetch {
    /// Several URLs (with or without -Z): every transfer goes to a file.
    var isBatch: Bool { urls.count > 1 }

    func validateBatch() throws {
        let refused = [("-i", include), ("-I", head), ("-D", dumpHeader != nil), ("-w", writeOut != nil),
                       ("-C", continueAt != nil), ("-J", remoteHeaderName), ("-v", verbose), ("--states", states), ("--sync", sync),
                       ("--trace", trace != nil)]
        if let (name, _) = refused.first(where: { $0.1 }) {
            throw ValidationError("\(name) works with one URL only")
        }
        if !remoteName, outputs.count != urls.count {
            throw ValidationError("with several URLs, give -o once per URL (\(urls.count) URLs, \(outputs.count) -o) or -O")
        }
    }

    /// A file in --output-dir, when one is given and `path` is relative.
    func inOutputDirectory(_ path: String) -> String {
        guard let outputDir, !path.hasPrefix("/") else { return path }
        return outputDir.hasSuffix("/") ? outputDir + path : outputDir + "/" + path
    }

    func runBatch(console: Console, user: String?, bearer: String?) throws {
        let body = try requestBody(console: console)
        let query = get ? try queryData(console: console) : nil
        let targets = urls.map { get ? Self.url($0, withQuery: query) : uploadTarget($0) }
        let paths = try targets.enumerated().map { index, target in
            guard remoteName else { return inOutputDirectory(outputs[index]) }
            guard let name = Self.remoteFileName(target) else { throw console.exit(23, "-O: \(target) has no file name to write to") }
            return inOutputDirectory(name)
        }
        var seen = Set<String>()
        for path in paths where !seen.insert(path).inserted {
            throw ValidationError("two URLs would write the same file, \(path): give -o once per URL")
        }
        if !noCookies, let cookie, !cookie.contains("=") { Cookies.load(file: cookie) }

        let queue = RequestQueue(maxSimultaneous: parallel ? parallelMax : 1)
        let group = DispatchGroup()
        var transfers: [(url: String, request: HttpRequest, session: Session)] = []
        var sentCookies: [Cookies.Sent] = []
        var failures: [Outcome] = []
        // Every request is set up before the first is sent: a URL the library refuses stops
        // the run with nothing in flight.
        do {
            for (target, path) in zip(targets, paths) {
                let request = HttpRequest()
                let session = Session(request: request, output: .file(path, mode: Output.FileMode(createsFolders: createDirs)), headDump: nil, console: console, include: false,
                                      discardErrorBody: fail, verbose: false, states: false, uploadTotal: body.size, progress: false)
                // A finished transfer's file is closed at once: a long list never holds them all open.
                session.onDone = { [unowned session] in
                    session.closeOutputs()
                    group.leave()
                }
                request.delegate = session
                try configure(request, url: target, user: user, bearer: bearer, console: console)
                if let sent = try sendCookies(request, url: target, console: console) { sentCookies.append(sent) }
                request.queue = queue
                transfers.append((target, request, session))
            }
        } catch {
            restore(sentCookies)
            throw error
        }
        var sent: [(url: String, request: HttpRequest, session: Session)] = []
        for transfer in transfers {
            group.enter()
            guard send(transfer.request, body) else {
                group.leave()
                let code: Int32 = transfer.request.lastError?.code == .fileUnreadable ? 26 : 2
                failures.append(Outcome(code: code, message: "\(transfer.url): \(transfer.request.lastError?.message ?? "send refused")"))
                continue
            }
            sent.append(transfer)
        }
        transfers = sent
        wait(for: group, transfers: transfers.map(\.request), console: console)
        restore(sentCookies)
        for (target, request, session) in transfers {
            session.closeOutputs()
            if let outcome = finish(request, session: session) {
                failures.append(Outcome(code: outcome.code, message: "\(target): \(outcome.message)"))
            }
        }
        for failure in failures.dropLast() { _ = console.exit(failure.code, failure.message) }
        if let cookieJar, !noCookies { Cookies.writeJar(to: cookieJar, console: console) }
        // As curl: the exit status of the last failure.
        if let last = failures.last { throw console.exit(last.code, last.message) }
    }

    /// Takes the -b pairs out of the jar again, the last ones joined first out first (a pair
    /// one URL replaced may be one an earlier URL added).
    private func restore(_ sentCookies: [Cookies.Sent]) {
        for sent in sentCookies.reversed() { sent.restore() }
    }

    /// Waits for every DONE, drawing one progress line for all on a terminal.
    private func wait(for group: DispatchGroup, transfers: [HttpRequest], console: Console) {
        guard showsProgress else { return group.wait() }
        let bar = ProgressBar()
        let draw = {
            var received: Int64 = 0, done = 0, running = 0
            for request in transfers {
                received += max(0, request.getProgress().bytesReceived)
                switch request.getState() {
                case .done: done += 1
                case .sent, .headersReceived, .loading: running += 1
                default: break
                }
            }
            bar.draw(console, arrow: "↓", bytes: received, total: nil,
                     note: "\(done) of \(transfers.count) done, \(running) running")
        }
        let timer = DispatchSource.makeTimerSource(queue: HttpRequest.defaultCallbackQueue)
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.setEventHandler(handler: draw)
        timer.resume()
        group.wait()
        timer.cancel()
        HttpRequest.defaultCallbackQueue.sync {
            draw()
            bar.finish(console)
        }
    }
}
