import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// libcurl's callbacks: each finds its transfer through the easy handle's context.
extension Transfer {
    /// Runs `body` with the easy handle a libcurl callback's context points to and its
    /// transfer. The engine holds both for as long as libcurl has the transfer, so no
    /// reference is taken here (this runs for every header line and body chunk).
    private static func with<Result>(_ context: UnsafeMutableRawPointer?, _ body: (Transfer, EasyHandle) -> Result) -> Result {
        Unmanaged<EasyHandle>.fromOpaque(context!)._withUnsafeGuaranteedRef { handle in
            handle.transfer!._withUnsafeGuaranteedRef { body($0, handle) }
        }
    }

    static let writeCallback: curl_write_callback = { data, size, count, context in
        let length = size * count
        guard length > 0, let data else { return length }
        let disposition = with(context) { transfer, _ in
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            return transfer.progress.downloadPacer == nil ? transfer.bodyBytes(bytes) : transfer.pacedBodyBytes(bytes)
        }
        switch disposition {
        case .accepted: return length
        case .paused: return cxhr_write_pause  // libcurl hands the same bytes again on resume
        case .refused: return 0
        }
    }

    /// Called by the header callback (`cxhr_head_callback`) when a block of header lines
    /// ended, with the easy handle as context.
    static let headEndedCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { context in
        with(context) { transfer, handle in transfer.headEnded(handle.headParser.finishHead()) } ? 1 : 0
    }

    /// Called by the header callback when a 401 or 407 status line arrives, before libcurl
    /// reads the challenge: a request that may answer Negotiate has GSS-API pointed at the
    /// credential cache now. (Only then: a request that meets no challenge never touches
    /// GSS-API, whose state a program's exit tears down while the engine runs.)
    static let challengedCallback: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
        with(context) { transfer, _ in
            if transfer.message.usesNegotiate { TransferEngine.shared.selectCredentialCacheForChallenge() }
        }
    }

    /// Hands libcurl the next bytes of the body it uploads: from the file, or from memory.
    func readBody(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard case .bytes(let bytes, _) = body else {
            // The file's bytes up to the size sent (a range ends there; a file that grew
            // since it was opened must not send more than its Content-Length says).
            let wanted = Int(min(Int64(capacity), max(0, fileSize - Int64(progress.bodyOffset))))
            while true {
                let got = Glibc.read(fileDescriptor, buffer, wanted)
                if got >= 0 {
                    progress.bodyOffset += got
                    return got
                }
                if errno != EINTR { return cxhr_read_abort }
            }
        }
        let count = min(capacity, bytes.count - progress.bodyOffset)
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + progress.bodyOffset, byteCount: count)
        }
        progress.bodyOffset += count
        return count
    }

    /// The bytes of the body libcurl has yet to read.
    var bodyBytesLeft: Int {
        if case .bytes(let bytes, _) = body { return bytes.count - progress.bodyOffset }
        return Int(clamping: max(0, fileSize - Int64(progress.bodyOffset)))
    }

    /// Moves the upload back (libcurl rewinds for a redirect or an authentication round).
    private func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard case .bytes(let bytes, _) = body else {
            // Offsets count from the start of the body, the range's start in the file.
            guard origin == SEEK_SET, (0...fileSize).contains(offset),
                  lseek(fileDescriptor, off_t(fileStart + offset), SEEK_SET) >= 0 else { return cxhr_seek_fail }
            progress.bodyOffset = Int(offset)
            return 0
        }
        guard origin == SEEK_SET, (0...Int64(bytes.count)).contains(offset) else { return cxhr_seek_fail }
        progress.bodyOffset = Int(offset)
        return 0
    }

    static let readCallback: curl_read_callback = { buffer, size, count, context in
        with(context) { transfer, _ in
            transfer.progress.uploadPacer == nil ? transfer.readBody(into: buffer!, capacity: size * count)
                : transfer.pacedReadBody(into: buffer!, capacity: size * count)
        }
    }

    static let seekCallback: curl_seek_callback = { context, offset, origin in
        with(context) { transfer, _ in transfer.seekBody(to: Int64(offset), origin: origin) }
    }

    /// `CURLOPT_PREREQFUNCTION`, set only for a send with an observer.
    static let prereqCallback: curl_prereq_callback = { context, remote, _, remotePort, localPort in
        with(context) { transfer, handle in
            transfer.connectionReady(handle.easy, remote: remote, remotePort: remotePort, localPort: localPort)
        }
        return CURL_PREREQFUNC_OK
    }

    /// `CURLOPT_DEBUGFUNCTION`, set only for a send traced (``HttpRequest/onTrace``).
    static let debugCallback: curl_debug_callback = { _, type, data, size, context in
        if let data { with(context) { transfer, _ in transfer.traced(type, UnsafeRawBufferPointer(start: data, count: size)) } }
        return 0
    }

    static let progressCallback: curl_xferinfo_callback = { context, _, _, toUpload, uploaded in
        with(context) { transfer, _ in transfer.withOwner { $0.transferSent(transfer, bytes: Int64(uploaded), of: Int64(toUpload)) } }
        return 0
    }
}
