#if canImport(Glibc)
import Glibc
#endif

/// The cache's part in one send: the plan made before it, then what its final head decided
/// (keep the body as it arrives, or answer from the store after a 304), then storing or
/// invalidating when it ends; or, for an answer from the store, the replay of the stored
/// response to the transfer's owner.
///
/// Made by the request's thread before the send; from then on used by one thread at a time:
/// the engine thread, or the thread of a synchronous send answered from the store.
final class CacheExchange: @unchecked Sendable {
    let cache: HttpCache
    let request: CacheDecision.Request
    let key: String
    private(set) var plan: CacheDecision.Plan
    let requestTime: Double

    /// The entry being written from the response, and its body file.
    private var filling: (entry: CacheStore.Entry, body: CacheStore.BodyFile)?
    /// The final head (its status and fields), for invalidation and freshening at the end.
    private var finalStatus = 0
    private var finalFields: CacheRules.Fields = []
    /// The stored response that answers, once the plan or a 304 says so.
    private(set) var replay: Replay?
    /// What the network part measured (a validation), for the send's metrics.
    var record = SendRecord()

    init(cache: HttpCache, request: CacheDecision.Request, key: String, plan: CacheDecision.Plan, requestTime: Double) {
        self.cache = cache
        self.request = request
        self.key = key
        self.plan = plan
        self.requestTime = requestTime
        switch plan {
        case .serve(let entry, let age, let notModified):
            replay = Replay(entry: entry, age: age, status: notModified ? 304 : nil, withBody: !notModified && request.method != "HEAD")
        case .servePart(let entry, let age, let part):
            replay = Replay(entry: entry, age: age, status: 206, withBody: true)
            replay?.part = part
            replay?.offset = part.lowerBound
        case .gatewayTimeout:
            replay = Replay(madeStatus: 504)
        default:
            break
        }
    }

    /// An answer from the memo (``CacheMemo``) to a plain GET.
    init(cache: HttpCache, request: CacheDecision.Request, memo item: CacheMemo.Item, now: Double) {
        self.cache = cache
        self.request = request
        key = item.entry.key
        let age = item.age(at: now)
        plan = .serve(item.entry, age: age, notModified: false)
        requestTime = now
        replay = Replay(entry: item.entry, age: age, status: nil, withBody: true)
        replay?.headLines = item.headLines
        replay?.body = item.body
    }

    deinit {
        if let filling { cache.store.discard(filling.body) }
    }

    /// The cache answers (from the store, or with a failure when offline), not the network;
    /// after a validation's 304 as well.
    var answersAtOnce: Bool {
        if replay != nil { return true }
        if case .offlineMiss = plan { return true }
        return false
    }

    /// The failure a send with nothing to answer ends with, before any network.
    var offlineFailure: TransferFailure? {
        guard case .offlineMiss = plan else { return nil }
        let what = request.reads && !request.range ? "has no stored response" : "is never answered from a cache"
        return TransferFailure(kind: .other, text: "Not in the cache: \(request.method) \(key) \(what), and offline nothing is sent")
    }

    /// What the cache's plan tells of the send as it starts: answered from the store (a
    /// hit), or sent to the network with nothing to validate (a miss); nil for a validation,
    /// whose answer tells.
    var outcomeAtStart: HttpRequest.CacheOutcome? {
        switch plan {
        case .serve, .servePart: .hit
        case .forward, .gatewayTimeout, .offlineMiss: .miss
        case .validate: nil
        }
    }

    /// The conditions that go in place of the caller's (a validation), or nil.
    var conditions: CacheRules.Fields? {
        if case .validate(_, let conditions, _) = plan { conditions } else { nil }
    }

    // MARK: From the network

