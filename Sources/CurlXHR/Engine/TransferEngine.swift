import CCurlShim
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one thread that owns libcurl: the multi handle, the share handle and every easy handle.
///
/// libcurl shares neither a connection cache nor a cookie jar between threads that run
/// transfers at once, so every transfer, synchronous or not, runs here. Other threads post
/// commands and wake the loop with `curl_multi_wakeup`; the loop is `curl_multi_perform`,
/// `curl_multi_info_read`, `curl_multi_poll`.
final class TransferEngine: TransferRunner, @unchecked Sendable {
    static let shared = TransferEngine()

    /// Sends started and not yet completed, for checks that no transfer is left behind. (A
    /// request keeps its finished transfer for its next send; that one goes with the request.)
    static let transfersInFlight = Atomic<Int>(0)

    private enum Command {
        case start(Transfer)
        /// Stop the transfer's send with this number (``Transfer/sends``).
        case cancel(Transfer, send: Int)
        case resume(Transfer)
        /// Stop the transfer's send (if any), then close the connections named.
        case close((Transfer, send: Int)?, [ConnectionID])
        case run(@Sendable (_ cookieHandle: UnsafeMutableRawPointer) -> Void)
    }

    /// Commands posted by other threads, and whether the loop waits for them in
    /// `curl_multi_poll`: only a post that finds it waiting pays for a wake-up.
    private struct Inbox {
        var commands: [Command] = []
        var loopWaits = false
    }

    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer
    private let inbox = Locked(Inbox())

    // Engine thread only (so without Swift's run-time exclusivity checks).
    @exclusivity(unchecked) private var idleHandles: [EasyHandle] = []
    /// The handles libcurl runs transfers on (each knows its index).
    @exclusivity(unchecked) private var running: [EasyHandle] = []
    /// Connections `close()` asked to close while a transfer used them: closed when none does.
    @exclusivity(unchecked) private var pendingCloses: [ConnectionID] = []
    /// libcurl's limit on the connections it keeps, open or idle (`CURLMOPT_MAXCONNECTS`).
    /// libcurl's default is four per transfer running, which is four when one runs: a
    /// program sending one request at a time lost its idle connections to the fifth host, or
    /// to a short burst. Here at least 64, and four per transfer running beyond that.
    @exclusivity(unchecked) private var maxConnections = 64
    /// Requests whose callbacks became due during this round of the loop, by the queue they
    /// run on: handed over together when the round ends (one hop per queue, not one per
    /// request and state). Those of the default queue apart, in a buffer kept from round to
    /// round.
    @exclusivity(unchecked) private var dueOnDefaultQueue: [HttpRequest] = []
    @exclusivity(unchecked) private var dueElsewhere: [(queue: DispatchQueue, requests: [HttpRequest])] = []
    /// `async` responses with news for their waiting task this round: woken when it ends.
    @exclusivity(unchecked) private var dueStreams: [ResponseStream] = []
    /// This round woke another thread with results: a callback queue, a synchronous send, or
    /// tasks waiting for `async` responses.
    @exclusivity(unchecked) private var handedOverResults = false
    /// The bits of the synchronous sends whose transfers this round completed: woken together
    /// when it ends (``Wakeups``).
    @exclusivity(unchecked) var completedSendBits: UInt32 = 0
    /// An easy handle attached to the share handle, for work on the shared cookie jar.
    private let cookieHandle: UnsafeMutableRawPointer
    /// The credential cache GSS-API was last pointed at on this thread ("" for the default).
    @exclusivity(unchecked) private var gssCache: String?
    /// The process-wide settings as of `settingsVersion` (nil before the first transfer).
    @exclusivity(unchecked) private var settings: ProcessSettings?
    @exclusivity(unchecked) private var settingsVersion = 0
    private static let maxIdleHandles = 256
    /// The transfers with headers or idle timeouts, and their clocks (these two, `add`,
    /// `remove` and `end`: engine thread only, also from TransferEngine+Deadlines).
    @exclusivity(unchecked) var phaseWatch = PhaseWatch()
    /// Transfers waiting to be tried again.
    @exclusivity(unchecked) var retryWaits = TransferWaits()
    /// Transfers paused for their rate limits (TransferEngine+Pacing).
    @exclusivity(unchecked) var paceWaits = TransferWaits()
    /// Transfers the cache answers, played to their owners a part each round
    /// (TransferEngine+Replays).
    @exclusivity(unchecked) var replays: [Transfer] = []
    /// Profiles of recent transfers, newest last (see `profile(for:_:)`).
    @exclusivity(unchecked) private var recentProfiles: [EasyProfile] = []
    private static let maxRecentProfiles = 8

