import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// What a send's observer (``SendObserver``) hears from the engine: connections, the heads
/// that are not the response's, redirects, retries, the wire. Engine thread; every entry
/// point is reached only when the send has an observer.
extension Transfer {
    /// libcurl made a connection ready for the next request (`CURLOPT_PREREQFUNCTION`):
    /// `.connected`, with `.tlsEstablished` for a new TLS connection. A connection is new
    /// when libcurl counts one more for the hop than at its last request (an authentication
    /// round asks again on the same one).
    func connectionReady(_ easy: UnsafeMutableRawPointer, remote: UnsafePointer<CChar>?, remotePort: Int32, localPort: Int32) {
        guard let observer else { return }
        var connects = 0
        _ = cxhr_easy_get_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        let reused = connects == 0 || (connects == progress.readyConnects && Int(localPort) == progress.readyLocalPort)
        progress.readyConnects = connects
        progress.readyLocalPort = Int(localPort)
        progress.requestSentReported = false
        observer.post(.connected(address: remote.map { String(cString: $0) } ?? "", port: Int(remotePort), reused: reused))
        if !reused, let version = cxhr_easy_tls_version(easy) { observer.post(.tlsEstablished(version: String(cString: version))) }
    }

    /// A head arrived: the request it answers went out (`.requestSent`, once a request;
    /// after a 100 Continue the body goes next), an interim response, an authentication round
    /// libcurl answers (`answered`).
    func observeHead(_ head: RecordedHead, answered: Bool) {
        guard let observer else { return }
        let interim = (100..<200).contains(head.status) && head.status != 101
        if !progress.requestSentReported, head.status != 100 {
            progress.requestSentReported = true
            observer.post(.requestSent)
        }
        if interim {
            observer.post(.interimResponse(status: head.status))
        } else if answered, head.status == 401 || head.status == 407 {
            let challenge = head.fieldValue(head.status == 401 ? "WWW-Authenticate" : "Proxy-Authenticate") ?? ""
            observer.post(.authenticationRound(status: head.status, scheme: String(challenge.prefix { $0 != " " && $0 != "," })))
            // The answer is another request (on the same connection, or on a new one).
            progress.requestSentReported = false
        }
    }

    /// libcurl's trace (`CURLOPT_DEBUGFUNCTION`): one entry, redacted (``TraceRedaction``).
    func traced(_ type: curl_infotype, _ bytes: UnsafeRawBufferPointer) {
        guard let observer else { return }
        let kind: HttpRequest.TraceEntry.Kind
        switch type {
        case CURLINFO_TEXT: kind = .info
        case CURLINFO_HEADER_OUT: kind = .headerOut
        case CURLINFO_HEADER_IN: kind = .headerIn
        case CURLINFO_DATA_OUT: kind = .dataOut
        case CURLINFO_DATA_IN: kind = .dataIn
        case CURLINFO_SSL_DATA_IN: kind = .tlsIn
        case CURLINFO_SSL_DATA_OUT: kind = .tlsOut
        default: return
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let time = Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
        observer.post(HttpRequest.TraceEntry(kind: kind, bytes: TraceRedaction.redacted(kind, bytes, secrets: observer.secrets), time: time))
    }
}
