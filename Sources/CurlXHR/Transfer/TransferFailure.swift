import CCurlShim

/// How a transfer failed: the kind and the text `getStatusText()` returns.
struct TransferFailure: Sendable, Equatable {
    var kind: FailureKind
    var text: String
    /// No response came: a retry may mend it (``RetryPolicy``).
    var beforeResponse = false
    /// The TLS handshake with an https proxy failed (kind `.tls`): for a PAC answer, a proxy
    /// that cannot be reached (``ProxyFallback``).
    var atProxyHandshake = false
    /// libcurl's code for it (`CURLcode`, which is also curl's exit status), or the one curl
    /// would give a failure the library finds itself; 0 when none says more than `kind`.
    var code: Int32 = 0
}

/// How a finished transfer ended, in the library's terms.
extension Transfer {
    /// How a finished transfer ended: a failure, or nil and the status when the response is
    /// the outcome (including a proxy refusing the `CONNECT` tunnel, which libcurl reports as
    /// a receive error). Keeps the trailer fields the response ended with (``Progress/trailers``).
    func outcome(_ code: CURLcode, easy: UnsafeMutableRawPointer) -> (failure: TransferFailure?, status: Int) {
        var status = 0
        if let refusal = hops.refusal { return (refusal, 0) }
        if code == CURLE_OK {
            switch handle?.headParser.takeLeftover(afterHead: hops.headsSeen > 0) ?? .nothing {
            case .nothing: break
            case .trailers(let fields): progress.trailers = fields
            case .cutHead:
                // libcurl 7.88 ends a response cut off within its head without an error.
                return (TransferFailure(kind: .response, text: "The response ended inside its head: the connection closed before the empty line that ends the header fields"), 0)
            }
            if hops.lastStatus != 0 { return (nil, hops.lastStatus) }
            _ = cxhr_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return (nil, status)
        }
        if switches.proxy != nil, !hops.sawHead {
            _ = cxhr_easy_get_long(easy, CURLINFO_HTTP_CONNECTCODE, &status)
            if status >= 300 { return (nil, status) }
        }
        return (failure(code), 0)
    }

    /// A failed transfer's kind and text: libcurl's detailed message, TLS failures starting
    /// with "SSL", failures to reach the proxy naming it.
    func failure(_ code: CURLcode) -> TransferFailure {
        if let tunnelled = socksTunnelFailure(code) { return tunnelled }
        var failure = classified(code)
        failure.code = Int32(code.rawValue)
        if let pins = handle?.proxyPins, cxhr_proxy_pins_take_mismatch(pins) {
            // The library's own check of the proxy's key (libcurl 7.88 makes none) ended the
            // proxy's handshake: curl's code for a key that is not pinned.
            failure = TransferFailure(kind: .tls, text: "SSL: the proxy's public key does not match its pinned public keys (\(failure.text))",
                                      code: Int32(CURLE_SSL_PINNEDPUBKEYNOTMATCH.rawValue))
        }
        return failure
    }

    /// How the handshake with a SOCKS5 proxy with GSS-API failed, which the library runs
    /// (libcurl reports only that it could not connect): `.proxy`, with curl's codes for a
    /// proxy that cannot be reached (7), one that does not answer in time (28) and a failed
    /// handshake (97). libcurl resolves the proxy's name (the origin's is the proxy's to
    /// resolve, or the tunnel's), so a name that does not resolve is the proxy's too.
    private func socksTunnelFailure(_ code: CURLcode) -> TransferFailure? {
        guard let proxy = switches.proxy, proxy.usesGSSAPI, let tunnel = handle?.socksTunnel, !hops.sawHead else { return nil }
        var text = [CChar](repeating: 0, count: 512)
        let kind = cxhr_socks_gss_take_failure(tunnel, &text, text.count)
        let curlCode: CURLcode
        switch Int(kind) {
        case Int(CXHR_SOCKS_GSS_UNREACHABLE): curlCode = CURLE_COULDNT_CONNECT
        case Int(CXHR_SOCKS_GSS_TIMEOUT): curlCode = CURLE_OPERATION_TIMEDOUT
        case Int(CXHR_SOCKS_GSS_HANDSHAKE): curlCode = CURLE_PROXY
        default:
            guard code == CURLE_COULDNT_RESOLVE_HOST else { return nil }
            var failure = classified(code)
            failure.kind = .proxy
            failure.text = "Proxy \(proxy.name) failed: \(failure.text)"
            failure.code = Int32(CURLE_COULDNT_RESOLVE_PROXY.rawValue)
            return failure
        }
        let detail = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return TransferFailure(kind: .proxy, text: "Proxy \(proxy.name) failed: \(detail)", code: Int32(curlCode.rawValue))
    }