    private init() {
        curl_global_init(cxhr_global_default)
        guard let multi = curl_multi_init(), let share = curl_share_init(), let cookieHandle = curl_easy_init() else {
            preconditionFailure("libcurl could not allocate its multi, share or easy handle")
        }
        self.multi = multi
        self.share = share
        self.cookieHandle = cookieHandle
        // Only this thread touches the share handle, so it needs no lock callbacks.
        for data in [CURL_LOCK_DATA_DNS, CURL_LOCK_DATA_SSL_SESSION, CURL_LOCK_DATA_COOKIE] {
            _ = cxhr_share_set_long(share, CURLSHOPT_SHARE, Int(data.rawValue))
        }
        _ = cxhr_multi_set_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = cxhr_multi_set_long(multi, CURLMOPT_MAXCONNECTS, maxConnections)
        _ = cxhr_easy_set_share(cookieHandle, share)
        _ = cxhr_easy_set_string(cookieHandle, CURLOPT_COOKIEFILE, "")
        // Before the thread starts, so this thread may still use the handles.
        CookieStore.shared.load(into: cookieHandle)
        // After curl_global_init, which registered OpenSSL's own exit handler: exit runs
        // handlers in reverse order, so this one runs first.
        atexit(Self.exitHandler)
        startDetachedThread("engine") { self.run() }
    }

    // MARK: Exit

    /// Set by `exit()`: the engine stops at the start of its next round, for good.
    private let exiting = Atomic<Bool>(false)
    private let parked = DispatchSemaphore(value: 0)

    /// A program may exit with transfers in flight. Its exit then runs OpenSSL's cleanup and
    /// the libraries' finalisers (libkrb5, libgssapi) while the engine may be inside libcurl:
    /// a TLS handshake on freed locks crashes. So the exit first stops the engine: it waits
    /// (at most a second) until the engine is between rounds, and the engine never calls
    /// libcurl again.
    private static let exitHandler: @convention(c) () -> Void = {
        let engine = TransferEngine.shared
        guard !isCurrentThread else { return }
        engine.exiting.store(true, ordering: .releasing)
        curl_multi_wakeup(engine.multi)
        _ = engine.parked.wait(timeout: .now() + 1)
    }

    /// Engine thread: when the program exits, parks the thread for good.
    private func parkIfExiting() {
        guard exiting.load(ordering: .acquiring) else { return }
        parked.signal()
        while true { pause() }
    }

    // MARK: Commands from any thread

    func start(_ transfer: Transfer) { post(.start(transfer)) }

    /// Stops `transfer`'s send numbered `send` (``Transfer/sends`` when it was aborted).
    func cancel(_ transfer: Transfer, send: Int) { post(.cancel(transfer, send: send)) }

    /// Lets a transfer whose body was paused (its consumer was behind) deliver again.
    func resume(_ transfer: Transfer) { post(.resume(transfer)) }

    /// Stops `transfer` (if any), then closes `connections` and the one the transfer used, as
    /// soon as no other transfer runs on them.
    func close(_ transfer: (Transfer, send: Int)?, connections: [ConnectionID]) { post(.close(transfer, connections)) }

    /// Runs `work` on the engine thread with an easy handle attached to the shared cookie
    /// jar, and returns when it has run.
    func withCookieHandle(_ work: @escaping @Sendable (UnsafeMutableRawPointer) -> Void) {
        let done = DispatchSemaphore(value: 0)
        post(.run { handle in
            work(handle)
            done.signal()
        })
        done.wait()
    }