    /// A final head arrived (`afterRedirect`: at the end of redirects, so not the response of
    /// the key's URL; `afterChallenge`: after an authentication round, so to a request with
    /// credentials; `decoded`: libcurl decodes its content coding): whether it goes to the owner (`false`: a 304 the cache takes, the stored
    /// response answers when the transfer ends).
    func headArrived(_ head: RecordedHead, afterRedirect: Bool, afterChallenge: Bool, decoded: Bool) -> Bool {
        let fields = ResponseHead(head).fields
        finalStatus = head.status
        finalFields = fields
        let now = HttpCache.now()
        var asSent = request
        if afterChallenge, HeaderFieldNames.first("Authorization", in: asSent.fields) == nil {
            asSent.fields.append((name: "Authorization", value: ""))
        }
        switch CacheDecision.head(plan, request: asSent, status: head.status, fields: fields, requestTime: requestTime, responseTime: now) {
        case .replayStored(let updated):
            guard case .validate(var entry, _, _) = plan else { return true }
            entry.stored = updated
            cache.store.update(entry, to: updated, now: now)
            let age = Int(min(CacheRules.currentAge(updated, now: now), Double(1 << 31)))
            replay = Replay(entry: entry, age: age, status: nil, withBody: request.method != "HEAD")
            return false
        case .deliver(let store):
            dropFilling()
            guard store, !afterRedirect, let body = try? cache.store.beginBody() else { return true }
            let names = CacheKeys.varyNames(fields)
            let entry = CacheStore.Entry(key: key, varyNames: names, varyValues: CacheKeys.varyValues(names, in: request.fields),
                                         stored: CacheRules.Stored(status: head.status, fields: CacheRules.storedFields(fields),
                                                                   requestTime: requestTime, responseTime: now),
                                         reason: head.reason, httpVersion: head.httpVersion,
                                         decoded: decoded && ResponseHead.isEncoded(HeaderFieldNames.value("Content-Encoding", in: fields)))
            filling = (entry, body)
            return true
        }
    }

    /// Body bytes the owner took: kept too, while the response is being stored.
    func bodyTaken(_ bytes: UnsafeRawBufferPointer) {
        guard let filling else { return }
        var rest = bytes
        while !rest.isEmpty {
            let wrote = write(filling.body.descriptor, rest.baseAddress, rest.count)
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else {
                dropFilling()  // a full disk loses the entry, never the response
                return
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[wrote...])
        }
    }

    /// The network part ended (`success`: the response came whole). Stores the response or
    /// drops it, freshens or invalidates what the answer says. Returns whether it stored it.
    @discardableResult
    func networkEnded(success: Bool) -> Bool {
        guard success else {
            dropFilling()
            return false
        }
        let now = HttpCache.now()
        var stored = false
        if let filling = filling.take() {
            stored = (try? cache.store.store(filling.entry, body: filling.body, now: now)) != nil
        }
        if case .forward(_, let freshens?) = plan, finalStatus == 304, CacheRules.notModified(finalFields, matches: freshens.stored) {
            cache.store.update(freshens, to: CacheRules.updated(freshens.stored, by: finalFields, requestTime: requestTime, responseTime: now), now: now)
        }
        for url in CacheRules.invalidated(method: request.method, url: key, status: finalStatus, responseFields: finalFields) {
            if let invalidated = CacheKeys.primary(url) { cache.store.remove(key: invalidated) }
        }
        return stored
    }

    private func dropFilling() {
        if let filling = filling.take() { cache.store.discard(filling.body) }
    }
}

extension CacheExchange {
    /// A stored (or cache-made) response played to the owner as the network would: its head,
    /// then its body in chunks, honouring a consumer that pauses.
    struct Replay {
        var entry: CacheStore.Entry?
        var age = 0
        /// The status to report in place of the stored one (304 for a caller's conditional, 504 made).
        var status: Int?
        var withBody: Bool
        var headDelivered = false
        var offset: Int64 = 0
        /// The bytes of the body a 206 made from it carries; nil for the whole body.
        var part: ClosedRange<Int64>?
        var descriptor: Int32 = -1
        /// The head's field lines without `Age`, and the body, when the memo had them.
        var headLines: [UInt8]?
        var body: [UInt8]?

        init(entry: CacheStore.Entry, age: Int, status: Int?, withBody: Bool) {
            self.entry = entry
            self.age = age
            self.status = status
            self.withBody = withBody
        }

        init(madeStatus: Int) {
            status = madeStatus
            withBody = false
        }