    /// ``failure(_:)`` but for the code.
    private func classified(_ code: CURLcode) -> TransferFailure {
        let errorBuffer = handle?.errorBuffer
        var detail = if let errorBuffer, errorBuffer[0] != 0 { String(cString: errorBuffer) } else { String(cString: curl_easy_strerror(code)) }
        if switches.hasReach, case let resolve = switches.routing.resolve, !resolve.isEmpty {
            detail = RouteEntries.readable(detail, resolve: resolve)
        }
        if let proxy = switches.proxy, Transfer.proxyFailures.contains(code.rawValue), !hops.sawHead {
            return TransferFailure(kind: .proxy, text: "Proxy \(proxy.name) failed: \(detail)")
        }
        if Transfer.tlsFailures.contains(code.rawValue) {
            var text = detail.hasPrefix("SSL") ? detail : "SSL error: \(detail)"
            // libcurl names a PEM or DER file it cannot use, not a PKCS#12 one.
            if code == CURLE_SSL_CERTPROBLEM, switches.hasReach {
                let names = [("client certificate", switches.clientIdentity), ("proxy client certificate", switches.proxyTLS.clientIdentity)]
                    .compactMap { role, identity in identity.map { "\(role) \($0.name)" } }
                if !names.isEmpty, !names.contains(where: { text.contains($0) }) { text += " (\(names.joined(separator: " or ")))" }
            }
            return TransferFailure(kind: .tls, text: text, atProxyHandshake: failedProxyHandshake)
        }
        switch code {
        case CURLE_OUT_OF_MEMORY where (errorBuffer?[0] ?? 0) == 0 && !hops.sawHead:
            // libcurl reports a header beyond its 100 KiB limit as out of memory, silently.
            return TransferFailure(kind: .response, text: "Response header too large (libcurl accepts up to 100 KiB) or out of memory")
        case CURLE_COULDNT_RESOLVE_HOST: return TransferFailure(kind: .dns, text: detail)
        case CURLE_OPERATION_TIMEDOUT: return timeoutFailure(detail)
        case CURLE_TOO_MANY_REDIRECTS: return TransferFailure(kind: .redirects, text: detail)
        case CURLE_INTERFACE_FAILED:
            // The interface or local address of `setInterface` cannot be used (curl's exit 45):
            // not mended by trying again.
            return TransferFailure(kind: .connection, text: detail)
        case CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
            return TransferFailure(kind: .connection, text: detail, beforeResponse: !hops.sawHead)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_UNSUPPORTED_PROTOCOL:
            return TransferFailure(kind: .response, text: detail)
        default:
            return TransferFailure(kind: .other, text: detail)
        }
    }

    /// A TLS failure came from an https proxy's handshake: no head yet, and no tunnel (an
    /// answer to `CONNECT`) before it.
    private var failedProxyHandshake: Bool {
        guard switches.proxy?.scheme == .https, !hops.sawHead, let easy = handle?.easy else { return false }
        var connectCode = 0
        _ = cxhr_easy_get_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        return connectCode == 0
    }

    /// libcurl's connect or total timeout ran out: the text names the phase whose limit it
    /// was (the smaller one while connecting), then gives libcurl's words.
    private func timeoutFailure(_ detail: String) -> TransferFailure {
        let connect = switches.timeouts.connect
        // Up once the TCP connection is, and for https its TLS handshake too.
        var connected: curl_off_t = 0, handshaken: curl_off_t = 0
        if let easy = handle?.easy {
            _ = cxhr_easy_get_offset(easy, CURLINFO_CONNECT_TIME_T, &connected)
            _ = cxhr_easy_get_offset(easy, CURLINFO_APPCONNECT_TIME_T, &handshaken)
        }
        let up = connected > 0 && (!message.isSecure || handshaken > 0)
        // The total limit spans hops and retries: it may run out while a later hop connects.
        let totalRanOut = timeout > 0 && Double(MonotonicTime.milliseconds() - progress.startedAt) >= timeout * 1000 - 50
        let phase: Timeouts.Phase? = if connect > 0, !up, !totalRanOut, timeout == 0 || connect <= timeout {
            .connect
        } else if timeout > 0 {
            .total
        } else {
            nil
        }
        guard let phase else { return TransferFailure(kind: .timeout, text: detail) }
        let text = Timeouts.text(phase, after: phase == .connect ? connect : timeout)
        return TransferFailure(kind: .timeout, text: "\(text) (\(detail))", beforeResponse: phase == .connect)
    }

    private static let tlsFailures: Set<UInt32> = [
        CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
        CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_PEER_FAILED_VERIFICATION,
        CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
        CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
        CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// Failures that, before any response head, are the proxy's (libcurl connects only to it).
    private static let proxyFailures: Set<UInt32> = [
        CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_PROXY, CURLE_RECV_ERROR,
        CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// Marks the transfer complete; returns the bit to wake (``Wakeups/wake(_:)``) for the
}