    /// Queues a command; wakes the loop only if it waits (or is about to wait) in
    /// `curl_multi_poll` and no earlier post woke it. A loop still busy with its round finds
    /// the command before it would wait, so it needs no wake-up (no write to libcurl's wake-up
    /// socket, no read to drain it).
    private func post(_ command: Command) {
        let wake = inbox.withLock { inbox in
            inbox.commands.append(command)
            defer { inbox.loopWaits = false }
            return inbox.loopWaits
        }
        if wake { curl_multi_wakeup(multi) }
    }

    /// Whether the calling thread is the engine's (0 until the engine runs).
    static var isCurrentThread: Bool { thread.load(ordering: .relaxed) == UInt(pthread_self()) }
    private static let thread = Atomic<UInt>(0)

    /// Runs `request`'s due callbacks on `queue` once this round of the loop ends. Engine
    /// thread only.
    func deliverLater(_ request: HttpRequest, on queue: DispatchQueue) {
        if queue === HttpRequest.defaultCallbackQueue {
            dueOnDefaultQueue.append(request)
        } else if let index = dueElsewhere.firstIndex(where: { $0.queue === queue }) {
            dueElsewhere[index].requests.append(request)
        } else {
            dueElsewhere.append((queue, [request]))
        }
    }

    /// Wakes `stream`'s waiting task once this round of the loop ends, with everything the
    /// round brought it (a small response's head, body and end at once). Engine thread only.
    func wakeLater(_ stream: ResponseStream) {
        dueStreams.append(stream)
    }

    private func handOverDeliveries() {
        if !dueStreams.isEmpty {
            handedOverResults = true
            // Each stream is let go of as soon as it is woken: a task that finds its request's
            // last stream referenced by nothing else reuses it (and its transfer) for its next
            // response.
            if dueStreams.count == 1 {
                dueStreams.removeLast().wakeWaiters()
            } else {
                // From the pool, not from this thread (see StreamBatch).
                StreamBatch(taking: &dueStreams).wake()
            }
        }
        if !dueOnDefaultQueue.isEmpty {
            handedOverResults = true
            DefaultQueueDelivery.shared.deliver(&dueOnDefaultQueue)
        }
        guard !dueElsewhere.isEmpty else { return }
        handedOverResults = true
        for (queue, batch) in dueElsewhere {
            queue.async {
                for request in batch { request.deliverReports() }
            }
        }
        dueElsewhere.removeAllKeepingBuffer()
    }

    // MARK: The loop

