import CCurlShim

/// The easy handle's options for this transfer.
extension Transfer {
    /// Bodies up to this size are copied into libcurl (sent with the request head, as
    /// libcurl does below 64 KiB); larger ones are streamed from the caller's bytes.
    static let copiedBodyLimit = 64 * 1024

    /// The options this transfer needs besides the per-transfer ones, with the process-wide
    /// `settings` as the engine last read them (again after every change).
    func profile(_ settings: ProcessSettings) -> EasyProfile.Fields {
        let negotiate = message.usesNegotiate
        return EasyProfile.Fields(
            body: bodyShape,
            timeoutMilliseconds: timeoutMilliseconds,
            pipelining: pipelining, waitsForMultiplexing: waitsForMultiplexing,
            environmentProxy: switches.proxy == nil && pac == nil && settings.environmentProxy,
            negotiate: negotiate, delegation: negotiate && settings.allowDelegation,
            method: message.method, headers: message.headers, contentType: contentType,
            caFile: switches.caFile ?? settings.caFile, switches: switches,
            credentials: negotiate ? nil : message.credentials, observation: observation)
    }

    /// What libcurl tells of the transfer beyond its bytes: nothing without an observer.
    private var observation: EasyProfile.Observation {
        guard let observer else { return .none }
        return observer.traces ? .trace : .events
    }

    /// Whether `profile`'s fields are what ``profile(_:)`` would build, compared field by
    /// field in place, without building or copying them (the engine checks its recent
    /// profiles for every transfer).
    func matches(_ profile: EasyProfile, _ settings: ProcessSettings) -> Bool {
        let negotiate = message.usesNegotiate
        guard profile.fields.body == bodyShape
            && profile.fields.timeoutMilliseconds == timeoutMilliseconds
            && profile.fields.pipelining == pipelining
            && profile.fields.waitsForMultiplexing == waitsForMultiplexing
            && profile.fields.environmentProxy == (switches.proxy == nil && pac == nil && settings.environmentProxy)
            && profile.fields.negotiate == negotiate && profile.fields.delegation == (negotiate && settings.allowDelegation)
            && profile.fields.method == message.method
            && profile.fields.headers == message.headers
            && profile.fields.contentType == contentType
            && profile.fields.switches == switches
            && profile.fields.observation == observation
        else { return false }
        let caFileMatches = if let own = switches.caFile { profile.fields.caFile == own } else { profile.fields.caFile == settings.caFile }
        guard caFileMatches else { return false }
        return negotiate ? profile.fields.credentials == nil : profile.fields.credentials == message.credentials
    }

    private var hasUploadLimit: Bool {
        switches.hasReach && switches.rateLimits.upload > 0
    }

    private var waitsForMultiplexing: Bool {
        pipelining && message.isSecure
    }

    private var bodyShape: BodyShape {
        switch body {
        case .none:
            Self.sendsEmptyBody(message.method) ? .empty : .none
        case .bytes(let bytes, _):
            // An upload limit paces the bytes as libcurl reads them (Transfer+Pacing).
            bytes.isEmpty ? .empty : bytes.count <= Self.copiedBodyLimit && !hasUploadLimit ? .copied : .streamed
        case .file:
            .file
        case .multipart:
            .multipart
        }
    }

    /// Whether a send of `method` with `body` carries a body (libcurl makes it a POST or PUT).
    static func sendsBody(_ method: String, _ body: RequestBody) -> Bool {
        if case .none = body { return sendsEmptyBody(method) }
        return true
    }

    /// POST, PUT and PATCH send an empty body when given none; other methods send no body.
    /// (Every transfer asks: the first byte rules out most methods without a string compare.)
    private static func sendsEmptyBody(_ method: String) -> Bool {
        guard method.utf8.first == UInt8(ascii: "P") else { return false }
        return method == "POST" || method == "PUT" || method == "PATCH"
    }

    /// The `Content-Type` the request's headers lack: a type, "" for none (rather than
    /// libcurl's default for a POST), or nil to leave it to libcurl (which sends none without
    /// a body, so a GET has no header list to build or search).
    private var contentType: String? {
        let wanted: String? = switch body {
        case .bytes(_, let type?): type
        case .bytes(_, nil): ""  // no libcurl default
        case .none: Self.sendsEmptyBody(message.method) ? "" : nil
        case .file, .multipart: nil  // libcurl's multipart type carries the boundary
        }
        // The headers are searched only when there is a type to add.
        guard wanted != nil, !message.hasHeader("Content-Type") else { return nil }
        return wanted
    }

    private var timeoutMilliseconds: Int {
        Timeouts.milliseconds(timeout)
    }

    /// Makes `handle` carry this transfer's options: all of them after a reset when the
    /// handle was set up for a different profile, else only the per-transfer ones.
    /// Returns the first failure as text.
    func configure(_ handle: EasyHandle, profile: EasyProfile, share: UnsafeMutableRawPointer) -> String? {
        var options = EasyOptions(handle.easy)
        // The engine gave a handle set up for an equal profile this very object.
        if handle.profile !== profile {
            handle.reset()
            profile.fields.apply(to: &options, handle: handle, share: share)
            if options.failure != nil { return options.failure }
            handle.profile = profile
        }
        handle.errorBuffer[0] = 0
        handle.headParser.reset()
        handle.transfer = Unmanaged.passUnretained(self)
        handle.setURL(message.url, parsed: message.parsedURL, with: &options)
        switch profile.fields.body {
        case .none:
            break
        case .empty:
            options.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
            options.set(CURLOPT_COPYPOSTFIELDS, "")
        case .copied:
            guard case .bytes(let bytes, _) = body else { break }
            options.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(bytes.count))
            bytes.withUnsafeBytes {
                // libcurl copies the bytes before this returns.
                options.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: $0.baseAddress))
            }
        case .streamed, .file:
            let size = if case .bytes(let bytes, _) = body { Int64(bytes.count) } else { fileSize }
            options.set(profile.fields.body == .file ? CURLOPT_INFILESIZE_LARGE : CURLOPT_POSTFIELDSIZE_LARGE, offset: size)
        case .multipart:
            guard case .multipart(let values, let files) = body else { break }
            switch MultipartForm.build(on: handle.easy, values: values, files: files) {
            case .failure(let problem): return problem.message
            case .success(let form):
                mime = form
                options.set(CURLOPT_MIMEPOST, pointer: UnsafeMutableRawPointer(form))
            }
        }
        if options.failure != nil {
            handle.profile = nil  // set up again from a reset, URL included
        }
        return options.failure
    }

    /// Whether SPNEGO may run for the proxy before any head reaches the header callback (its
    /// 407 to `CONNECT` never does), so GSS-API needs its cache chosen before the transfer.
    var proxyUsesNegotiate: Bool {
        switches.proxy?.credentials?.scheme == .negotiate
    }

    /// The Negotiate user and password whose tickets must come from the KDC before sending.
    var ticketCredentials: Credentials? {
        message.ticketCredentials ?? switches.proxy?.ticketCredentials
    }
}
