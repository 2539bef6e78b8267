import CCurlShim

extension EasyProfile.Fields {
    /// The rate limits' options (``HttpRequest/setRateLimits(download:upload:)``), for a request
    /// that has them. The library paces bodies itself (``RatePacer``) and leaves libcurl 7.88's
    /// own limits unset where it does. Measured with curl 7.88.1 on loopback:
    /// `CURLOPT_MAX_RECV_SPEED_LARGE` let 2 MiB at 512 KiB/s through in 0.02 s, 4 KiB at 1 KiB/s
    /// likewise (it also counts the bytes a paused body holds back as received); set beside the
    /// pacer it changed nothing measurable (2 MiB at 512 KiB/s: 4.00–4.02 s either way; 4 KiB
    /// at 1 KiB/s: 4.02–4.03 s against 4.01 s), so the pacer alone decides.
    /// `CURLOPT_MAX_SEND_SPEED_LARGE` held 1 MiB at 256 KiB/s to 4.0 s and 4 KiB at 1 KiB/s to
    /// 4.0–4.2 s, form or not. A multipart form is read by libcurl itself, past the library's
    /// read callback, so its upload gets that one.
    func applyRateLimits(_ options: inout EasyOptions) {
        let limits = switches.rateLimits
        if let size = limits.receiveBufferSize { options.set(CURLOPT_BUFFERSIZE, size) }
        if limits.upload > 0, body == .multipart { options.set(CURLOPT_MAX_SEND_SPEED_LARGE, offset: limits.upload) }
    }
}