    private func run() {
        Self.thread.store(UInt(pthread_self()), ordering: .relaxed)
        var pending: [Command] = []
        var running: Int32 = 0
        while true {
            parkIfExiting()
            inbox.withLock { inbox in
                swap(&pending, &inbox.commands)
                inbox.loopWaits = false
            }
            for command in pending {
                switch command {
                case .start(let transfer): begin(transfer)
                case .cancel(let transfer, let send): stop(transfer, send: send)
                case .resume(let transfer):
                    if !transfer.isFinished, let handle = transfer.handle {
                        transfer.progress.pausedByConsumer = false
                        curl_easy_pause(handle.easy, cxhr_pause_continue)
                    } else if !transfer.isFinished {
                        transfer.progress.pausedByConsumer = false  // a replay goes on next round
                    }
                case .run(let work): work(cookieHandle)
                case .close(let transfer, var connections):
                    if let (transfer, send) = transfer, let used = stop(transfer, send: send) { connections.append(used) }
                    closeWhenIdle(connections)
                }
            }
            pending.removeAllKeepingBuffer()
            curl_multi_perform(multi, &running)
            collectFinished()
            if !replays.isEmpty { playReplays() }
            if !phaseWatch.isEmpty { endExpired() }
            if !retryWaits.isEmpty { startDueRetries() }
            if !paceWaits.isEmpty { resumeDuePaced() }
            if !pendingCloses.isEmpty {
                let waiting = pendingCloses
                pendingCloses.removeAll()
                closeWhenIdle(waiting)
            }
            handOverDeliveries()
            if completedSendBits != 0 {
                Wakeups.wake(completedSendBits)
                completedSendBits = 0
                handedOverResults = true
            }
            if handedOverResults && running == 0 {
                // Nothing left in flight: the next work can only come from the threads just
                // handed results (callbacks, or a waiting synchronous send). Let them run first
                // where they share this core, so they find the loop busy and post without a
                // wake-up.
                sched_yield()
            }
            handedOverResults = false
            // Wait only when no command came during the round; under the lock a post either
            // lands before this check or sees that the loop waits and wakes it.
            let waits = inbox.withLock { inbox in
                inbox.loopWaits = inbox.commands.isEmpty
                return inbox.loopWaits
            }
            if waits {
                // No longer than the nearest headers or idle deadline, retry, or end of a rate pause.
                var wait: Int32 = 1000
                if !phaseWatch.isEmpty { wait = min(wait, phaseWatch.millisecondsToDeadline() ?? wait) }
                if !retryWaits.isEmpty { wait = min(wait, retryWaits.millisecondsToNext() ?? wait) }
                if !paceWaits.isEmpty { wait = min(wait, paceWaits.millisecondsToNext() ?? wait) }
                if replays.contains(where: { !$0.progress.pausedByConsumer }) { wait = 0 }
                curl_multi_poll(multi, nil, 0, wait, nil)
            }
        }
    }

    /// Stops a send the request aborted: takes it out of libcurl, or, when its start command
    /// is still to come (the abort posted first), marks it so that the start ends it at once.
    /// A command for a send that ended or was followed by another changes nothing. Reads only
    /// the engine's own fields of the transfer: the request may be preparing its next send.
    /// Returns the connection it ran on.
    @discardableResult
    private func stop(_ transfer: Transfer, send: Int) -> ConnectionID? {
        if send > transfer.begunSend {
            transfer.cancelledSend = send
            return nil
        }
        guard send == transfer.begunSend else { return nil }
        if endReplay(transfer) { return nil }
        return end(transfer, failure: nil, report: false)
    }

    private func begin(_ transfer: Transfer) {
        transfer.beginSend()
        if transfer.cancelledSend == transfer.begunSend {
            // Aborted before its start came: the synchronous send waiting for it returns.
            transfer.isFinished = true
            completedSendBits |= transfer.complete()
            return
        }
        if transfer.answersFromCache {
            beginReplay(transfer)
            return
        }
        let settings = currentSettings()
        let profile = profile(for: transfer, settings)
        guard let handle = handle(for: profile) else {
            transfer.isFinished = true
            transfer.finish(TransferFailure(kind: .other, text: "out of memory: no libcurl handle"))
            completedSendBits |= transfer.complete()
            return
        }
        transfer.handle = handle
        // A server's Negotiate challenge selects it when it comes (Transfer.challengedCallback).
        if transfer.proxyUsesNegotiate { selectCredentialCache(settings.credentialCache) }
        // The engine's reference; released in `end`.
        _ = Unmanaged.passRetained(transfer)
        if let failure = transfer.configure(handle, profile: profile, share: share) {
            end(transfer, failure: TransferFailure(kind: .other, text: failure))
            return
        }
        handToLibcurl(transfer, handle)
    }

    /// Adds a transfer (a new one, or one tried again) to libcurl and starts its clocks; ends
    /// it when libcurl refuses it.
    func handToLibcurl(_ transfer: Transfer, _ handle: EasyHandle) {
        let code = add(transfer, handle)
        guard code == CURLM_OK else {
            end(transfer, failure: TransferFailure(kind: .other, text: String(cString: curl_multi_strerror(code))))
            return
        }
        if transfer.switches.timeouts.needsPhaseClock { phaseWatch.watch(transfer, timeouts: transfer.switches.timeouts) }
    }