        /// The head as the parser would have recorded it, for `body`.
        func withHead<Result>(_ body: (RecordedHead) -> Result) -> Result {
            var lines: [UInt8] = []
            if let entry, let part {
                lines = CacheMemo.headLines(CacheRules.partFields(entry.stored, part: part, size: entry.bodySize))
                lines += "Age: \(age)\r\n".utf8
            } else if let entry {
                lines = headLines ?? CacheMemo.headLines(entry.stored.fields)
                lines += "Age: \(age)\r\n".utf8
            } else {
                lines += Array("Content-Length: 0\r\n".utf8)
            }
            let code = status ?? entry?.stored.status ?? 0
            let reason = status == nil ? (entry?.reason ?? "") : ReasonPhrase.standard(for: code)
            let version = entry?.httpVersion ?? "HTTP/1.1"
            return lines.withUnsafeBufferPointer {
                body(RecordedHead(status: code, reason: reason.isEmpty ? ReasonPhrase.standard(for: code) : reason, lines: $0, httpVersion: version))
            }
        }
    }

    /// What a step of the replay came to.
    enum ReplayStep {
        /// The owner paused: the same bytes go again on resume.
        case paused
        /// More to deliver (the step's budget ran out).
        case more
        /// The end: nil for a whole response.
        case finished(TransferFailure?)
    }

    /// Delivers up to `budget` body bytes (the head first) to `transfer`'s destination.
    func replayStep(_ transfer: Transfer, budget: Int) -> ReplayStep {
        guard var replay else { return .finished(offlineFailure ?? TransferFailure(kind: .other, text: "Nothing in the cache answers")) }
        defer { self.replay = replay }
        if !replay.headDelivered {
            replay.headDelivered = true
            replay.withHead { head in transfer.deliverHead(head) }
            guard replay.withBody, let entry = replay.entry, entry.bodySize > 0 else { return .finished(nil) }
            if replay.body == nil {
                replay.descriptor = cache.store.openBody(entry)
                guard replay.descriptor >= 0 else {
                    return .finished(TransferFailure(kind: .other, text: "The cached body of \(key) could not be read"))
                }
            }
        }
        guard let entry = replay.entry, replay.withBody else { return .finished(nil) }
        if let body = replay.body {
            // A small body the memo holds: one chunk, from memory (again after a pause).
            let taken = body.withUnsafeBytes { bytes in transfer.deliverBody(bytes) }
            switch taken {
            case .accepted: return .finished(nil)
            case .paused: return .paused
            case .refused: return .finished(TransferFailure(kind: .other, text: "Failure writing output to destination", code: 23))
            }
        }
        var delivered = 0
        let descriptor = replay.descriptor, size = replay.part.map { $0.upperBound + 1 } ?? entry.bodySize
        /// The next bytes of the body from `offset` into `buffer`: how many (0 at its end, < 0 on a failure).
        func read(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
            var got: Int
            repeat {
                got = pread(descriptor, buffer.baseAddress, Int(min(Int64(buffer.count), size - offset)), off_t(offset))
            } while got < 0 && errno == EINTR
            return got
        }
        var buffer: UnsafeMutableRawBufferPointer?
        defer { buffer?.deallocate() }
        while replay.offset < size, delivered < budget {
            let offset = replay.offset
            // Straight into a buffer the owner keeps, when it takes bytes so (one copy a byte);
            // else through a buffer of the replay's own.
            let taken = transfer.deliverReading { read($0, at: offset) } ?? {
                if buffer == nil { buffer = .allocate(byteCount: Int(min(size, Int64(Self.chunkSize))), alignment: 16) }
                let got = read(buffer!, at: offset)
                guard got > 0 else { return (.accepted, got) }
                return (transfer.deliverBody(UnsafeRawBufferPointer(rebasing: buffer![..<got])), got)
            }()
            switch taken {
            case (.paused, _): return .paused
            case (.refused, _): return .finished(TransferFailure(kind: .other, text: "Failure writing output to destination", code: 23))
            case (.accepted, let got):
                guard got > 0 else { return .finished(TransferFailure(kind: .other, text: "The cached body of \(key) ended early")) }
                replay.offset += Int64(got)
                delivered += got
            }
        }
        return replay.offset < size ? .more : .finished(nil)
    }

    /// Closes the replay's body file.
    func replayEnded() {
        if let descriptor = replay?.descriptor, descriptor >= 0 {
            close(descriptor)
            replay?.descriptor = -1
        }
    }

    static let chunkSize = 256 * 1024
}
