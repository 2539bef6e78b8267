#if canImport(Glibc)
import Glibc
#endif

/// Seeing a request: the command line that sends it again.
extension HttpRequest {
    /// A `curl` command line that replays the request, with its secrets redacted: for a bug
    /// report, a log, or a terminal.
    ///
    /// One line of POSIX shell: the method (`-X` only where curl would not infer it, `-I` for
    /// HEAD), the URL, each header (`-H`), the body of the last send or the form
    /// (`--data-binary`, `-d`, `-F`), the credentials and their scheme (`-u`, `--digest`, …),
    /// the proxy and its switches (`-x`, `--proxy-user`, `--noproxy`, `--proxy-header`,
    /// `--proxy-cacert`, …), the TLS switches (`-k`, `--cacert`, `--cert`, `--key`,
    /// `--pinnedpubkey`, …), routing (`--resolve`, `--connect-to`, `--unix-socket`,
    /// `--interface`), redirects (`-L`, `--max-redirs`, `--location-trusted`), `--compressed`
    /// while content decoding is on, timeouts, `--limit-rate`, `--max-filesize` and `-r`. Every
    /// argument is single-quoted where it is not plain, so pasting the line into `sh` runs it;
    /// `xhr` takes the same options, so the line replays with `xhr` in place of `curl` too.
    ///
    /// Secrets read `[redacted]`: the values of `Authorization` (its scheme word kept, as in
    /// `Bearer [redacted]`), `Proxy-Authorization` and `Cookie` fields, the URL's password, and
    /// the passwords of the credentials, the proxy and a client certificate's key.
    ///
    /// A body in memory of printable UTF-8 on one line goes as it is (`--data-binary 'text'`);
    /// other bytes come from `printf` through a pipe (`printf '\101\000…' | curl --data-binary
    /// @- …`), as no argument can carry a NUL. A file body is `--data-binary @FILE` (part of a
    /// file, from `tail -c` and `head -c` through the pipe), read again when the line runs.
    /// What curl cannot be told (a body over 64 KiB, which is not kept; a PAC file; headers and
    /// idle timeouts; PKCS#12 bytes in memory; Kerberos tickets the library gets from a
    /// password) is named in a trailing `# not expressible: …` comment. The request's cookies
    /// from the jar and its default `User-Agent` are not part of the line.
    ///
    /// - Returns: the command line for the message `open` set, the switches now, and the body
    ///   of the last send since `open` (none before a send); `""` before the first `open`.
    public func curlCommand() -> String {
        let processCAFile = HttpRequest.caCertificateFile
        let command = withCore { core -> CurlCommand? in
            guard core.machine.state != .unsent else { return nil }
            return CurlCommand(message: core.message, switches: core.switches, body: core.sentBody,
                               http1Only: !core.enablePipelining, processCAFile: processCAFile,
                               proxyAutoConfig: core.switches.effectiveProxyAutoConfig)
        }
        guard var command else { return "" }
        // A file sent to its end replays as the whole file, read when the line runs.
        if case .file(let path, let offset, let length?) = command.body {
            var status = stat()
            if stat(path, &status) == 0, Int64(status.st_size) == offset + length {
                command.body = .file(path: path, offset: offset, length: nil)
            }
        }
        return command.rendered()
    }
}