    /// Hands the transfer on `handle` to libcurl.
    func add(_ transfer: Transfer, _ handle: EasyHandle) -> CURLMcode {
        let code = curl_multi_add_handle(multi, handle.easy)
        guard code == CURLM_OK else { return code }
        transfer.isAdded = true
        handle.runningIndex = running.count
        running.append(handle)
        if running.count * 4 > maxConnections {
            maxConnections = running.count * 4
            _ = cxhr_multi_set_long(multi, CURLMOPT_MAXCONNECTS, maxConnections)
        }
        return code
    }

    /// Takes the transfer on `handle` out of libcurl.
    func remove(_ transfer: Transfer, _ handle: EasyHandle) {
        guard transfer.isAdded else { return }
        transfer.isAdded = false
        curl_multi_remove_handle(multi, handle.easy)
        let index = handle.runningIndex
        running.swapAt(index, running.count - 1)
        running[index].runningIndex = index
        running.removeLast()
        handle.runningIndex = -1
    }

    /// Closes each connection now, or once no transfer runs on it.
    private func closeWhenIdle(_ connections: [ConnectionID]) {
        for connection in connections {
            if running.contains(where: { ConnectionID($0.easy) == connection }) {
                if !pendingCloses.contains(connection) { pendingCloses.append(connection) }
            } else {
                LibcurlSockets.shutDown(connection)
            }
        }
    }

    /// The process-wide settings, read again when they changed since the last read. A setting
    /// changed before a send posted its transfer applies to it: the change is counted before
    /// the post, which the engine took before this.
    private func currentSettings() -> ProcessSettings {
        let version = ProcessSettings.version.load(ordering: .acquiring)
        if let settings, version == settingsVersion { return settings }
        let current = ProcessSettings()
        let limits = current.connectionLimits
        if limits != (settings?.connectionLimits ?? ConnectionLimits()) {
            // Transfers beyond them wait inside libcurl for a connection to free.
            _ = cxhr_multi_set_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, limits.total)
            _ = cxhr_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, limits.perHost)
        }
        settings = current
        settingsVersion = version
        return current
    }

    /// The profile object for `transfer`: that of a recent transfer with equal fields (found
    /// without building the transfer's), else a new one, kept for the transfers that follow.
    private func profile(for transfer: Transfer, _ settings: ProcessSettings) -> EasyProfile {
        for index in recentProfiles.indices.reversed() where transfer.matches(recentProfiles[index], settings) {
            return recentProfiles[index]
        }
        let profile = EasyProfile(transfer.profile(settings))
        if recentProfiles.count == Self.maxRecentProfiles { recentProfiles.removeFirst() }
        recentProfiles.append(profile)
        return profile
    }

    /// An idle handle, preferably one of the last four idled that is already set up for
    /// `profile`, else a new one.
    private func handle(for profile: EasyProfile) -> EasyHandle? {
        // A handle keeps its cookie engine switched on even through curl_easy_reset, so a
        // transfer without cookies takes a new handle.
        guard profile.fields.switches.cookies, !idleHandles.isEmpty else { return EasyHandle() }
        let last = idleHandles.count - 1
        for index in stride(from: last, through: max(0, last - 3), by: -1) where idleHandles[index].isSetUp(for: profile) {
            let handle = index == last ? idleHandles.removeLast() : idleHandles.remove(at: index)
            // Equal, if not the same object: found by identity next time.
            if handle.profile !== profile { handle.profile = profile }
            return handle
        }
        return idleHandles.removeLast()
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = cxhr_message_result(message)
            var context: UnsafeMutableRawPointer?
            guard cxhr_easy_get_pointer(easy, CURLINFO_PRIVATE, &context) == CURLE_OK, let context,
                  let transfer = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue().transfer?.takeUnretainedValue()
            else { continue }
            let outcome = transfer.outcome(code, easy: easy)
            attemptEnded(transfer, failure: outcome.failure, status: outcome.status)
        }
    }

    /// An attempt of `transfer` ended (`failure`: how, nil when it completed, with `status`):
    /// what its hops decide is carried out: the end, the next hop, or a retry after a wait.
    func attemptEnded(_ transfer: Transfer, failure: TransferFailure?, status: Int = 0) {
        guard let handle = transfer.handle else { return }
        remove(transfer, handle)
        stopPacing(transfer)
        switch transfer.next(handle, failure: failure) {
        case .end(let failure):
            end(transfer, failure: failure, status: status)
        case .follow:
            let added = add(transfer, handle)
            if added != CURLM_OK {
                end(transfer, failure: TransferFailure(kind: .other, text: String(cString: curl_multi_strerror(added))))
            }
        case .retry(let delay):
            transfer.usedConnection(ConnectionID(handle.easy))
            waitToRetry(transfer, delay)
        }
    }

    /// Takes the transfer out of libcurl, tells the request how it ended (unless the request
    /// already knows, as after an abort), and releases the engine's hold on it. Returns the
    /// connection the transfer ran on last.
    @discardableResult
    func end(_ transfer: Transfer, failure: TransferFailure?, status: Int = 0, report: Bool = true) -> ConnectionID? {
        guard !transfer.isFinished, let handle = transfer.handle else { return nil }
        transfer.isFinished = true
        let connection = ConnectionID(handle.easy)
        remove(transfer, handle)
        phaseWatch.forget(transfer)
        retryWaits.forget(transfer)
        stopPacing(transfer)
        if handle.headParser.sawSetCookie {
            // On disk before DONE is reported.
            CookieStore.shared.persist(from: cookieHandle)
        }
        // The cache keeps a whole response, and answers from the store after its validation's 304.
        var replaysNext = false
        if report {
            if failure == nil { transfer.reportHeldHead() }
            let record = transfer.record(handle, connection: connection)
            transfer.usedConnection(connection)
            if transfer.cache?.networkEnded(success: failure == nil) == true { transfer.observer?.post(.cache(.stored)) }
            if failure == nil, let exchange = transfer.cache, exchange.answersAtOnce {
                exchange.record = record
                replaysNext = true
            } else {
                transfer.finish(failure, fallbackStatus: status, record: record)
            }
        } else {
            transfer.cache?.networkEnded(success: false)
        }
        let heardChallenge = transfer.heardChallenge
        if let mime = transfer.mime.take() {
            var options = EasyOptions(handle.easy)
            options.set(CURLOPT_MIMEPOST, pointer: nil)
            curl_mime_free(mime)
        }
        transfer.handle = nil
        handle.transfer = nil
        if !report || failure != nil || heardChallenge {
            // libcurl keeps authentication state in the handle: the next transfer starts
            // from a reset.
            handle.profile = nil
        }
        recycle(handle)
        if replaysNext {
            transfer.isFinished = false
            replays.append(transfer)  // with the engine's reference
            return connection
        }
        completedSendBits |= transfer.complete()
        Unmanaged.passUnretained(transfer).release()
        return connection
    }

    /// Points GSS-API at the credential cache for a challenge libcurl is about to answer.
    /// Engine thread, inside a libcurl callback.
    func selectCredentialCacheForChallenge() {
        selectCredentialCache(currentSettings().credentialCache)
    }

    /// The credential cache GSS-API is to use now ("": the user's default): for a SOCKS5
    /// proxy's handshake, which runs on a thread of its own. Engine thread.
    var credentialCache: String { currentSettings().credentialCache }

    /// Points GSS-API on this thread (where libcurl runs SPNEGO) at `wanted`: the library's
    /// ticket cache while it holds tickets, else ("") the user's default cache.
    private func selectCredentialCache(_ wanted: String) {
        guard wanted != gssCache else { return }
        gssCache = wanted
        _ = cxhr_gss_use_ccache(wanted.isEmpty ? nil : wanted)
    }

    /// Keeps easy handles for reuse, with their options.
    private func recycle(_ handle: EasyHandle) {
        guard idleHandles.count < Self.maxIdleHandles else { return }  // released: cleaned up
        idleHandles.append(handle)
    }
}
